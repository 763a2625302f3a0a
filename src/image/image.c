/*
 * image.c - image_load and image_decode: pick the decoder by the file's
 * signature (its first bytes; the name's extension is not consulted).
 */
#include "decode.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One row per format a file can be: its signature and decoder. */
static const struct {
	ImageFormat format;
	const char *name;
	const uint8_t *magic;
	size_t magic_len;
	int (*decode)(const uint8_t *, size_t, const char *, Image *, Diag *);
} formats[] = {
    {IMAGE_PNG, "PNG", (const uint8_t *)"\x89PNG\r\n\x1a\n", 8, decode_png},
    /* SOI then the first marker's 0xff */
    {IMAGE_JPEG, "JPEG", (const uint8_t *)"\xff\xd8\xff", 3, decode_jpeg},
};
enum { NFORMATS = sizeof formats / sizeof formats[0] };

const char *
image_format_name(ImageFormat f)
{
	for (int i = 0; i < NFORMATS; i++)
		if (formats[i].format == f)
			return formats[i].name;
	return "raw";
}

int
image_check_size(uint64_t width, uint64_t height, const char *name, Diag *d)
{
	if (!width || !height)
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "image has no pixels (%" PRIu64 "x%" PRIu64 ")",
		                width, height);
	if (width > IMAGE_MAX_PIXELS || height > IMAGE_MAX_PIXELS ||
	    width * height > IMAGE_MAX_PIXELS)
		return diag_set(d, IPU_ERANGE, name, 0, 0,
		                "image of %" PRIu64 "x%" PRIu64
		                " pixels is larger than the limit of %" PRIu64
		                " pixels",
		                width, height, IMAGE_MAX_PIXELS);
	return 0;
}

int
image_decode(const uint8_t *buf, size_t len, const char *name, Image *out,
             Diag *d)
{
	memset(out, 0, sizeof *out);
	if (len == 0)
		return diag_set(d, IPU_EINVAL, name, 0, 0,
		                "empty file, not an image");
	for (int i = 0; i < NFORMATS; i++) {
		if (len < formats[i].magic_len ||
		    memcmp(buf, formats[i].magic, formats[i].magic_len))
			continue;
		int r = formats[i].decode(buf, len, name, out, d);
		if (r)
			return r;
		out->format = formats[i].format;
		return IPU_OK;
	}
	return diag_set(d, IPU_EINVAL, name, 0, 0,
	                "not a PNG or JPEG file (unknown signature %02x %02x "
	                "%02x %02x)",
	                buf[0], len > 1 ? buf[1] : 0, len > 2 ? buf[2] : 0,
	                len > 3 ? buf[3] : 0);
}

int
image_load(const char *path, Image *out, Diag *d)
{
	uint8_t *buf;
	size_t len;
	memset(out, 0, sizeof *out);
	int r = read_file(path, &buf, &len, d);
	if (r)
		return r;
	r = image_decode(buf, len, path, out, d);
	free(buf);
	return r;
}

void
image_free(Image *img)
{
	free(img->rgb);
	img->rgb = NULL;
}
