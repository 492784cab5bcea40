/*
 * t/043-scratch.c: runtime/scratch.c.  Blocks are aligned and writable;
 * large freed blocks come back to the next request of a size they hold (the
 * pool that spares each run of a graph its page faults), small ones and
 * much smaller requests do not take them; the pool stays bounded (in
 * blocks, and in bytes by a quarter of the physical memory), giving back
 * the block freed longest ago; threads
 * allocating and freeing at once never share a live block.  Sanitizer
 * builds run without the pool, so the pool checks are skipped there.
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "tap.h"

#if defined(__SANITIZE_ADDRESS__)
#define POOLED 0
#else
#define POOLED 1
#endif

/* Allocations of a few sizes are 64-byte aligned and fully writable. */
static void check_alignment(void)
{
	static const int64_t sizes[] = { 0, 1, 63, 64, 65, 4096, 65536, 1 << 20, 3000001 };
	int good = 1;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = hgc_rt_scratch_alloc(sizes[i]);

		good &= ((uintptr_t)p % 64) == 0;
		memset(p, 0xab, (size_t)(sizes[i] ? sizes[i] : 1));
		hgc_rt_scratch_free(p);
	}
	ok(good, "every block is 64-byte aligned and writable");
	hgc_rt_scratch_free(NULL);
	ok(1, "freeing NULL is fine");
}

/* A freed large block is reused for the same and a slightly smaller size, not for a tiny one. */
static void check_reuse(void)
{
	int blocks;
	int64_t bytes;
	void *a, *b, *c;

	hgc_rt_scratch_trim();
	a = hgc_rt_scratch_alloc(8 << 20);
	hgc_rt_scratch_free(a);
	hgc_rt_scratch_pooled(&blocks, &bytes);
	is_int(blocks, POOLED ? 1 : 0, "a freed 8 MiB block is pooled");
	b = hgc_rt_scratch_alloc((8 << 20) - 4096);
	ok(POOLED ? b == a : 1, "the next run's 8 MiB - 4 KiB request takes it");
	hgc_rt_scratch_free(b);
	c = hgc_rt_scratch_alloc(1 << 20);
	ok(c != a, "a 1 MiB request does not hold on to the 8 MiB block");
	hgc_rt_scratch_free(c);
	c = hgc_rt_scratch_alloc(1000);
	hgc_rt_scratch_free(c);
	hgc_rt_scratch_pooled(&blocks, &bytes);
	is_int(blocks, POOLED ? 2 : 0, "small blocks are not pooled");
	hgc_rt_scratch_trim();
	hgc_rt_scratch_pooled(&blocks, &bytes);
	ok(blocks == 0 && bytes == 0, "trim empties the pool");
}

/* The most bytes the pool keeps: a quarter of the physical memory, at least 1 GiB. */
static int64_t bound(void)
{
	int64_t b = (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 4;

	return b < ((int64_t)1 << 30) ? (int64_t)1 << 30 : b;
}

/* However many blocks are freed, the pool keeps at most 31 and its byte bound. */
static void check_bounds(void)
{
	void *p[40];
	int blocks, i;
	int64_t bytes, big = bound() / 3 + 4096;

	for (i = 0; i < 40; i++)
		p[i] = hgc_rt_scratch_alloc((int64_t)(i + 1) << 17);
	for (i = 0; i < 40; i++)
		hgc_rt_scratch_free(p[i]);
	hgc_rt_scratch_pooled(&blocks, &bytes);
	ok(blocks < 32, "40 freed blocks: the pool keeps %d", blocks);
	hgc_rt_scratch_trim();
	/* never touched, so the system only reserves them */
	for (i = 0; i < 4; i++)
		p[i] = hgc_rt_scratch_alloc(big);
	for (i = 0; i < 4; i++)
		hgc_rt_scratch_free(p[i]);
	hgc_rt_scratch_pooled(&blocks, &bytes);
	ok(bytes <= bound() && blocks == (POOLED ? 2 : 0),
	   "four blocks of a third of the bound (%lld MiB): %d stay, %lld MiB",
	   (long long)(big >> 20), blocks, (long long)(bytes >> 20));
	hgc_rt_scratch_trim();
}

/* A full pool gives back the block freed longest ago, not the one a graph has just freed:
   after a run of other graphs (31 small blocks), an 8 MiB block freed now is there for
   the next run. */
static void check_oldest_out(void)
{
	void *p[31], *big, *again;
	int blocks, i;
	int64_t bytes;

	hgc_rt_scratch_trim();
	for (i = 0; i < 31; i++)
		p[i] = hgc_rt_scratch_alloc((int64_t)(i + 1) << 17);
	for (i = 0; i < 31; i++)
		hgc_rt_scratch_free(p[i]);
	big = hgc_rt_scratch_alloc(8 << 20);
	hgc_rt_scratch_free(big);
	hgc_rt_scratch_pooled(&blocks, &bytes);
	again = hgc_rt_scratch_alloc(8 << 20);
	ok(POOLED ? again == big && blocks == 31 : 1,
	   "a full pool keeps the 8 MiB block just freed (%d blocks): the next run takes it", blocks);
	ok(POOLED ? bytes == 495 * ((int64_t)1 << 17) + (8 << 20) : 1,
	   "the block freed first (128 KiB) went back to the system: %lld bytes pooled",
	   (long long)bytes);
	hgc_rt_scratch_free(again);
	hgc_rt_scratch_trim();
}

/* Threads allocating, filling and checking blocks at once never see each other's data. */
static void check_threads(void)
{
	int bad = 0;

#pragma omp parallel num_threads(4) reduction(+ : bad)
	{
		int t = omp_get_thread_num();

		for (int r = 0; r < 200; r++) {
			int64_t n = ((int64_t)(r % 5) + 1) << 16;
			unsigned char *p = hgc_rt_scratch_alloc(n);

			memset(p, t + 1, (size_t)n);
			for (int64_t i = 0; i < n; i += 4093)
				bad += p[i] != t + 1;
			hgc_rt_scratch_free(p);
		}
	}
	is_int(bad, 0, "4 threads x 200 rounds: no block shared while live");
	hgc_rt_scratch_trim();
}

int main(void)
{
	plan(12);
	check_alignment();
	check_reuse();
	check_bounds();
	check_oldest_out();
	check_threads();
	return done_testing();
}
