/*
 * place.h - placement: an address on its tile for every buffer of a
 * Lowered program.
 *
 * Each tile's memory holds, from mem_base up, that tile's code (kernels and
 * supervisor program, exchange code included) and then its data buffers.
 * place_buffers packs the buffers above the code so that two buffers share
 * bytes only if their lifetimes (step ranges) are disjoint, every buffer is
 * aligned, REGION_INTERLEAVED buffers lie wholly in the interleaved region,
 * a buffer and its `apart` partner share no memory element (an interleaved
 * 32 KiB pair counts as one element), and nothing passes mem_end. It fills
 * a PlaceReport: per tile use, bytes by kind, and for a program that does
 * not fit, every tile that overflows, at which step, with what, and by how
 * much. docs/placement.md gives the rules and the algorithm.
 */
#ifndef IPU_PLACE_H
#define IPU_PLACE_H

#include <stdint.h>
#include <stdio.h>

#include "../lower/lower.h"

/* Bytes of one kind: buffers aggregated by their `what` text. */
typedef struct {
	const char *what;  /* the buffers' text ("code" for the code) */
	uint64_t bytes;    /* sum of the sizes */
	uint32_t count;    /* buffers (tiles, for "code") */
	uint64_t tile_max; /* report totals: most bytes of this kind on a
	                      tile (4 GiB and more too) */
} PlaceKind;

/* Per tile use. */
typedef struct {
	uint32_t code;     /* code bytes: code_end - mem_base */
	uint64_t peak;     /* max over steps of the live data bytes */
	int32_t peak_step; /* the first step with that many (0 if none) */
	uint32_t high;     /* one past the last byte used (code_end if no
	                      buffer); 0 for a tile that did not fit */
	uint32_t nbuf;     /* buffers on the tile */
} PlaceTile;

typedef enum {
	/* code + live data at one step exceed the tile's memory */
	PLACE_OVER_TOTAL,
	/* live REGION_INTERLEAVED data at one step exceed the region */
	PLACE_OVER_INTERLEAVED,
	/* both bounds fit, but alignment, the element rules and
	   fragmentation leave the best packing found past mem_end */
	PLACE_OVER_PACKING,
	/* the code passes exec_end (instructions are fetched only below
	   it); need = the code, avail = exec_end - mem_base, the live set at
	   the tile's data peak */
	PLACE_OVER_CODE,
} PlaceOverKind;

/* A tile that does not fit. */
typedef struct {
	uint32_t tile;
	uint8_t kind;    /* PlaceOverKind */
	int32_t step;    /* the worst step */
	int32_t op;      /* the first graph op that step serves (Step.op;
	                    -1: none, the loop's or the pipeline's own) */
	int nop;         /* the graph ops that step serves */
	uint64_t need;   /* bytes needed at that step: code + live data
	                    (INTERLEAVED: live interleaved data only) */
	uint64_t avail;  /* what the tile (or the region) holds */
	uint64_t over;   /* TOTAL, INTERLEAVED: need - avail; PACKING:
	                    packed high-water - mem_end */
	uint64_t packed; /* high-water address of the best packing found,
	                    with memory unbounded above */
	PlaceKind *live; /* the live set at `step` by kind, largest first;
	                    "code" first unless INTERLEAVED */
	int nlive;
} PlaceOverflow;

typedef struct {
	uint32_t tiles;     /* = Lowered.tiles */
	uint32_t mem_end;   /* of the chip, for printing */
	uint32_t mem_bytes; /* mem_end - mem_base */
	PlaceTile *tile;    /* [tiles] */
	uint32_t top_tile;  /* the tile with the highest water mark */
	uint64_t nbuf;      /* buffers placed (all tiles) */
	PlaceKind *kind;    /* totals over all tiles, largest first */
	int nkind;
	PlaceOverflow *over; /* tiles that do not fit, by tile id */
	int nover;
	int worst; /* the over[] the message names (most over), or -1 */
} PlaceReport;

/*
 * Give every buffer of l an address (Buffer.addr). code_end[t] is the first
 * byte after tile t's code, at least mem_base (past exec_end: the tile does
 * not fit); NULL means no code on any tile. Returns IPU_OK; IPU_EINVAL for
 * a malformed buffer (tile out of range, alignment not a power of two,
 * first > last, a bad `apart`, code_end below mem_base), with d filled;
 * IPU_ERANGE if some tile does not fit, with d
 * naming the worst one and rep listing all of them (their buffers keep
 * addr 0). rep may be NULL; otherwise free it with place_report_free.
 * Deterministic: the same input gives the same addresses.
 */
int place_buffers(Lowered *l, const uint32_t *code_end, PlaceReport *rep,
                  Diag *d);

/*
 * The memory model's bounds on every tile of l, without packing: what
 * place_buffers would report as PLACE_OVER_CODE, _TOTAL and _INTERLEAVED
 * (the same functions: plan_tile_live at every step, plan_tile_over), so
 * a plan is known not to fit before anything is placed. rep as
 * place_buffers fills it but for addresses (tile[].high is 0) and packing
 * (no PLACE_OVER_PACKING); l is not changed. IPU_ERANGE with d naming the
 * worst tile, its step and its bytes.
 */
int place_measure(const Lowered *l, const uint32_t *code_end, PlaceReport *rep,
                  Diag *d);

/* The report as text: a summary line, bytes by kind, and one line per tile
 * that does not fit, e.g. "tile 17: needs 702,416 bytes at step 12 (code
 * 9,200; C block 327,680; A chunk 262,144; ...), 63,488 bytes more than the
 * 638,976 available". */
void place_report_print(const PlaceReport *rep, FILE *f);
/* One overflow line, without the newline, into buf (truncated to len). */
void place_overflow_format(const PlaceReport *rep, const PlaceOverflow *o,
                           char *buf, size_t len);
void place_report_free(PlaceReport *rep);

/* verify.c: the placement checked on its own terms (buffers inside their
 * tile's data memory, aligned, in their region; no two sharing bytes in
 * steps they both live; `apart` partners in different memory elements;
 * every GEMM call's A and C, and every reduction's (vadd) sources and
 * dst, in different memory elements at their placed addresses);
 * IPU_EINVAL with d naming the rule and the buffer (the tile, step, call
 * and buffers for a call's streams): an internal error. */
int place_verify(const Lowered *l, const uint32_t *code_end, Diag *d);
/* print.c: the addresses as text (ipu compile --dump=place). */
void place_print(const Lowered *l, const uint32_t *code_end, FILE *f);

#endif
