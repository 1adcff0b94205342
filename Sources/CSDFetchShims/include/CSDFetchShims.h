/*
 * CSDFetchShims: the few C entry points Swift cannot call directly.
 *
 * 1. libcurl's curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are C variadics,
 *    which Swift imports as unavailable. One static inline wrapper per argument type
 *    (never per option) forwards to them with the right type.
 * 2. libjpeg reports fatal errors by calling error_exit, whose default calls exit(), and
 *    prints warnings to stderr. Containing that needs setjmp, which Swift cannot call
 *    (it returns twice), so the guarded decode (and the encode of resized copies) lives in jpeg.c.
 * 3. The Linux file APIs the cache's one-file entries need and Glibc's Swift module lacks
 *    (CSDFetchFiles.h).
 * 4. pthread_setname_np and strptime, declared by glibc only under _GNU_SOURCE
 *    (CSDFetchLibc.h).
 */
#ifndef CSDFETCH_SHIMS_H
#define CSDFETCH_SHIMS_H

#include <stddef.h>
#include <curl/curl.h>
#include "CSDFetchFiles.h"
#include "CSDFetchLibc.h"

typedef size_t (*CSDFetch_curl_data_callback)(char *_Nonnull, size_t, size_t, void *_Nullable);
/* CURLOPT_PREREQFUNCTION: called once a connection is made or reused, before the request is sent. */
typedef int (*CSDFetch_curl_prereq_callback)(void *_Nullable, char *_Nullable, char *_Nullable, int, int);

/* CURLOPT_OPENSOCKETFUNCTION: creates the socket for a connection, so a local failure
   (EMFILE, ENOMEM) is seen with its errno, which curl itself does not keep. */
typedef curl_socket_t (*CSDFetch_curl_opensocket_callback)(void *_Nullable, curlsocktype,
                                                           struct curl_sockaddr *_Nonnull);

static inline CURLcode CSDFetch_curl_easy_setopt_opensocket_callback(CURL *_Nonnull handle, CURLoption option,
                                                                     CSDFetch_curl_opensocket_callback _Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

/* CURLOPT_CLOSESOCKETFUNCTION: closes a connection's socket, so the engine can count the
   connections curl keeps. */
typedef int (*CSDFetch_curl_closesocket_callback)(void *_Nullable, curl_socket_t);

static inline CURLcode CSDFetch_curl_easy_setopt_closesocket_callback(CURL *_Nonnull handle, CURLoption option,
                                                                      CSDFetch_curl_closesocket_callback _Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CSDFetch_curl_easy_setopt_long(CURL *_Nonnull handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CSDFetch_curl_easy_setopt_string(CURL *_Nonnull handle, CURLoption option,
                                                        const char *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CSDFetch_curl_easy_setopt_pointer(CURL *_Nonnull handle, CURLoption option,
                                                         void *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CSDFetch_curl_easy_setopt_slist(CURL *_Nonnull handle, CURLoption option,
                                                       struct curl_slist *_Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CSDFetch_curl_easy_setopt_data_callback(CURL *_Nonnull handle, CURLoption option,
                                                               CSDFetch_curl_data_callback _Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CSDFetch_curl_easy_setopt_prereq_callback(CURL *_Nonnull handle, CURLoption option,
                                                                 CSDFetch_curl_prereq_callback _Nullable value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode CSDFetch_curl_easy_getinfo_long(CURL *_Nonnull handle, CURLINFO info, long *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode CSDFetch_curl_easy_getinfo_pointer(CURL *_Nonnull handle, CURLINFO info,
                                                          void *_Nullable *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode CSDFetch_curl_easy_getinfo_string(CURL *_Nonnull handle, CURLINFO info,
                                                         const char *_Nullable *_Nonnull value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode CSDFetch_curl_multi_setopt_long(CURLM *_Nonnull handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

/* Outcome of CSDFetch_jpeg_decode. */
typedef enum {
    CSDFetch_JPEG_OK = 0,
    CSDFetch_JPEG_CORRUPT = 1,
    CSDFetch_JPEG_TOO_MANY_PIXELS = 2,
    /* A file this libjpeg build cannot decode (12-bit, lossless, hierarchical). */
    CSDFetch_JPEG_UNSUPPORTED = 3,
    /* The decode needed more memory or scan work than its budget allows. */
    CSDFetch_JPEG_OVER_BUDGET = 4,
    CSDFetch_JPEG_CANCELLED = 5,
} CSDFetch_jpeg_status;

/* Asked now and then during a decode; non-zero stops it with CSDFetch_JPEG_CANCELLED. */
typedef int (*CSDFetch_jpeg_is_cancelled)(void);

/*
 * Fully decodes a JPEG held in memory. Fatal libjpeg errors longjmp back here instead of
 * calling exit(); warnings that mean broken data (a truncated scan, a bad code) count as
 * corruption, tolerated ones (extraneous bytes, broken APP contents) do not, and none is
 * printed. Declared width x height is compared with max_pixels before any scanline buffer
 * is allocated (CSDFetch_JPEG_TOO_MANY_PIXELS; width and height are still filled in).
 * Memory, scan count and scan work are budgeted (CSDFetch_JPEG_OVER_BUDGET);
 * is_cancelled, when given, is asked every few rows. On failure, message receives a
 * NUL-terminated reason in the caller-owned buffer.
 */
CSDFetch_jpeg_status CSDFetch_jpeg_decode(const unsigned char *_Nonnull data, size_t size,
                                          unsigned long long max_pixels,
                                          CSDFetch_jpeg_is_cancelled _Nullable is_cancelled, int *_Nonnull width,
                                          int *_Nonnull height, char *_Nonnull message, size_t message_size);

/*
 * Decodes a JPEG's pixels for a resized copy: RGB, or CMYK (4 channels) for CMYK and YCCK
 * files, with the DCT scaled by 1/scale_denom (1, 2, 4 or 8: shrink-on-load). With pixels
 * NULL, only reads the header and reports the scaled width, height and channel count; then
 * pixels must hold width x height x channels bytes. The limit, budgets, warnings and
 * messages are those of CSDFetch_jpeg_decode.
 */
CSDFetch_jpeg_status CSDFetch_jpeg_decode_pixels(const unsigned char *_Nonnull data, size_t size,
                                                 unsigned long long max_pixels, int scale_denom,
                                                 CSDFetch_jpeg_is_cancelled _Nullable is_cancelled,
                                                 unsigned char *_Nullable pixels, size_t pixels_size,
                                                 int *_Nonnull width, int *_Nonnull height, int *_Nonnull channels,
                                                 char *_Nonnull message, size_t message_size);

/*
 * Encodes width x height RGB pixels as a baseline JPEG of the given quality (1-100) with
 * optimised Huffman tables. On success *output is a malloc'd buffer of *output_size bytes
 * the caller frees with free(); on failure it is NULL and message holds the reason.
 */
CSDFetch_jpeg_status CSDFetch_jpeg_encode_rgb(const unsigned char *_Nonnull pixels, int width, int height,
                                              int quality, unsigned char *_Nullable *_Nonnull output,
                                              unsigned long *_Nonnull output_size, char *_Nonnull message,
                                              size_t message_size);

#endif
