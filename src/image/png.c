/*
 * png.c - PNG files to 8-bit RGB through libpng, as PIL decodes them and
 * then converts with convert("RGB").
 *
 * libpng is asked only to unpack sub-byte samples (png_set_packing, which
 * keeps their values) and to undo interlacing; the conversion to RGB is
 * ours, so that it follows PIL (PngImagePlugin's modes and rawmodes, then
 * Convert.c) rather than libpng's own expansions:
 *   gray 1/2/4-bit  scaled to 0..255 (x255, x85, x17), replicated
 *   gray 16-bit     PIL opens it as mode "I" and convert("RGB") clips:
 *                   min(value, 255), not value >> 8
 *   gray+alpha      gray replicated (16-bit: the high byte), alpha dropped
 *   RGB, RGBA       16-bit samples: the high byte; alpha dropped
 *   palette         looked up; an index past the PLTE entries gives
 *                   (i, i, i), PIL's default gray-ramp palette
 * tRNS, gAMA, sBIT and colour profiles are ignored, as PIL's convert does.
 *
 * libpng reports errors by longjmp; the setjmp sits in png_run, which has
 * no locals to lose, and everything allocated hangs off the PngJob so the
 * caller frees it on either path.
 */
#include "decode.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const uint8_t *buf; /* the file */
	size_t len, pos;    /* its length and the read position */
	const char *name;   /* for messages */
	Diag *d;
	png_structp png;
	png_infop info;
	uint8_t *raw;          /* libpng's rows: the whole image if interlaced,
	                          else one row */
	png_bytep *rows;       /* interlaced: pointers into raw */
	int depth, color_type; /* of the file, before png_set_packing */
	Image img;             /* being filled */
	char msg[256];         /* libpng's error message */
} PngJob;

static void
read_bytes(png_structp png, png_bytep out, size_t n)
{
	PngJob *j = png_get_io_ptr(png);
	if (n > j->len - j->pos)
		png_error(png, "file is truncated");
	memcpy(out, j->buf + j->pos, n);
	j->pos += n;
}

static void
on_error(png_structp png, png_const_charp msg)
{
	PngJob *j = png_get_error_ptr(png);
	snprintf(j->msg, sizeof j->msg, "%s", msg);
	png_longjmp(png, 1);
}

/* Warnings (bad ancillary CRCs, odd profiles) do not change the pixels PIL
 * gives, so they are dropped. */
static void
on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

/* The pixel rules of the file comment, for one row of libpng's output
 * (after png_set_packing: one byte per sub-byte sample). */
static void
convert_row(const PngJob *j, const uint8_t *src, uint8_t *dst)
{
	int ct = j->color_type, depth = j->depth;
	size_t bps = depth == 16 ? 2 : 1; /* bytes per sample */
	size_t step = png_get_channels(j->png, j->info) * bps;
	png_colorp pal = NULL;
	int npal = 0;
	if (ct == PNG_COLOR_TYPE_PALETTE)
		png_get_PLTE(j->png, j->info, &pal, &npal);
	/* sub-byte gray to 0..255: 255 / (2^depth - 1) */
	unsigned scale = depth < 8 ? 255u / ((1u << depth) - 1) : 1;
	for (uint32_t x = 0; x < j->img.width; x++, src += step, dst += 3) {
		if (ct == PNG_COLOR_TYPE_PALETTE) {
			uint8_t i = src[0];
			dst[0] = i < npal ? pal[i].red : i;
			dst[1] = i < npal ? pal[i].green : i;
			dst[2] = i < npal ? pal[i].blue : i;
		} else if (ct & PNG_COLOR_MASK_COLOR) {
			dst[0] = src[0];
			dst[1] = src[bps];
			dst[2] = src[2 * bps];
		} else {
			unsigned g = src[0] * scale;
			if (ct == PNG_COLOR_TYPE_GRAY && depth == 16)
				g = src[0] ? 255 : src[1];
			dst[0] = dst[1] = dst[2] = (uint8_t)g;
		}
	}
}

/* By PNG colour type (libpng has checked it is one of these). */
static const char *const color_type_names[] = {
    [PNG_COLOR_TYPE_GRAY] = "gray",
    [PNG_COLOR_TYPE_RGB] = "RGB",
    [PNG_COLOR_TYPE_PALETTE] = "palette",
    [PNG_COLOR_TYPE_GRAY_ALPHA] = "gray+alpha",
    [PNG_COLOR_TYPE_RGB_ALPHA] = "RGBA",
};

/* Everything that may longjmp. Returns 0, or an error already in j->d. */
static int
png_body(PngJob *j)
{
	png_set_read_fn(j->png, j, read_bytes);
	png_read_info(j->png, j->info);
	uint32_t w = png_get_image_width(j->png, j->info);
	uint32_t h = png_get_image_height(j->png, j->info);
	int r = image_check_size(w, h, j->name, j->d);
	if (r)
		return r;
	int depth = j->depth = png_get_bit_depth(j->png, j->info);
	int ct = j->color_type = png_get_color_type(j->png, j->info);
	int interlaced =
	    png_get_interlace_type(j->png, j->info) != PNG_INTERLACE_NONE;
	snprintf(j->img.layout, sizeof j->img.layout, "%s %d-bit%s",
	         color_type_names[ct], depth, interlaced ? ", interlaced" : "");
	if (depth < 8)
		png_set_packing(j->png);
	if (interlaced)
		png_set_interlace_handling(j->png);
	png_read_update_info(j->png, j->info);
	size_t rowbytes = png_get_rowbytes(j->png, j->info);
	j->img.width = w;
	j->img.height = h;
	j->img.rgb = xmalloc((size_t)w * h * 3);
	if (interlaced) {
		/* the passes fill rows in turn: keep them all */
		j->raw = xmalloc(rowbytes * h);
		j->rows = xmalloc(h * sizeof *j->rows);
		for (uint32_t y = 0; y < h; y++)
			j->rows[y] = j->raw + (size_t)y * rowbytes;
		png_read_image(j->png, j->rows);
		for (uint32_t y = 0; y < h; y++)
			convert_row(j, j->raw + (size_t)y * rowbytes,
			            j->img.rgb + (size_t)y * w * 3);
	} else {
		j->raw = xmalloc(rowbytes);
		for (uint32_t y = 0; y < h; y++) {
			png_read_row(j->png, j->raw, NULL);
			convert_row(j, j->raw, j->img.rgb + (size_t)y * w * 3);
		}
	}
	return 0;
}

/* The setjmp frame: nothing here changes between setjmp and longjmp. */
static int
png_run(PngJob *j)
{
	if (setjmp(png_jmpbuf(j->png)))
		return diag_set(j->d, IPU_EINVAL, j->name, 0, 0, "PNG: %s",
		                j->msg);
	return png_body(j);
}

int
decode_png(const uint8_t *buf, size_t len, const char *name, Image *out,
           Diag *d)
{
	PngJob j = {.buf = buf, .len = len, .name = name, .d = d};
	j.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &j, on_error,
	                               on_warning);
	if (!j.png || !(j.info = png_create_info_struct(j.png))) {
		png_destroy_read_struct(&j.png, NULL, NULL);
		return diag_set(d, IPU_ENOMEM, name, 0, 0,
		                "PNG: cannot set up libpng");
	}
	int r = png_run(&j);
	png_destroy_read_struct(&j.png, &j.info, NULL);
	free(j.raw);
	free(j.rows);
	if (r) {
		free(j.img.rgb);
		return r;
	}
	*out = j.img;
	return IPU_OK;
}
