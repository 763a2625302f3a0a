/*
 * decode.h - the format decoders behind image_decode (private to
 * src/image/). Each takes a whole file image whose signature has been
 * checked, fills out (rgb, width, height, layout) or returns a negative
 * IPU_E* with a Diag naming `name`, and never leaves memory behind on
 * failure.
 */
#ifndef IPU_IMAGE_DECODE_H
#define IPU_IMAGE_DECODE_H

#include "image.h"

int decode_png(const uint8_t *buf, size_t len, const char *name, Image *out,
               Diag *d);
int decode_jpeg(const uint8_t *buf, size_t len, const char *name, Image *out,
                Diag *d);

/* Diag for width x height beyond IMAGE_MAX_PIXELS or zero; 0 if fine. */
int image_check_size(uint64_t width, uint64_t height, const char *name,
                     Diag *d);

#endif
