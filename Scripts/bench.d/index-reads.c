// The floor of a warm hit's two system calls over a cache, measured alone (RESULTS.md,
// "Round 4"): N random table-block reads from the cache's 256 index files, each way a
// lookup could read them, and N `fstatat` of entry files.
//
//   cc -O2 -o index-reads index-reads.c && ./index-reads CACHE_DIR [N]
//
// The reads need compacted buckets (a cache of some 100,000 entries or more, or one after
// `sdfetch clean`): in a `sdfetch-table-3` table a lookup reads a block of 8 lines, in a
// `sdfetch-table-4` table one slot and line (the "block" below); without tables only
// `fstatat` is measured (to compare a small cache's). Prints microseconds per call.
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t big_endian(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static long resident_kb(void) {
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    if (f) fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

typedef struct { int bucket; long offset; long length; } Block;

static long block_reads(int n, int *fds, long **starts, int *rows, long *sizes) {
    Block *blocks = malloc(sizeof(Block) * n);
    long sink = 0;
    srand(42);
    for (int i = 0; i < n; i++) {
        int b = rand() % 256, r = rand() % rows[b];
        blocks[i] = (Block){b, starts[b][r], starts[b][r + 1] - starts[b][r]};
    }
    static char buffer[1 << 16];
    for (int round = 0; round < 3; round++) {
        double t[5];
        t[0] = now();
        for (int i = 0; i < n; i++) sink += pread(fds[blocks[i].bucket], buffer, blocks[i].length, blocks[i].offset);
        t[1] = now();
        // The same length from the start of the block's page: no read spans two pages.
        for (int i = 0; i < n; i++) {
            long length = blocks[i].length < 4096 ? blocks[i].length : 4096;
            sink += pread(fds[blocks[i].bucket], buffer, length, blocks[i].offset & ~4095L);
        }
        t[2] = now();
        // Half the bytes (a block of 4 lines instead of 8).
        for (int i = 0; i < n; i++)
            sink += pread(fds[blocks[i].bucket], buffer, blocks[i].length / 2, blocks[i].offset);
        t[3] = now();
        // One line's worth (what a fence pointing at each line would read).
        for (int i = 0; i < n; i++) sink += pread(fds[blocks[i].bucket], buffer, 300, blocks[i].offset);
        t[4] = now();
        printf("pread us/read: block %.2f | page-aligned %.2f | half block %.2f | 300 bytes %.2f\n",
               (t[1] - t[0]) / n * 1e6, (t[2] - t[1]) / n * 1e6, (t[3] - t[2]) / n * 1e6, (t[4] - t[3]) / n * 1e6);
    }
    // Through a mapping: no system call, but a page fault per block and every page mapped
    // around it counted in the resident set.
    unsigned char *maps[256];
    for (int b = 0; b < 256; b++) {
        maps[b] = mmap(NULL, sizes[b], PROT_READ, MAP_SHARED, fds[b], 0);
        if (maps[b] == MAP_FAILED) return 1;
        madvise(maps[b], sizes[b], MADV_RANDOM);
    }
    long before = resident_kb();
    double t0 = now();
    for (int i = 0; i < n; i++) {
        const unsigned char *block = maps[blocks[i].bucket] + blocks[i].offset;
        sink += memchr(block + 64, 0xFF, blocks[i].length - 64) != NULL;
        sink += block[blocks[i].length - 1];
    }
    printf("mmap (MADV_RANDOM) us/read: %.2f, resident set +%ld KB\n", (now() - t0) / n * 1e6, resident_kb() - before);
    return sink;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s CACHE_DIR [N]\n", argv[0]); return 2; }
    int n = argc > 2 ? atoi(argv[2]) : 10000;
    int fds[256];
    long *starts[256], sizes[256];
    int rows[256], tables = 1;
    for (int b = 0; b < 256; b++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/index/%02x", argv[1], b);
        fds[b] = open(path, O_RDONLY);
        unsigned char header[32];
        struct stat info;
        int lines = 0;  // 0: blocks of 8 lines (table-3); 1: a slot and line each (table-4)
        if (fds[b] < 0 || fstat(fds[b], &info) != 0 || pread(fds[b], header, 32, 0) != 32
            || (memcmp(header, "sdfetch-table-3\n", 16) != 0 && !(lines = !memcmp(header, "sdfetch-table-4\n", 16)))) {
            fprintf(stderr, "%s: no table, so no block reads\n", path);
            tables = 0;
            break;
        }
        sizes[b] = info.st_size;
        long count = (long)big_endian(header + 16), end = (long)big_endian(header + 24);
        long per_row = lines ? 16 : 8, row_size = lines ? 72 : 24, fence_rows = (count + per_row - 1) / per_row;
        unsigned char *fence = malloc(row_size * fence_rows + 1);
        if (pread(fds[b], fence, row_size * fence_rows, 32) != row_size * fence_rows) return 1;
        // A block's start per fence row, or (table-4) each line's start from its row's
        // offset and the lengths after it: the lines lie back to back, slot, LF, line, LF.
        rows[b] = (int)(lines ? count : fence_rows);
        starts[b] = malloc(sizeof(long) * (rows[b] + 1));
        for (long r = 0, at = 0; r < fence_rows; r++) {
            const unsigned char *row = fence + row_size * r;
            long offset = (long)big_endian(row + 16);
            if (!lines) { starts[b][r] = offset; continue; }
            for (int i = 0; i < 16 && at < count; i++, at++) {
                starts[b][at] = offset;
                offset += 10 + (row[24 + 2 * i] << 8 | row[25 + 2 * i]);
            }
        }
        starts[b][rows[b]] = end;
        free(fence);
    }
    long sink = 0;
    if (tables) sink = block_reads(n, fds, starts, rows, sizes);
    // fstatat of entry files, one per bucket in turn, as a warm hit checks its entry.
    int folders[256];
    char (*names)[256] = malloc(256L * n);
    int *which = malloc(sizeof(int) * n), found = 0;
    DIR *listings[256];
    for (int b = 0; b < 256; b++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/entries/%02x", argv[1], b);
        folders[b] = open(path, O_RDONLY | O_DIRECTORY);
        listings[b] = opendir(path);
        if (folders[b] < 0 || !listings[b]) return 1;
    }
    for (int b = 0, empty = 0; found < n && empty < 256; b = (b + 1) % 256) {
        struct dirent *entry;
        while ((entry = readdir(listings[b])) && entry->d_name[0] == '.') {}
        if (!entry) { empty++; continue; }
        empty = 0;
        snprintf(names[found], sizeof names[found], "%s", entry->d_name);
        which[found++] = b;
    }
    for (int round = 0; round < 3; round++) {
        struct stat info;
        double t0 = now();
        for (int i = 0; i < found; i++) sink += fstatat(folders[which[i]], names[i], &info, AT_SYMLINK_NOFOLLOW);
        printf("fstatat us/call over %d entry files: %.2f\n", found, (now() - t0) / found * 1e6);
    }
    return sink == 42;
}
