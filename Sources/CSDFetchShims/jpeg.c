/*
 * Why this file exists: libjpeg's error handler must not return, and its default calls
 * exit(). Catching it needs setjmp in the same C function that drives the decoder,
 * which Swift cannot do. Placeholder until the verification work lands.
 */
#include "CSDFetchShims.h"

CSDFetch_jpeg_status CSDFetch_jpeg_decode(const unsigned char *data, size_t size, int header_only,
                                          unsigned long long max_pixels, int *width, int *height,
                                          char *message, size_t message_size) {
    (void)data; (void)size; (void)header_only; (void)max_pixels;
    *width = 0; *height = 0;
    if (message_size > 0) message[0] = 0;
    return CSDFetch_JPEG_CORRUPT;
}
