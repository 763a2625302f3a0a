/*
 * test_kernel_vadd.c - kernels/vadd.S on one tile: dst += sum of sources,
 * f16 and f32, several sizes (including fewer atoms than workers) in one
 * to three segments, and small ones in 5 and 20 (a worker's range over
 * several; 2 to 6 segments, a segment's own workers where that is
 * cheaper), the So400m tower's shapes, apart in dst, back to back in the
 * sources, checked
 * element by element against sequential IEEE additions (each source added
 * and rounded in turn, as the kernel does), and the call's cycles against
 * vadd_cycles; vadd_bias_f16 the same with values whose sums round and a
 * bias row added last, and vadd_bias_res_f16 with a residual operand
 * (laid out as dst) added after the bias; vadd_bias_gelu_f16_f8 (the
 * GELU and its cast to f8 fused) byte for byte against vadd_bias_f16
 * followed by ew_gelu_f16_f8 on another tile; vadd_norm_f16_f8 (the row
 * division and its cast to f8 fused) byte for byte against vadd_norm_f16
 * followed by ew_cast_f16_f8 on another tile.
 */
#include "support.h"

#include <string.h>

#include "../src/asm/asm.h"
#include "../src/bench/tile_kernel.h"
#include "../src/codegen/codegen.h"
#include "../src/kernels/elementwise.h"
#include "../src/kernels/kernels.h"
#include "../src/kernels/vadd.h"
#include "../src/util/fp.h"

enum { DST = 0x90000, SRC = 0xA0000, ARGS = 0x70000 };

static uint32_t
bits_of(int f32, uint32_t i, uint32_t k)
{
	/* small values of both signs, exact in f16 */
	int v = (int)((i * 37u + k * 101u) % 201u) - 100;
	if (f32) {
		float f = (float)v / 64.0f;
		uint32_t b;
		memcpy(&b, &f, 4);
		return b;
	}
	unsigned fl = 0;
	return fp_f64_to_f16(v / 64.0, FP_RNE, 0, FP_OV_IEEE, &fl);
}

/* The shapes take turns at the nominal profile and its bounds. */
static void
check(int f32, uint32_t atoms, uint32_t nsrc, uint32_t nseg)
{
	const Chip *c =
	    profile_chip((TimingBound)((atoms + nsrc + nseg + f32) % 3));
	static const char *const names[] = {"vadd"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &img, &d), 0);
	Tile *t = tile_new(c, 0);
	tile_load_image(t, &img);
	/* segments apart in dst (a gap after each), back to back in each
	 * source */
	uint32_t es = f32 ? 4 : 2, n = atoms * 8 / es;
	uint32_t dst_seg = atoms * 8 + 32, src_seg = atoms * 8;
	uint32_t stride = nseg * src_seg + 64;
	for (uint32_t g = 0; g < nseg; g++)
		for (uint32_t i = 0; i < n; i++) {
			uint32_t e = g * n + i, v = bits_of(f32, e, 99);
			tile_write(t, DST + g * dst_seg + i * es, &v, es);
			for (uint32_t k = 0; k < nsrc; k++) {
				v = bits_of(f32, e, k);
				tile_write(
				    t, SRC + k * stride + g * src_seg + i * es,
				    &v, es);
			}
		}
	uint8_t args[VADD_ARGS_BYTES];
	vadd_args_fill(&(VaddCall){.dst = DST,
	                           .src = SRC,
	                           .stride = stride,
	                           .nsrc = nsrc,
	                           .atoms = atoms,
	                           .nseg = nseg,
	                           .dst_seg = dst_seg,
	                           .src_seg = src_seg},
	               args);
	TileKernelCall k = {vadd_entry(f32, 0), "vadd", args, sizeof args,
	                    ARGS};
	if (tile_kernel_call(t, &img, &k, NULL, &d))
		fail_msg("%s", d.msg);
	for (uint32_t e = 0; e < nseg * n; e++) {
		uint32_t g = e / n, i = e % n;
		double want;
		unsigned fl = 0;
		if (f32) {
			float acc;
			uint32_t b = bits_of(f32, e, 99);
			memcpy(&acc, &b, 4);
			for (uint32_t k = 0; k < nsrc; k++) {
				float s;
				b = bits_of(f32, e, k);
				memcpy(&s, &b, 4);
				acc = acc + s;
			}
			want = acc;
		} else {
			uint16_t acc = (uint16_t)bits_of(f32, e, 99);
			for (uint32_t k = 0; k < nsrc; k++)
				acc = fp_f64_to_f16(
				    fp_f16_to_f64(acc) +
				        fp_f16_to_f64(
				            (uint16_t)bits_of(f32, e, k)),
				    FP_RNE, 0, FP_OV_IEEE, &fl);
			want = fp_f16_to_f64(acc);
		}
		uint32_t got = 0;
		tile_read(t, DST + g * dst_seg + i * es, &got, es);
		double got_v;
		if (f32) {
			float f;
			memcpy(&f, &got, 4);
			got_v = f;
		} else {
			got_v = fp_f16_to_f64((uint16_t)got);
		}
		if (got_v != want)
			fail_msg("%s atoms %u nsrc %u nseg %u: [%u][%u] = %g, "
			         "want %g",
			         f32 ? "f32" : "f16", atoms, nsrc, nseg, g, i,
			         got_v, want);
	}
	assert_int_equal(t->cycle, vadd_cycles(c, atoms, nsrc, nseg, 0));
	tile_free(t);
	img_free(&img);
}

/* An f16 value of any sign and an exponent from 2^-6 to 2^5 (a
 * pseudo-random one for each i, k): sums of them round. */
static uint16_t
f16_of(uint32_t i, uint32_t k)
{
	uint32_t h = (i * 2654435761u) ^ (k * 40503u + 0x9e37u);
	h ^= h >> 13;
	h *= 0x5bd1e995u;
	h ^= h >> 15;
	return (uint16_t)((h & 0x8000u) | ((9 + (h >> 16) % 12) << 10) |
	                  (h & 0x3ffu));
}

static uint16_t
f16_add(uint16_t a, uint16_t b)
{
	unsigned fl = 0;
	/* exact in f64, rounded once: the IEEE f16 sum */
	return fp_f64_to_f16(fp_f16_to_f64(a) + fp_f16_to_f64(b), FP_RNE, 0,
	                     FP_OV_IEEE, &fl);
}

/* check_bias's data on t: nseg segments of `rows` rows of a 16-column
 * panel at DST (dst_seg = the rows' bytes + 32 apart), nsrc sources back
 * to back at SRC (stride = their segments + 64 apart), a bias row per
 * segment at bias (bseg apart) and, if res, h laid out as dst there. */
static void
write_bias_case(Tile *t, uint32_t rows, uint32_t nsrc, uint32_t nseg,
                uint32_t bias, uint32_t bseg, uint32_t res)
{
	uint32_t atoms = rows * VADD_ROW_ATOMS, n = atoms * 4, row = 16;
	uint32_t dst_seg = atoms * 8 + 32, src_seg = atoms * 8;
	uint32_t stride = nseg * src_seg + 64;
	for (uint32_t g = 0; g < nseg; g++) {
		for (uint32_t i = 0; i < row; i++) {
			uint16_t v = f16_of(g * row + i, 77);
			tile_write(t, bias + g * bseg + i * 2, &v, 2);
		}
		for (uint32_t i = 0; i < n; i++) {
			uint32_t e = g * n + i;
			uint16_t v = f16_of(e, 99);
			tile_write(t, DST + g * dst_seg + i * 2, &v, 2);
			v = f16_of(e, 55);
			if (res)
				tile_write(t, res + g * dst_seg + i * 2, &v, 2);
			for (uint32_t k = 0; k < nsrc; k++) {
				v = f16_of(e, k);
				tile_write(
				    t, SRC + k * stride + g * src_seg + i * 2,
				    &v, 2);
			}
		}
	}
}

/* The vadd_bias_f16 call (with res, vadd_bias_res_f16) on
 * write_bias_case's data (its bias at bias, h at res). */
static VaddCall
bias_call(uint32_t rows, uint32_t nsrc, uint32_t nseg, uint32_t bias,
          uint32_t bseg, uint32_t res)
{
	uint32_t atoms = rows * VADD_ROW_ATOMS, src_seg = atoms * 8;
	return (VaddCall){.dst = DST,
	                  .src = SRC,
	                  .bias = bias,
	                  .res = res,
	                  .stride = nseg * src_seg + 64,
	                  .nsrc = nsrc,
	                  .atoms = atoms,
	                  .nseg = nseg,
	                  .dst_seg = atoms * 8 + 32,
	                  .src_seg = src_seg,
	                  .bias_seg = bseg,
	                  .has_bias = 1,
	                  .has_res = res != 0};
}

/* vadd_bias_f16: nseg segments of `rows` rows of a 16-column panel, a
 * bias row each; dst must be the reduction's sum rounded source by
 * source, then the bias added (the bits of a vadd followed by the bias
 * add), and the cycles vadd_cycles'. With res (vadd_bias_res_f16): then
 * h added, h laid out as dst (the bits of the residual add after them). */
static void
check_bias(uint32_t rows, uint32_t nsrc, uint32_t nseg, int res)
{
	const Chip *c = profile_chip((TimingBound)((rows + nsrc + nseg) % 3));
	static const char *const names[] = {"vadd"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &img, &d), 0);
	Tile *t = tile_new(c, 0);
	tile_load_image(t, &img);
	enum {
		BIAS = 0xB0000,
		RES = 0xC0000,
		BSEG = 64,
		ROW = VADD_ROW_ATOMS * 4
	};
	uint32_t atoms = rows * VADD_ROW_ATOMS, n = atoms * 4;
	uint32_t dst_seg = atoms * 8 + 32;
	write_bias_case(t, rows, nsrc, nseg, BIAS, BSEG, RES);
	uint8_t args[VADD_BIAS_ARGS_BYTES];
	VaddCall v = bias_call(rows, nsrc, nseg, BIAS, BSEG, res ? RES : 0);
	vadd_args_fill(&v, args);
	TileKernelCall k = {vadd_entry(0, res ? 2 : 1), "vadd", args,
	                    sizeof args, ARGS};
	if (tile_kernel_call(t, &img, &k, NULL, &d))
		fail_msg("%s", d.msg);
	uint32_t other = 0; /* results that the bias's place would change */
	for (uint32_t e = 0; e < nseg * n; e++) {
		uint32_t g = e / n, i = e % n;
		uint16_t acc = f16_of(e, 99), b = f16_of(g * ROW + i % ROW, 77);
		for (uint32_t s = 0; s < nsrc; s++)
			acc = f16_add(acc, f16_of(e, s));
		uint16_t h = f16_of(e, 55), want = f16_add(acc, b), got = 0,
		         first = f16_add(f16_of(e, 99), b);
		for (uint32_t s = 0; s < nsrc; s++)
			first = f16_add(first, f16_of(e, s));
		if (res) {
			/* h after b; h before b would be (acc + h) + b */
			first = f16_add(f16_add(acc, h), b);
			want = f16_add(want, h);
		}
		other += first != want;
		tile_read(t, DST + g * dst_seg + i * 2, &got, 2);
		if (got != want)
			fail_msg("bias%s rows %u nsrc %u nseg %u: [%u][%u] = "
			         "0x%04x, want 0x%04x",
			         res ? " res" : "", rows, nsrc, nseg, g, i, got,
			         want);
	}
	/* the order is tested: adding b first (h before b) would change
	 * some results */
	assert_true(other > 0 || nseg * n < 64);
	/* the gaps after each dst segment are untouched (zero) */
	for (uint32_t g = 0; g < nseg; g++) {
		uint8_t gap[32];
		tile_read(t, DST + g * dst_seg + atoms * 8, gap, sizeof gap);
		for (size_t j = 0; j < sizeof gap; j++)
			assert_int_equal(gap[j], 0);
	}
	assert_int_equal(t->cycle,
	                 vadd_cycles(c, atoms, nsrc, nseg, res ? 2 : 1));
	tile_free(t);
	img_free(&img);
}

/* A fused entry against the steps apart on two tiles loaded alike: tile
 * 0 runs `apart` (vadd_entry(0, apart_bias) of "vadd", its block
 * apart_bytes) then ew, tile 1 `fused` (vadd_entry(0, fused_bias) of
 * `object`, its block fused_bytes). Each of ew's segments of q (at its
 * dst: rows of 16 bytes) must be equal byte for byte on the two, and the
 * 16 bytes after its rows zero. Returns the fused call's cycles; *nonzero
 * gets q's bytes whose magnitude is not zero. `what` names the case. */
static uint64_t
q_fused_as_apart(Tile *const t[2], const TileImage *img, const VaddCall *apart,
                 int apart_bias, uint32_t apart_bytes, const EwCall *ew,
                 const VaddCall *fused, int fused_bias, const char *object,
                 uint32_t fused_bytes, uint32_t *nonzero, const char *what)
{
	Diag d;
	uint8_t args[VADD_NORM_F8_ARGS_BYTES];
	assert_true(apart_bytes <= sizeof args && fused_bytes <= sizeof args);
	vadd_args_fill(apart, args);
	TileKernelCall k = {vadd_entry(0, apart_bias), "vadd", args,
	                    apart_bytes, ARGS};
	if (tile_kernel_call(t[0], img, &k, NULL, &d) ||
	    ew_tile_call(t[0], img, ew, ARGS, NULL, &d))
		fail_msg("%s", d.msg);
	vadd_args_fill(fused, args);
	k = (TileKernelCall){vadd_entry(0, fused_bias), object, args,
	                     fused_bytes, ARGS};
	uint64_t start = t[1]->cycle;
	if (tile_kernel_call(t[1], img, &k, NULL, &d))
		fail_msg("%s", d.msg);
	uint64_t cycles = t[1]->cycle - start;
	*nonzero = 0;
	for (uint32_t g = 0; g < ew->nseg; g++) {
		uint8_t want[4096 + 16], got[4096 + 16];
		uint32_t bytes = ew->rows * 16 + 16;
		assert_true(bytes <= sizeof want);
		tile_read(t[0], ew->dst.addr + g * ew->dst.seg_stride, want,
		          bytes);
		tile_read(t[1], ew->dst.addr + g * ew->dst.seg_stride, got,
		          bytes);
		for (uint32_t i = 0; i < bytes; i++) {
			if (got[i] != want[i])
				fail_msg("%s: q[%u][%u] = 0x%02x, want 0x%02x",
				         what, g, i, got[i], want[i]);
			if (i >= ew->rows * 16)
				assert_int_equal(got[i], 0);
			else
				*nonzero += (want[i] & 0x7f) != 0;
		}
	}
	return cycles;
}

/* The layout both fused checks share (check_gelu, check_norm_f8): nseg
 * segments of `rows` rows of a 16-column panel, dst's segments 32 bytes
 * apart, the sources' back to back and 64 bytes between the sources, the
 * f8 result q at Q laid out as dst with a byte an element. Fills the
 * calls' common fields (the apart vadd call and the f8 step after it);
 * returns the elements of a segment. */
enum { Q = 0xC0000 };
static uint32_t
fused_layout(uint32_t rows, uint32_t nsrc, uint32_t nseg, VaddCall *v,
             EwCall *ew)
{
	uint32_t atoms = rows * VADD_ROW_ATOMS;
	uint32_t dst_seg = atoms * 8 + 32, src_seg = atoms * 8;
	*v = (VaddCall){.dst = DST,
	                .src = SRC,
	                .res = Q,
	                .stride = nseg * src_seg + 64,
	                .nsrc = nsrc,
	                .atoms = atoms,
	                .nseg = nseg,
	                .dst_seg = dst_seg,
	                .src_seg = src_seg};
	*ew = (EwCall){.in = DT_F16,
	               .nseg = nseg,
	               .rows = rows,
	               .cols = 16,
	               .dst = {Q, dst_seg / 2, 16},
	               .a = {DST, dst_seg, 32}};
	return atoms * 4;
}

/* vadd_bias_gelu_f16_f8: nseg segments of `rows` rows of a 16-column
 * panel as check_bias, the f8 result q laid out as dst with a byte an
 * element; on one tile vadd_bias_f16 and then ew_gelu_f16_f8 over the
 * same segments (the two steps the fused pass replaces), on another the
 * fused call: q's bytes must be equal, the gaps around q untouched, dst
 * as it was (the fused pass reads it and writes q only) when nsrc is 3,
 * and the cycles vadd_cycles'. */
static void
check_gelu(uint32_t rows, uint32_t nsrc, uint32_t nseg, int scale)
{
	const Chip *c = profile_chip((TimingBound)((rows + nsrc + nseg) % 3));
	static const char *const names[] = {"vadd", "elementwise_f8",
	                                    "vadd_f8"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 3, c, &img, &d), 0);
	Tile *t[2] = {tile_new(c, 0), tile_new(c, 1)};
	enum { BIAS = 0xB0000, BSEG = 64 };
	for (int j = 0; j < 2; j++) {
		tile_load_image(t[j], &img);
		/* halves of the magnitudes: the GELU's tail and its middle
		 * both */
		write_bias_case(t[j], rows, nsrc, nseg, BIAS, BSEG, 0);
	}
	VaddCall v;
	EwCall ew;
	uint32_t n = fused_layout(rows, nsrc, nseg, &v, &ew);
	uint32_t atoms = v.atoms, dst_seg = v.dst_seg;
	v.bias = BIAS;
	v.bias_seg = BSEG;
	v.has_bias = 1;
	v.fp8_scale = (int8_t)scale;
	ew.op = EW_GELU_H;
	ew.out = DT_F8_F143;
	ew.fp8_scale = scale;
	VaddCall f = v;
	f.has_gelu = 1;
	char what[96];
	snprintf(what, sizeof what, "gelu rows %u nsrc %u nseg %u scale %d",
	         rows, nsrc, nseg, scale);
	uint32_t nonzero;
	uint64_t cycles =
	    q_fused_as_apart(t, &img, &v, 1, VADD_BIAS_ARGS_BYTES, &ew, &f, 3,
	                     "vadd_f8", VADD_GELU_ARGS_BYTES, &nonzero, what);
	/* with three sources the fused pass leaves dst as it was */
	for (uint32_t g = 0; nsrc == 3 && g < nseg; g++)
		for (uint32_t i = 0; i < n; i++) {
			uint16_t h = 0;
			tile_read(t[1], DST + g * dst_seg + i * 2, &h, 2);
			assert_int_equal(h, f16_of(g * n + i, 99));
		}
	/* the values are not all one f8 code: the GELU's range is used */
	assert_true(nonzero > 0);
	assert_int_equal(cycles, vadd_cycles(c, atoms, nsrc, nseg, 3));
	for (int j = 0; j < 2; j++)
		tile_free(t[j]);
	img_free(&img);
}

static void
test_vadd(void **state)
{
	(void)state;
	static const uint32_t atoms[] = {1, 5, 6, 7, 100, 1433};
	for (size_t i = 0; i < sizeof atoms / sizeof atoms[0]; i++)
		for (uint32_t nsrc = 1; nsrc <= 7; nsrc++)
			for (uint32_t nseg = 1; nseg <= 3; nseg++) {
				check(0, atoms[i], nsrc, nseg);
				check(1, atoms[i], nsrc, nseg);
			}
	/* many small segments: a worker's range runs over several (the
	 * So400m PV's reduction: 5 segments of 40 atoms, 7 sources) */
	static const uint32_t small[] = {1, 2, 5, 40};
	static const uint32_t nsegs[] = {5, 20};
	for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
		for (size_t j = 0; j < sizeof nsegs / sizeof nsegs[0]; j++)
			for (uint32_t nsrc = 1; nsrc <= 7; nsrc += 3) {
				check(0, small[i], nsrc, nsegs[j]);
				check(1, small[i], nsrc, nsegs[j]);
			}
	/* the So400m tower's reductions without a bias (the busiest tile's
	 * call): PV's 5 segments of 36 atoms, 3 sources (a segment's own
	 * workers, one of them two); qkv's, out_proj's, fc1's and fc2's
	 * slices before their bias passes were fused in (3 x 148, 1 x 148,
	 * 3 x 184 atoms with 3 sources, 1 x 148 with 7) */
	check(0, 36, 3, 5);
	check(0, 148, 3, 3);
	check(0, 148, 3, 1);
	check(0, 184, 3, 3);
	check(0, 148, 7, 1);
	for (uint32_t nseg = 2; nseg <= 6; nseg++)
		check(0, 40, 3, nseg);
}

/* check_norm's terms: element e (of all the segments' rows, n a
 * segment) of segment g, source k (99: dst); row e % n / 16, column 16 g
 * + e % 16; the ones column's terms positive. */
static uint16_t
norm_term(uint32_t g, uint32_t e, uint32_t k, uint32_t ncols)
{
	return g * 16 + e % 16 == ncols ? (uint16_t)(f16_of(e, k) & 0x7fff)
	                                : f16_of(e, k);
}

/* dst and the sources of a row normalisation's call on t: nseg segments
 * of `rows` rows, dst's segments 32 bytes apart, the sources' back to
 * back, 64 bytes between the sources (check_norm's layout). */
static void
norm_data(Tile *t, uint32_t rows, uint32_t nsrc, uint32_t nseg, uint32_t ncols)
{
	uint32_t n = rows * VADD_ROW_ATOMS * 4, src_seg = n * 2,
	         dst_seg = src_seg + 32, stride = nseg * src_seg + 64;
	for (uint32_t g = 0; g < nseg; g++)
		for (uint32_t e = 0; e < n; e++) {
			uint16_t v = norm_term(g, g * n + e, 99, ncols);
			tile_write(t, DST + g * dst_seg + e * 2, &v, 2);
			for (uint32_t k = 0; k < nsrc; k++) {
				v = norm_term(g, g * n + e, k, ncols);
				tile_write(
				    t, SRC + k * stride + g * src_seg + e * 2,
				    &v, 2);
			}
		}
}

/* vadd_norm_f16: nseg segments of `rows` rows of a 16-column panel;
 * each row's column ncols (a sum of positive values, as PV's column of
 * ones gives) divides the row: every column's sum rounded source by
 * source (vadd_f16's), then times f16(f32(1 / s)) rounded to f16 (an
 * exact product in f64, rounded once), s the column ncols's sum; the
 * cycles vadd_norm_cycles'. */
static void
check_norm(uint32_t rows, uint32_t nsrc, uint32_t nseg, uint32_t ncols)
{
	const Chip *c = profile_chip((TimingBound)((rows + nsrc + nseg) % 3));
	static const char *const names[] = {"vadd"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &img, &d), 0);
	Tile *t = tile_new(c, 0);
	tile_load_image(t, &img);
	uint32_t atoms = rows * VADD_ROW_ATOMS, n = atoms * 4;
	uint32_t dst_seg = atoms * 8 + 32, src_seg = atoms * 8;
	uint32_t stride = nseg * src_seg + 64;
	norm_data(t, rows, nsrc, nseg, ncols);
#define TERM(g, e, k) norm_term(g, e, k, ncols)
	uint8_t args[VADD_NORM_ARGS_BYTES];
	/* the reciprocals' place after the sources: garbage */
	for (uint32_t b = 0; b < rows * VADD_NORM_RCP_BYTES; b += 4)
		tile_write(t, SRC + nsrc * stride + b, &(uint32_t){0x7e007e00},
		           4);
	vadd_args_fill(&(VaddCall){.dst = DST,
	                           .src = SRC,
	                           .stride = stride,
	                           .nsrc = nsrc,
	                           .atoms = atoms,
	                           .nseg = nseg,
	                           .dst_seg = dst_seg,
	                           .src_seg = src_seg,
	                           .norm_cols = ncols},
	               args);
	TileKernelCall k = {vadd_entry(0, VADD_NORM), "vadd", args, sizeof args,
	                    ARGS};
	if (tile_kernel_call(t, &img, &k, NULL, &d))
		fail_msg("%s", d.msg);
	uint32_t pg = ncols / 16;
	for (uint32_t r = 0; r < rows; r++) {
		/* the row's sum at column ncols */
		uint32_t en = pg * n + r * 16 + ncols % 16;
		uint16_t sn = TERM(pg, en, 99);
		for (uint32_t k = 0; k < nsrc; k++)
			sn = f16_add(sn, TERM(pg, en, k));
		unsigned fl = 0;
		uint16_t inv =
		    fp_f64_to_f16((double)(float)(1.0 / fp_f16_to_f64(sn)),
		                  FP_RNE, 0, FP_OV_IEEE, &fl);
		for (uint32_t col = 0; col < nseg * 16; col++) {
			uint32_t g = col / 16, e = g * n + r * 16 + col % 16;
			uint16_t acc = TERM(g, e, 99), got;
			for (uint32_t k = 0; k < nsrc; k++)
				acc = f16_add(acc, TERM(g, e, k));
			acc = fp_f64_to_f16(fp_f16_to_f64(acc) *
			                        fp_f16_to_f64(inv),
			                    FP_RNE, 0, FP_OV_IEEE, &fl);
			tile_read(t, DST + g * dst_seg + (e - g * n) * 2, &got,
			          2);
			if (got != acc)
				fail_msg("norm rows %u nsrc %u nseg %u ncols "
				         "%u: [%u][%u] = 0x%04x, want 0x%04x",
				         rows, nsrc, nseg, ncols, r, col, got,
				         acc);
		}
	}
#undef TERM
	assert_int_equal(t->cycle, vadd_norm_cycles(c, atoms, nsrc, nseg));
	tile_free(t);
	img_free(&img);
}

static int64_t
five_symbol(void *ctx, const char *name)
{
	return img_symbol_addr(ctx, name);
}

/* A reduction's part on five workers (VaddCall.five: codegen's
 * emit_vadd5, no exchange beside it) on one emulated tile: check_bias's
 * data, dst after it byte for byte that of vadd_bias_f16 (with res,
 * vadd_bias_res_f16) run on six workers on another tile, and the
 * program's cycles the cost model's (lower_cycles, the step's
 * lower_vadd5_cycles) or up to 5 fewer (its launch's issue phase). */
static void
check_five(uint32_t rows, uint32_t nsrc, uint32_t nseg, int res)
{
	const Chip *c = chip_default();
	static const char *const names[] = {"vadd"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 1, c, &img, &d), 0);
	enum { BIAS = 0xB0000, RES = 0xC0000, BSEG = 64, ROW = 16 };
	uint32_t atoms = rows * VADD_ROW_ATOMS, n = atoms * 4;
	uint32_t dst_seg = atoms * 8 + 32, src_seg = atoms * 8;
	uint32_t stride = nseg * src_seg + 64;
	uint32_t code_end = c->mem_base;
	for (int i = 0; i < img.nseg; i++)
		if (img.seg[i].addr + img.seg[i].size > code_end)
			code_end = img.seg[i].addr + img.seg[i].size;
	uint32_t prog = align_up(code_end, 8),
	         args = align_up(prog + 0x1000, 16),
	         save = args + VADD_BIAS_ARGS_BYTES;
	Lowered *l = lower_new(c, 1);
	const uint32_t at[5] = {DST, SRC, BIAS, RES, save},
	               bytes[5] = {nseg * dst_seg, nsrc * stride, nseg * BSEG,
	                           nseg * dst_seg, 8};
	int32_t b[5];
	for (int i = 0; i < 5; i++) {
		b[i] = lower_buffer(l, 0, bytes[i], 8, REGION_ANY, 0, INT32_MAX,
		                    "data");
		l->buf[b[i]].addr = at[i];
	}
	Step *s = lower_step(l, STEP_COMPUTE, "five");
	KernelCall *k = lower_call(l, s, 0, vadd_entry(0, res ? 2 : 1), "vadd",
	                           VADD_BIAS_ARGS_BYTES);
	l->buf[k->args_at].addr = args;
	for (int i = 0; i < 4; i++)
		k->ref[i] = (BufRef){b[i], 0};
	k->nref = 4;
	k->args.kind = KC_VADD;
	/* the addresses are the references' (lower_call_args) */
	k->args.u.vadd = bias_call(rows, nsrc, nseg, BIAS, BSEG, res ? RES : 0);
	k->args.u.vadd.five = 1;
	lower_step_blocks(s, XS_BLOCK, NULL, 0);
	uint64_t lead, close, done;
	lower_vadd5_frame(c, s, &lead, &close, &done);
	s->cycles = lower_vadd5_cycles(c, s, lead, done, 0);
	lower_index(l);
	KernelSyms ks = {.symbol = five_symbol, .ctx = &img};
	TileCode tc;
	if (codegen_tile(l, &ks, 0, prog, b[4], &tc, &d))
		fail_msg("%s", d.msg);
	ChipConfig cfg = {.chip = c, .tiles = 1};
	ChipSim *cs = chipsim_new(&cfg);
	Tile *t[2] = {chipsim_tile(cs, 0), tile_new(c, 0)};
	for (int j = 0; j < 2; j++) {
		tile_load_image(t[j], &img);
		write_bias_case(t[j], rows, nsrc, nseg, BIAS, BSEG, RES);
	}
	tile_write(t[0], tc.code_addr, tc.code, tc.code_len);
	for (int j = 0; j < tc.ndata; j++)
		tile_write(t[0], tc.data[j].addr, tc.data[j].bytes,
		           tc.data[j].len);
	tile_start(t[0], tc.entry);
	ChipError err;
	if (chipsim_run(cs, 10000000, &err) != RUN_DONE)
		fail_msg("run: %s", err.msg);
	/* the same call on six workers */
	VaddCall six = bias_call(rows, nsrc, nseg, BIAS, BSEG, res ? RES : 0);
	uint8_t block[VADD_BIAS_ARGS_BYTES];
	vadd_args_fill(&six, block);
	TileKernelCall call = {vadd_entry(0, res ? 2 : 1), "vadd", block,
	                       sizeof block, ARGS};
	if (tile_kernel_call(t[1], &img, &call, NULL, &d))
		fail_msg("%s", d.msg);
	for (uint32_t g = 0; g < nseg; g++)
		for (uint32_t i = 0; i < n; i++) {
			uint16_t got = 0, want = 0;
			tile_read(t[0], DST + g * dst_seg + i * 2, &got, 2);
			tile_read(t[1], DST + g * dst_seg + i * 2, &want, 2);
			if (got != want)
				fail_msg(
				    "five rows %u nsrc %u nseg %u: [%u][%u] "
				    "= 0x%04x, want 0x%04x",
				    rows, nsrc, nseg, g, i, got, want);
		}
	print_message("five workers, %u rows x %u, %u sources%s: %llu cycles "
	              "(predicted %llu)\n",
	              rows, nseg, nsrc, res ? ", residual" : "",
	              (unsigned long long)chipsim_cycles(cs),
	              (unsigned long long)lower_cycles(l));
	/* the frame takes the worst of the six issue phases of the launch
	 * (lower_vadd5_frame, as gemm_windows): above by at most 5 */
	assert_true(lower_cycles(l) >= chipsim_cycles(cs) &&
	            lower_cycles(l) <= chipsim_cycles(cs) + 5);
	codegen_free(&tc);
	tile_free(t[1]);
	chipsim_free(cs);
	lower_free(l);
	img_free(&img);
}

/* The five-worker part: fewer rows than workers, a worker over several
 * segments, fc1's and fc2's first parts (3 segments of 20 rows, 3
 * sources; 1 segment of 20 rows, 7 sources with the residual). */
static void
test_vadd_five(void **state)
{
	(void)state;
	static const uint32_t rows[] = {2, 7, 20};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		for (uint32_t nseg = 1; nseg <= 3; nseg += 2)
			for (int res = 0; res < 2; res++)
				check_five(rows[i], res ? 7 : 3, nseg, res);
}

/* vadd_norm_f16_f8: tile 0 runs vadd_norm_f16 (whose f16 result
 * test_vadd_norm checks on these shapes) then ew_cast_f16_f8 on the same
 * layout, tile 1 the fused entry on the same data: q equal byte for byte, the
 * 16 bytes after each segment's q untouched, dst as it was with one
 * source (the last pass reads it only), the cycles
 * vadd_cycles' (VADD_NORM_F8). */
static void
check_norm_f8(uint32_t rows, uint32_t nsrc, uint32_t nseg, uint32_t ncols,
              int scale, int f152)
{
	const Chip *c = profile_chip((TimingBound)((rows + nsrc + nseg) % 3));
	static const char *const names[] = {"vadd", "elementwise_f8",
	                                    "vadd_norm_f8"};
	TileImage img;
	Diag d;
	assert_int_equal(kernel_image(names, 3, c, &img, &d), 0);
	Tile *t[2] = {tile_new(c, 0), tile_new(c, 1)};
	for (int j = 0; j < 2; j++) {
		tile_load_image(t[j], &img);
		norm_data(t[j], rows, nsrc, nseg, ncols);
	}
	VaddCall v;
	EwCall ew;
	uint32_t n = fused_layout(rows, nsrc, nseg, &v, &ew);
	uint32_t atoms = v.atoms, dst_seg = v.dst_seg;
	v.norm_cols = ncols;
	v.f152 = (uint8_t)f152;
	v.fp8_scale = (int8_t)scale;
	ew.op = EW_CAST;
	ew.out = f152 ? DT_F8_F152 : DT_F8_F143;
	ew.fp8_scale = scale;
	VaddCall f = v;
	f.norm_f8 = 1;
	char what[112];
	snprintf(what, sizeof what,
	         "norm f8 rows %u nsrc %u nseg %u ncols %u scale %d f152 %d",
	         rows, nsrc, nseg, ncols, scale, f152);
	uint32_t nonzero;
	uint64_t cycles = q_fused_as_apart(
	    t, &img, &v, VADD_NORM, VADD_NORM_ARGS_BYTES, &ew, &f, VADD_NORM_F8,
	    "vadd_norm_f8", VADD_NORM_F8_ARGS_BYTES, &nonzero, what);
	/* one source: no pass before the last writes dst */
	for (uint32_t g = 0; nsrc == 1 && g < nseg; g++)
		for (uint32_t e = 0; e < n; e++) {
			uint16_t h = 0;
			tile_read(t[1], DST + g * dst_seg + e * 2, &h, 2);
			assert_int_equal(h, norm_term(g, g * n + e, 99, ncols));
		}
	assert_true(nonzero > 0);
	assert_int_equal(cycles,
	                 vadd_cycles(c, atoms, nsrc, nseg, VADD_NORM_F8));
	for (int j = 0; j < 2; j++)
		tile_free(t[j]);
	img_free(&img);
}

/* Every pass the bias can end: the last three sources (3, 6), the last
 * four (4, 7) or the last one (1, 2, 5); fewer rows than workers, a worker over
 * several segments (1 and 2 rows, 5 segments), the So400m qkv's reduction (3
 * segments of 37 rows, 3 sources); each without and with the residual. */
static void
test_vadd_bias(void **state)
{
	(void)state;
	static const uint32_t rows[] = {1, 2, 5, 37};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		for (uint32_t nsrc = 1; nsrc <= 7; nsrc++)
			for (uint32_t nseg = 1; nseg <= 5; nseg += 2)
				for (int res = 0; res < 2; res++)
					check_bias(rows[i], nsrc, nseg, res);
	/* 2, 4 and 6 segments (a segment's own workers: 3, 1 or 2, and 1
	 * each) and 8 (one range), three and four sources in the last pass */
	for (uint32_t nseg = 2; nseg <= 8; nseg += 2)
		for (uint32_t nsrc = 3; nsrc <= 4; nsrc++)
			for (int res = 0; res < 2; res++)
				check_bias(19, nsrc, nseg, res);
}

/* The fused GELU pass: one to three passes of three sources before it
 * (3, 6, 9), fewer rows than workers, a worker over several segments,
 * the So400m fc1's reduction (3 segments of 45 and 46 rows, 3 sources),
 * two f8 scales. */
static void
test_vadd_gelu(void **state)
{
	(void)state;
	static const uint32_t rows[] = {1, 2, 5, 7, 45, 46};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		for (uint32_t nsrc = 3; nsrc <= 9; nsrc += 3)
			for (uint32_t nseg = 1; nseg <= 5; nseg += 2)
				check_gelu(rows[i], nsrc, nseg,
				           (int)(rows[i] + nseg) % 3 - 1);
}

/* The row normalisation: fewer rows than workers (1, 5), a worker two
 * rows (7), the So400m PV's slices (9 and 8 rows of 5 panels, 4
 * sources: its 5 K groups; 72 columns, the ones at 72), the column in a
 * panel's first atom (64) or at a panel's start (16, two segments), one
 * to six sources (none, one or two passes of one source between the
 * passes of three and the last, with the reciprocals); 8
 * segments (one range: a worker's rows over several segments, its
 * reciprocals' cursor back at each). */
static void
test_vadd_norm(void **state)
{
	(void)state;
	static const uint32_t rows[] = {1, 5, 7, 8, 9};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		for (uint32_t nsrc = 1; nsrc <= 5; nsrc += 2) {
			check_norm(rows[i], nsrc, 5, 72);
			check_norm(rows[i], nsrc + 1, 5, 64);
			check_norm(rows[i], nsrc, 2, 16);
		}
	check_norm(9, 4, 5, 72);
	check_norm(8, 4, 5, 72);
	for (uint32_t nsrc = 1; nsrc <= 4; nsrc++)
		check_norm(7, nsrc, 8, 120);
	check_norm(19, 4, 8, 72);
}

/* The row division's cast to f8: check_norm's shapes (fewer rows than
 * workers, a worker two rows, PV's slices, one range over 8 segments,
 * one to six sources), F143 and F152, three scales. */
static void
test_vadd_norm_f8(void **state)
{
	(void)state;
	static const uint32_t rows[] = {1, 2, 5, 7, 8, 9};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		for (uint32_t nsrc = 1; nsrc <= 5; nsrc += 2) {
			int sc = (int)(rows[i] + nsrc) % 3 - 1;
			check_norm_f8(rows[i], nsrc, 5, 72, sc, 0);
			check_norm_f8(rows[i], nsrc + 1, 5, 64, -sc, 1);
			check_norm_f8(rows[i], nsrc, 2, 16, 2 * sc, 0);
		}
	check_norm_f8(9, 4, 5, 72, 0, 0);
	check_norm_f8(8, 4, 5, 72, -1, 0);
	for (uint32_t nsrc = 1; nsrc <= 4; nsrc++)
		check_norm_f8(7, nsrc, 8, 120, 1, nsrc % 2);
	check_norm_f8(19, 4, 8, 72, 0, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vadd),
	    cmocka_unit_test(test_vadd_bias),
	    cmocka_unit_test(test_vadd_gelu),
	    cmocka_unit_test(test_vadd_norm),
	    cmocka_unit_test(test_vadd_norm_f8),
	    cmocka_unit_test(test_vadd_five),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
