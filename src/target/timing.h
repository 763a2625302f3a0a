/*
 * timing.h - the emulator's timing rules (target/timing.def) and timing
 * profiles: which value of each rule a run uses.
 *
 * A profile starts from one column of the table for every rule (nominal,
 * fast or slow) and may set single rules to another column or to a number:
 *
 *   nominal                       every rule at its nominal value
 *   fast | slow                   every rule at that bound
 *   nominal,sup-dep=slow,f32exp=4 per-rule overrides, left to right
 *
 * A Chip carries its profile (chip.h: chip_timed); the emulator and the
 * compiler's cost model read rule values from there and nowhere else.
 */
#ifndef IPU_TIMING_H
#define IPU_TIMING_H

#include <stdint.h>

#include "../util/util.h"

typedef enum {
#define T(id, name, nom, fast, slow, unit, mn, rule, src) TIMING_##id,
#include "timing.def"
#undef T
	TIMING_RULES
} TimingRule;

typedef enum { TIMING_NOMINAL, TIMING_FAST, TIMING_SLOW } TimingBound;

typedef struct {
	const char *name;  /* "f32exp", "sup-dep" */
	uint32_t value[3]; /* by TimingBound */
	const char *unit;  /* "turns", "cycles", "ns", "MB/s" */
	const char
	    *mnemonic;    /* the instruction an instruction cost times, or "" */
	const char *rule; /* what the value means ("" for instructions) */
	const char *source;
} TimingRuleInfo;

enum { TIMING_SPEC_MAX = 160 };

/* Resolved values of every rule, and the profile's canonical text. */
typedef struct {
	uint32_t v[TIMING_RULES];
	char spec[TIMING_SPEC_MAX];
} Timing;

/* Every rule at its nominal value (what chip_by_name's chips carry). */
extern const Timing timing_nominal;

const TimingRuleInfo *timing_rule(int r);  /* NULL if out of range */
int timing_rule_by_name(const char *name); /* -1 if none */
/* The rule that times worker instruction `mnemonic`, or -1. */
int timing_rule_by_mnemonic(const char *mnemonic);
const char *timing_bound_name(TimingBound b); /* "nominal", "fast", "slow" */
/* Every rule at one bound. */
void timing_profile(Timing *t, TimingBound b);
/* Parse a profile (see above) into t. IPU_EINVAL with d filled on an
 * unknown rule or bound, a malformed or out-of-range value. */
int timing_parse(const char *spec, Timing *t, Diag *d);
/* Is every rule at its nominal value? */
int timing_is_nominal(const Timing *t);

#endif
