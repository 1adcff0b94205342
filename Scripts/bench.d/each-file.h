/*
 * each-file.h: the file walk the bench's C helpers share. Every regular file named on the
 * command line, or found under a directory named there (hidden names skipped), is read
 * whole and handed to a callback; unreadable files are counted, not fatal.
 */
#ifndef EACH_FILE_H
#define EACH_FILE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*each_file_body)(const unsigned char *data, size_t size);

static long each_file_unreadable;

static void each_file_read(const char *path, each_file_body body) {
    FILE *file = fopen(path, "rb");
    if (!file) { each_file_unreadable++; return; }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *data = size > 0 ? malloc((size_t)size) : NULL;
    if (data && fread(data, 1, (size_t)size, file) == (size_t)size) body(data, (size_t)size);
    else each_file_unreadable++;
    fclose(file);
    free(data);
}

static void each_file(const char *path, each_file_body body) {
    DIR *directory = opendir(path);
    if (!directory) { each_file_read(path, body); return; }
    struct dirent *item;
    char child[4096];
    while ((item = readdir(directory))) {
        if (item->d_name[0] == '.') continue;
        snprintf(child, sizeof child, "%s/%s", path, item->d_name);
        each_file(child, body);
    }
    closedir(directory);
}

#endif
