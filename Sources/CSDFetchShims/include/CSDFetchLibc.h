/*
 * libc calls that Glibc's Swift module does not export, because glibc declares them only
 * under _GNU_SOURCE: pthread_setname_np, to name the project's threads (started with
 * pthread_create rather than Foundation's Thread), and strptime, to read HTTP dates (rather
 * than Foundation's DateFormatter). Either Foundation type links the full Foundation, with
 * ICU's data, into the static binary. And getaddrinfo's EAI_NODATA, a name without an
 * address, and O_NOATIME, which glibc also names only under _GNU_SOURCE. And mallopt, which
 * Glibc's module leaves out with the rest of <malloc.h>.
 */
#ifndef CSDFETCH_LIBC_H
#define CSDFETCH_LIBC_H

#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <pthread.h>
#include <time.h>

#pragma clang assume_nonnull begin

int pthread_setname_np(pthread_t, const char *);
char *strptime(const char *, const char *, struct tm *);

/* Names `thread` (at most 15 bytes and the NUL); 0, or ERANGE for a longer name. */
static inline int CSDFetch_pthread_setname_np(pthread_t thread, const char *name) {
    return pthread_setname_np(thread, name);
}

/* Parses `text` by `format` into `fields`; the first byte not read, or NULL on a mismatch. */
static inline char *_Nullable CSDFetch_strptime(const char *text, const char *format, struct tm *fields) {
    return strptime(text, format, fields);
}

/* getaddrinfo's "the name has no address": EAI_NODATA, -5 in glibc. */
static inline int CSDFetch_EAI_NODATA(void) {
#ifdef EAI_NODATA
    return EAI_NODATA;
#else
    return -5;
#endif
}

/* open's "do not update the access time": only the file's owner may ask. */
static inline int CSDFetch_O_NOATIME(void) {
#ifdef O_NOATIME
    return O_NOATIME;
#else
    return 01000000;
#endif
}

/* Caps the malloc arenas a process may create at `count`; 1 on success. */
static inline int CSDFetch_limit_malloc_arenas(int count) {
    return mallopt(M_ARENA_MAX, count);
}

#pragma clang assume_nonnull end

#endif
