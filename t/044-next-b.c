/*
 * t/044-next-b.c: runtime/next_b.c, whether a large B continues a stream.
 * The first large call on a thread does not; one whose B starts where the
 * last one ended does; one that reads the same B again (a convolution's
 * weights per output row) does not, and the one after it continues from
 * there.  Each thread has its own stream, and the A of AMX calls
 * (hgc_rt_a_stream) two apart from B's, counting the bytes they ran.  And hgc_rt_fetch_once, which
 * keeps attention's next-operand fetches from asking for a region twice:
 * a region is asked for once while it overlaps one of the last four, then
 * again once four others came after it; each thread has its own four.
 * (Which calls ask, and how the tiles fetch, is run_blocks' business:
 * t/040 runs those calls against the reference.)
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/runtime_int.h"
#include "tap.h"

/* Blocks of 64 KiB one after another, as matmul_packa packs B's panels. */
#define BLK ((int64_t)64 << 10)
static char *panels;

/* Whether the call on blocks [first, first + n) continues this thread's stream. */
static int stream(int64_t first, int64_t n)
{
	return hgc_rt_b_stream(panels + first * BLK, panels + (first + n) * BLK);
}

/*
 * A's records are their own: B's calls between two of A's do not break A's
 * stream, nor do calls of A's other stream; each counts the bytes it ran.
 */
static void check_a_stream(void)
{
	ok(hgc_rt_a_stream(0, panels, panels + BLK) == 0, "A: a first call, no stream seen yet");
	ok(!stream(8, 1), "B: a call between (B's own record)");
	ok(hgc_rt_a_stream(1, panels + 12 * BLK, panels + 13 * BLK) == 0,
	   "A's other stream: a first call of its own");
	is_int(hgc_rt_a_stream(0, panels + BLK, panels + 3 * BLK), BLK,
	       "A: the call right after: a stream of one block before it");
	is_int(hgc_rt_a_stream(0, panels + 3 * BLK, panels + 4 * BLK), 3 * BLK,
	       "A: and the next: three blocks before it");
	is_int(hgc_rt_a_stream(1, panels + 13 * BLK, panels + 14 * BLK), BLK,
	       "A's other stream continues too, with its own count");
	ok(hgc_rt_a_stream(0, panels + BLK, panels + 3 * BLK) == 0, "A: the same A again: no stream");
	is_int(hgc_rt_a_stream(0, panels + 3 * BLK, panels + 4 * BLK), 2 * BLK,
	       "A: a stream starts again from there, counted afresh");
}

static void check_stream(void)
{
	ok(!stream(0, 2), "a first large call: no stream seen yet");
	ok(stream(2, 2), "the call on the blocks right after it: a stream");
	ok(stream(4, 1), "and the next one");
	ok(!stream(4, 1), "the same B again: no stream (it stays in L2)");
	ok(stream(5, 1), "the call after it continues from there");
	ok(!stream(7, 1), "a gap: no stream");
	ok(!stream(6, 1), "going back: no stream");
}

/* Two threads streaming their own blocks both see their streams. */
static void check_threads(void)
{
	int found[2] = {0, 0};

#pragma omp parallel num_threads(2)
	{
		int t = omp_get_thread_num(), i;

		for (i = 0; i < 4; i++) {
			found[t] += stream(8 + t * 4 + i, 1);
#pragma omp barrier
		}
	}
	ok(found[0] == 3 && found[1] == 3, "each thread its own stream (%d, %d of 3)", found[0],
	   found[1]);
}

/* Whether the region of blocks [first, first + n) is new to this thread's last four. */
static int once(int64_t first, int64_t n)
{
	return hgc_rt_fetch_once(panels + first * BLK, n * BLK);
}

static void check_once(void)
{
	int i, again = 0;

	ok(once(0, 1), "a first region: asked for");
	ok(!once(0, 1), "the same region again: not");
	ok(!once(0, 2), "one that overlaps it: not");
	ok(once(1, 1), "the block right after it: asked for (regions end where they end)");
	ok(hgc_rt_fetch_once(panels + BLK / 2, BLK / 4) == 0, "one inside a region asked for: not");
	for (i = 2; i < 5; i++)
		again += once(i, 1);
	ok(again == 3, "three more, one after another: each asked for (%d of 3)", again);
	ok(!once(4, 1), "the newest of four: still remembered");
	ok(once(0, 1), "the first, four regions later: forgotten, asked for again");
}

/* Each thread remembers its own regions: both ask for the same one. */
static void check_once_threads(void)
{
	int got[2] = {0, 0};

#pragma omp parallel num_threads(2)
	got[omp_get_thread_num()] = once(15, 1);
	ok(got[0] && got[1], "each thread its own regions (%d, %d)", got[0], got[1]);
}

int main(void)
{
	panels = malloc(16 * BLK);
	plan(25);
	check_stream();
	check_a_stream();
	check_threads();
	check_once();
	check_once_threads();
	free(panels);
	return done_testing();
}
