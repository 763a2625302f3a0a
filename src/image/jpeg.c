/*
 * jpeg.c - JPEG files to 8-bit RGB through libjpeg (Debian's
 * libjpeg-turbo, the library PIL links), with the settings PIL decodes
 * with: libjpeg's defaults (islow DCT, fancy upsampling) and output
 * colour space RGB, or gray replicated into R, G and B.
 *
 * CMYK and YCCK files are refused: PIL would open them as "CMYK" and
 * convert with its own formula, which we do not reproduce.
 *
 * A file that ends early is an error, as in PIL (which raises "image file
 * is truncated"); libjpeg only warns and pads with gray, so that warning
 * is turned into an error here. Other warnings (stray bytes before a
 * marker) are ignored, as PIL ignores them.
 *
 * libjpeg reports errors through error_exit, which must not return; ours
 * keeps the message and longjmps to jpeg_run, which has no locals to
 * lose. Everything allocated hangs off the JpegJob.
 */
#include "decode.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

typedef struct {
	struct jpeg_error_mgr pub; /* first: libjpeg sees only this */
	jmp_buf jump;
	char msg[JMSG_LENGTH_MAX];
	int truncated; /* the error was the end-of-file warning */
} JpegErr;

typedef struct {
	struct jpeg_decompress_struct cinfo;
	JpegErr err;
	const char *name; /* for messages */
	Diag *d;
	Image img;    /* being filled */
	uint8_t *row; /* a gray row, before replication */
} JpegJob;

static void
on_error(j_common_ptr c)
{
	JpegErr *e = (JpegErr *)c->err;
	c->err->format_message(c, e->msg);
	longjmp(e->jump, 1);
}

static void
on_message(j_common_ptr c, int level)
{
	if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF) {
		((JpegErr *)c->err)->truncated = 1;
		on_error(c);
	}
}

/* Everything that may longjmp. Returns 0, or an error already in j->d. */
static int
jpeg_body(JpegJob *j, const uint8_t *buf, size_t len)
{
	struct jpeg_decompress_struct *ci = &j->cinfo;
	jpeg_mem_src(ci, buf, (unsigned long)len);
	if (jpeg_read_header(ci, FALSE) != JPEG_HEADER_OK)
		return diag_set(j->d, IPU_EINVAL, j->name, 0, 0,
		                "JPEG: no image, only tables");
	int r =
	    image_check_size(ci->image_width, ci->image_height, j->name, j->d);
	if (r)
		return r;
	const char *space;
	switch (ci->jpeg_color_space) {
	case JCS_GRAYSCALE:
		space = "gray";
		ci->out_color_space = JCS_GRAYSCALE;
		break;
	case JCS_YCbCr:
	case JCS_RGB:
		space = ci->jpeg_color_space == JCS_RGB ? "RGB" : "YCbCr";
		ci->out_color_space = JCS_RGB;
		break;
	default:
		return diag_set(j->d, IPU_EINVAL, j->name, 0, 0,
		                "JPEG: %s images are not supported (only "
		                "gray, YCbCr and RGB)",
		                ci->jpeg_color_space == JCS_CMYK   ? "CMYK"
		                : ci->jpeg_color_space == JCS_YCCK ? "YCCK"
		                                                   : "unknown "
		                                                     "colour "
		                                                     "space");
	}
	snprintf(j->img.layout, sizeof j->img.layout, "%s%s", space,
	         ci->progressive_mode ? ", progressive" : "");
	jpeg_start_decompress(ci);
	uint32_t w = ci->output_width, h = ci->output_height;
	j->img.width = w;
	j->img.height = h;
	j->img.rgb = xmalloc((size_t)w * h * 3);
	j->row = xmalloc(w);
	while (ci->output_scanline < h) {
		uint8_t *dst = j->img.rgb + (size_t)ci->output_scanline * w * 3;
		JSAMPROW rowp = ci->out_color_space == JCS_RGB ? dst : j->row;
		jpeg_read_scanlines(ci, &rowp, 1);
		if (ci->out_color_space == JCS_GRAYSCALE)
			for (uint32_t x = 0; x < w; x++)
				dst[3 * x] = dst[3 * x + 1] = dst[3 * x + 2] =
				    j->row[x];
	}
	/* reads up to EOI: a file cut anywhere before it is truncated, as
	 * PIL says too */
	jpeg_finish_decompress(ci);
	return 0;
}

/* The setjmp frame: nothing here changes between setjmp and longjmp. */
static int
jpeg_run(JpegJob *j, const uint8_t *buf, size_t len)
{
	if (setjmp(j->err.jump))
		return diag_set(j->d, IPU_EINVAL, j->name, 0, 0, "JPEG: %s%s",
		                j->err.truncated ? "file is truncated: " : "",
		                j->err.msg);
	jpeg_create_decompress(&j->cinfo);
	return jpeg_body(j, buf, len);
}

int
decode_jpeg(const uint8_t *buf, size_t len, const char *name, Image *out,
            Diag *d)
{
	JpegJob *j = xcalloc(1, sizeof *j);
	j->name = name;
	j->d = d;
	j->cinfo.err = jpeg_std_error(&j->err.pub);
	j->err.pub.error_exit = on_error;
	j->err.pub.emit_message = on_message;
	int r = jpeg_run(j, buf, len);
	jpeg_destroy_decompress(&j->cinfo);
	free(j->row);
	if (r)
		free(j->img.rgb);
	else
		*out = j->img;
	free(j);
	return r;
}
