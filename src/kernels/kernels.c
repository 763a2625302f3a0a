/* kernels.c - lookup of the embedded kernel objects; the supervisor
 * timeline of the kernels' cycle formulas. */
#include "kernels.h"

#include <string.h>

static const KernelObject *
kernel_find(const char *name)
{
	for (const KernelObject *k = kernel_objects; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

int
kernel_image(const char *const *names, int n, const Chip *chip, TileImage *img,
             Diag *d)
{
	return kernel_image_at(names, n, chip, NULL, 0, img, d);
}

/* Objects that run another's code (kernels/pack_f8.S pack.S's padding
 * routine, wcopyg.S wcopy.S's worker, vadd_norm_f8.S vadd.S's
 * reciprocals' worker): linking the first links the second. */
static const char *const kernel_needs[][2] = {
    {"pack_f8", "pack"}, {"wcopyg", "wcopy"}, {"vadd_norm_f8", "vadd"}};

static int
named(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

int
kernel_image_at(const char *const *given, int n, const Chip *chip,
                const LinkPlace *place, int nplace, TileImage *img, Diag *d)
{
	Obj *objs[32] = {0};
	const char *names[32];
	int r = IPU_OK, got = 0;
	if (n > (int)(sizeof objs / sizeof objs[0]))
		die("too many kernel objects (%d)", n);
	memcpy(names, given, (size_t)n * sizeof *names);
	for (size_t i = 0; i < sizeof kernel_needs / sizeof kernel_needs[0];
	     i++)
		if (named(names, n, kernel_needs[i][0]) &&
		    !named(names, n, kernel_needs[i][1])) {
			if (n == (int)(sizeof names / sizeof names[0]))
				die("too many kernel objects (%d)", n + 1);
			names[n++] = kernel_needs[i][1];
		}
	while (got < n) {
		const KernelObject *k = kernel_find(names[got]);
		if (!k)
			die("kernel %s is not embedded", names[got]);
		r = obj_read(k->bytes, k->size, k->name, &objs[got], d);
		if (r)
			break;
		got++;
	}
	Obj *exe = NULL;
	if (!r) {
		LinkOptions opt = {
		    .chip = chip, .place = place, .nplace = nplace};
		r = link_objects(objs, n, &opt, &exe, d);
	}
	for (int i = 0; i < got; i++)
		obj_free(objs[i]);
	return r ? r : img_from_obj(exe, img, d);
}

void
sup_start(SupClock *s, const Chip *c, uint64_t t)
{
	memset(s, 0, sizeof *s);
	s->chip = c;
	s->t = t;
}

/* The first cycle from c on whose slot no running worker owns: for each
 * slot w, its first cycle from max(c, free[w]) on; the earliest of those.
 * In closed form, as a worker may own its slot for millions of cycles (a
 * large GEMM's multiply priced by the planner). */
static uint64_t
free_slot(const SupClock *s, uint64_t c)
{
	uint64_t first = UINT64_MAX;
	for (int w = 0; w < CHIP_SLOTS; w++) {
		if (s->free[w] == UINT64_MAX)
			continue;
		uint64_t b = c > s->free[w] ? c : s->free[w];
		b += (uint64_t)((w + CHIP_SLOTS - (int)(b % CHIP_SLOTS)) %
		                CHIP_SLOTS);
		if (b < first)
			first = b;
	}
	if (first == UINT64_MAX)
		die("sup_op: the workers run and sup_workers was not called");
	return first;
}

uint64_t
sup_op(SupClock *s, unsigned reads, unsigned writes, int kind)
{
	uint64_t c = s->t;
	for (unsigned m = reads & 0x7fff; m; m &= m - 1) {
		int r = __builtin_ctz(m);
		if (s->ready[r] > c)
			c = s->ready[r];
	}
	c = free_slot(s, c);
	const Chip *chip = s->chip;
	for (unsigned m = writes & 0x7fff; m; m &= m - 1)
		s->ready[__builtin_ctz(m)] =
		    c + chip_rule(chip, TIMING_SUP_DEP);
	s->t = c + (kind == SUP_PUT     ? chip_rule(chip, TIMING_SUP_PUT)
	            : kind == SUP_TAKEN ? chip_rule(chip, TIMING_SUP_BRANCH)
	                                : 1);
	return c;
}

void
sup_ops(SupClock *s, uint64_t n)
{
	int busy = 0;
	for (int w = 0; w < CHIP_SLOTS; w++)
		busy |= s->free[w] > s->t;
	if (!busy) {
		s->t += n;
		return;
	}
	while (n--)
		sup_op(s, 0, 0, SUP_PLAIN);
}

void
sup_entry(SupClock *s)
{
	sup_op(s, 0, SUP_M1, SUP_PLAIN);      /* setzi */
	sup_op(s, SUP_M0, SUP_M2, SUP_PLAIN); /* add */
	for (int i = 0; i < 6; i++)
		sup_op(s, SUP_M0, 0, SUP_PUT);
}

/* Worker w launched at cycle c: its first issue. */
static uint64_t
launch(SupClock *s, uint64_t c, int w)
{
	uint64_t go = c + chip_rule(s->chip, TIMING_RUNALL);
	s->free[w] = UINT64_MAX; /* running until sup_workers */
	return go + (uint64_t)((w + CHIP_SLOTS - (int)(go % 6)) % 6);
}

uint64_t
sup_runall(SupClock *s, unsigned reads, uint64_t first[6])
{
	uint64_t c = sup_op(s, reads, 0, SUP_PLAIN);
	for (int w = 0; w < CHIP_WORKERS; w++)
		first[w] = launch(s, c, w);
	return c;
}

uint64_t
sup_run(SupClock *s, unsigned reads, int w, uint64_t *first)
{
	uint64_t c = sup_op(s, reads, 0, SUP_PLAIN);
	*first = launch(s, c, w);
	return c;
}

void
sup_workers(SupClock *s, const uint64_t exit[6])
{
	s->last_exit = 0;
	for (int w = 0; w < CHIP_WORKERS; w++) {
		s->free[w] = exit[w] + 1;
		if (exit[w] > s->last_exit)
			s->last_exit = exit[w];
	}
}

uint64_t
sup_sync(SupClock *s)
{
	uint64_t c = sup_op(s, 0, 0, SUP_PLAIN);
	uint64_t out = s->last_exit + chip_rule(s->chip, TIMING_SYNC_LOCAL);
	if (out > s->t)
		s->t = out;
	return c;
}

uint64_t
sup_return(SupClock *s, uint64_t entry)
{
	return sup_op(s, SUP_M10, 0, SUP_TAKEN) + 1 - entry;
}

uint64_t
sup_csr_setup(const Chip *c, uint32_t n)
{
	SupClock s;
	sup_start(&s, c, 0);
	for (uint32_t i = 0; i <= n; i++) /* setzi, the count's last */
		sup_op(&s, 0, SUP_M1 << i, SUP_PLAIN);
	for (uint32_t i = 0; i < n; i++)
		sup_op(&s, SUP_M1 << i, 0, SUP_PUT);
	return sup_op(&s, 0, 0, SUP_PLAIN); /* sync */
}
