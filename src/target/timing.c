/*
 * timing.c - the timing rules as data, and profiles over them.
 */
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const TimingRuleInfo rules[TIMING_RULES] = {
#define T(id, name, nom, fast, slow, unit, mn, rule, src)                      \
	[TIMING_##id] = {name, {nom, fast, slow}, unit, mn, rule, src},
#include "timing.def"
#undef T
};

const Timing timing_nominal = {
    .v =
        {
#define T(id, name, nom, fast, slow, unit, mn, rule, src) [TIMING_##id] = nom,
#include "timing.def"
#undef T
        },
    .spec = "nominal",
};

static const char *const bound_names[] = {"nominal", "fast", "slow"};

const TimingRuleInfo *
timing_rule(int r)
{
	return r >= 0 && r < TIMING_RULES ? &rules[r] : NULL;
}

int
timing_rule_by_name(const char *name)
{
	for (int r = 0; r < TIMING_RULES; r++)
		if (!strcmp(rules[r].name, name))
			return r;
	return -1;
}

int
timing_rule_by_mnemonic(const char *mnemonic)
{
	for (int r = 0; r < TIMING_RULES; r++)
		if (rules[r].mnemonic[0] &&
		    !strcmp(rules[r].mnemonic, mnemonic))
			return r;
	return -1;
}

const char *
timing_bound_name(TimingBound b)
{
	return b <= TIMING_SLOW ? bound_names[b] : "?";
}

static int
bound_by_name(const char *s, size_t len)
{
	for (int b = TIMING_NOMINAL; b <= TIMING_SLOW; b++)
		if (strlen(bound_names[b]) == len &&
		    !strncmp(bound_names[b], s, len))
			return b;
	return -1;
}

void
timing_profile(Timing *t, TimingBound b)
{
	for (int r = 0; r < TIMING_RULES; r++)
		t->v[r] = rules[r].value[b];
	snprintf(t->spec, sizeof t->spec, "%s", bound_names[b]);
}

enum { VALUE_MAX = 1000000 };

/* One "rule=bound" or "rule=number" item of length len. */
static int
parse_override(const char *item, size_t len, Timing *t, const char *spec,
               Diag *d)
{
	const char *eq = memchr(item, '=', len);
	if (!eq)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "--timing '%s': '%.*s' is not RULE=nominal|fast|"
		    "slow|N",
		    spec, (int)len, item);
	char name[32];
	size_t nlen = (size_t)(eq - item);
	snprintf(name, sizeof name, "%.*s", (int)(nlen < 31 ? nlen : 31), item);
	int r = nlen < 31 ? timing_rule_by_name(name) : -1;
	if (r < 0)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--timing '%s': no timing rule '%.*s' (see "
		                "docs/fidelity.md)",
		                spec, (int)nlen, item);
	const char *val = eq + 1;
	size_t vlen = len - nlen - 1;
	int b = bound_by_name(val, vlen);
	if (b >= 0) {
		t->v[r] = rules[r].value[b];
		return IPU_OK;
	}
	char num[16];
	char *end;
	snprintf(num, sizeof num, "%.*s", (int)(vlen < 15 ? vlen : 15), val);
	long v = vlen && vlen < 15 ? strtol(num, &end, 10) : -1;
	if (vlen == 0 || vlen >= 15 || *end || v < 1 || v > VALUE_MAX)
		return diag_set(d, IPU_EINVAL, NULL, 0, 0,
		                "--timing '%s': %s wants nominal, fast, slow "
		                "or a number 1..%d (%s), got '%.*s'",
		                spec, rules[r].name, VALUE_MAX, rules[r].unit,
		                (int)vlen, val);
	t->v[r] = (uint32_t)v;
	return IPU_OK;
}

int
timing_parse(const char *spec, Timing *t, Diag *d)
{
	size_t n = strlen(spec);
	if (n >= sizeof t->spec)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "--timing: a profile of %zu characters (at most "
		    "%zu)",
		    n, sizeof t->spec - 1);
	const char *comma = strchr(spec, ',');
	size_t blen = comma ? (size_t)(comma - spec) : n;
	int b = bound_by_name(spec, blen);
	if (b < 0)
		return diag_set(
		    d, IPU_EINVAL, NULL, 0, 0,
		    "--timing '%s': the profile starts with nominal, "
		    "fast or slow",
		    spec);
	Timing out;
	timing_profile(&out, (TimingBound)b);
	for (const char *p = comma; p; p = strchr(p + 1, ',')) {
		const char *next = strchr(p + 1, ',');
		size_t len = next ? (size_t)(next - p - 1) : strlen(p + 1);
		int e = parse_override(p + 1, len, &out, spec, d);
		if (e)
			return e;
	}
	memcpy(out.spec, spec, n + 1);
	*t = out;
	return IPU_OK;
}

int
timing_is_nominal(const Timing *t)
{
	return !memcmp(t->v, timing_nominal.v, sizeof t->v);
}
