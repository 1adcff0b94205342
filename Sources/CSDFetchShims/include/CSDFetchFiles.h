/*
 * Linux file APIs that Glibc's Swift module does not export: the extended-attribute calls
 * of <sys/xattr.h>, and O_TMPFILE, a composite macro Swift cannot import.
 */
#ifndef CSDFETCH_FILES_H
#define CSDFETCH_FILES_H

#include <fcntl.h>
#include <sys/types.h>
#include <sys/xattr.h>

/* open(2) flag for an unnamed file in a directory, linked into place later with linkat. */
static inline int CSDFetch_O_TMPFILE(void) {
#ifdef O_TMPFILE
    return O_TMPFILE;
#else
    return __O_TMPFILE; /* what O_TMPFILE expands to; glibc defines the name only with _GNU_SOURCE */
#endif
}

static inline int CSDFetch_fsetxattr(int fd, const char *_Nonnull name, const void *_Nonnull value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

static inline ssize_t CSDFetch_fgetxattr(int fd, const char *_Nonnull name, void *_Nullable value, size_t size) {
    return fgetxattr(fd, name, value, size);
}

static inline int CSDFetch_fremovexattr(int fd, const char *_Nonnull name) { return fremovexattr(fd, name); }

static inline ssize_t CSDFetch_lgetxattr(const char *_Nonnull path, const char *_Nonnull name, void *_Nullable value,
                                         size_t size) {
    return lgetxattr(path, name, value, size);
}

#endif
