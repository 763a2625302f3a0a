/*
 * kernels.h - device code: the objects assembled at build time from
 * kernels/NAME.S by our own assembler (see CMakeLists.txt and
 * cmake/embed.cmake), embedded in the program.
 */
#ifndef IPU_KERNELS_H
#define IPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "../asm/asm.h"

typedef struct {
	const char *name; /* the source file name without ".S" */
	const uint8_t *bytes;
	size_t size;
} KernelObject;

extern const KernelObject kernel_objects[]; /* ends with a NULL name */

/* kernels.c */
/* Link the named kernel objects for `chip` into an image, with the
 * objects they need (pack_f8 needs pack). */
int kernel_image(const char *const *names, int n, const Chip *chip,
                 TileImage *img, Diag *d);
/* The same with sections at fixed addresses. */
int kernel_image_at(const char *const *names, int n, const Chip *chip,
                    const LinkPlace *place, int nplace, TileImage *img,
                    Diag *d);

/*
 * The supervisor's timeline as the kernels' cycle formulas follow it: the
 * emulator's rules (docs/emulator.md, docs/fidelity.md) applied to a
 * kernel's supervisor code one instruction at a time, at the chip's timing
 * profile. An instruction issues when the $m values it reads are out of
 * the pipeline (sup-dep) and its slot is not a running worker's; a CSR
 * write or a taken branch holds the next one back (sup-put, sup-branch).
 * Workers launched by sup_runall start after the launch delay (runall),
 * one per slot, and own their slots until they exit.
 */
typedef struct {
	const Chip *chip;
	uint64_t t;         /* the supervisor may issue from this cycle */
	uint64_t ready[16]; /* its $m values are out of the pipeline */
	uint64_t free[6];   /* slot w is the supervisor's from this cycle */
	uint64_t last_exit;
} SupClock;

enum { SUP_PLAIN, SUP_PUT, SUP_TAKEN };
/* The $m registers an instruction reads and writes, as sup_op's masks. */
enum {
	SUP_M0 = 1 << 0,
	SUP_M1 = 1 << 1,
	SUP_M2 = 1 << 2,
	SUP_M3 = 1 << 3,
	SUP_M4 = 1 << 4,
	SUP_M5 = 1 << 5,
	SUP_M6 = 1 << 6,
	SUP_M7 = 1 << 7,
	SUP_M8 = 1 << 8,
	SUP_M9 = 1 << 9,
	SUP_M10 = 1 << 10,
	SUP_M11 = 1 << 11,
	SUP_M12 = 1 << 12,
	SUP_M13 = 1 << 13,
	SUP_M14 = 1 << 14,
};

/* The supervisor enters at cycle t, its registers ready, workers idle. */
void sup_start(SupClock *s, const Chip *c, uint64_t t);
/* One instruction reading and writing these $m registers (SUP_M* masks),
 * of kind SUP_*; returns the cycle it issues. */
uint64_t sup_op(SupClock *s, unsigned reads, unsigned writes, int kind);
/* n instructions in a row that read nothing in flight (n cycles). */
void sup_ops(SupClock *s, uint64_t n);
/* The common entry of the kernels whose workers' $WORKERn_BASE is the
 * argument block ($m0): setzi $m1 (the entry), add $m2 (the vertices),
 * six CSR writes of $m0. */
void sup_entry(SupClock *s);
/* runall reading `reads`: returns its cycle; first[w] gets worker w's
 * first issue. */
uint64_t sup_runall(SupClock *s, unsigned reads, uint64_t first[6]);
/* run reading `reads`, which starts worker w (the lowest idle one):
 * returns its cycle; *first gets the worker's first issue. */
uint64_t sup_run(SupClock *s, unsigned reads, int w, uint64_t *first);
/* The workers exit (their last issue) at exit[w]; 0 for one not run. */
void sup_workers(SupClock *s, const uint64_t exit[6]);
/* sync LOCAL: it issues, and the next instruction no earlier than
 * sync-local cycles after the last exit. Returns the sync's cycle. */
uint64_t sup_sync(SupClock *s);
/* The call's cycles: from entry to the cycle after the returning
 * `br $lr` (sup_op of it included). */
uint64_t sup_return(SupClock *s, uint64_t entry);
/* An overlapped phase's setup (codegen.c's emit_overlap and
 * emit_vadd5): n CSR values and the incoming count set into $m1.., then
 * the n CSR writes: the cycle of the opening sync after them. */
uint64_t sup_csr_setup(const Chip *c, uint32_t n);

#endif
