/*
 * test_kernel_vadd.c - kernels/vadd.S on one tile: dst += sum of sources,
 * f16 and f32, several sizes (including fewer atoms than workers) in one
 * to three segments, and small ones in 5 and 20 (a worker's range over
 * several), apart in dst, back to back in the sources, checked
 * element by element against sequential IEEE additions (each source added
 * and rounded in turn, as the kernel does), and the call's cycles against
 * vadd_cycles; vadd_bias_f16 the same with values whose sums round and a
 * bias row added last, and vadd_bias_res_f16 with a residual operand
 * (laid out as dst) added after the bias.
 */
#include "support.h"

#include <string.h>

#include "../src/asm/asm.h"
#include "../src/bench/tile_kernel.h"
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
	uint32_t dst_seg = atoms * 8 + 32, src_seg = atoms * 8;
	uint32_t stride = nseg * src_seg + 64;
	for (uint32_t g = 0; g < nseg; g++) {
		for (uint32_t i = 0; i < ROW; i++) {
			uint16_t v = f16_of(g * ROW + i, 77);
			tile_write(t, BIAS + g * BSEG + i * 2, &v, 2);
		}
		for (uint32_t i = 0; i < n; i++) {
			uint32_t e = g * n + i;
			uint16_t v = f16_of(e, 99);
			tile_write(t, DST + g * dst_seg + i * 2, &v, 2);
			v = f16_of(e, 55);
			tile_write(t, RES + g * dst_seg + i * 2, &v, 2);
			for (uint32_t k = 0; k < nsrc; k++) {
				v = f16_of(e, k);
				tile_write(
				    t, SRC + k * stride + g * src_seg + i * 2,
				    &v, 2);
			}
		}
	}
	uint8_t args[VADD_BIAS_ARGS_BYTES];
	vadd_args_fill(&(VaddCall){.dst = DST,
	                           .src = SRC,
	                           .bias = BIAS,
	                           .res = RES,
	                           .stride = stride,
	                           .nsrc = nsrc,
	                           .atoms = atoms,
	                           .nseg = nseg,
	                           .dst_seg = dst_seg,
	                           .src_seg = src_seg,
	                           .bias_seg = BSEG,
	                           .has_bias = 1,
	                           .has_res = (uint8_t)res},
	               args);
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
}

/* Every pass the bias can end: the last three sources (3, 6) or the last
 * one (1, 2, 4, 5, 7); fewer rows than workers, a worker over several
 * segments (1 and 2 rows, 5 segments), the So400m qkv's reduction (3
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
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vadd),
	    cmocka_unit_test(test_vadd_bias),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
