/* jpeglib.h is not self-contained: it needs size_t and FILE declared first. */
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
