/*
 * Why this file exists: libjpeg reports a fatal error by calling error_exit, which must
 * not return and by default calls exit(), and it prints warnings to stderr (over the
 * progress bar). Catching a fatal error needs setjmp in the same C function that drives
 * the decoder, and Swift cannot call setjmp (it returns twice). So the whole guarded
 * decode lives here: one function, a status and a message in a caller-owned buffer.
 *
 * For verification a warning is as bad as an error: a truncated scan is only a warning
 * (JWRN_JPEG_EOF) after which libjpeg fills the rest with grey, so the first warning
 * also jumps out and the image counts as corrupt.
 */
#include "CSDFetchShims.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>

/* libjpeg-turbo's TurboJPEG API stops after 500 scans (TJFLAG_LIMITSCANS): a tiny
 * progressive file with thousands of scans otherwise takes minutes to decode. */
#define CSDFETCH_JPEG_MAX_SCANS 500

/* libjpeg's error manager extended with where to jump and where to write the reason.
 * `pub` must stay first: libjpeg hands back a pointer to it. */
struct CSDFetch_jpeg_error_mgr {
    struct jpeg_error_mgr pub;
    jmp_buf escape;
    char *message;
    size_t message_size;
};

static void CSDFetch_jpeg_fail(j_common_ptr cinfo, const char *reason) {
    struct CSDFetch_jpeg_error_mgr *error = (struct CSDFetch_jpeg_error_mgr *)cinfo->err;
    if (error->message_size > 0) snprintf(error->message, error->message_size, "%s", reason);
    longjmp(error->escape, 1);
}

static void CSDFetch_jpeg_fail_with_libjpeg_message(j_common_ptr cinfo) {
    char buffer[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, buffer);
    CSDFetch_jpeg_fail(cinfo, buffer);
}

/* Replaces error_exit: jump back to CSDFetch_jpeg_decode instead of exit(). */
static void CSDFetch_jpeg_error_exit(j_common_ptr cinfo) {
    CSDFetch_jpeg_fail_with_libjpeg_message(cinfo);
}

/* Replaces emit_message: level -1 is a warning (corrupt or missing data), which we
 * count and treat as fatal; levels >= 0 are trace messages, dropped. */
static void CSDFetch_jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level < 0) {
        cinfo->err->num_warnings++;
        CSDFetch_jpeg_fail_with_libjpeg_message(cinfo);
    }
}

/* Replaces output_message: nothing reaches stderr. */
static void CSDFetch_jpeg_output_message(j_common_ptr cinfo) {
    (void)cinfo;
}

/* Called by libjpeg while it consumes input; stops files with absurdly many scans. */
static void CSDFetch_jpeg_progress_monitor(j_common_ptr cinfo) {
    if (cinfo->is_decompressor && ((j_decompress_ptr)cinfo)->input_scan_number > CSDFETCH_JPEG_MAX_SCANS) {
        CSDFetch_jpeg_fail(cinfo, "more than 500 progressive scans");
    }
}

CSDFetch_jpeg_status CSDFetch_jpeg_decode(const unsigned char *_Nonnull data, size_t size, int header_only,
                                          unsigned long long max_pixels, int *_Nonnull width, int *_Nonnull height,
                                          char *_Nonnull message, size_t message_size) {
    struct jpeg_decompress_struct cinfo;
    struct CSDFetch_jpeg_error_mgr error;
    struct jpeg_progress_mgr progress;
    JSAMPARRAY row;

    memset(&cinfo, 0, sizeof cinfo);
    memset(&progress, 0, sizeof progress);
    *width = 0;
    *height = 0;
    if (message_size > 0) message[0] = '\0';

    cinfo.err = jpeg_std_error(&error.pub);
    error.pub.error_exit = CSDFetch_jpeg_error_exit;
    error.pub.emit_message = CSDFetch_jpeg_emit_message;
    error.pub.output_message = CSDFetch_jpeg_output_message;
    error.message = message;
    error.message_size = message_size;
    if (setjmp(error.escape)) {
        /* Every fatal error and every warning lands here; destroy frees all libjpeg memory. */
        jpeg_destroy_decompress(&cinfo);
        return CSDFetch_JPEG_CORRUPT;
    }

    jpeg_create_decompress(&cinfo);
    progress.progress_monitor = CSDFetch_jpeg_progress_monitor;
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
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
    if (header_only) {
        jpeg_destroy_decompress(&cinfo);
        return CSDFetch_JPEG_OK;
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
    (void)jpeg_start_decompress(&cinfo);

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
