/*
 * memo.c - PlanMemo: values the planner computes from layouts alone,
 * remembered by the exact bytes of what they are computed from, for every
 * plan of one compile (its drafts, and the compile without the overlapped
 * GEMM superstep in its own thread). A value is a pure function of its
 * key, so whichever plan or thread computes it first, every later one
 * reads the same value: the plans are what they would be without it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

typedef struct {
	uint64_t hash;
	uint32_t *key;
	size_t n; /* words */
	uint64_t value;
} MemoEntry;

struct PlanMemo {
	pthread_mutex_t lock;
	MemoEntry *e; /* open addressing, cap a power of two */
	size_t used, cap;
};

PlanMemo *
plan_memo_new(void)
{
	PlanMemo *m = xcalloc(1, sizeof *m);
	pthread_mutex_init(&m->lock, NULL);
	m->cap = 1024;
	m->e = xcalloc(m->cap, sizeof *m->e);
	return m;
}

void
plan_memo_free(PlanMemo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->e[i].key);
	free(m->e);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static uint64_t
key_hash(const uint32_t *key, size_t n)
{
	return fnv1a64(FNV1A64_INIT, key, n * sizeof *key);
}

/* The slot of key in e (cap a power of two): its entry, or the empty one
 * where it would go. */
static MemoEntry *
slot_of(MemoEntry *e, size_t cap, uint64_t h, const uint32_t *key, size_t n)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!e[i].key || (e[i].hash == h && e[i].n == n &&
		                  !memcmp(e[i].key, key, n * sizeof *key)))
			return &e[i];
}

int
plan_memo_get(PlanMemo *m, const uint32_t *key, size_t n, uint64_t *value)
{
	uint64_t h = key_hash(key, n);
	pthread_mutex_lock(&m->lock);
	const MemoEntry *x = slot_of(m->e, m->cap, h, key, n);
	int found = x->key != NULL;
	if (found)
		*value = x->value;
	pthread_mutex_unlock(&m->lock);
	return found;
}

void
plan_memo_put(PlanMemo *m, const uint32_t *key, size_t n, uint64_t value)
{
	uint64_t h = key_hash(key, n);
	pthread_mutex_lock(&m->lock);
	if (2 * (m->used + 1) > m->cap) {
		size_t cap = 2 * m->cap;
		MemoEntry *e = xcalloc(cap, sizeof *e);
		for (size_t i = 0; i < m->cap; i++)
			if (m->e[i].key)
				*slot_of(e, cap, m->e[i].hash, m->e[i].key,
				         m->e[i].n) = m->e[i];
		free(m->e);
		m->e = e;
		m->cap = cap;
	}
	MemoEntry *x = slot_of(m->e, m->cap, h, key, n);
	if (!x->key) { /* another thread may have put it meanwhile: the same */
		x->hash = h;
		x->n = n;
		x->key = xmalloc(n * sizeof *key);
		memcpy(x->key, key, n * sizeof *key);
		x->value = value;
		m->used++;
	}
	pthread_mutex_unlock(&m->lock);
}
