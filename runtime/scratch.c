/*
 * scratch.c: the scratch memory compiled code asks for (packed operands,
 * temporaries, per-thread buffers).  Large blocks come from mmap in glibc
 * and go back to the kernel on free, so a graph run every few milliseconds
 * would pay fresh page faults for megabytes of scratch on every run (a
 * ResNet-50 convolution at batch 4 ran in 12.3 ms instead of 6.3 ms).  So
 * freed blocks of at least POOL_MIN bytes are kept in a small pool and the
 * next request of a size they can hold takes the best fit: repeated runs of
 * a graph reuse the same, already mapped, memory.  The pool is bounded
 * (POOL_SLOTS blocks, and a quarter of the physical memory but at least
 * 1 GiB in all: the attention of BERT-large at batch 32 frees about 2 GiB
 * of scores per run, and a 1 GiB bound made it fault those pages in again
 * on every run, 2.6x slower).  Beyond a bound the block freed longest ago
 * goes back to the system: in a process that runs several graphs it
 * belongs to one not run since.  Giving back the largest block instead, a
 * full pool (the small blocks of a few dozen graphs run before) returned
 * the block the graph running now had just freed, so that graph faulted
 * its largest temporary in again on every run (t/043).  The pool is
 * shared by all threads under a mutex, which
 * costs nothing next to what a block of that size is used for.  Sanitizer
 * builds skip the pool so that ASan still sees every use after free.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/runtime.h"

#define ALIGN 64			/* cache line: what the kernels' vectors want */
#define POOL_MIN (64 << 10)		/* smaller blocks come from malloc's own bins */
#define POOL_SLOTS 32
#define POOL_MIN_BYTES ((int64_t)1 << 30)	/* the bound on a small machine */

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ON 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ON 0
#endif
#endif
#ifndef POOL_ON
#define POOL_ON 1
#endif

/* The header in front of every block: its usable size. */
struct head {
	int64_t cap;
	char pad[ALIGN - sizeof(int64_t)];
};

static struct {
	pthread_mutex_t lock;
	void *block[POOL_SLOTS];	/* user pointers of free blocks */
	uint64_t freed[POOL_SLOTS];	/* when each was freed, by clock */
	int n;
	int64_t bytes;			/* sum of their capacities */
	uint64_t clock;			/* blocks freed into the pool so far */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The capacity of a block handed out by hgc_rt_scratch_alloc. */
static int64_t cap_of(void *p)
{
	return ((struct head *)p - 1)->cap;
}

/* Drop slot i from the pool, moving the last block into it (lock held). */
static void *unslot(int i)
{
	void *p = pool.block[i];

	pool.bytes -= cap_of(p);
	pool.n--;
	pool.block[i] = pool.block[pool.n];
	pool.freed[i] = pool.freed[pool.n];
	return p;
}

/* The most bytes the pool keeps: a quarter of the physical memory, at least 1 GiB. */
static int64_t pool_bound(void)
{
	static int64_t bound;
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (!bound) {
		bound = pages > 0 && size > 0 ? (int64_t)pages * size / 4 : 0;
		if (bound < POOL_MIN_BYTES)
			bound = POOL_MIN_BYTES;
	}
	return bound;
}

/* A new block of cap usable bytes from the system; out of memory is fatal. */
static void *fresh(int64_t cap)
{
	void *raw = NULL;

	if (posix_memalign(&raw, ALIGN, sizeof(struct head) + (size_t)cap)) {
		fprintf(stderr, "hgc: out of memory for %lld bytes of scratch\n", (long long)cap);
		abort();
	}
	((struct head *)raw)->cap = cap;
	return (struct head *)raw + 1;
}

/* Take the smallest pooled block that holds cap bytes (at most twice as big), or NULL. */
static void *take(int64_t cap)
{
	int best = -1, i;
	void *p = NULL;

	pthread_mutex_lock(&pool.lock);
	for (i = 0; i < pool.n; i++) {
		int64_t c = cap_of(pool.block[i]);

		if (c >= cap && c / 2 <= cap && (best < 0 || c < cap_of(pool.block[best])))
			best = i;
	}
	if (best >= 0)
		p = unslot(best);
	pthread_mutex_unlock(&pool.lock);
	return p;
}

/* Index of the pooled block freed longest ago (the pool is not empty; lock held). */
static int oldest(void)
{
	int best = 0, i;

	for (i = 1; i < pool.n; i++)
		if (pool.freed[i] < pool.freed[best])
			best = i;
	return best;
}

/* Put p in the pool, giving the oldest blocks back while it is over its bounds. */
static void keep(void *p)
{
	void *evict[POOL_SLOTS + 1];
	int nevict = 0, i;

	pthread_mutex_lock(&pool.lock);
	pool.block[pool.n] = p;
	pool.freed[pool.n++] = ++pool.clock;
	pool.bytes += cap_of(p);
	while (pool.n > 0 && (pool.n == POOL_SLOTS || pool.bytes > pool_bound()))
		evict[nevict++] = unslot(oldest());
	pthread_mutex_unlock(&pool.lock);
	for (i = 0; i < nevict; i++)
		free((struct head *)evict[i] - 1);
}

/* bytes (rounded up to 64) of 64-byte aligned memory; out of memory is fatal. */
void *hgc_rt_scratch_alloc(int64_t bytes)
{
	int64_t cap = bytes > 0 ? (bytes + ALIGN - 1) & ~(int64_t)(ALIGN - 1) : ALIGN;
	void *p = NULL;

	if (POOL_ON && cap >= POOL_MIN)
		p = take(cap);
	return p ? p : fresh(cap);
}

/* Free what hgc_rt_scratch_alloc gave (NULL is fine): large blocks stay in the pool. */
void hgc_rt_scratch_free(void *p)
{
	if (!p)
		return;
	if (POOL_ON && cap_of(p) >= POOL_MIN)
		keep(p);
	else
		free((struct head *)p - 1);
}

/* Give every pooled block back to the system (tests, long-lived hosts between models). */
void hgc_rt_scratch_trim(void)
{
	pthread_mutex_lock(&pool.lock);
	while (pool.n > 0)
		free((struct head *)unslot(pool.n - 1) - 1);
	pthread_mutex_unlock(&pool.lock);
}

/* How many blocks and bytes the pool holds now. */
void hgc_rt_scratch_pooled(int *blocks, int64_t *bytes)
{
	pthread_mutex_lock(&pool.lock);
	*blocks = pool.n;
	*bytes = pool.bytes;
	pthread_mutex_unlock(&pool.lock);
}
