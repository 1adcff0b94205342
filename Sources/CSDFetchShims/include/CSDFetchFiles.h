/*
 * Linux file APIs that Glibc's Swift module does not export: O_TMPFILE (a composite macro
 * Swift cannot import), AT_EMPTY_PATH, the inode-flag and reflink ioctls (variadic), and copy_file_range
 * (declared only under _GNU_SOURCE).
 */
#ifndef CSDFETCH_FILES_H
#define CSDFETCH_FILES_H

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <unistd.h>

/* open(2) flag for an unnamed file in a directory, linked into place later with linkat. */
static inline int CSDFetch_O_TMPFILE(void) {
#ifdef O_TMPFILE
    return O_TMPFILE;
#else
    return __O_TMPFILE; /* what O_TMPFILE expands to; glibc defines the name only with _GNU_SOURCE */
#endif
}

/* linkat(2) flag naming the descriptor itself (glibc defines it only with _GNU_SOURCE). */
static inline int CSDFetch_AT_EMPTY_PATH(void) {
#ifdef AT_EMPTY_PATH
    return AT_EMPTY_PATH;
#else
    return 0x1000;
#endif
}

/* Marks the directory open as `fd` as the top of a hierarchy (FS_TOPDIR_FL, `chattr +T`),
 * so ext4 spreads its subdirectories over block groups. 0 when set (or already set); -1
 * with errno where the file system has no such flag or the caller does not own it. */
static inline int CSDFetch_mark_top_directory(int fd) {
    int flags = 0; /* the kernel reads and writes an int, whatever the macro's type says */
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) return -1;
    if (flags & FS_TOPDIR_FL) return 0;
    flags |= FS_TOPDIR_FL;
    return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}

/* Makes `dest` share `src`'s extents (FICLONE, a reflink: btrfs, XFS, bcachefs); -1 with
 * errno (EOPNOTSUPP, EXDEV, EINVAL) where the file system cannot. */
static inline int CSDFetch_ficlone(int dest, int src) { return ioctl(dest, FICLONE, src); }

/* In-kernel copy between two open files from their current offsets. */
ssize_t copy_file_range(int, off_t *, int, off_t *, size_t, unsigned int);
static inline ssize_t CSDFetch_copy_file_range(int src, int dest, size_t length) {
    return copy_file_range(src, NULL, dest, NULL, length, 0);
}

#endif
