/*
 * Why this file exists: libjpeg reports a fatal error by calling error_exit, which must
 * not return and by default calls exit(), and it prints warnings to stderr (over the
 * progress bar). Catching a fatal error needs setjmp in the same C function that drives
 * the decoder, and Swift cannot call setjmp (it returns twice). So the whole guarded
 * decode lives here: one function, a status and a message in a caller-owned buffer.
 *
 * Warnings are judged one by one by their message code, as a browser would: data that
 * ends early (JWRN_JPEG_EOF, or a scan cut short by a marker other than a restart) jumps
 * out as corrupt, as do bad codes in a scan without restart markers (the rest of it is
 * lost); extraneous bytes between markers, broken APP contents (Adobe, JFIF, ICC) and
 * damage confined to one restart interval (libjpeg resyncs at the next marker) are
 * tolerated.
 *
 * Work is budgeted (SDFetchCore.docc, Verification, "Budgets"): libjpeg's memory is
 * capped through max_memory_to_use (this build has no backing store, so a larger
 * coefficient buffer fails at once), and the progress monitor counts the blocks every
 * scan visits against a multiple of the image's own block count, so a tiny file of
 * hundreds of scans over a huge area stops early. The same monitor asks the caller
 * whether the decode was cancelled.
 */
#include "CSDFetchShims.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

/* libjpeg-turbo's TurboJPEG API stops after 500 scans (TJFLAG_LIMITSCANS): a tiny
 * progressive file with thousands of scans otherwise takes minutes to decode. */
#define CSDFETCH_JPEG_MAX_SCANS 500

/* libjpeg's memory for one decode. A progressive image keeps every coefficient, 2 bytes
 * per sample: 256 MiB holds an 85-megapixel 4:2:0 photo; a 10-component 10000x10000 bomb
 * (2 GB) is refused before anything is allocated. */
#define CSDFETCH_JPEG_MAX_MEMORY (256L << 20)

/* The scans of a multi-scan image may visit, in all, this many times the image's blocks.
 * libjpeg's default progression visits each block about 5 times (mozjpeg's up to 8). */
#define CSDFETCH_JPEG_BLOCK_PASSES 16ULL
/* Below this many block visits (about 0.1 s of work) the pass budget does not apply, so
 * small images with generous scripts are never refused. */
#define CSDFETCH_JPEG_MIN_BLOCK_VISITS (8ULL << 20)

/* How many progress calls pass between two questions to the caller about cancellation. */
#define CSDFETCH_JPEG_CANCEL_STRIDE 16

/* libjpeg's error manager extended with where to jump and where to write the reason.
 * `pub` must stay first: libjpeg hands back a pointer to it. */
struct CSDFetch_jpeg_error_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf escape;
    char *message;
    size_t message_size;
    CSDFetch_jpeg_status status; /* what a jump back reports */
};

/* libjpeg's progress manager extended with the work budget. `pub` must stay first. */
struct CSDFetch_jpeg_progress_mgr {
    struct jpeg_progress_mgr pub;
    int is_absorbing_scans; /* set while jpeg_start_decompress reads a multi-scan file */
    unsigned long long block_visits;
    unsigned long long block_budget;
    unsigned calls;
    CSDFetch_jpeg_is_cancelled _Nullable is_cancelled;
};

static void CSDFetch_jpeg_fail_as(j_common_ptr cinfo, CSDFetch_jpeg_status status, const char *reason) {
    struct CSDFetch_jpeg_error_mgr *error = (struct CSDFetch_jpeg_error_mgr *)cinfo->err;
    if (error->message_size > 0) snprintf(error->message, error->message_size, "%s", reason);
    error->status = status;
    longjmp(error->escape, 1);
}

static void CSDFetch_jpeg_fail(j_common_ptr cinfo, const char *reason) {
    CSDFetch_jpeg_fail_as(cinfo, CSDFetch_JPEG_CORRUPT, reason);
}

static void CSDFetch_jpeg_fail_with_libjpeg_message(j_common_ptr cinfo, CSDFetch_jpeg_status status) {
    char buffer[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, buffer);
    CSDFetch_jpeg_fail_as(cinfo, status, buffer);
}

/* Replaces error_exit: jump back to CSDFetch_jpeg_decode instead of exit(). Errors about
 * what this libjpeg build cannot do are not about the file; memory refusals are the
 * budget's. */
static void CSDFetch_jpeg_error_exit(j_common_ptr cinfo) {
    switch (cinfo->err->msg_code) {
    case JERR_BAD_PRECISION: /* 12-bit data: this build decodes 8-bit only */
    case JERR_SOF_UNSUPPORTED: /* lossless and hierarchical processes */
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
        CSDFetch_jpeg_fail_with_libjpeg_message(cinfo, CSDFetch_JPEG_UNSUPPORTED);
        break;
    case JERR_NO_BACKING_STORE: /* max_memory_to_use exceeded: the arrays need a backing store */
        CSDFetch_jpeg_fail_as(cinfo, CSDFetch_JPEG_OVER_BUDGET, "needs more than 256 MiB of memory");
        break;
    case JERR_OUT_OF_MEMORY:
        CSDFetch_jpeg_fail_with_libjpeg_message(cinfo, CSDFetch_JPEG_OVER_BUDGET);
        break;
    default:
        CSDFetch_jpeg_fail_with_libjpeg_message(cinfo, CSDFetch_JPEG_CORRUPT);
    }
}

/* Replaces emit_message: level -1 is a warning, judged by its code; levels >= 0 are
 * trace messages, dropped. */
static void CSDFetch_jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;
    cinfo->err->num_warnings++;
    switch (cinfo->err->msg_code) {
    case JWRN_EXTRANEOUS_DATA: /* bytes between segments, skipped */
    case JWRN_ADOBE_XFORM:     /* unknown Adobe transform code: APP14 contents */
    case JWRN_JFIF_MAJOR:      /* unknown JFIF version: APP0 contents */
    case JWRN_BOGUS_ICC:       /* broken ICC profile chunks: APP2 contents */
    case JWRN_BOGUS_PROGRESSION: /* odd but decodable progression script */
    case JWRN_NOT_SEQUENTIAL:  /* sequential scan header with progressive fields, ignored */
    case JWRN_TOO_MUCH_DATA:
        return;
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:
        /* With restart markers the damage ends at the next one, where libjpeg resyncs and
         * decodes the rest: the image is complete, as browsers show it. Without them the
         * rest of the scan is lost. */
        if (((j_decompress_ptr)cinfo)->restart_interval != 0) return;
        break;
    case JWRN_HIT_MARKER:
        /* An interval that ends early at its restart marker is the same local damage; a
         * scan that ends early at any other marker (EOI, the next scan) is incomplete. */
        if (((j_decompress_ptr)cinfo)->unread_marker >= 0xD0 && ((j_decompress_ptr)cinfo)->unread_marker <= 0xD7) return;
        break;
    default: /* JWRN_JPEG_EOF: the data ends early */
        break;
    }
    CSDFetch_jpeg_fail_with_libjpeg_message(cinfo, CSDFetch_JPEG_CORRUPT);
}

/* Replaces output_message: nothing reaches stderr. */
static void CSDFetch_jpeg_output_message(j_common_ptr cinfo) {
    (void)cinfo;
}

/* Called by libjpeg once per iMCU row while jpeg_start_decompress absorbs a multi-scan
 * file, and once per scanline call afterwards. */
static void CSDFetch_jpeg_progress_monitor(j_common_ptr cinfo) {
    struct CSDFetch_jpeg_progress_mgr *progress = (struct CSDFetch_jpeg_progress_mgr *)cinfo->progress;
    j_decompress_ptr dinfo = (j_decompress_ptr)cinfo;
    if (!cinfo->is_decompressor) return;
    if (progress->is_cancelled != NULL && ++progress->calls % CSDFETCH_JPEG_CANCEL_STRIDE == 0 &&
        progress->is_cancelled()) {
        CSDFetch_jpeg_fail_as(cinfo, CSDFetch_JPEG_CANCELLED, "decode cancelled");
    }
    if (dinfo->input_scan_number > CSDFETCH_JPEG_MAX_SCANS) {
        CSDFetch_jpeg_fail_as(cinfo, CSDFetch_JPEG_OVER_BUDGET, "more than 500 progressive scans");
    }
    if (progress->is_absorbing_scans) {
        /* The next consume_input call decodes one iMCU row of the current scan: for each
         * of its components, v_samp_factor rows of blocks across the component's width. */
        int i;
        for (i = 0; i < dinfo->comps_in_scan && i < MAX_COMPS_IN_SCAN; i++) {
            jpeg_component_info *component = dinfo->cur_comp_info[i];
            if (component != NULL) {
                progress->block_visits +=
                    (unsigned long long)component->width_in_blocks * (unsigned long long)component->v_samp_factor;
            }
        }
        if (progress->block_visits > progress->block_budget) {
            CSDFetch_jpeg_fail_as(cinfo, CSDFetch_JPEG_OVER_BUDGET, "scans revisit the image too many times");
        }
    }
}

/* The block visits allowed: CSDFETCH_JPEG_BLOCK_PASSES times the blocks of every
 * component, and never less than CSDFETCH_JPEG_MIN_BLOCK_VISITS. */
static unsigned long long CSDFetch_jpeg_block_budget(j_decompress_ptr cinfo) {
    unsigned long long blocks = 0;
    unsigned long long budget;
    int c;
    for (c = 0; c < cinfo->num_components; c++) {
        blocks += (unsigned long long)cinfo->comp_info[c].width_in_blocks * cinfo->comp_info[c].height_in_blocks;
    }
    budget = blocks * CSDFETCH_JPEG_BLOCK_PASSES;
    return budget < CSDFETCH_JPEG_MIN_BLOCK_VISITS ? CSDFETCH_JPEG_MIN_BLOCK_VISITS : budget;
}

/* Fills in the error manager that jumps back instead of exiting and prints nothing; the
 * caller's setjmp(error->escape) must come before its first libjpeg call. */
static struct jpeg_error_mgr *CSDFetch_jpeg_errors(struct CSDFetch_jpeg_error_mgr *error, char *message,
                                                   size_t message_size) {
    if (message_size > 0) message[0] = '\0';
    (void)jpeg_std_error(&error->pub);
    error->pub.error_exit = CSDFetch_jpeg_error_exit;
    error->pub.emit_message = CSDFetch_jpeg_emit_message;
    error->pub.output_message = CSDFetch_jpeg_output_message;
    error->message = message;
    error->message_size = message_size;
    error->status = CSDFetch_JPEG_CORRUPT;
    return &error->pub;
}

/* Creates the decompressor reading data, with the memory cap and the progress monitor
 * (its budget set once the header is read). Called after the caller's setjmp. */
static void CSDFetch_jpeg_create_reader(j_decompress_ptr cinfo, struct CSDFetch_jpeg_progress_mgr *progress,
                                        CSDFetch_jpeg_is_cancelled _Nullable is_cancelled,
                                        const unsigned char *data, size_t size) {
    jpeg_create_decompress(cinfo);
    cinfo->mem->max_memory_to_use = CSDFETCH_JPEG_MAX_MEMORY;
    progress->pub.progress_monitor = CSDFetch_jpeg_progress_monitor;
    progress->is_cancelled = is_cancelled;
    progress->block_budget = CSDFETCH_JPEG_MIN_BLOCK_VISITS;
    cinfo->progress = &progress->pub;
    jpeg_mem_src(cinfo, data, (unsigned long)size);
}

CSDFetch_jpeg_status CSDFetch_jpeg_decode(const unsigned char *_Nonnull data, size_t size,
                                          unsigned long long max_pixels,
                                          CSDFetch_jpeg_is_cancelled _Nullable is_cancelled, int *_Nonnull width,
                                          int *_Nonnull height, char *_Nonnull message, size_t message_size) {
    struct jpeg_decompress_struct cinfo;
    struct CSDFetch_jpeg_error_mgr error;
    struct CSDFetch_jpeg_progress_mgr progress;
    JSAMPARRAY row;

    memset(&cinfo, 0, sizeof cinfo);
    memset(&progress, 0, sizeof progress);
    *width = 0;
    *height = 0;

    cinfo.err = CSDFetch_jpeg_errors(&error, message, message_size);
    if (setjmp(error.escape)) {
        /* Every fatal error and every fatal warning lands here; destroy frees all libjpeg memory. */
        jpeg_destroy_decompress(&cinfo);
        return error.status;
    }

    CSDFetch_jpeg_create_reader(&cinfo, &progress, is_cancelled, data, size);
    (void)jpeg_read_header(&cinfo, TRUE);

    *width = (int)cinfo.image_width;
    *height = (int)cinfo.image_height;
    if (cinfo.image_width == 0 || cinfo.image_height == 0) {
        CSDFetch_jpeg_fail((j_common_ptr)&cinfo, "empty image");
    }
    /* The limit is checked before jpeg_start_decompress, which allocates the buffers. */
    if ((unsigned long long)cinfo.image_width * cinfo.image_height > max_pixels) {
        jpeg_destroy_decompress(&cinfo);
        return CSDFetch_JPEG_TOO_MANY_PIXELS;
    }

    /* Verification needs every entropy-coded bit parsed, not pretty pixels: grey output
     * skips colour conversion and the chroma inverse DCT (the chroma coefficients are
     * still entropy-decoded, so damage there is still found), and the fast DCT and plain
     * upsampling cost less. */
    if (cinfo.jpeg_color_space == JCS_YCbCr || cinfo.jpeg_color_space == JCS_GRAYSCALE) {
        cinfo.out_color_space = JCS_GRAYSCALE;
    }
    cinfo.dct_method = JDCT_IFAST;
    cinfo.do_fancy_upsampling = FALSE;
    /* Scaling by 1/8 keeps every Huffman-coded coefficient decoded (truncation and bad
     * codes are still found) but reduces each 8x8 inverse DCT to its DC term: the bulk
     * of a full-size decode's cost, and nothing verification needs. */
    cinfo.scale_num = 1;
    cinfo.scale_denom = 8;
    /* A multi-scan file is read whole inside jpeg_start_decompress: that is where the
     * scans' work is counted. */
    progress.block_budget = CSDFetch_jpeg_block_budget(&cinfo);
    progress.is_absorbing_scans = 1;
    (void)jpeg_start_decompress(&cinfo);
    progress.is_absorbing_scans = 0;

    /* One row, reused for every scanline, owned by libjpeg's pool. */
    row = (*cinfo.mem->alloc_sarray)((j_common_ptr)&cinfo, JPOOL_IMAGE,
                                     cinfo.output_width * (JDIMENSION)cinfo.output_components, 1);
    while (cinfo.output_scanline < cinfo.output_height) {
        (void)jpeg_read_scanlines(&cinfo, row, 1);
    }
    (void)jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return CSDFetch_JPEG_OK;
}

/* ---- Pixels for resized copies (the -o --resize path) ----------------------------------
 *
 * The same containment as CSDFetch_jpeg_decode, but the pixels are wanted: RGB (or CMYK,
 * which this libjpeg cannot convert), accurate DCT and fancy upsampling, and the DCT scaled
 * by 1/scale_denom (shrink-on-load: a 1/8 decode runs a 1x1 inverse DCT per block). Called
 * twice: with pixels NULL it reads the header only and reports the scaled output size and
 * channel count, so the caller can allocate; then with a buffer of at least that size. */

/* Sets up cinfo for a scaled colour decode and checks the limit; 0 when over it. */
static int CSDFetch_jpeg_prepare_pixels(j_decompress_ptr cinfo, unsigned long long max_pixels, int scale_denom) {
    (void)jpeg_read_header(cinfo, TRUE);
    if (cinfo->image_width == 0 || cinfo->image_height == 0) {
        CSDFetch_jpeg_fail((j_common_ptr)cinfo, "empty image");
    }
    if ((unsigned long long)cinfo->image_width * cinfo->image_height > max_pixels) return 0;
    cinfo->out_color_space =
        (cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK) ? JCS_CMYK : JCS_RGB;
    cinfo->scale_num = 1;
    cinfo->scale_denom = (unsigned int)scale_denom;
    cinfo->dct_method = JDCT_ISLOW;
    jpeg_calc_output_dimensions(cinfo);
    return 1;
}

CSDFetch_jpeg_status CSDFetch_jpeg_decode_pixels(const unsigned char *_Nonnull data, size_t size,
                                                 unsigned long long max_pixels, int scale_denom,
                                                 CSDFetch_jpeg_is_cancelled _Nullable is_cancelled,
                                                 unsigned char *_Nullable pixels, size_t pixels_size,
                                                 int *_Nonnull width, int *_Nonnull height, int *_Nonnull channels,
                                                 char *_Nonnull message, size_t message_size) {
    struct jpeg_decompress_struct cinfo;
    struct CSDFetch_jpeg_error_mgr error;
    struct CSDFetch_jpeg_progress_mgr progress;
    JSAMPROW row;

    memset(&cinfo, 0, sizeof cinfo);
    memset(&progress, 0, sizeof progress);
    *width = 0;
    *height = 0;
    *channels = 0;

    cinfo.err = CSDFetch_jpeg_errors(&error, message, message_size);
    if (setjmp(error.escape)) {
        jpeg_destroy_decompress(&cinfo);
        return error.status;
    }

    CSDFetch_jpeg_create_reader(&cinfo, &progress, is_cancelled, data, size);
    if (!CSDFetch_jpeg_prepare_pixels(&cinfo, max_pixels, scale_denom)) {
        *width = (int)cinfo.image_width;
        *height = (int)cinfo.image_height;
        jpeg_destroy_decompress(&cinfo);
        return CSDFetch_JPEG_TOO_MANY_PIXELS;
    }
    *width = (int)cinfo.output_width;
    *height = (int)cinfo.output_height;
    *channels = cinfo.output_components;
    if (pixels == NULL) {
        jpeg_destroy_decompress(&cinfo);
        return CSDFetch_JPEG_OK;
    }
    if ((unsigned long long)cinfo.output_width * cinfo.output_height * (unsigned)cinfo.output_components >
        pixels_size) {
        CSDFetch_jpeg_fail((j_common_ptr)&cinfo, "pixel buffer too small");
    }
    progress.block_budget = CSDFetch_jpeg_block_budget(&cinfo);
    progress.is_absorbing_scans = 1;
    (void)jpeg_start_decompress(&cinfo);
    progress.is_absorbing_scans = 0;
    while (cinfo.output_scanline < cinfo.output_height) {
        row = pixels + (size_t)cinfo.output_scanline * cinfo.output_width * (size_t)cinfo.output_components;
        (void)jpeg_read_scanlines(&cinfo, &row, 1);
    }
    (void)jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return CSDFetch_JPEG_OK;
}

CSDFetch_jpeg_status CSDFetch_jpeg_encode_rgb(const unsigned char *_Nonnull pixels, int width, int height,
                                              int quality, unsigned char *_Nullable *_Nonnull output,
                                              unsigned long *_Nonnull output_size, char *_Nonnull message,
                                              size_t message_size) {
    struct jpeg_compress_struct cinfo;
    struct CSDFetch_jpeg_error_mgr error;
    JSAMPROW row;

    memset(&cinfo, 0, sizeof cinfo);
    *output = NULL;
    *output_size = 0;
    cinfo.err = CSDFetch_jpeg_errors(&error, message, message_size);
    if (setjmp(error.escape)) {
        jpeg_destroy_compress(&cinfo);
        /* jpeg_mem_dest's buffer is malloc'd by libjpeg and handed to the caller, or freed here. */
        free(*output);
        *output = NULL;
        *output_size = 0;
        return error.status;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, output, output_size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    /* Standard Huffman tables, as libvips, OpenCV and Pillow write by default: optimized ones
     * take a second pass over the coefficients for a few percent fewer bytes. */
    cinfo.optimize_coding = FALSE;
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * (size_t)width * 3);
        (void)jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return CSDFetch_JPEG_OK;
}
