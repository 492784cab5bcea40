/*
 * 130-heuristics: the parameter search of heuristics/: sensible choices on
 * known shapes (the thread grid, blocks dividing the dims, k-slicing or a
 * small MB for a tiny M), every kept candidate valid, pins respected, the
 * cost model monotone where it obviously must be, `hgc explain`'s listing,
 * and compiled graphs with the chosen parameters against the interpreter on
 * odd shapes.
 */
#include "t/driver_check.h"
#include "t/pin_machine.h"
#include "t/self_exec.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "heuristics/heuristics.h"

/* Bind template name to the MatMul of g under threads. */
static bool bind_mm(struct hgc_graph *g, const char *name, int threads, struct hgc_tmpl_bind *b)
{
	const struct hgc_op *op = HGC_GRAPH_OP(g, 0);

	return hgc_tmpl_bind(hgc_tmpl_find(name), op, threads, b) == 0;
}

/* A parameter's value in a candidate. */
static int64_t pv(const struct hgc_tmpl_env *e, const char *name)
{
	int s = hgc_tmpl_sym(e->t, name);

	return s >= 0 ? e->v[s] : -1;
}

/* Search matmul_core for an m x k x n MatMul; the result in r. */
static int search_mm(int64_t m, int64_t k, int64_t n, int threads, const struct hgc_tmpl_pin *p,
		     int np, struct hgc_heur_result *r, struct hgc_diag *d)
{
	struct hgc_graph *g = dc_matmul(m, k, n, false);
	struct hgc_tmpl_bind b;
	int rc = -1;

	if (bind_mm(g, "matmul_core", threads, &b))
		rc = hgc_heur_search(&b, p, np, r, d);
	hgc_graph_free(g);
	return rc;
}

/* Every kept candidate satisfies the template's constraints. */
static bool all_valid(const struct hgc_heur_result *r)
{
	for (int i = 0; i < r->n; i++) {
		struct hgc_tmpl_env e = r->top[i].env;

		if (r->t->check(&e) >= 0 || e.bad)
			return false;
		if (i && r->top[i].est.total_ns < r->top[i - 1].est.total_ns)
			return false;
	}
	return r->n > 0;
}

/* Large square shapes: the grid, whole blocks, balance, validity. */
static void test_square(void)
{
	static const int64_t sizes[] = {256, 1024, 2048};
	struct hgc_heur_result r;
	struct hgc_diag d;

	hgc_diag_init(&d);
	for (int i = 0; i < 3; i++) {
		int64_t s = sizes[i];
		const struct hgc_tmpl_env *e = &r.top[0].env;

		if (!ok(search_mm(s, s, s, 4, NULL, 0, &r, &d) == 0, "%lld^3: a choice", (long long)s))
			continue;
		is_int(pv(e, "MPN") * pv(e, "NPN"), 4, "%lld^3: MPN*NPN is the thread count", (long long)s);
		ok(s % pv(e, "MB") == 0 && s % pv(e, "NB") == 0 && s % pv(e, "KB") == 0,
		   "%lld^3: MB=%lld NB=%lld KB=%lld divide the dims", (long long)s,
		   (long long)pv(e, "MB"), (long long)pv(e, "NB"), (long long)pv(e, "KB"));
		is_near(r.top[0].est.balance, 1.0, 1e-9, "%lld^3: the threads share evenly", (long long)s);
		ok(pv(e, "NB") % 8 == 0 && pv(e, "MB") >= 16, "%lld^3: whole vectors, full row tiles",
		   (long long)s);
		ok(all_valid(&r), "%lld^3: kept candidates valid and sorted", (long long)s);
		ok(r.n == HGC_HEUR_TOP && r.nvalid > HGC_HEUR_TOP, "%lld^3: %ld candidates, runners-up kept",
		   (long long)s, r.nvalid);
	}
	/* a skewed shape: the grid follows the blocks */
	if (ok(search_mm(64, 512, 4096, 4, NULL, 0, &r, &d) == 0, "64x512x4096: a choice"))
		ok(pv(&r.top[0].env, "NPN") >= 2, "64x512x4096: threads split N (NPN=%lld)",
		   (long long)pv(&r.top[0].env, "NPN"));
	hgc_diag_release(&d);
}

/* Pins win over the search; a bad pin is an error at its rule. */
static void test_pins(void)
{
	static const struct hgc_tmpl_rule rule = {"pin", "matmul_core.MB", "48", {"c.hgc", 3, 5}};
	struct hgc_tmpl_pin p = {0, 48, &rule};
	struct hgc_heur_result r;
	struct hgc_diag d;

	hgc_diag_init(&d);
	p.sym = hgc_tmpl_sym(hgc_tmpl_find("matmul_core"), "MB");
	if (ok(search_mm(1024, 1024, 1024, 2, &p, 1, &r, &d) == 0, "pinned: a choice"))
		for (int i = 0; i < r.n; i++)
			is_int(pv(&r.top[i].env, "MB"), 48, "pinned MB=48 in candidate %d", i + 1);
	p.value = 7;
	is_int(search_mm(1024, 1024, 1024, 2, &p, 1, &r, &d), -1, "a pin outside the domain fails");
	ok(strstr(hgc_diag_text(&d), "c.hgc:3:5: error: pin matmul_core.MB = 7") != NULL,
	   "the error is at the pin: %s", hgc_diag_text(&d));
	hgc_diag_release(&d);
}

/* A tiny M: k-slicing, a small MB or the row GEMV, through the lowering hook. */
static void test_tiny_m(void)
{
	struct hgc_graph *g = dc_matmul(1, 4096, 64, false);
	struct hgc_tmpl_opts o;
	struct hgc_tir_module *m;
	struct hgc_diag d;
	const char *line;

	hgc_tmpl_opts_init(&o);
	o.threads = 2;
	hgc_diag_init(&d);
	m = hgc_tmpl_lower_graph(g, &o, &d);
	line = m && o.log.len ? HGC_VEC_AT(&o.log, char *, 0) : hgc_diag_text(&d);
	ok(m && (strstr(line, "matmul_ksplit") || strstr(line, "MB=1 ") ||
		 strstr(line, "gemv_row")),
	   "1x4096x64: k-slicing, MB=1 or gemv_row: %s", line);
	hgc_tir_module_free(m);
	hgc_tmpl_opts_release(&o);
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* The model moves the obvious way. */
static void test_monotone(void)
{
	struct hgc_graph *g = dc_matmul(256, 256, 256, false);
	struct hgc_heur_machine mc;
	struct hgc_heur_ctx cx;
	struct hgc_tmpl_bind b;
	double prev = 0, t;
	bool up = true;

	hgc_heur_machine_host(&mc, 8);
	if (!ok(bind_mm(g, "matmul_core", 2, &b), "bind 256^3")) {
		hgc_graph_free(g);
		return;
	}
	hgc_heur_ctx_init(&cx, &b, &mc);
	for (int64_t k = 1; k <= 1024; k *= 2, prev = t)
		up &= (t = hgc_heur_call_ns(&cx, 48, 64, k, 1)) > prev;
	ok(up, "a call takes longer with more k");
	for (int64_t r = 1, prev2 = 0; r <= 64; r++)
		up &= hgc_heur_call_ns(&cx, r, 64, 256, 1) >= (double)prev2, prev2 = 0;
	ok(hgc_heur_call_ns(&cx, 64, 64, 256, 1) > hgc_heur_call_ns(&cx, 32, 64, 256, 1),
	   "more rows take longer");
	ok(hgc_heur_call_ns(&cx, 48, 64, 256, 1) / (48 * 64) <
		   hgc_heur_call_ns(&cx, 1, 64, 256, 1) / 64,
	   "a full tile costs less per element than one row");
	ok(hgc_heur_call_ns(&cx, 48, 16, 256, 1) / 256 < hgc_heur_call_ns(&cx, 48, 16, 16, 1) / 16,
	   "the C load and store and the call amortize over k");
	ok(hgc_heur_call_ns(&cx, 48, 64, 512, 1) / 512 > hgc_heur_call_ns(&cx, 48, 64, 64, 1) / 64,
	   "a call's B beyond the L1 cache costs more per k");
	ok(hgc_heur_call_ns(&cx, 48, 64, 256, 1) < hgc_heur_call_ns(&cx, 48, 60, 256, 1) * 64 / 60,
	   "whole vectors beat a column tail per useful element");
	is_near(hgc_heur_spill_ns(&cx, 256 << 10, 1 << 20, 8), 0, 0, "a working set in L2 costs nothing");
	ok(hgc_heur_spill_ns(&cx, 4 << 20, 1 << 20, 8) > hgc_heur_spill_ns(&cx, 4 << 20, 1 << 20, 2),
	   "spilling L2 costs more the more it is re-read");
	ok(cx.konst[1] && !cx.konst[0], "the constant weights are known as such");
	ok(hgc_heur_pack_ns(&cx, 1, 1000, 1) == 0 && hgc_heur_pack_ns(&cx, 0, 1000, 1) > 0 &&
		   hgc_heur_pack_ns(&cx, 0, 1000, 2) < hgc_heur_pack_ns(&cx, 0, 1000, 1),
	   "packing: free for constants (init), split over threads for variables");
	hgc_graph_free(g);
}

/* The explain listing: template, chosen parameters, costs, runners-up. */
static void test_explain(void)
{
	struct hgc_graph *g = dc_matmul(128, 256, 512, true);
	struct hgc_tmpl_opts o;
	struct hgc_diag d;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	hgc_tmpl_opts_init(&o);
	o.threads = 2;
	hgc_diag_init(&d);
	is_int(hgc_heur_explain_graph(f, g, &o, &d), 0, "explain runs");
	fclose(f);
	ok(strstr(text, "MatMul") && strstr(text, "template matmul_plain") &&
		   strstr(text, "chosen  MB=") && strstr(text, "#2") && strstr(text, "#5") &&
		   strstr(text, "cost ") && strstr(text, " us "),
	   "explain names the template, the choice, its cost and the runners-up");
	diag("%s", text);
	free(text);
	hgc_tmpl_opts_release(&o);
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* Odd shapes compiled with the chosen parameters agree with the interpreter. */
static void test_odd(void)
{
	static const int64_t shapes[][3] = {
		{13, 97, 479}, {97, 479, 13}, {479, 13, 97}, {1, 97, 13}, {13, 1, 97}, {1, 1, 1},
	};
	struct hgc_driver_opts o;

	hgc_driver_opts_init(&o);
	o.disk_cache = false;
	o.threads = 2;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct hgc_graph *g = dc_matmul(shapes[i][0], shapes[i][1], shapes[i][2], true);
		struct hgc_driver_graph *h;
		struct dc_bufs b;
		struct hgc_diag d;
		char why[256] = "";

		hgc_diag_init(&d);
		h = hgc_driver_compile(g, &o, NULL, &d);
		dc_alloc(&b, g);
		dc_fill(&b, g, 7);
		ok(h && dc_check(h, g, NULL, &b, why, sizeof(why)), "%lldx%lldx%lld matches: %s %s",
		   (long long)shapes[i][0], (long long)shapes[i][1], (long long)shapes[i][2], why,
		   hgc_diag_text(&d));
		ok(h && h->plan && strstr(h->plan, ": template "), "%lldx%lldx%lld went through a template",
		   (long long)shapes[i][0], (long long)shapes[i][1], (long long)shapes[i][2]);
		dc_release(&b);
		hgc_driver_release(h);
		hgc_diag_release(&d);
		hgc_graph_free(g);
	}
}

/* The cheapest candidate of template name for an m x k x n MatMul (constant
   B) on threads; false when it does not bind or has no candidate. */
static bool best_of(const char *name, int64_t m, int64_t k, int64_t n, int threads,
		    struct hgc_heur_result *r)
{
	struct hgc_graph *g = dc_matmul(m, k, n, false);
	struct hgc_tmpl_bind b;
	struct hgc_diag d;
	bool found;

	hgc_diag_init(&d);
	found = bind_mm(g, name, threads, &b) && hgc_heur_search(&b, NULL, 0, r, &d) == 0;
	hgc_diag_release(&d);
	hgc_graph_free(g);
	return found;
}

/* Plain A and C cost no packing; packed A does; matmul_plain refuses rows of
   A 4 KiB apart (unless N is split over the threads) and blocks that do not
   divide; both split evenly over 2 threads. */
static void test_plain(void)
{
	struct hgc_heur_result *r = calloc(1, sizeof(*r));

	bool found = best_of("matmul_plain", 128, 256, 512, 2, r);

	ok(found && r->top[0].est.pack_ns == 0 &&
		   r->top[0].est.balance == 1 && all_valid(r),
	   "matmul_plain 128x256x512: no packing, balanced (pack %.1f ns, balance %.2f)",
	   r->top[0].est.pack_ns, r->top[0].est.balance);
	ok(best_of("matmul_core", 128, 256, 512, 2, r) && r->top[0].est.pack_ns > 0,
	   "matmul_core 128x256x512: A packed and C written back on every run");
	ok(best_of("matmul_packa", 128, 1024, 512, 2, r) && r->top[0].est.pack_ns > 0 &&
		   pv(&r->top[0].env, "MB") * (128 / pv(&r->top[0].env, "MB")) == 128,
	   "matmul_packa 128x1024x512: A packed, MB divides M");
	ok(!best_of("matmul_plain", 128, 1024, 512, 1, r), "matmul_plain refuses K = 1024 on one thread");
	ok(best_of("matmul_plain", 128, 1024, 512, 2, r) && pv(&r->top[0].env, "NPN") == 2,
	   "matmul_plain takes K = 1024 on two threads with N split");
	ok(!best_of("matmul_plain", 127, 256, 512, 2, r) || pv(&r->top[0].env, "MB") == 127,
	   "matmul_plain on 127 rows: only a whole-M block");
	ok(!best_of("matmul_plain", 128, 1004, 512, 2, r), "matmul_plain refuses K no block divides");
	found = best_of("matmul_plain", 512, 845, 1024, 1, r);
	ok(found && 845 % pv(&r->top[0].env, "KB") == 0 && pv(&r->top[0].env, "KB") < 845,
	   "matmul_plain takes K = 845 in blocks of a divisor, A unpadded (KB=%d)",
	   found ? (int)pv(&r->top[0].env, "KB") : 0);
	ok(!best_of("matmul_plain", 128, 479, 1024, 2, r), "matmul_plain refuses a call's B beyond 16 KiB");
	found = best_of("matmul_packa", 128, 479, 1024, 2, r);
	ok(found && r->top[0].est.eff > 0.8,
	   "matmul_packa takes 128x479x1024 with small k blocks (efficiency %.2f)", r->top[0].est.eff);
	free(r);
}

/* The cheapest candidate of template name for a batched bt x (m x k x n)
   MatMul, B constant or not; false when it does not bind or has none. */
static bool best_batched_dt(const char *name, int64_t bt, int64_t m, int64_t k, int64_t n,
			    bool konst, enum hgc_dtype ta, enum hgc_dtype tb,
			    struct hgc_heur_result *r);

static bool best_batched(const char *name, int64_t bt, int64_t m, int64_t k, int64_t n,
			 bool konst, struct hgc_heur_result *r)
{
	return best_batched_dt(name, bt, m, k, n, konst, HGC_DT_F32, HGC_DT_F32, r);
}

/* best_batched with A and B of types ta and tb (u8 and s8: an int8 MatMul). */
static bool best_batched_dt(const char *name, int64_t bt, int64_t m, int64_t k, int64_t n,
			    bool konst, enum hgc_dtype ta, enum hgc_dtype tb,
			    struct hgc_heur_result *r)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *in[2];
	struct hgc_tmpl_bind b;
	struct hgc_op *op;
	struct hgc_diag d;
	bool found = false;

	hgc_diag_init(&d);
	in[0] = hgc_graph_add_input(g, "x", ta, 3, (int64_t[]){ bt, m, k }, HGC_PROP_VARIABLE,
				    NULL);
	in[1] = hgc_graph_add_input(g, "w", tb, 3, (int64_t[]){ bt, k, n },
				    konst ? HGC_PROP_CONSTANT : HGC_PROP_VARIABLE, NULL);
	op = hgc_graph_add_op(g, HGC_OP_MATMUL, 2, in, HGC_DT_UNDEF, NULL);
	if (hgc_graph_finish_op(g, op, &d) < 0)
		hgc_bug("%s", hgc_diag_text(&d));
	hgc_graph_add_output(g, op->out[0]);
	if (hgc_tmpl_find(name))
		found = bind_mm(g, name, 1, &b) && hgc_heur_search(&b, NULL, 0, r, &d) == 0;
	hgc_diag_release(&d);
	hgc_graph_free(g);
	return found;
}

/*
 * B read in place in blocks narrower than N costs 1.17x the call
 * (heuristics/matmul.c, STRIDED_B): with B constant (packed once, for
 * free) the packed nest is cheaper; with B variable, the packing per run
 * is weighed against it.  Only where a template reads B in place
 * (matmul_batch_inb); otherwise the packed template's estimate alone.
 */
static void test_strided_b(void)
{
	struct hgc_heur_result *r = calloc(1, sizeof(*r));
	double plain_c, plain_t, plain_p;
	bool found;

	found = best_batched("matmul_batch_plain", 12, 128, 64, 128, true, r);
	ok(found && r->top[0].est.pack_ns == 0, "matmul_batch_plain, B constant: no packing per run");
	plain_c = r->top[0].est.compute_ns;
	plain_t = r->top[0].est.total_ns;
	if (!best_batched("matmul_batch_inb", 12, 128, 64, 128, true, r)) {
		diag("no matmul_batch_inb in this build: the strided-B rule has no template to apply to");
		free(r);
		return;
	}
	ok(pv(&r->top[0].env, "NB") < 128 &&
		   fabs(r->top[0].est.compute_ns / plain_c - 1.17) < 0.03,
	   "12 x 128x64x128, B in place in blocks of %d of 128 columns: 1.17x the packed nest's "
	   "compute (%.1f against %.1f us)", (int)pv(&r->top[0].env, "NB"),
	   r->top[0].est.compute_ns / 1e3, plain_c / 1e3);
	ok(r->top[0].est.total_ns > plain_t, "B constant: the packed nest is cheaper (%.1f < %.1f us)",
	   plain_t / 1e3, r->top[0].est.total_ns / 1e3);
	best_batched("matmul_batch_plain", 12, 128, 64, 128, false, r);
	plain_p = r->top[0].est.pack_ns;
	ok(plain_p > 0, "matmul_batch_plain, B variable: B packed on every run (%.1f us)",
	   plain_p / 1e3);
	free(r);
}

/*
 * The batched templates' calls (heuristics/model.c, hgc_heur_batch_call_ns):
 * B of a batch element stays in L2, so a call's B up to the whole L1 costs
 * nothing extra, and rows split as the AVX2 kernel splits them (128 rows:
 * 18 tiles of 6 and 4 of 5, no 2-row tile).  bert's batched shapes take
 * whole strips of 64 columns and all 128 rows in one call; bert_large's
 * 384x384x64 keeps blocks of 16 columns (B of 96 KiB a call otherwise).
 */
static void test_batch_calls(void)
{
	struct hgc_heur_result *r = calloc(1, sizeof(*r));
	struct hgc_graph *g = dc_matmul(256, 256, 256, false);
	struct hgc_heur_machine mc;
	struct hgc_heur_ctx cx;
	struct hgc_tmpl_bind b;
	bool found;

	hgc_heur_machine_host(&mc, 8);
	if (ok(bind_mm(g, "matmul_core", 1, &b), "bind 256^3 for the batched call model")) {
		hgc_heur_ctx_init(&cx, &b, &mc);
		ok(hgc_heur_batch_call_ns(&cx, 128, 64, 128, 1) <
			   hgc_heur_call_ns(&cx, 128, 64, 128, 1) * 0.6,
		   "a batched call's 32 KiB of B: no L1 term (%.2f against %.2f us)",
		   hgc_heur_batch_call_ns(&cx, 128, 64, 128, 1) / 1e3,
		   hgc_heur_call_ns(&cx, 128, 64, 128, 1) / 1e3);
		ok(hgc_heur_batch_call_ns(&cx, 128, 64, 128, 1) <=
			   2 * hgc_heur_batch_call_ns(&cx, 64, 64, 128, 1),
		   "128 rows split evenly cost no more than twice 64");
	}
	hgc_graph_free(g);
	found = best_batched("matmul_batch_plain", 12, 128, 128, 64, true, r);
	ok(found && pv(&r->top[0].env, "MB") == 128 && pv(&r->top[0].env, "NB") == 64 &&
		   pv(&r->top[0].env, "KB") == 128,
	   "12 x 128x128x64: MB=128 NB=64 KB=128, one call a batch element (MB=%d NB=%d KB=%d)",
	   found ? (int)pv(&r->top[0].env, "MB") : -1, found ? (int)pv(&r->top[0].env, "NB") : -1,
	   found ? (int)pv(&r->top[0].env, "KB") : -1);
	found = best_batched("matmul_batch_plain", 12, 384, 384, 64, true, r);
	ok(found && pv(&r->top[0].env, "NB") == 16 && pv(&r->top[0].env, "KB") == 128,
	   "12 x 384x384x64: B beyond the L1 still costs, NB=16 KB=128 (NB=%d KB=%d)",
	   found ? (int)pv(&r->top[0].env, "NB") : -1, found ? (int)pv(&r->top[0].env, "KB") : -1);
	free(r);
}

/* The kB of cpu0's cache at index idx in sysfs ("512K"), or -1. */
static long sysfs_kb(int idx)
{
	char path[96];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%ldK", &kb) != 1)
			kb = -1;
		fclose(f);
	}
	return kb;
}

/* Run this test binary with HGC_MACHINE=env (NULL: unset) --print-caches; its
   output, stderr included. */
static void child_caches(const char *env, char *out, size_t n)
{
	char prefix[128] = "env -u HGC_MACHINE";

	if (env)
		snprintf(prefix, sizeof(prefix), "HGC_MACHINE='%s'", env);
	run_self(prefix, "--print-caches", out, n);
}

/* --print-caches: the model's core, L1 and L2 bytes, for test_caches. */
static int print_caches(void)
{
	struct hgc_heur_machine mc;

	hgc_heur_machine_host(&mc, 8);
	hgc_heur_machine_host(&mc, 16);
	printf("%s %lld %lld\n", mc.vendor, (long long)mc.l1, (long long)mc.l2);
	return 0;
}

/* The model's caches are the machine's (sysfs: index0 the L1 data cache, index2
   the L2 on x86 Linux, else CPUID or a positive fallback) and its core the
   vendor's, unless HGC_MACHINE stands for them, as pin_machine's does in this
   test; a malformed value warns once and leaves the machine's. */
static void test_caches(void)
{
	struct hgc_heur_machine mc;
	long l1 = sysfs_kb(0), l2 = sysfs_kb(2), c1 = -1, c2 = -1;
	char out[512], want[512], vendor[16] = "";

	hgc_heur_machine_host(&mc, 8);
	ok(!strcmp(mc.vendor, "amd") && mc.l1 == 32 << 10 && mc.l2 == 512 << 10 &&
		   mc.l1_slowdown == 1,
	   "HGC_MACHINE=amd,32K,512K: the model's core and caches");
	hgc_heur_machine_host(&mc, 16);
	ok(mc.l1 == 32 << 10 && mc.l2 == 512 << 10 && mc.vlen == 16 && mc.fma_per_cycle == 1,
	   "the same at another vector length, one zmm FMA a cycle");
	child_caches(NULL, out, sizeof(out));
	ok(sscanf(out, "%15s %ld %ld", vendor, &c1, &c2) == 3 && c1 > 0 && c2 > 0 &&
		   (!strcmp(vendor, "amd") || !strcmp(vendor, "intel")),
	   "HGC_MACHINE unset: a known core, positive caches (%s)", out);
	if (l1 > 0)
		is_int(c1, l1 << 10, "the model's L1 is sysfs's: %ld KiB", l1);
	if (l2 > 0)
		is_int(c2, l2 << 10, "the model's L2 is sysfs's: %ld KiB", l2);
	child_caches("intel,48K,2M", out, sizeof(out));
	is_str(out, "intel 49152 2097152\n", "HGC_MACHINE=intel,48K,2M");
	child_caches("arm,48K,2M", out, sizeof(out));
	snprintf(want, sizeof(want), "hgc: warning: HGC_MACHINE='arm,48K,2M' is not "
		 "VENDOR,L1,L2 (as amd,32K,512K); using this machine\n%s %ld %ld\n", vendor, c1, c2);
	is_str(out, want, "HGC_MACHINE=arm,48K,2M: one warning, this machine");
	child_caches("amd,512K", out, sizeof(out));
	snprintf(want, sizeof(want), "hgc: warning: HGC_MACHINE='amd,512K' is not "
		 "VENDOR,L1,L2 (as amd,32K,512K); using this machine\n%s %ld %ld\n", vendor, c1, c2);
	is_str(out, want, "HGC_MACHINE=amd,512K: one warning, this machine");
}

/*
 * A short int8 call's s32 C block beyond half the L1 costs its post-ops
 * a read back from L2 (heuristics/matmul.c, int8_c_readback_ns): 12 x
 * 384x64x384 takes blocks of at most 16 KiB of C; with K = 384, or in f32,
 * nothing is charged.
 */
static void test_int8_c_block(void)
{
	struct hgc_heur_result *r = calloc(1, sizeof(*r));
	bool found;

	found = best_batched_dt("matmul_batch_plain", 12, 384, 64, 384, true, HGC_DT_U8,
				HGC_DT_S8, r);
	ok(found && pv(&r->top[0].env, "MB") * pv(&r->top[0].env, "NB") * 4 <= 16384 &&
		   r->top[0].est.mem_ns == 0,
	   "int8 12 x 384x64x384: C blocks of MB=%d x NB=%d within half the L1",
	   found ? (int)pv(&r->top[0].env, "MB") : 0, found ? (int)pv(&r->top[0].env, "NB") : 0);
	found = best_batched_dt("matmul_batch_plain", 12, 384, 384, 64, true, HGC_DT_U8,
				HGC_DT_S8, r);
	ok(found && pv(&r->top[0].env, "MB") == 384,
	   "int8 12 x 384x384x64 (K = 384): no read-back charge, MB=%d",
	   found ? (int)pv(&r->top[0].env, "MB") : 0);
	found = best_batched("matmul_batch_plain", 12, 384, 64, 384, true, r);
	ok(found && r->top[0].est.mem_ns == 0, "f32 12 x 384x64x384: no read-back charge");
	free(r);
}

/* The best candidate of template name for an m x k x n MatMul of A and B
   typed ta and tb (B constant) at threads. */
static bool best_2d_dt(const char *name, int64_t m, int64_t k, int64_t n, int threads,
		       enum hgc_dtype ta, enum hgc_dtype tb, struct hgc_heur_result *r)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *in[2];
	struct hgc_tmpl_bind b;
	struct hgc_op *op;
	struct hgc_diag d;
	bool found;

	hgc_diag_init(&d);
	in[0] = hgc_graph_add_input(g, "x", ta, 2, (int64_t[]){ m, k }, HGC_PROP_VARIABLE, NULL);
	in[1] = hgc_graph_add_input(g, "w", tb, 2, (int64_t[]){ k, n }, HGC_PROP_CONSTANT, NULL);
	op = hgc_graph_add_op(g, HGC_OP_MATMUL, 2, in, HGC_DT_UNDEF, NULL);
	if (hgc_graph_finish_op(g, op, &d) < 0)
		hgc_bug("%s", hgc_diag_text(&d));
	hgc_graph_add_output(g, op->out[0]);
	found = bind_mm(g, name, threads, &b) && hgc_heur_search(&b, NULL, 0, r, &d) == 0;
	hgc_diag_release(&d);
	hgc_graph_free(g);
	return found;
}

/* int8 threads that split N pay for the rows of C they share
   (heuristics/matmul.c, SHARED_ROW_NS), so int8 256^3 at two threads
   splits M; f32 is not charged. */
static void test_int8_split(void)
{
	struct hgc_heur_result *r = calloc(1, sizeof(*r));
	int nsplit = 0, charged = 0;
	bool found;

	found = best_2d_dt("matmul_plain", 256, 256, 256, 2, HGC_DT_U8, HGC_DT_S8, r);
	ok(found && pv(&r->top[0].env, "MPN") == 2 && pv(&r->top[0].env, "NPN") == 1,
	   "int8 256^3, 2 threads: the threads split M (MPN=%d NPN=%d)",
	   found ? (int)pv(&r->top[0].env, "MPN") : 0, found ? (int)pv(&r->top[0].env, "NPN") : 0);
	found = best_2d_dt("matmul_plain", 256, 256, 256, 2, HGC_DT_F32, HGC_DT_F32, r);
	for (int i = 0; found && i < r->n; i++)
		if (pv(&r->top[i].env, "NPN") == 2) {
			nsplit++;
			charged += r->top[i].est.mem_ns > 0;
		}
	ok(found && nsplit > 0 && charged == 0,
	   "f32 256^3, 2 threads: N splits kept (%d) and not charged (%d)", nsplit, charged);
	free(r);
}

/*
 * An int8 batch element's B is read again for each block row a thread
 * runs when it does not stay in L2 (heuristics/matmul.c, batch): int8
 * 2048^3 takes MB = 256 (B read 8 times, not 16) in matmul_batch_plain and
 * matmul_packa; f32 is not charged, and keeps MB <= 128 outside M = 256.
 */
static void test_int8_large_b(void)
{
	struct hgc_heur_result *r = calloc(1, sizeof(*r));
	int charged;
	bool found;

	found = best_batched_dt("matmul_batch_plain", 1, 2048, 2048, 2048, true, HGC_DT_U8,
				HGC_DT_S8, r);
	ok(found && pv(&r->top[0].env, "MB") == 256 && r->top[0].est.mem_ns > 0,
	   "int8 2048^3 on matmul_batch_plain: MB=%d, B's re-reads charged (%.0f ns)",
	   found ? (int)pv(&r->top[0].env, "MB") : 0, found ? r->top[0].est.mem_ns : 0);
	found = best_2d_dt("matmul_packa", 2048, 2048, 2048, 1, HGC_DT_U8, HGC_DT_S8, r);
	ok(found && pv(&r->top[0].env, "MB") == 256, "int8 2048^3 on matmul_packa: MB=%d",
	   found ? (int)pv(&r->top[0].env, "MB") : 0);
	found = best_batched("matmul_batch_plain", 1, 2048, 2048, 2048, true, r);
	charged = 0;
	for (int i = 0; found && i < r->n; i++)
		charged += r->top[i].est.mem_ns > 0 || pv(&r->top[i].env, "MB") > 128;
	ok(found && charged == 0, "f32 2048^3: no re-read charge, MB <= 128 (%d otherwise)",
	   charged);
	found = best_2d_dt("matmul_packa", 2048, 2048, 2048, 1, HGC_DT_F32, HGC_DT_F32, r);
	ok(found && pv(&r->top[0].env, "MB") <= 128, "f32 2048^3 on matmul_packa: MB=%d",
	   found ? (int)pv(&r->top[0].env, "MB") : 0);
	free(r);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--print-caches"))
		return print_caches();	/* under the caller's HGC_MACHINE */
	pin_machine();
	test_caches();
	test_square();
	test_int8_split();
	test_pins();
	test_tiny_m();
	test_monotone();
	test_explain();
	test_plain();
	test_strided_b();
	test_batch_calls();
	test_int8_c_block();
	test_int8_large_b();
	test_odd();
	return done_testing();
}
