/*
 * floor-check: the least CPU any tool must spend to meet sdfetch's default check on files
 * already downloaded. Per file: SHA-256 of every byte (OpenSSL, with the CPU's SHA
 * instructions), and for PNG every chunk's CRC-32 and the image data inflated completely
 * with libdeflate (the fastest inflate available here, faster than the zlib sdfetch uses).
 * The JPEG and GIF walks are left out: they read one byte in thousands. The bench runs it
 * after `curl --parallel` and a copy as the "floor" tool; reading the files back costs it a
 * little that a downloader holding the bytes in memory would not pay, so it is a floor
 * within a few hundredths of a second. With --hash-only it only hashes: the floor of a
 * `--verify full` run, whose decoders (bench.d/decode-pass.c) inflate the PNGs themselves.
 * Build: cc -O2 floor-check.c -lcrypto -ldeflate
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <openssl/evp.h>

#include "each-file.h"

static struct libdeflate_decompressor *inflater;
static int hash_only;
static long files, pngs, broken;
static unsigned long long hashed, inflated;

static uint32_t big_endian(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Chunk walk with CRCs, IDAT gathered and inflated into a buffer of the size IHDR implies. */
static int check_png(const unsigned char *data, size_t size) {
    size_t offset = 8, gathered = 0;
    unsigned char *idat = malloc(size);
    uint64_t width = 0, height = 0, bits_per_pixel = 0;
    int ok = idat != NULL;
    while (ok && offset + 12 <= size) {
        uint32_t length = big_endian(data + offset);
        const unsigned char *type = data + offset + 4, *body = type + 4;
        if (length > size - offset - 12) { ok = 0; break; }
        if (libdeflate_crc32(0, type, length + 4) != big_endian(body + length)) { ok = 0; break; }
        if (memcmp(type, "IHDR", 4) == 0 && length >= 13) {
            static const int channels[7] = {1, 0, 3, 1, 2, 0, 4};
            width = big_endian(body);
            height = big_endian(body + 4);
            bits_per_pixel = (uint64_t)body[8] * channels[body[9] % 7];
        } else if (memcmp(type, "IDAT", 4) == 0) {
            memcpy(idat + gathered, body, length);
            gathered += length;
        } else if (memcmp(type, "IEND", 4) == 0) {
            break;
        }
        offset += 12 + (size_t)length;
    }
    if (ok && gathered > 2) {
        /* Adam7's extra filter bytes and rounding stay under 14 bytes per row. */
        size_t capacity = height * ((width * bits_per_pixel + 7) / 8 + 1) + 14 * height + 64;
        unsigned char *pixels = malloc(capacity);
        size_t used = 0, produced = 0;
        ok = pixels && libdeflate_deflate_decompress_ex(inflater, idat + 2, gathered - 2, pixels, capacity,
                                                        &used, &produced) == LIBDEFLATE_SUCCESS;
        inflated += produced;
        free(pixels);
    }
    free(idat);
    return ok;
}

static void check_file(const unsigned char *data, size_t size) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_size = 0;
    EVP_Digest(data, size, digest, &digest_size, EVP_sha256(), NULL);
    hashed += size;
    files++;
    if (!hash_only && size > 8 && memcmp(data, "\x89PNG", 4) == 0) {
        pngs++;
        if (!check_png(data, size)) broken++;
    }
}

int main(int argc, char **argv) {
    inflater = libdeflate_alloc_decompressor();
    if (!inflater) return 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--hash-only") == 0) hash_only = 1;
        else each_file(argv[i], check_file);
    }
    printf("floor-check: %ld files, %llu bytes hashed, %ld PNG (%llu bytes inflated), %ld broken\n", files, hashed,
           pngs, inflated, broken);
    libdeflate_free_decompressor(inflater);
    return 0;
}
