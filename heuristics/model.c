/*
 * model.c: the machine and the microkernel model the template families'
 * estimates are built from (heuristics.h).  Figures: MICROKERNELS.md and
 * docs/runtime.md (tiles per ISA, load-bound ymm tiles, the cost of a call).
 */
#include "heuristics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* The first line of a sysfs file into buf; false when it cannot be read. */
static bool read_line(const char *path, char *buf, int n)
{
	FILE *f = fopen(path, "r");
	bool ok = f && fgets(buf, n, f);

	if (f)
		fclose(f);
	buf[ok ? strcspn(buf, "\n") : 0] = 0;
	return ok;
}

/* "512K", "32768K", "1M" or a byte count in bytes; 0 when it is none. */
static int64_t size_bytes(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (end == s || v <= 0)
		return 0;
	if (*end == 'K')
		return (int64_t)v << 10;
	if (*end == 'M')
		return (int64_t)v << 20;
	return *end ? 0 : (int64_t)v;
}

/* Bytes of cpu0's data or unified cache at level (Linux sysfs), or 0. */
static int64_t sysfs_cache(int level)
{
	char path[96], buf[64];
	int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (!read_line(path, buf, sizeof(buf)))
			break;
		if (atoi(buf) != level)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if (!read_line(path, buf, sizeof(buf)) || !strcmp(buf, "Instruction"))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (read_line(path, buf, sizeof(buf)))
			return size_bytes(buf);
	}
	return 0;
}

/* Bytes of the L1 data or the L2 cache from CPUID's extended leaves (AMD
   both, Intel the L2), or 0. */
static int64_t cpuid_cache(int level)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (level == 1 && __get_cpuid(0x80000005, &a, &b, &c, &d) && c >> 24)
		return (int64_t)(c >> 24) << 10;
	if (level == 2 && __get_cpuid(0x80000006, &a, &b, &c, &d) && c >> 16)
		return (int64_t)(c >> 16) << 10;
#endif
	(void)level;
	return 0;
}

/* A cache's bytes per core: sysfs, else CPUID, else fallback. */
static int64_t cache_bytes(int level, int64_t fallback)
{
	int64_t v = sysfs_cache(level);

	if (v <= 0)
		v = cpuid_cache(level);
	return v > 0 ? v : fallback;
}

/*
 * The cores the model knows.  Zen 3/4 (AMD, and the default): a zmm FMA
 * takes both 256-bit pipes, and a call whose B block exceeds half the L1
 * ran up to twice as slow (512^3: KB*BS = 64 against 128, 2026-11).  The
 * Xeons measured on 2026-12-02 (Sapphire Rapids and later, 48 KiB L1, 2 MiB
 * L2): two zmm FMAs a cycle (242.6 GFLOP/s against 130.9 of ymm), and B
 * blocks up to 64 KiB streamed from L2 at no cost (1024^3 with NB=64:
 * 13.5, 13.3 and 13.3-13.8 ms for KB = 64, 128, 256).  There each
 * broadcast of A costs the zmm tile about 0.6 of an FMA slot: tiles of
 * 24 FMAs a k step in a loop in L1 (K=128) ran at 0.86 (6x4, 8x3) and
 * 0.78-0.82 (12x2) of the FMA peak, and 16x1 at 0.56-0.63, which rated at
 * 0.92 made matmul_plain take NB=16 for 512x845x1024 (6.1-6.3 ms, against
 * 5.5 with matmul_packa's 6x4 tiles).
 */
struct core {
	const char *vendor;	/* as HGC_MACHINE names it */
	double zmm_fmas;	/* zmm FMAs per cycle */
	double l1_slowdown;	/* a call's slowdown at a B block of twice the L1 term's limit */
	double bcast_fma;	/* FMA slots a zmm broadcast of A takes */
};

static const struct core cores[] = {
	{ "amd", 1, 1, 0 },
	{ "intel", 2, 0, 0.6 },
};

/* The core by CPUID's vendor: Intel's for "GenuineIntel", else AMD's. */
static const struct core *host_core(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x756e6547 && d == 0x49656e69 &&
	    c == 0x6c65746e)	/* "GenuineIntel" */
		return &cores[1];
#endif
	return &cores[0];
}

/* The core called name, or NULL. */
static const struct core *core_named(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++)
		if (strlen(cores[i].vendor) == n && !strncmp(cores[i].vendor, name, n))
			return &cores[i];
	return NULL;
}

/*
 * HGC_MACHINE="VENDOR,L1,L2" (amd or intel; sizes as sysfs writes them:
 * "amd,32K,512K") in place of the host's core and caches, so that what a
 * plan depends on can be pinned: the tests that check plans pin the machine
 * they were made for.  False when unset; a malformed value warns once and
 * is ignored.
 */
static bool env_machine(const struct core **core, int64_t *l1, int64_t *l2)
{
	const char *s = getenv("HGC_MACHINE"), *c1, *c2;
	char first[32];

	if (!s || !*s)
		return false;
	c1 = strchr(s, ',');
	c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	if (c2 && (size_t)(c2 - c1 - 1) < sizeof(first)) {
		*core = core_named(s, (size_t)(c1 - s));
		memcpy(first, c1 + 1, (size_t)(c2 - c1 - 1));
		first[c2 - c1 - 1] = 0;
		*l1 = size_bytes(first);
		*l2 = size_bytes(c2 + 1);
		if (*core && *l1 > 0 && *l2 > 0)
			return true;
	}
	fprintf(stderr, "hgc: warning: HGC_MACHINE='%s' is not VENDOR,L1,L2 (as amd,32K,512K); "
		"using this machine\n", s);
	return false;
}

/* This machine: its core (HGC_MACHINE, else by vendor), the L1 and L2 sizes
   (HGC_MACHINE, sysfs or CPUID; 32 KiB and 1 MiB when none says); AVX2 or
   AVX-512 tiles. */
void hgc_heur_machine_host(struct hgc_heur_machine *mc, int vlen)
{
	static const struct core *host;	/* read once; atomics: searches may run in threads */
	static int64_t l1, l2;
	const struct core *core = __atomic_load_n(&host, __ATOMIC_ACQUIRE);
	int64_t c1, c2;

	if (!core) {
		if (!env_machine(&core, &c1, &c2)) {
			core = host_core();
			c1 = cache_bytes(1, 32 << 10);
			c2 = cache_bytes(2, 1 << 20);
		}
		__atomic_store_n(&l1, c1, __ATOMIC_RELAXED);
		__atomic_store_n(&l2, c2, __ATOMIC_RELAXED);
		__atomic_store_n(&host, core, __ATOMIC_RELEASE);
	}
	memset(mc, 0, sizeof(*mc));
	mc->vendor = core->vendor;
	mc->vlen = vlen >= 16 ? 16 : 8;
	mc->ghz = 2.9;
	mc->fma_per_cycle = mc->vlen == 16 ? core->zmm_fmas : 2;
	mc->loads_per_cycle = mc->vlen == 16 ? 2 : 1.85;
	mc->fma_latency = 4;
	mc->bcast_fma = mc->vlen == 16 ? core->bcast_fma : 0;
	mc->l1 = __atomic_load_n(&l1, __ATOMIC_RELAXED);
	mc->l2 = __atomic_load_n(&l2, __ATOMIC_RELAXED);
	mc->l1_slowdown = core->l1_slowdown;
	mc->l3_bw = 12;
	mc->call_cycles = 120;
	mc->pack_ns = 0.35;
	mc->fork_ns = 2000;
}

/* Constant: a constant graph input, or data a pass embedded. */
bool hgc_heur_tensor_const(const struct hgc_tensor *t)
{
	return !t->producer && (t->prop == HGC_PROP_CONSTANT || t->data);
}

/* Names to slots, the constant inputs, element sizes. */
void hgc_heur_ctx_init(struct hgc_heur_ctx *cx, const struct hgc_tmpl_bind *b,
		       const struct hgc_heur_machine *mc)
{
	static const char *const names[] = {
#define X(n) #n,
		HGC_HEUR_NAMES(X)
#undef X
	};
	int i;

	memset(cx, 0, sizeof(*cx));
	cx->b = b;
	cx->mc = mc;
	for (i = 0; i < HGC_HEUR_NNAMES; i++)
		cx->slot[i] = hgc_tmpl_sym(b->t, names[i]);
	for (i = 0; i <= b->t->ninputs && i < HGC_TMPL_MAX_OPERANDS; i++) {
		cx->esize[i] = b->dtype[i] == HGC_DT_F32 || b->dtype[i] == HGC_DT_S32 ? 4
			     : b->dtype[i] == HGC_DT_BF16 ? 2 : 1;
		cx->konst[i] = i < b->t->ninputs && b->op && i < b->op->nin &&
			       hgc_heur_tensor_const(b->op->in[i]);
	}
}

/* A name's value in e. */
int64_t hgc_heur_val(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		     enum hgc_heur_name n, int64_t dflt)
{
	return cx->slot[n] >= 0 ? e->v[cx->slot[n]] : dflt;
}

/* Instructions per k step of one row by one vector, and k values per step,
   for A's element type at this vector length. */
static void kind_rate(const struct hgc_heur_ctx *cx, double *ipk, int *kstep)
{
	enum hgc_dtype a = cx->b->dtype[0];
	bool wide = cx->mc->vlen == 16;

	*ipk = 1;
	*kstep = 1;
	if (a == HGC_DT_U8 || a == HGC_DT_S8) {
		*kstep = 4;
		*ipk = wide ? 1 : 3;	/* vpdpbusd; AVX2: 2 vpmaddwd + vpaddd */
	} else if (a == HGC_DT_BF16) {
		*kstep = 2;
		*ipk = wide ? 1 : 2.5;	/* vdpbf16ps; AVX2: two FMAs and the widening */
	}
}

/* Operations per ns one core reaches at the kernel's instruction peak. */
double hgc_heur_peak(const struct hgc_heur_ctx *cx)
{
	double ipk;
	int kstep;

	kind_rate(cx, &ipk, &kstep);
	return 2.0 * cx->mc->vlen * kstep * cx->mc->fma_per_cycle * cx->mc->ghz / ipk;
}

/* Cycles of one k step of an r x v tile: FMA-, load- or latency-bound. */
static double tile_step(const struct hgc_heur_machine *mc, double ipk, int64_t r, int64_t v)
{
	double fma = ((double)(r * v) * ipk + mc->bcast_fma * (double)r) / mc->fma_per_cycle;
	double ld = (double)(r + v) / mc->loads_per_cycle;
	double lat = mc->fma_latency * ipk;

	return fmax(fma, fmax(ld, lat));
}

/* Cycles of one tile over steps k steps: its steps plus loading and storing C. */
static double tile_cycles(const struct hgc_heur_machine *mc, double ipk, int64_t r, int64_t v,
			  int64_t steps)
{
	return (double)steps * tile_step(mc, ipk, r, v) +
	       2.0 * (double)(r * v) / mc->loads_per_cycle + 6;
}

/* Cycles of the row tiles of a column block of v vectors: full tiles of mr
   rows, the rest in edge tiles of 8, 4, 2 and 1 rows. */
static double rows_cycles(const struct hgc_heur_machine *mc, double ipk, int64_t rows, int64_t mr,
			  int64_t v, int64_t steps)
{
	double c = (double)(rows / mr) * tile_cycles(mc, ipk, mr, v, steps);
	int64_t left = rows % mr, e;

	for (e = 8; e >= 1; e /= 2)
		for (; left >= e; left -= e)
			c += tile_cycles(mc, ipk, e, v, steps);
	return c;
}

/* Rows of the full tile of v vectors (docs/runtime.md, "Tiles"). */
static int64_t tile_rows(const struct hgc_heur_machine *mc, int64_t v)
{
	static const int64_t zmm[] = {16, 12, 8, 6}, ymm[] = {8, 6};

	if (mc->vlen == 16)
		return zmm[v - 1];
	return ymm[v - 1];
}

/*
 * The kernel runs its row tiles outer, so every row tile reads the call's
 * whole B (k x cols): measured on this machine, 512^3 with KB*BS = 64 (16 KiB
 * of B) ran twice as fast as with 128 (32 KiB) or more.  B beyond half the
 * L1 cache slows the call down, up to twice when it is the whole L1.
 */
static double l1_factor(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols, int64_t k,
			int64_t mr)
{
	double half = (double)cx->mc->l1 / 2;
	double bytes = (double)k * (double)cols * cx->esize[1];

	if (rows <= mr || bytes <= half)
		return 1;
	return 1 + cx->mc->l1_slowdown * fmin(1, (bytes - half) / half);
}

/* The L1 term of a batched call (hgc_heur_batch_call_ns): B up to the
   whole L1 is free, beyond it the call slows down, up to twice at twice
   the L1. */
static double batch_l1_factor(const struct hgc_heur_ctx *cx, int64_t cols, int64_t k)
{
	double l1 = (double)cx->mc->l1;
	double bytes = (double)k * (double)cols * cx->esize[1];

	if (bytes <= l1)
		return 1;
	return 1 + cx->mc->l1_slowdown * fmin(1, (bytes - l1) / l1);
}

/* Cycles of the row tiles of a column block as the AVX2 kernel splits its
   rows: ceil(rows / mr) tiles, as even as they can be (128 rows with 6-row
   tiles run as 18 of 6 and 4 of 5; docs/runtime.md, "Tiles"). */
static double even_rows_cycles(const struct hgc_heur_machine *mc, double ipk, int64_t rows,
			       int64_t mr, int64_t v, int64_t steps)
{
	int64_t tiles = (rows + mr - 1) / mr, lo = rows / tiles, big = rows % tiles;

	return (double)big * tile_cycles(mc, ipk, lo + 1, v, steps) +
	       (double)(tiles - big) * tile_cycles(mc, ipk, lo, v, steps);
}

/* The cycles of a call's tiles: column blocks of the widest tile, the rest
   in a narrower one, every block's rows through rows_cycles (even_rows_cycles
   when even and the vectors are ymm). */
static double blocks_cycles(const struct hgc_heur_machine *mc, double ipk, int64_t rows,
			    int64_t vecs, int64_t steps, bool even)
{
	int64_t nr = mc->vlen == 16 ? 4 : 2, v;
	double cyc = 0;

	for (v = nr; v >= 1; v--) {
		int64_t blocks = v == nr ? vecs / nr : (v == vecs % nr ? 1 : 0);

		if (!blocks)
			continue;
		if (even && mc->vlen == 8)
			cyc += (double)blocks * even_rows_cycles(mc, ipk, rows, tile_rows(mc, v), v, steps);
		else
			cyc += (double)blocks * rows_cycles(mc, ipk, rows, tile_rows(mc, v), v, steps);
	}
	return cyc;
}

/* One brgemm call of rows x cols over k, bs batch elements: blocks_cycles
   (rows split evenly for the batched templates), slowed by the L1 term of
   the 2-D model or of the batched one, and the call's fixed cost. */
static double call_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols, int64_t k,
		      int64_t bs, bool batched)
{
	const struct hgc_heur_machine *mc = cx->mc;
	int64_t vecs = (cols + mc->vlen - 1) / mc->vlen, steps;
	int64_t tile = tile_rows(mc, mc->vlen == 16 ? 4 : 2);
	double ipk, cyc;
	int kstep;

	kind_rate(cx, &ipk, &kstep);
	steps = (k + kstep - 1) / kstep;
	if (rows < 1 || cols < 1)
		return mc->call_cycles / mc->ghz;
	cyc = blocks_cycles(mc, ipk, rows, vecs, steps, batched);
	if (!batched)
		cyc *= l1_factor(cx, rows, cols, k, tile);
	else if (rows > tile)
		cyc *= batch_l1_factor(cx, cols, k);
	cyc += mc->call_cycles + 4.0 * (double)bs;
	return cyc / mc->ghz;
}

/* One brgemm call of the 2-D templates. */
double hgc_heur_call_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols, int64_t k,
			int64_t bs)
{
	return call_ns(cx, rows, cols, k, bs, false);
}

/*
 * One call of the batched templates, whose B of a batch element (K x N,
 * packed or in place) is read by all of that element's row blocks and
 * stays in L2: its rows split as the AVX2 kernel splits them, and B of up
 * to the whole L1 costs nothing extra (batch_l1_factor).  A 6x2 tile takes
 * 64 bytes of B per 6 cycles of FMAs, which L2 delivers.  Measured on
 * bert's 12 x 128x128x64 (one thread, thread CPU-time minima alternated
 * in one process with oneDNN, load 5): MB=128 NB=64 KB=128 (B of 32 KiB a
 * call, which the 2-D model's L1 term rates 2x) 0.286 ms against 0.298
 * ms for MB=64 NB=32 KB=128.  Beyond the L1 the term stays: bert_large's
 * 12 x 384x384x64 in calls of 96 KiB of B (NB=64 KB=128 BS=3) ran within
 * the noise of NB=16 at one thread and slower at two (5 of 6 runs).
 */
double hgc_heur_batch_call_ns(const struct hgc_heur_ctx *cx, int64_t rows, int64_t cols,
			      int64_t k, int64_t bs)
{
	return call_ns(cx, rows, cols, k, bs, true);
}

/* Packing an operand on every run: nothing for a constant one (init). */
double hgc_heur_pack_ns(const struct hgc_heur_ctx *cx, int operand, int64_t elems, int64_t threads)
{
	if (operand < cx->b->t->ninputs && cx->konst[operand])
		return 0;
	return (double)elems * cx->mc->pack_ns / (double)(threads > 0 ? threads : 1);
}

/* Re-reading from L3 what does not stay in L2. */
double hgc_heur_spill_ns(const struct hgc_heur_ctx *cx, int64_t ws, int64_t bytes, int64_t times)
{
	if (ws <= cx->mc->l2 * 3 / 4 || times <= 1)
		return 0;
	return (double)bytes * (double)(times - 1) / cx->mc->l3_bw;
}

/* Whether operand i's graph tensor is its layout l itself: every physical
   dim a whole canonical dim, in the graph tensor's memory order (the
   canonical order for a template that gives no layout). */
static bool identity(const struct hgc_tmpl_bind *b, int i, const struct hgc_tmpl_layout *l)
{
	const struct hgc_tmpl_map *mp = &b->map[i];
	int j, d;

	if (mp->n != b->t->operand_rank[i] || (l->declared && l->nphys != mp->n))
		return false;
	for (j = 0; j < mp->n; j++) {
		d = l->declared ? l->phys[j].dim : j;
		if (l->declared && l->phys[j].kind != HGC_TMPL_WHOLE)
			return false;
		if (mp->d[j].c != d || mp->d[j].div > 1 ||
		    (mp->d[j].mod && mp->d[j].mod != b->dims[i][d]))
			return false;
	}
	return true;
}

/* Packing the inputs and writing the result back on a run (layout sizes);
   operands without a layout cost nothing: the nest uses the graph's tensor. */
double hgc_heur_pack_layouts(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		       int64_t threads)
{
	struct hgc_tmpl_layout l;
	struct hgc_tmpl_env tmp = *e;
	double ns = 0;
	int64_t n;
	int i, j;

	for (i = 0; i <= cx->b->t->ninputs; i++) {
		cx->b->t->layout(&tmp, i, &l);
		/* a plain operand is read or written in place (tmpl_inst.c) */
		if (identity(cx->b, i, &l))
			continue;
		for (n = 1, j = 0; j < l.nphys; j++)
			n *= l.phys[j].extent;
		ns += hgc_heur_pack_ns(cx, i, n, threads);
	}
	return ns;
}

/* Fill in the shares of an estimate from the busiest thread's time. */
void hgc_heur_finish(const struct hgc_heur_ctx *cx, struct hgc_heur_est *o, double useful_flops,
		   double thread_flops, int64_t threads, double calls_ns, int regions)
{
	double peak = hgc_heur_peak(cx);

	o->compute_ns = calls_ns;
	o->balance = thread_flops > 0 ? useful_flops / ((double)threads * thread_flops) : 1;
	o->eff = calls_ns > 0 ? thread_flops / (calls_ns * peak) : 1;
	/* the working set breaks ties: less of it leaves more cache to the rest */
	o->total_ns = o->compute_ns + o->mem_ns + o->pack_ns + regions * cx->mc->fork_ns +
		      (double)o->working_set * 1e-6;
}

/* Least padding: what an unknown template is ranked by. */
static void padding_only(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
			 struct hgc_heur_est *out)
{
	struct hgc_tmpl_env tmp = *e;

	memset(out, 0, sizeof(*out));
	out->total_ns = (double)hgc_tmpl_padding(cx->b, &tmp);
	out->eff = out->balance = 1;
}

/* The estimate of one candidate, by family. */
int hgc_heur_estimate(const struct hgc_heur_ctx *cx, const struct hgc_tmpl_env *e,
		      struct hgc_heur_est *out)
{
	struct hgc_tmpl_env tmp = *e;

	memset(out, 0, sizeof(*out));
	if (hgc_heur_matmul(cx, e, out) || hgc_heur_conv(cx, e, out))
		out->modelled = true;
	else
		padding_only(cx, e, out);
	hgc_tmpl_padding(cx->b, &tmp);
	if (tmp.bad || !isfinite(out->total_ns))
		return -1;
	return 0;
}
