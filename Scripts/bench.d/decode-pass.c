/*
 * decode-pass: decodes every PNG, JPEG, GIF and WebP file given on the command line (or
 * listed in the directories given) completely, with the same libraries and settings as
 * `sdfetch --verify full`, and says how many decoded and how many failed. The bench runs
 * it after `curl --parallel` as the pipeline a user would otherwise script, and alone over
 * the corpus as the bare decoders' CPU floor. Build: cc -O2 decode-pass.c -lpng -ljpeg -lgif -lwebp -lwebpdemux
 */
#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include "each-file.h"

static jmp_buf jpeg_escape;
static void jpeg_quiet(j_common_ptr info, int level) { (void)info; (void)level; }
static void jpeg_fail(j_common_ptr info) { (void)info; longjmp(jpeg_escape, 1); }

/* Scaled 1/8, fast IDCT, one scanline at a time: what sdfetch's full check asks of libjpeg. */
static int decode_jpeg(const unsigned char *data, size_t size) {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    info.err = jpeg_std_error(&errors);
    errors.emit_message = jpeg_quiet;
    errors.error_exit = jpeg_fail;
    if (setjmp(jpeg_escape)) { jpeg_destroy_decompress(&info); return 0; }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, size);
    jpeg_read_header(&info, TRUE);
    info.dct_method = JDCT_IFAST;
    info.do_fancy_upsampling = FALSE;
    info.scale_num = 1;
    info.scale_denom = 8;
    jpeg_start_decompress(&info);
    JSAMPARRAY row = (*info.mem->alloc_sarray)((j_common_ptr)&info, JPOOL_IMAGE,
                                                info.output_width * info.output_components, 1);
    while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, row, 1);
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return 1;
}

/* libpng's simplified API into one RGBA buffer, as sdfetch does. */
static int decode_png(const unsigned char *data, size_t size) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, size)) return 0;
    image.format = PNG_FORMAT_RGBA;
    void *pixels = malloc(PNG_IMAGE_SIZE(image));
    int ok = pixels && png_image_finish_read(&image, NULL, pixels, 0, NULL);
    free(pixels);
    png_image_free(&image);
    return ok;
}

struct gif_source { const unsigned char *data; size_t size, offset; };
static int gif_read(GifFileType *file, GifByteType *out, int count) {
    struct gif_source *source = file->UserData;
    size_t left = source->size - source->offset;
    size_t n = (size_t)count < left ? (size_t)count : left;
    memcpy(out, source->data + source->offset, n);
    source->offset += n;
    return (int)n;
}

static int decode_gif(const unsigned char *data, size_t size) {
    struct gif_source source = {data, size, 0};
    int error = 0;
    GifFileType *file = DGifOpen(&source, gif_read, &error);
    if (!file) return 0;
    int ok = DGifSlurp(file) == GIF_OK;
    DGifCloseFile(file, &error);
    return ok;
}

/* YUV with alpha, the loop filter skipped (it cannot fail): what WebPVerifier asks of
 * libwebp; an animation frame by frame. */
static int decode_webp_frame(const unsigned char *data, size_t size) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return 0;
    config.output.colorspace = MODE_YUVA;
    config.options.bypass_filtering = 1;
    int ok = WebPDecode(data, size, &config) == VP8_STATUS_OK;
    WebPFreeDecBuffer(&config.output);
    return ok;
}

static int decode_webp(const unsigned char *data, size_t size) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, size, &features) != VP8_STATUS_OK) return 0;
    if (!features.has_animation) return decode_webp_frame(data, size);
    WebPData whole = {data, size};
    WebPDemuxer *demux = WebPDemux(&whole);
    if (!demux) return 0;
    WebPIterator frame;
    int ok = WebPDemuxGetFrame(demux, 1, &frame);
    while (ok) {
        ok = decode_webp_frame(frame.fragment.bytes, frame.fragment.size);
        if (!ok || !WebPDemuxNextFrame(&frame)) break;
    }
    WebPDemuxReleaseIterator(&frame);
    WebPDemuxDelete(demux);
    return ok;
}

static long decoded, failed, skipped;

static void decode_file(const unsigned char *data, size_t size) {
    int ok = -1;
    if (size > 3 && data[0] == 0xFF && data[1] == 0xD8) ok = decode_jpeg(data, size);
    else if (size > 8 && memcmp(data, "\x89PNG", 4) == 0) ok = decode_png(data, size);
    else if (size > 6 && memcmp(data, "GIF8", 4) == 0) ok = decode_gif(data, size);
    else if (size > 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0) ok = decode_webp(data, size);
    if (ok < 0) skipped++; else if (ok) decoded++; else failed++;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) each_file(argv[i], decode_file);
    printf("decode-pass: %ld decoded, %ld failed, %ld skipped\n", decoded, failed, skipped + each_file_unreadable);
    return 0;
}
