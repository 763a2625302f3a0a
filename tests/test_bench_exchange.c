/*
 * test_bench_exchange.c - the exchange benchmark (src/bench/exchange.c) and
 * a smoke run of the sim-speed benchmark (src/bench/sim_speed.c).
 *
 * The benchmark checks every received word itself; here its cycle counts
 * are checked against the schedule of docs/bench-exchange.md worked out by
 * hand, with the route timing of docs/chip.md recomputed from the tile
 * geometry (support.c's model_latency) rather than through
 * src/target/route.c, and the nominal timing rules (docs/fidelity.md:
 * D = B = P = 6, the landing of the last word recv-land = 6):
 *   first sync                 the senders arrive at 2D + 1 + 2P (setzi,
 *                              four loads, brz reading the first of them,
 *                              two CSR writes), the others, which branch,
 *                              at 2D + B + 2P
 *   release                    R = the last arrival + 126
 *   last arrival               R + P + W - 1 + Lmax   (W = N / 4 items)
 *   exchange phase             last arrival + 1 - R = W + P + Lmax
 *   whole program              last arrival + 1 + recv-land (the last word
 *                              lands) + 126 + 1 (sync, br $lr)
 */
#include "support.h"

#include <string.h>

#include "../src/bench/bench.h"

enum { SYNC = 126 };
#define RULE(r) ((uint64_t)chip_rule(chip_default(), TIMING_##r))

/* The largest latency among the pairs a pattern uses on T tiles. */
static uint32_t
pattern_latency(ExchPattern p, uint32_t T)
{
	uint32_t worst = 0;
	for (uint32_t r = 0; r < T; r++) {
		uint32_t l = 0;
		if (p == EXCH_ALL_TO_ALL)
			l = model_latency((r + T - T / 2) % T, r);
		else if (r > 0)
			l = model_latency(
			    0, r); /* p2p picks the farthest of these */
		if (l > worst)
			worst = l;
	}
	return worst;
}

static ExchangeResult
run(ExchPattern p, uint32_t T, uint32_t bytes)
{
	ExchangeConfig cfg = {.pattern = p,
	                      .tiles = T,
	                      .bytes = bytes,
	                      .threads = 2,
	                      .seed = 7,
	                      .from = -1,
	                      .to = -1};
	ExchangeResult r;
	Diag d;
	diag_clear(&d);
	if (bench_exchange(&cfg, &r, &d))
		fail_msg("%s on %u tiles, %u bytes: %s", exch_pattern_name(p),
		         T, bytes, d.msg);
	return r;
}

static void
check_cycles(ExchPattern p, uint32_t T, uint32_t bytes)
{
	ExchangeResult r = run(p, T, bytes);
	uint32_t W = bytes / 4, L = pattern_latency(p, T);
	uint64_t D = RULE(SUP_DEP), B = RULE(SUP_BRANCH), P = RULE(SUP_PUT);
	uint64_t LAND = RULE(RECV_LAND);
	uint64_t last = 2 * D + 2 * P + (p == EXCH_ALL_TO_ALL ? 1 : B);
	uint64_t R = last + SYNC;
	assert_int_equal(r.tiles, T);
	assert_int_equal(r.release, R);
	assert_int_equal(r.latency_max, L);
	assert_int_equal(r.last_arrival, R + P + W - 1 + L);
	assert_int_equal(r.exchange_cycles, W + P + L);
	assert_int_equal(r.program_cycles, R + P + W + L + LAND + SYNC + 1);
	double per_tile = (double)bytes / (double)(W + P + L);
	assert_float_equal(r.bytes_per_cycle_per_tile, per_tile, 1e-9);
	uint32_t receivers = p == EXCH_P2P         ? 1
	                     : p == EXCH_MULTICAST ? T - 1
	                                           : T;
	uint32_t senders = p == EXCH_ALL_TO_ALL ? T : 1;
	assert_int_equal(r.receivers, receivers);
	assert_int_equal(r.senders, senders);
	assert_float_equal(r.aggregate_bytes_per_cycle, per_tile * receivers,
	                   1e-6);
	/* terabytes per second at the C600's 1.485 GHz */
	assert_float_equal(r.tb_per_s, per_tile * receivers * 1.485e-3, 1e-9);
	assert_float_equal(r.peak_tb_per_s, T * 4 * 1.485e-3, 1e-9);
}

/* Sizes around the 64-word limit of one send: 1, 63, 64, 65 and 250
 * items. */
static void
test_cycles_match_the_model(void **state)
{
	(void)state;
	static const uint32_t bytes[] = {4, 252, 256, 260, 1000};
	for (int p = 0; p < 3; p++)
		for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++) {
			check_cycles((ExchPattern)p, 32, bytes[i]);
			check_cycles((ExchPattern)p, 64, bytes[i]);
		}
}

static void
test_p2p_takes_the_farthest_tile(void **state)
{
	(void)state;
	ExchangeResult r = run(EXCH_P2P, 64, 64);
	for (uint32_t t = 1; t < 64; t++)
		assert_true(model_latency(0, t) <= model_latency(0, r.p2p_dst));
	assert_int_equal(r.latency_min, model_latency(0, r.p2p_dst));
}

/* --from T1 --to T2: the route timing of chosen pairs, worked out by hand
 * from docs/chip.md's rules (spine position p, side h, parity, lane, row;
 * D the spine displacement; lead = base + skew term + |D| + 2 x row
 * difference; latency = lead + 52 + 2 x the receiver's row):
 *   0 -> 1     pair partners, lane tap 2: D = 2, lead -30 + 2 = -28, 24
 *   0 -> 2     the row above, tap 1: lead -30 + 1 - 2 = -31, + 54 = 23
 *   2 -> 0     back down: -30 + 1 + 2 = -27, + 52 = 25
 *   0 -> 44    22 rows up: -30 + 1 - 44 = -73, + 96 = 23
 *   44 -> 0    22 rows down: -30 + 1 + 44 = 15, + 52 = 67
 *   0 -> 1471  the last tile: side 1, position 0, row 0, tap 2: -28, 24
 *   0 -> 644   side 0's far end (p 7): east, -30 + 1 x 7 + 1 = -22, 30
 *   644 -> 0   west: D = -41, -30 + 11 x 7 - 1 = 46, 98
 *   0 -> 736   side 1's far end (p 7, tap 5): east, -30 + 3 x 7 + 5 = -4,
 *              48
 *   736 -> 0   west from side 1 (enters at p 8): D = -47, -14 + 11 x 7
 *              + 6 - 1 = 68, 120
 *   781 -> 44  as 736 -> 0, both 22 rows up: 68, + 96 = 164 (the chip's
 *              longest route)
 * and the mux leads of the rival's SDK-checked point-to-point vectors
 * (ipu-stack crates/ipu-target exchange.rs tests: the sender waits 111 -
 * lead): 0 -> 1286 -23, 736 -> 100 49, 1286 -> 1471 -14, 32 -> 0 3. */
static void
test_p2p_any_pair(void **state)
{
	(void)state;
	static const struct {
		uint32_t from, to;
		int lead;
		uint32_t latency;
	} pairs[] = {
	    {0, 1, -28, 24},     {0, 2, -31, 23},       {2, 0, -27, 25},
	    {0, 44, -73, 23},    {44, 0, 15, 67},       {0, 1471, -28, 24},
	    {0, 644, -22, 30},   {644, 0, 46, 98},      {0, 736, -4, 48},
	    {736, 0, 68, 120},   {781, 44, 68, 164},    {0, 1286, -23, 29},
	    {736, 100, 49, 109}, {1286, 1471, -14, 38}, {32, 0, 3, 55},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		uint32_t hi =
		    pairs[i].from > pairs[i].to ? pairs[i].from : pairs[i].to;
		ExchangeConfig cfg = {.pattern = EXCH_P2P,
		                      .tiles = hi + 1,
		                      .bytes = 4,
		                      .threads = 2,
		                      .seed = 3,
		                      .from = pairs[i].from,
		                      .to = pairs[i].to};
		ExchangeResult r;
		Diag d;
		if (bench_exchange(&cfg, &r, &d))
			fail_msg("%u -> %u: %s", pairs[i].from, pairs[i].to,
			         d.msg);
		assert_int_equal(r.p2p_src, pairs[i].from);
		assert_int_equal(r.p2p_dst, pairs[i].to);
		assert_int_equal(r.p2p_lead, pairs[i].lead);
		assert_int_equal(r.latency_max, pairs[i].latency);
		assert_int_equal(model_latency(pairs[i].from, pairs[i].to),
		                 pairs[i].latency);
		/* one word: sent after the count's CSR write (sup-put), then
		 * the route */
		assert_int_equal(r.exchange_cycles,
		                 RULE(SUP_PUT) + 1 + pairs[i].latency);
	}
	/* no such tile; a pair for a pattern that has none */
	ExchangeConfig cfg = {
	    .pattern = EXCH_P2P, .tiles = 64, .bytes = 4, .from = 0, .to = 64};
	ExchangeResult r;
	Diag d;
	assert_int_equal(bench_exchange(&cfg, &r, &d), IPU_EINVAL);
	assert_non_null(strstr(d.msg, "--to 64: there are tiles 0..63"));
	cfg.pattern = EXCH_MULTICAST;
	cfg.to = 1;
	assert_int_equal(bench_exchange(&cfg, &r, &d), IPU_EINVAL);
	assert_non_null(strstr(d.msg, "not of multicast"));
}

/* Long messages approach the 4 bytes per cycle per tile of system.md 1.2:
 * only the fixed sup-put + latency cycles are lost. */
static void
test_large_messages_reach_4_bytes_per_cycle(void **state)
{
	(void)state;
	ExchangeResult a = run(EXCH_P2P, 64, 65536);
	ExchangeResult b = run(EXCH_ALL_TO_ALL, 64, 65536);
	assert_true(a.bytes_per_cycle_per_tile > 3.95);
	assert_true(b.bytes_per_cycle_per_tile > 3.95);
	assert_true(a.bytes_per_cycle_per_tile < 4.0);
	assert_true(b.bytes_per_cycle_per_tile < 4.0);
}

static void
test_bad_sizes(void **state)
{
	(void)state;
	ExchangeConfig cfg = {
	    .pattern = EXCH_P2P, .tiles = 4, .bytes = 6, .from = -1, .to = -1};
	ExchangeResult r;
	Diag d;
	assert_int_equal(bench_exchange(&cfg, &r, &d), IPU_EINVAL);
	cfg.bytes = 400000; /* twice that does not fit 624 KiB */
	assert_int_equal(bench_exchange(&cfg, &r, &d), IPU_ERANGE);
	cfg.bytes = 4;
	cfg.tiles = 1;
	assert_int_equal(bench_exchange(&cfg, &r, &d), IPU_EINVAL);
	ExchPattern p;
	assert_int_equal(exch_pattern_parse("all-to-all", &p), 0);
	assert_int_equal(p, EXCH_ALL_TO_ALL);
	assert_int_equal(exch_pattern_parse("broadcast", &p), -1);
}

/* The sim-speed benchmark on a few tiles: every field is there. Speeds
 * depend on the host, so only their signs are checked. */
static void
test_sim_speed_smoke(void **state)
{
	(void)state;
	SimSpeedConfig cfg = {
	    .tiles = 3, .rows = 24, .threads = 2, .sgemm_n = 64};
	SimSpeedResult r;
	Diag d;
	diag_clear(&d);
	if (bench_sim_speed(&cfg, &r, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(r.tiles, 3);
	assert_int_equal(r.threads, 2);
	assert_true(r.cycles > 24 * 4); /* at least 4 cycles a row */
	assert_int_equal(r.tile_cycles, 3 * r.cycles);
	assert_true(r.bundles > 0);
	assert_true(r.host_seconds > 0);
	assert_true(r.tile_cycles_per_s > 0);
	assert_true(r.bundles_per_s > 0);
	assert_true(r.emulated_gflops > 0);
	assert_true(r.sgemm_gflops > 0);
	assert_true(r.sgemm_over_emulated > 0);
	assert_true(r.slowdown > 0);
	assert_true(r.max_rel_err < 1e-3);
}

/* The same with the f8 program: 32 inputs a row (4 AMP instructions of 8
 * where f16 has 4 of 4), its outputs checked against f64 as tile-amp
 * checks them, and the same cycles on every tile. */
static void
test_sim_speed_f8(void **state)
{
	(void)state;
	SimSpeedConfig cfg = {.tiles = 3, .rows = 24, .threads = 2, .f8 = 1};
	SimSpeedResult r, h;
	Diag d;
	diag_clear(&d);
	if (bench_sim_speed(&cfg, &r, &d))
		fail_msg("%s", d.msg);
	cfg.f8 = 0;
	if (bench_sim_speed(&cfg, &h, &d))
		fail_msg("%s", d.msg);
	assert_int_equal(r.tile_cycles, 3 * r.cycles);
	assert_true(r.cycles > 24 * 4);
	/* twice the multiply-adds of f16 in the same AMP instructions */
	assert_true(r.emulated_gflops * r.host_seconds >
	            1.99 * h.emulated_gflops * h.host_seconds);
	assert_true(r.emulated_gflops * r.host_seconds <
	            2.01 * h.emulated_gflops * h.host_seconds);
	assert_true(r.max_rel_err < 1e-3);
	assert_true(r.sgemm_gflops == 0); /* sgemm_n 0: none */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cycles_match_the_model),
	    cmocka_unit_test(test_p2p_takes_the_farthest_tile),
	    cmocka_unit_test(test_p2p_any_pair),
	    cmocka_unit_test(test_large_messages_reach_4_bytes_per_cycle),
	    cmocka_unit_test(test_bad_sizes),
	    cmocka_unit_test(test_sim_speed_smoke),
	    cmocka_unit_test(test_sim_speed_f8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
