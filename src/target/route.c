/*
 * route.c - exchange route timing: when a word one tile sends is written
 * at another (docs/chip.md, "Route latency", derives it).
 *
 * Two facts of the vendor's own exchange code, as the rival recovered it
 * and runs it on C600s (ipu-stack.md 3.3; its Topology::time_to_mux and
 * the receive rows its SDK oracles produce):
 *
 *   mux lead X(s, d)  a receiver d catches the word that s sends at cycle t
 *                     with an XPIC control issued at t + X(s, d); X ranges
 *                     over -78..112 on the C600 and may be negative (the
 *                     receiver selects the source before it sends);
 *   write delay M(d)  the word is written at d M(d) = 52 + 2 x row(d)
 *                     cycles after that XPIC: the SDK sets the incoming
 *                     pointer (PIC) of each receive window exactly M(d)
 *                     after the XPIC that opens it, back to back.
 *
 * Neither has bounds (a cycle off would misroute a word at every cutover of
 * back-to-back windows), so no timing profile changes them: they live here,
 * not in timing.def.
 *
 * The emulator's frame is the receiver's memory write: a word arrives at
 * t + L(s, d) with L = X + M (18..164 cycles), and an XPIC takes effect
 * M(d) after its issue. Everything of the chip's exchange timing that a
 * schedule can observe follows from X and M.
 */
#include <pthread.h>
#include <stdint.h>

#include "chip.h"

/* Where a physical tile sits (chip.h: physical id = row x 64 + column
 * group x 4 + lane bits). The 16 column groups lie 8 on each side of the
 * exchange spine, each side numbered from the same end of the spine: group
 * g is at spine position g on side 0 (groups 0..7) and 15 - g on side 1. */
typedef struct {
	int row;    /* 0..22 */
	int side;   /* 0 for groups 0..7, 1 for 8..15 */
	int pos;    /* position along the spine, 0..7 */
	int lane;   /* physical bit 1: the tile's lane in its pair */
	int parity; /* physical bit 0: which of the group's two blocks */
} Place;

static Place
place(uint32_t physical)
{
	int group = (int)(physical >> 2) & 15;
	Place p = {.row = (int)(physical >> 6),
	           .side = group >> 3,
	           .lane = (int)(physical >> 1) & 1,
	           .parity = (int)physical & 1};
	p.pos = p.side ? 15 - group : group;
	return p;
}

/*
 * The mux lead, a sum of four terms (the constants are those of the
 * SDK's fabric model as the rival transcribed it; each term is named by
 * what it depends on, not by a claimed circuit):
 *   spine   |D| with D = 6 x (d's spine position - s's entry position)
 *           + d's tap; s enters one position further out when its block
 *           parity differs from its side; the tap is 1 or 5 for lane 0,
 *           2 or 4 for lane 1 (the smaller when d's parity equals its
 *           side). The sign of D is the send's direction.
 *   skew    (s's position - d's position) x 5 when d is on side 0, x 3 on
 *           side 1;
 *   rows    2 x (row of s - row of d);
 *   base    -14 from side 1 to side 0, -30 otherwise.
 */
enum {
	SPINE_STEP = 6,
	ROW_STEP = 2,    /* also M(d)'s cycles a row */
	WRITE_BASE = 52, /* M(d) at row 0 */
};
static const int tap[2][2] = {{5, 1}, {4, 2}}; /* [lane][parity == side] */
static const int skew[2] = {5, 3};             /* [d's side] */
static const int base[2][2] = {{-30, -30}, {-14, -30}}; /* [s side][d side] */

/* The spine displacement D from s to d. */
static int
spine(Place s, Place d)
{
	int entry = s.pos + (s.side ^ s.parity);
	return SPINE_STEP * (d.pos - entry) + tap[d.lane][d.parity == d.side];
}

static int32_t
lead(Place s, Place d)
{
	int D = spine(s, d);
	return (D < 0 ? -D : D) + skew[d.side] * (s.pos - d.pos) +
	       ROW_STEP * (s.row - d.row) + base[s.side][d.side];
}

int32_t
chip_mux_lead(const Chip *c, uint32_t src, uint32_t dst)
{
	return lead(place(chip_physical(c, src)), place(chip_physical(c, dst)));
}

/* ipu-stack's `direction`: the route runs one way for D >= 1, the other
 * otherwise; the rival's single-receiver sends set just that bit. */
uint32_t
chip_route_dir(const Chip *c, uint32_t src, uint32_t dst)
{
	int D =
	    spine(place(chip_physical(c, src)), place(chip_physical(c, dst)));
	return D >= 1 ? SCTL_DIR1 : SCTL_DIR2;
}

uint32_t
chip_xpic_cycles(const Chip *c, uint32_t dst)
{
	(void)c;
	return WRITE_BASE + ROW_STEP * (chip_physical(c, dst) >> 6);
}

uint32_t
chip_route_cycles(const Chip *c, uint32_t src, uint32_t dst)
{
	return (uint32_t)(chip_mux_lead(c, src, dst) +
	                  (int32_t)chip_xpic_cycles(c, dst));
}

/* The longest route of the tile array, over all physical pairs: computed
 * once (both chips share the array, chip.c). A route's cycles, lead plus
 * write delay, hold d's row only in the rows term (-2 x row(d)) and in
 * M(d) (+2 x row(d)), which cancel, and grow with s's row: so the longest
 * starts in the last row and may end in any, and row 0 stands for all
 * (test_chip compares it with every pair). */
static uint32_t longest;
static pthread_once_t longest_once = PTHREAD_ONCE_INIT;

static void
find_longest(void)
{
	uint32_t last = (chip_default()->rows - 1) * 64;
	for (uint32_t s = last; s < last + 64; s++)
		for (uint32_t d = 0; d < 64; d++) {
			Place ps = place(s), pd = place(d);
			int32_t l =
			    lead(ps, pd) + WRITE_BASE + ROW_STEP * pd.row;
			if ((uint32_t)l > longest)
				longest = (uint32_t)l;
		}
}

uint32_t
chip_xpic_max_cycles(void)
{
	return WRITE_BASE + ROW_STEP * (chip_default()->rows - 1);
}

uint32_t
chip_route_max_cycles(const Chip *c)
{
	(void)c;
	pthread_once(&longest_once, find_longest);
	return longest;
}
