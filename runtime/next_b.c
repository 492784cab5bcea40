/*
 * next_b.c: whether a brgemm call's large B is part of a stream, so that
 * its tiles ask for the next call's B into L2 while they run
 * (brgemm_tile.inc's next_b_region and run_blocks).
 *
 * The next call's B is fetched where a nest of calls over densely packed
 * blocks finds it, right after this call's.  Without that, the first row
 * tile of each call reads its B from L3 or memory at a line per k step,
 * faster than the hardware prefetcher brings it.
 *
 * The f32 asm tiles fetch it inside their k loops, a line per trip of four
 * k steps, when their share is at least a line per two trips (run_blocks).
 * transformer's 2048 batches of 40x64x40 (10 KiB of B a call, 32 lines a
 * tile of 16 trips) went from 3.24-3.39 to 3.07-3.17 ms at one thread
 * against the bursts below; 1536 x 128x64x128 23.4-24.1 -> 23.4-24.0.
 *
 * Elsewhere a B under 64 KiB is fetched in bursts: each row tile asks for
 * its share before it runs, at most a line per two k steps (a call of one
 * row tile, 6x64x128, otherwise asked for all 32 KiB of the next B in 512
 * prefetches, a quarter of its time: 125 against 170 GFLOP/s).  Bursts
 * stall on the fill buffers as B grows: res4a_branch1, a strided 1x1 with
 * 128 KiB of weights a call, spent 14% of its time in them (one thread,
 * three rounds alternated with a 128 KiB bound: res4a_branch1 5.41-5.57 ->
 * 5.09-5.22 ms, dlrm_bottom b512 1.02-1.05 -> 0.95-1.00 ms).
 *
 * A B of 64 KiB or more is fetched only in a stream, when it begins where
 * the last large call's B on this thread ended (matmul_packa's calls along
 * N, each on the next panel of the packed weights), and then by the asm
 * tiles, a line per trip of four k steps.  Elsewhere the next call often
 * reads the same B again (a convolution's weights for each output row),
 * and fetching another as large evicts it from L2 (res5a_branch2b,
 * 4x512x7x7, 3x3, 1.15 MB of weights a call: 7.4-7.6 -> 6.3-6.7 ms on the
 * Xeon when such calls stopped fetching).  The stream on the Xeon, one
 * thread, `hgc run --fastest`, three rounds alternated: 1024^3 10.28-10.50
 * -> 9.77-9.83 ms, 2048^3 84.5-90.0 -> 80.4-81.6 ms; two threads 5.16-5.23
 * -> 4.85-4.87 and 42.5-43.2 -> 40.3-40.5 ms.
 *
 * Only large calls ask, so a small call's path stays as it was.
 *
 * AMX calls fetch the next call's A the same way (brgemm_amx.c, next_a),
 * when theirs continues a stream of A: hgc_rt_a_stream keeps records of its
 * own, one per path (the two-chunk calls, attention's x V, apart from the
 * others, its Q K^T), so that calls in between do not break a stream.
 */
#include "runtime/runtime_int.h"

/* Where the B of the last large call ended, on this thread. */
static _Thread_local const char *large_b_end;

/* Per stream of A (one per path of AMX calls): where the A of its last call
   on this thread ended, and how many bytes it has run. */
static _Thread_local const char *large_a_end[HGC_RT_A_STREAMS];
static _Thread_local int64_t large_a_run[HGC_RT_A_STREAMS];

/* Whether [start, end) begins where the region *last_end ended; remembers end. */
static int continues(const char **last_end, const void *start, const char *end)
{
	const char *seen = *last_end;

	*last_end = end;
	return (const char *)start == seen;
}

int hgc_rt_b_stream(const void *start, const char *end)
{
	return continues(&large_b_end, start, end);
}

int64_t hgc_rt_a_stream(int stream, const void *start, const char *end)
{
	int64_t before = continues(&large_a_end[stream], start, end) ? large_a_run[stream] : 0;

	large_a_run[stream] = before + (end - (const char *)start);
	return before;
}

/*
 * The regions that next-operand fetches (brgemm_tile.inc's
 * next_operand_region) asked for lately on this thread, a ring of the last
 * four.  Several calls find the same next block: attention's two column
 * blocks of Q K^T read the same Q, so the second one's next Q was asked for
 * by the first; the ring sends it on to the next K^T instead, and keeps a
 * region from being asked for twice while it is still on its way.
 */
#define FETCHED_N 4
static _Thread_local const char *fetched_lo[FETCHED_N], *fetched_hi[FETCHED_N];
static _Thread_local int fetched_at;

int hgc_rt_fetch_once(const char *start, int64_t bytes)
{
	const char *end = start + bytes;
	int i;

	for (i = 0; i < FETCHED_N; i++)
		if (start < fetched_hi[i] && fetched_lo[i] < end)
			return 0;
	fetched_lo[fetched_at] = start;
	fetched_hi[fetched_at] = end;
	fetched_at = (fetched_at + 1) % FETCHED_N;
	return 1;
}
