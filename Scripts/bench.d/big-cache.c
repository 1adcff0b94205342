/* big-cache.c - writes an sdfetch cache of N entries straight in the on-disk format, for
 * the bench's `scale` case (a million entries through sdfetch would take an hour of
 * fetching; written here they take about a minute).
 *
 *   big-cache CACHE N URL_PREFIX IMAGE FORMAT WIDTH HEIGHT VERSION [STAMP [index-only]]
 *
 * Entry i is the URL `URL_PREFIX?e=i` with IMAGE's bytes (each entry its own file),
 * FORMAT/WIDTH/HEIGHT as recorded, stored a minute ago and never used since. VERSION 3
 * writes every bucket as a compacted table (sdfetch's `clean` writes the same), VERSION 2
 * as log lines only (the format before tables, for the previous builds). STAMP (seconds
 * since 1970, default a minute ago) is every entry's store time and file mtime; with
 * `index-only` the entry files are left as they are (a second index over the same files,
 * hard-linked by `cp -al`, for another format). The layout is
 * that of Sources/SDFetchCore/SDFetchCore.docc/OnDiskFormat.md; the URLs must already be
 * in sdfetch's normal form (lower-case scheme and host, no default port, no fragment).
 *
 * cc -O2 -o big-cache big-cache.c -lcrypto
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct item {
    uint64_t high, low;
    long index;
};

static void die(const char *what) {
    perror(what);
    exit(1);
}

static uint64_t fnv(const char *bytes, size_t count) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < count; i++) hash = (hash ^ (unsigned char)bytes[i]) * 0x100000001b3ULL;
    return hash;
}

static void hex(const unsigned char *bytes, size_t count, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < count; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * count] = 0;
}

static uint64_t load64(const unsigned char *bytes) {
    uint64_t value = 0;
    for (int i = 0; i < 8; i++) value = value << 8 | bytes[i];
    return value;
}

static void store64(unsigned char *out, uint64_t value) {
    for (int i = 7; i >= 0; i--) {
        out[i] = value & 0xff;
        value >>= 8;
    }
}

static int by_digest(const void *a, const void *b) {
    const struct item *x = a, *y = b;
    if (x->high != y->high) return x->high < y->high ? -1 : 1;
    if (x->low != y->low) return x->low < y->low ? -1 : 1;
    return 0;
}

static void write_all(int fd, const void *bytes, size_t count) {
    const char *p = bytes;
    while (count > 0) {
        ssize_t n = write(fd, p, count);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("write");
        }
        p += n;
        count -= (size_t)n;
    }
}

static void write_file(const char *path, const void *bytes, size_t count) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die(path);
    write_all(fd, bytes, count);
    close(fd);
}

int main(int argc, char **argv) {
    if (argc < 9 || argc > 11) {
        fprintf(stderr, "usage: big-cache CACHE N URL_PREFIX IMAGE FORMAT WIDTH HEIGHT VERSION [STAMP [index-only]]\n");
        return 2;
    }
    const char *cache = argv[1], *prefix = argv[3], *format = argv[5], *width = argv[6], *height = argv[7];
    long count = atol(argv[2]);
    int version = atoi(argv[8]);
    FILE *image_file = fopen(argv[4], "rb");
    if (!image_file) die(argv[4]);
    static unsigned char image[1 << 20];
    size_t image_bytes = fread(image, 1, sizeof image, image_file);
    fclose(image_file);
    unsigned char sha[32];
    char sha_hex[65];
    SHA256(image, image_bytes, sha);
    hex(sha, 32, sha_hex);

    char path[4096];
    const char *folders[] = {"", "/entries", "/index", "/failed", "/tmp", "/locks"};
    for (size_t i = 0; i < sizeof folders / sizeof *folders; i++) {
        snprintf(path, sizeof path, "%s%s", cache, folders[i]);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) die(path);
    }
    for (int bucket = 0; bucket < 256; bucket++) {
        snprintf(path, sizeof path, "%s/entries/%02x", cache, bucket);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) die(path);
    }
    char format_text[128];
    snprintf(format_text, sizeof format_text, "sdfetch cache format %d\nsee README.md, \"Cache format\", of sdfetch\n",
             version);
    snprintf(path, sizeof path, "%s/FORMAT", cache);
    write_file(path, format_text, strlen(format_text));

    long long stamp = argc > 9 ? atoll(argv[9]) : (long long)time(NULL) - 60;
    int index_only = argc > 10 && strcmp(argv[10], "index-only") == 0;
    long long stored = stamp * 1000000000LL;
    struct timespec times[2] = {{.tv_sec = 0, .tv_nsec = UTIME_OMIT}, {.tv_sec = stamp, .tv_nsec = 0}};

    struct item *items = malloc(sizeof *items * (size_t)count);
    long *bucket_counts = calloc(257, sizeof *bucket_counts);
    if (!items || !bucket_counts) die("malloc");
    char url[4096];
    for (long i = 0; i < count; i++) {
        snprintf(url, sizeof url, "%s?e=%ld", prefix, i);
        unsigned char digest[32];
        SHA256((const unsigned char *)url, strlen(url), digest);
        items[i] = (struct item){load64(digest), load64(digest + 8), i};
        bucket_counts[digest[0]]++;
    }
    qsort(items, (size_t)count, sizeof *items, by_digest);

    /* One bucket at a time: its entry files, then its index file. */
    long start = 0;
    char *lines = NULL;
    size_t lines_capacity = 0;
    for (int bucket = 0; bucket < 256; bucket++) {
        long n = bucket_counts[bucket];
        size_t need = (size_t)n * (512 + strlen(prefix));
        if (need > lines_capacity) {
            lines_capacity = need;
            lines = realloc(lines, lines_capacity);
            if (!lines) die("realloc");
        }
        long fences = (n + 7) / 8; /* one fence row per block: 8 use slots, then up to 8 lines */
        unsigned char *fence = malloc((size_t)fences * 24 + 1);
        size_t used = 0;
        size_t lines_start = 32 + (size_t)fences * 24;
        for (long k = 0; k < n; k++) {
            struct item *item = &items[start + k];
            unsigned char digest[16];
            store64(digest, item->high);
            store64(digest + 8, item->low);
            char digest_hex[33];
            hex(digest, 16, digest_hex);
            if (!index_only) {
                snprintf(path, sizeof path, "%s/entries/%02x/%s", cache, bucket, digest_hex);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd < 0) die(path);
                write_all(fd, image, image_bytes);
                if (futimens(fd, times) != 0) die("futimens");
                close(fd);
            }
            if (k % 8 == 0) {
                memcpy(fence + k / 8 * 24, digest, 16);
                store64(fence + k / 8 * 24 + 16, (uint64_t)(lines_start + used)); /* the block's slots */
                if (version >= 3) {
                    for (int slot = 0; slot < 8; slot++) store64((unsigned char *)lines + used + slot * 8, k + slot < n ? (uint64_t)stored : 0);
                    used += 64;
                }
            }
            char payload[8192];
            int length = snprintf(payload, sizeof payload, "P\t%s\t%lld\t%lld\t%lld\t%zu\t%s\t%s\t%s\t%s\t\t\t%s?e=%ld",
                                  digest_hex, stamp, stored, stored, image_bytes, format, width, height, sha_hex,
                                  prefix, item->index);
            char check[17];
            snprintf(check, sizeof check, "%016" PRIx64, fnv(payload, (size_t)length));
            used += (size_t)snprintf(lines + used, lines_capacity - used, "\n%s %s\n", check, payload);
        }
        snprintf(path, sizeof path, "%s/index/%02x", cache, bucket);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) die(path);
        if (version >= 3) {
            unsigned char header[32];
            memcpy(header, "sdfetch-table-3\n", 16);
            store64(header + 16, (uint64_t)n);
            store64(header + 24, (uint64_t)(lines_start + used));
            write_all(fd, header, 32);
            write_all(fd, fence, (size_t)fences * 24);
        }
        write_all(fd, lines, used);
        close(fd);
        free(fence);
        start += n;
    }
    free(lines);
    free(items);
    free(bucket_counts);
    return 0;
}
