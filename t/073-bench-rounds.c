/*
 * 073-bench-rounds: the timing protocol of the benchmark harness
 * (bench/measure.c) on fake kernels that advance a fake clock: how many
 * runs each column gets, that the rounds interleave the columns in a
 * rotating order with each column's runs spread over the rounds, and the
 * median and fastest figures.  No speed is measured.
 */
#include "bench/bench.h"
#include "t/tap.h"

/* The fake clock, s. */
static double clock_s;

static double fake_clock(void)
{
	return clock_s;
}

/* A fake column: each run takes the next of its durations (cycling). */
struct fake {
	int id;
	const double *dur;
	int ndur, runs;
};

static void fake_run(void *ctx)
{
	struct fake *f = ctx;

	clock_s += f->dur[f->runs++ % f->ndur];
}

/* Which column each slice was (enter gets the column id as its thread count). */
static int slices[1000], nslices;

static void enter(int id)
{
	slices[nslices++] = id;
}

/* n fake columns warmed up, timed in rounds, then their final runs. */
static void time_columns(const struct hgc_bench_opts *o, struct fake *f, int n,
			 struct hgc_bench_kernel *k, struct hgc_bench_timing *tm)
{
	int i;

	for (i = 0; i < n; i++) {
		k[i] = (struct hgc_bench_kernel){.run = fake_run, .ctx = &f[i]};
		tm[i] = (struct hgc_bench_timing){.k = &k[i], .enter = enter, .threads = i};
		hgc_bench_warm_up(&tm[i], o);
	}
	nslices = 0;
	hgc_bench_rounds(tm, n, o);
	for (i = 0; i < n; i++)
		hgc_bench_final_run(&tm[i], o);
}

int main(void)
{
	struct hgc_bench_opts o = {.budget = 0.3, .min_iters = 5, .max_iters = 50,
				   .clock = fake_clock};
	static const double d_short[] = {0.0011}, d_mid[] = {0.011}, d_long[] = {0.1};
	static const double d_slow[] = {0.5}, d_very[] = {2.5};
	static const double d_noisy[] = {0.004, 0.004, 0.004, 0.012};
	static const double d_warm[] = {0.031, 0.009, 0.015, 0.015};
	struct fake f[3];
	struct hgc_bench_kernel k[3];
	struct hgc_bench_timing tm[3];
	int i, seen[3] = {0};

	/* Three columns of 1.1, 11 and 100 ms: the old one-column rule's counts. */
	f[0] = (struct fake){0, d_short, 1, 0};
	f[1] = (struct fake){1, d_mid, 1, 0};
	f[2] = (struct fake){2, d_long, 1, 0};
	time_columns(&o, f, 3, k, tm);
	is_int(tm[0].target, 50, "1.1 ms: 50 runs (at most max_iters)");
	is_int(tm[1].target, 28, "11 ms: 28 runs (until the 0.3 s budget)");
	is_int(tm[2].target, 5, "100 ms: 5 runs (at least min_iters)");
	for (i = 0; i < 3; i++)
		is_int(tm[i].n, tm[i].target, "column %d ran its planned runs", i);
	is_int(f[0].runs, 10 + 49 + 10 * 10 + 1,
	       "1.1 ms: 10 warm-up runs, 49 timed in rounds, 10 ms (10 runs) untimed per slice, the final one");
	is_int(f[1].runs, 5 + 28, "11 ms: 5 warm-up runs, 28 timed, no untimed one per slice");
	ok(fabs(tm[0].ms - 1.1) < 1e-9 && fabs(tm[1].ms - 11) < 1e-9 && fabs(tm[2].ms - 100) < 1e-9,
	   "the figures: %g, %g, %g ms", tm[0].ms, tm[1].ms, tm[2].ms);
	/* Before the final runs, columns 0 and 1 have a slice in each of the 10
	   rounds and column 2 in 4 of them (4 runs spread over 10 rounds); each
	   round starts with the next column in turn among those that run in it. */
	{
		static const int want[] = {0, 1, 1, 0, 2, 0, 1, 0, 1, 1, 2, 0,
					   0, 1, 0, 1, 1, 2, 0, 0, 1, 0, 1, 2};
		int same = nslices == 24;

		for (i = 0; same && i < 24; i++)
			same = slices[i] == want[i];
		ok(same, "the slices: round r starts with column r %% 3 or the next one that runs");
		for (i = 0; i < nslices && i < 24; i++)
			seen[slices[i]]++;
	}
	ok(seen[0] == 10 && seen[1] == 10 && seen[2] == 4, "slices per column: 10, 10, 4 (%d, %d, %d)",
	   seen[0], seen[1], seen[2]);
	for (i = 0; i < 3; i++)
		hgc_bench_timing_release(&tm[i]);

	/* Runs longer than the budget: 3 timed runs, 2 beyond 2 s, spread over
	   the rounds a short column sets. */
	f[0] = (struct fake){0, d_short, 1, 0};
	f[1] = (struct fake){1, d_slow, 1, 0};
	f[2] = (struct fake){2, d_very, 1, 0};
	time_columns(&o, f, 3, k, tm);
	is_int(tm[1].target, 3, "0.5 s: 3 timed runs");
	is_int(tm[2].target, 2, "2.5 s: 2 timed runs");
	is_int(nslices, 10 + 2 + 1, "the long columns run in some of the 10 rounds only");
	ok(slices[nslices - 1] == 2, "the 2.5 s column's run in the rounds is in the last one");
	is_int(tm[2].n, 2, "then its final run: 2 timed runs");
	for (i = 0; i < 3; i++)
		hgc_bench_timing_release(&tm[i]);

	/* The plan comes from the mean warm-up run after the first (12 ms here),
	   not from the fastest (9 ms): under load it costs what the one-column
	   rule spent. */
	f[0] = (struct fake){0, d_warm, 4, 0};
	time_columns(&o, f, 1, k, tm);
	is_int(tm[0].target, 25, "warm-up runs of 31, 9 and 15 ms: 25 timed runs (0.3 s / 12 ms)");
	hgc_bench_timing_release(&tm[0]);

	/* A column preempted one run in four: the median ignores it, and so does
	   the fastest run; a lone column runs all its runs in up to 10 slices. */
	f[0] = (struct fake){0, d_noisy, 4, 0};
	time_columns(&o, f, 1, k, tm);
	is_int(tm[0].target, 50, "a lone 4 ms column: 50 runs (75 by the budget, capped)");
	is_int(nslices, 10, "in 10 slices, then the final run");
	ok(fabs(tm[0].ms - 4) < 1e-9, "median 4 ms, not the preempted 12 (%g)", tm[0].ms);
	hgc_bench_timing_release(&tm[0]);
	o.fastest = 1;
	f[0] = (struct fake){0, d_noisy, 4, 3};
	time_columns(&o, f, 1, k, tm);
	ok(fabs(tm[0].ms - 4) < 1e-9, "--fastest: 4 ms (%g)", tm[0].ms);
	hgc_bench_timing_release(&tm[0]);
	return done_testing();
}
