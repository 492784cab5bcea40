/*
 * 101-templates: the compiled templates (the .tmpl files of templates/ through
 * hgc-tmplc) instantiated into Tensor IR by the lowering hook, compiled
 * with the C backend and run against the reference interpreter: MatMul in
 * f32, bf16 and int8, odd shapes (13, 479, 97, 1), transposes, bias, vectors,
 * batches folded into M or N or run by the batched template, k-slicing;
 * Convolution in both data and weight formats, strides, asymmetric pads,
 * dilations, 1x1, bias, int8 and bf16, and the fallbacks (groups).  Many ops
 * share one graph so that few modules are compiled.  Also: which template
 * each op took (the log), pins and `use` from config rules, their errors,
 * the parameter space API, and golden printouts of instantiations
 * (t/tir/tmpl_*.golden; HGC_UPDATE_GOLDEN=1 rewrites them).
 */
#include "core/lower/tmpl.h"
#include "t/lower_check.h"
#include "t/pin_machine.h"

/* A MatMul to add: operand types and shapes, transposes, optional bias. */
struct mmcase {
	const char *name;		/* of the output, for the log */
	enum hgc_dtype at, bt, out;	/* out UNDEF: inferred */
	int ra, rb;
	int64_t ad[4], bd[4];
	bool ta, tb;
	int rbias;			/* 0: no bias */
	int64_t biasd[4];
	enum hgc_dtype biast;
	const char *want;		/* the template the log must name, or "naive" */
};

/* A Convolution to add. */
struct convcase {
	const char *name;
	enum hgc_dtype xt, wt;
	int64_t xd[4], wd[4];
	int64_t strides[2], pb[2], pe[2], dil[2], groups;
	const char *df, *wf;		/* data_format, weights_format */
	bool bias;
	const char *want;
};

/* The options every lowering here uses: 2 threads, the given rules. */
static void opts(struct hgc_tmpl_opts *o, struct hgc_lower_opts *lo,
		 const struct hgc_tmpl_rule *rules, int nrules)
{
	hgc_tmpl_opts_init(o);
	o->threads = 2;
	o->rules = rules;
	o->nrules = nrules;
	memset(lo, 0, sizeof(*lo));
	lo->lower_tunable = hgc_tmpl_lower_tunable;
	lo->user = o;
}

/* Add a MatMul case to g as a graph output. */
static void add_mm(struct hgc_graph *g, const struct mmcase *c)
{
	struct hgc_tensor *a = lc_input(g, "a", c->at, c->ra, c->ad);
	struct hgc_tensor *b = lc_input(g, "b", c->bt, c->rb, c->bd);
	struct hgc_tensor *bias;
	struct hgc_op *op;

	if (c->rbias) {
		bias = lc_input(g, "bias", c->biast, c->rbias, c->biasd);
		op = lc_op(g, HGC_OP_MATMUL, c->out, 3, a, b, bias);
	} else {
		op = lc_op(g, HGC_OP_MATMUL, c->out, 2, a, b);
	}
	lc_attr_b(g, op, "transpose_a", c->ta);
	lc_attr_b(g, op, "transpose_b", c->tb);
	op->out[0]->name = c->name;
	lc_out(g, op);
}

/* Add a Convolution case to g as a graph output. */
static void add_conv(struct hgc_graph *g, const struct convcase *c)
{
	struct hgc_tensor *x = lc_input(g, "x", c->xt, 4, c->xd);
	struct hgc_tensor *w = lc_input(g, "w", c->wt, 4, c->wd);
	bool xio = !strcmp(c->wf, "XIO");
	int64_t oc = xio ? c->wd[3] : c->wd[0];
	struct hgc_op *op;

	if (c->bias)
		op = lc_op(g, HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 3, x, w,
			   lc_input(g, "bias", HGC_DT_F32, 1, (int64_t[]){oc}));
	else
		op = lc_op(g, HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, x, w);
	lc_attr_ints(g, op, "strides", 2, c->strides);
	lc_attr_ints(g, op, "pads_begin", 2, c->pb);
	lc_attr_ints(g, op, "pads_end", 2, c->pe);
	lc_attr_ints(g, op, "dilations", 2, c->dil);
	lc_attr_i(g, op, "groups", c->groups);
	lc_attr_s(g, op, "data_format", c->df);
	lc_attr_s(g, op, "weights_format", c->wf);
	op->out[0]->name = c->name;
	lc_out(g, op);
}

/* The log line of the op whose output is called name, or NULL. */
static const char *log_of(const struct hgc_tmpl_opts *o, const char *name)
{
	size_t i, n = strlen(name);
	const char *l, *sp;

	for (i = 0; i < o->log.len; i++) {
		l = HGC_VEC_AT(&o->log, char *, i);
		sp = strchr(l, ' ');
		if (sp && !strncmp(sp + 1, name, n) && sp[1 + n] == ':')
			return l;
	}
	return NULL;
}

/* The op called name took the template want (or "naive" loops). */
static void check_log(const struct hgc_tmpl_opts *o, const char *name, const char *want)
{
	const char *l = log_of(o, name);
	char pat[128];

	if (!strcmp(want, "naive"))
		snprintf(pat, sizeof(pat), ": naive loops");
	else
		snprintf(pat, sizeof(pat), ": template %s (", want);
	if (!ok(l && strstr(l, pat), "%s: %s", name, !strcmp(want, "naive") ? "naive loops" : want))
		diag("log: %s", l ? l : "(none)");
}

/* Lower g with templates, compile, run and compare every output; check the log. */
static void run_graph(struct hgc_graph *g, const char *what, const char *const *names,
		      const char *const *want, int n, const struct hgc_tmpl_rule *rules,
		      int nrules, const enum fill *modes, struct lc_tol tol)
{
	struct hgc_tmpl_opts o;
	struct hgc_lower_opts lo;
	struct hgc_compiled *c;
	struct lc_bufs b;
	size_t k;
	int i;

	opts(&o, &lo, rules, nrules);
	c = lc_build(g, what, &lo);
	for (i = 0; i < n; i++)
		check_log(&o, names[i], want[i]);
	lc_bufs_init(&b, g, modes);
	if (c && lc_interp(g, &b, what)) {
		lc_run(c, &b);
		for (k = 0; k < b.nout; k++)
			lc_compare(g, k, b.got[k], b.want[k], what, &tol);
	}
	hgc_codegen_free(c);
	lc_bufs_release(&b);
	hgc_tmpl_opts_release(&o);
	hgc_graph_free(g);
}

#define F32 HGC_DT_F32
#define BF16 HGC_DT_BF16
#define U8 HGC_DT_U8
#define S8 HGC_DT_S8
#define S32 HGC_DT_S32
#define UNDEF HGC_DT_UNDEF

/* f32 MatMuls: odd shapes, transposes, bias, vectors, folded batches.  A
   2-D problem may take matmul_batch_plain (A and C in place) where the
   model rates it cheaper than the 2-D forms (core/lower/tmpl.c, group). */
static const struct mmcase f32_cases[] = {
	{"m13x97x479", F32, F32, UNDEF, 2, 2, {13, 97}, {97, 479}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"m479x13x97", F32, F32, UNDEF, 2, 2, {479, 13}, {13, 97}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"m97x479x13", F32, F32, UNDEF, 2, 2, {97, 479}, {479, 13}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"m1x1x1", F32, F32, UNDEF, 2, 2, {1, 1}, {1, 1}, false, false, 0, {0}, UNDEF, "gemv_row_serial"},
	{"m64x128x96", F32, F32, UNDEF, 2, 2, {64, 128}, {128, 96}, false, false, 0, {0}, UNDEF, "matmul_plain"},
	{"plain_bias", F32, F32, UNDEF, 2, 2, {48, 40}, {40, 64}, false, false, 1, {64}, F32, "matmul_plain"},
	{"plain_ta", F32, F32, UNDEF, 2, 2, {40, 48}, {40, 64}, true, false, 0, {0}, UNDEF, "matmul_plain"},
	{"plain_k1024", F32, F32, UNDEF, 2, 2, {64, 1024}, {1024, 128}, false, false, 1, {128}, F32, "matmul_plain"},
	{"packa_k1004", F32, F32, UNDEF, 2, 2, {64, 1004}, {1004, 128}, false, false, 0, {0}, UNDEF, "matmul_packa"},
	{"plain_k845", F32, F32, UNDEF, 2, 2, {48, 845}, {845, 64}, false, false, 0, {0}, UNDEF, "matmul_plain"},
	{"ta", F32, F32, UNDEF, 2, 2, {97, 13}, {97, 3}, true, false, 0, {0}, UNDEF, "matmul_batch_plain"},
	{"tb", F32, F32, UNDEF, 2, 2, {3, 97}, {13, 97}, false, true, 0, {0}, UNDEF, "matmul_batch_plain"},
	{"tab", F32, F32, UNDEF, 2, 2, {97, 33}, {65, 97}, true, true, 0, {0}, UNDEF, "matmul_core"},
	{"bias", F32, F32, UNDEF, 2, 2, {13, 97}, {97, 97}, false, false, 1, {97}, F32, "matmul_core"},
	{"bias2d", F32, F32, UNDEF, 2, 2, {13, 97}, {97, 35}, false, false, 2, {13, 1}, F32, "matmul_batch_plain"},
	{"vecmat", F32, F32, UNDEF, 1, 2, {97}, {97, 13}, false, false, 0, {0}, UNDEF, "gemv_row_serial"},
	{"matvec", F32, F32, UNDEF, 2, 1, {13, 97}, {97}, false, false, 0, {0}, UNDEF, "gemv_col_serial"},
	{"foldm", F32, F32, UNDEF, 3, 2, {4, 13, 7}, {7, 1}, false, false, 0, {0}, UNDEF, "gemv_col_serial"},
	{"foldm_ta", F32, F32, UNDEF, 3, 2, {3, 7, 13}, {7, 5}, true, false, 1, {5}, F32, "matmul_batch_plain"},
	{"foldn", F32, F32, UNDEF, 2, 3, {5, 7}, {3, 7, 13}, false, false, 0, {0}, UNDEF, "matmul_batch_plain"},
	{"batch_bcast", F32, F32, UNDEF, 4, 3, {2, 1, 13, 7}, {3, 7, 5}, false, false, 0, {0}, UNDEF, "matmul_batch_plain"},
	{"batch_tt", F32, F32, UNDEF, 3, 3, {2, 5, 3}, {2, 7, 5}, true, true, 1, {7}, F32, "matmul_batch_plain"},
	{"attention", F32, F32, UNDEF, 4, 4, {2, 3, 33, 16}, {2, 3, 16, 33}, false, false, 0, {0}, UNDEF, "matmul_batch_plain"},
	{"batch_bias", F32, F32, UNDEF, 3, 3, {3, 16, 8}, {3, 8, 24}, false, false, 1, {24}, F32, "matmul_batch_plain"},
	/* small outputs: the cost model takes matmul_core (one parallel region)
	   unless K is long enough for splitting it to pay for the second */
	{"ksplit", F32, F32, UNDEF, 2, 2, {4, 4096}, {4096, 8}, false, false, 1, {8}, F32, "matmul_ksplit"},
	/* one row of A or one column of B: the matrix-vector templates (gemv.tmpl),
	   on the threads when the work pays for the parallel region */
	{"gemv_row", F32, F32, UNDEF, 2, 2, {1, 4000}, {4000, 64}, false, false, 1, {64}, F32, "gemv_row"},
	{"gemv_row_small", F32, F32, UNDEF, 2, 2, {1, 97}, {97, 64}, false, false, 1, {64}, F32, "gemv_row_serial"},
	{"gemv_row_k1", F32, F32, UNDEF, 2, 2, {1, 1}, {1, 48}, false, false, 0, {0}, UNDEF, "gemv_row_serial"},
	{"gemv_row_ta", F32, F32, UNDEF, 2, 2, {333, 1}, {333, 32}, true, false, 0, {0}, UNDEF, "gemv_row"},
	{"gemv_row_vec", F32, F32, UNDEF, 1, 2, {200}, {200, 16}, false, false, 1, {16}, F32, "gemv_row_serial"},
	{"gemv_col", F32, F32, UNDEF, 2, 2, {26, 97}, {97, 1}, false, false, 1, {1}, F32, "gemv_col_serial"},
	{"gemv_col_big", F32, F32, UNDEF, 2, 2, {256, 515}, {515, 1}, false, false, 1, {1}, F32, "gemv_col"},
	{"gemv_col_k64", F32, F32, UNDEF, 2, 2, {64, 64}, {64, 1}, false, false, 0, {0}, UNDEF, "gemv_col_serial"},
	{"gemv_col_tb", F32, F32, UNDEF, 2, 2, {130, 95}, {1, 95}, false, true, 0, {0}, UNDEF, "gemv_col"},
	/* K = 31: no group of 32, all of it the tail in order: brgemm's rows are cheaper */
	{"gemv_col_k31", F32, F32, UNDEF, 2, 2, {130, 31}, {31, 1}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"gemv_col_vec", F32, F32, UNDEF, 2, 1, {6, 300}, {300}, false, false, 0, {0}, UNDEF, "gemv_col_serial"},
	/* small problems: the serial forms (no parallel region to start), also for
	   rows that do not split evenly over the threads */
	{"gemv_odd", F32, F32, UNDEF, 2, 2, {13, 97}, {97, 1}, false, false, 0, {0}, UNDEF, "gemv_col_serial"},
};

/* bf16 and int8 MatMuls. */
static const struct mmcase low_cases[] = {
	{"bf16", BF16, BF16, UNDEF, 2, 2, {13, 64}, {64, 97}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"bf16_small", BF16, BF16, UNDEF, 2, 2, {13, 64}, {64, 17}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"bf16_odd", BF16, BF16, UNDEF, 2, 2, {13, 97}, {97, 97}, false, true, 1, {97}, F32, "matmul_core"},
	{"bf16_batch", BF16, BF16, UNDEF, 3, 3, {2, 13, 7}, {2, 7, 9}, false, false, 0, {0}, UNDEF, "matmul_batch"},
	{"int8", U8, S8, UNDEF, 2, 2, {13, 97}, {97, 97}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"int8_small", U8, S8, UNDEF, 2, 2, {13, 97}, {97, 31}, false, false, 0, {0}, UNDEF, "matmul_core"},
	{"int8_bias", U8, S8, UNDEF, 2, 2, {13, 97}, {97, 97}, false, false, 1, {97}, S32, "matmul_core"},
	{"int8_f32", U8, S8, F32, 2, 2, {17, 13}, {5, 13}, false, true, 1, {5}, F32, "matmul_core"},
	{"int8_ta", U8, S8, UNDEF, 2, 2, {97, 13}, {97, 70}, true, false, 0, {0}, UNDEF, "matmul_core"},
	{"int8_batch", U8, S8, UNDEF, 3, 3, {2, 5, 9}, {2, 9, 6}, false, false, 0, {0}, UNDEF, "matmul_batch"},
	{"s8s8", S8, S8, UNDEF, 2, 2, {5, 7}, {7, 3}, false, false, 0, {0}, UNDEF, "naive"},
};

/* Add cases [0, n) to a new graph and run it. */
static void run_mm(const char *what, const struct mmcase *cases, int n, struct lc_tol tol)
{
	struct hgc_graph *g = hgc_graph_new();
	const char *names[64], *want[64];
	int i;

	for (i = 0; i < n; i++) {
		add_mm(g, &cases[i]);
		names[i] = cases[i].name;
		want[i] = cases[i].want;
	}
	run_graph(g, what, names, want, n, NULL, 0, NULL, tol);
}

#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Convolutions: formats, strides, pads, dilations, 1x1, bias, types, fallbacks. */
static const struct convcase conv_cases[] = {
	{"ncx_s2p1", F32, F32, {2, 3, 13, 13}, {8, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, "NCX", "OIX", false, "conv_kwrow"},
	{"nxc_dil", F32, F32, {1, 13, 13, 4}, {3, 3, 4, 8}, {1, 1}, {0, 0}, {0, 0}, {2, 2}, 1, "NXC", "XIO", false, "conv_kwrow"},
	{"asym", F32, F32, {1, 5, 9, 13}, {7, 5, 2, 3}, {2, 3}, {1, 0}, {0, 2}, {1, 1}, 1, "NCX", "OIX", true, "conv_kwrow"},
	{"one", F32, F32, {1, 7, 9, 17}, {33, 17, 1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, "NXC", "OIX", true, "conv_1x1_rows"},
	{"one_s2", F32, F32, {2, 9, 10, 16}, {1, 1, 16, 24}, {2, 2}, {0, 0}, {0, 0}, {1, 1}, 1, "NXC", "XIO", false, "conv_1x1_nb"},
	{"one_ncx", F32, F32, {2, 8, 6, 5}, {12, 8, 1, 1}, {1, 2}, {0, 0}, {0, 0}, {1, 1}, 1, "NCX", "OIX", true, "conv_1x1_nb"},
	{"one_pad", F32, F32, {1, 5, 5, 8}, {1, 1, 8, 16}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, "NXC", "XIO", false, "conv_direct"},
	{"wide", F32, F32, {1, 16, 5, 61}, {3, 3, 16, 20}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, "NCX", "XIO", false, "conv_direct"},
	{"groups", F32, F32, {1, 4, 9, 9}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2, "NCX", "OIX", false, "naive"},
	{"int8", U8, S8, {1, 3, 11, 11}, {5, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, "NCX", "OIX", false, "conv_direct"},
	{"bf16", BF16, BF16, {1, 9, 9, 6}, {3, 3, 6, 10}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, "NXC", "XIO", false, "conv_direct"},
};

/* The convolutions in one graph (the bf16 one in its own: its tolerance). */
static void test_conv(void)
{
	struct hgc_graph *g = hgc_graph_new(), *h = hgc_graph_new();
	const char *names[16], *want[16];
	int i, n = NCASES(conv_cases) - 1;

	for (i = 0; i < n; i++) {
		add_conv(g, &conv_cases[i]);
		names[i] = conv_cases[i].name;
		want[i] = conv_cases[i].want;
	}
	run_graph(g, "conv", names, want, n, NULL, 0, NULL, LC_TOL(1e-4, 1e-4, 0));
	add_conv(h, &conv_cases[n]);
	names[0] = conv_cases[n].name;
	want[0] = conv_cases[n].want;
	run_graph(h, "conv bf16", names, want, 1, NULL, 0, NULL, LC_TOL(2e-2, 2e-2, 0));
}

/* A config's `use` and `pin` rules: they choose and they are checked. */
static void test_rules(void)
{
	static const struct hgc_tmpl_rule rules[] = {
		{"use", "matmul", "matmul_batch", {"cfg.hgc", 2, 3}},
		{"pin", "matmul_batch.MB", "16", {"cfg.hgc", 3, 3}},
		{"pin", "matmul_batch.KB", "32", {"cfg.hgc", 4, 3}},
	};
	static const struct mmcase c = {"used", F32, F32, UNDEF, 2, 2, {40, 70}, {70, 9}, false,
					false, 0, {0}, UNDEF, "matmul_batch"};
	struct hgc_graph *g = hgc_graph_new();
	const char *name = c.name, *want = c.want;
	struct hgc_tmpl_opts o;
	struct hgc_lower_opts lo;
	struct hgc_tir_module *m;
	struct hgc_diag d;

	add_mm(g, &c);
	opts(&o, &lo, rules, 3);
	hgc_diag_init(&d);
	m = hgc_lower_graph(g, &lo, &d);
	ok(m && log_of(&o, "used") && strstr(log_of(&o, "used"), "MB=16 NB=9 KB=32"),
	   "use and pins: %s", log_of(&o, "used") ? log_of(&o, "used") : hgc_diag_text(&d));
	hgc_tir_module_free(m);
	hgc_tmpl_opts_release(&o);
	hgc_diag_release(&d);
	run_graph(g, "use matmul_batch for MatMul", &name, &want, 1, rules, 3, NULL,
		  LC_TOL(1e-4, 1e-4, 0));
}

/* Lower a one-MatMul graph under rules; the diagnostics (empty when it lowers). */
static char *rule_error(const struct hgc_tmpl_rule *rules, int n, int64_t m, int64_t k)
{
	static const struct mmcase c0 = {"e", F32, F32, UNDEF, 2, 2, {0}, {0}, false, false, 0,
					 {0}, UNDEF, ""};
	struct mmcase c = c0;
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tmpl_opts o;
	struct hgc_lower_opts lo;
	struct hgc_tir_module *mod;
	struct hgc_diag d;
	char *text;

	c.ad[0] = m, c.ad[1] = k, c.bd[0] = k, c.bd[1] = 16;
	add_mm(g, &c);
	opts(&o, &lo, rules, n);
	hgc_diag_init(&d);
	mod = hgc_tmpl_lower_graph(g, &o, &d);
	text = strdup(hgc_diag_text(&d));
	hgc_tir_module_free(mod);
	hgc_diag_release(&d);
	hgc_tmpl_opts_release(&o);
	hgc_graph_free(g);
	return text;
}

/* Bad rules are errors at their place; a pin outside its domain too. */
static void test_rule_errors(void)
{
	static const struct {
		struct hgc_tmpl_rule r;
		const char *want;
	} cases[] = {
		{{"use", "MatMul", "nosuch", {"c.hgc", 1, 2}},
		 "c.hgc:1:2: error: unknown template 'nosuch'"},
		{{"use", "Convolution", "matmul_core", {"c.hgc", 2, 2}},
		 "c.hgc:2:2: error: template matmul_core serves MatMul, not 'Convolution'"},
		{{"pin", "matmul_core.MBB", "16", {"c.hgc", 3, 2}},
		 "c.hgc:3:2: error: 'MBB' is not a parameter of template matmul_core"},
		{{"pin", "matmul_core.MBLK", "16", {"c.hgc", 3, 2}},
		 "c.hgc:3:2: error: 'MBLK' is not a parameter of template matmul_core"},
		{{"pin", "matmul_core.MB", "x", {"c.hgc", 4, 2}},
		 "c.hgc:4:2: error: pin matmul_core.MB = x: the value must be an integer"},
		{{"pin", "matmul_core.MB", "24", {"c.hgc", 5, 2}},
		 "c.hgc:5:2: error: pin matmul_core.MB = 24: not in the domain one_of(32, 16, 64, 48, M)"},
		{{"pin", "matmul_core.MB", "64", {"c.hgc", 6, 2}}, ""},
		{{"pin", "matmul_core.BS", "8", {"c.hgc", 7, 2}},
		 "c.hgc:7:2: error: pin matmul_core.BS = 8: no candidate satisfies divides(KBLK) (of BS)"},
	};
	char *text;
	int i;

	for (i = 0; i < NCASES(cases); i++) {
		text = rule_error(&cases[i].r, 1, 100, 96);
		if (!*cases[i].want)
			is_str(text, "", "pin %s = %s is fine", cases[i].r.key, cases[i].r.value);
		else if (!ok(!strncmp(text, cases[i].want, strlen(cases[i].want)), "rule error: %s",
			     cases[i].want))
			diag("got: %s", text);
		free(text);
	}
}

/* The parameter space API: find, symbols, enumeration, padding, the default. */
static void test_space(void)
{
	const struct hgc_tmpl *t = hgc_tmpl_find("matmul_core");
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tmpl_bind b;
	struct hgc_tmpl_env e;
	struct hgc_diag d;
	struct hgc_op *op;
	long n;

	hgc_diag_init(&d);
	ok(t && t->op == HGC_OP_MATMUL && !hgc_tmpl_find("nosuch"), "the registry finds matmul_core");
	op = lc_op(g, HGC_OP_MATMUL, UNDEF, 2, lc_input(g, "a", F32, 2, (int64_t[]){128, 256}),
		   lc_input(g, "b", F32, 2, (int64_t[]){256, 64}));
	lc_out(g, op);
	if (!t) {
		hgc_graph_free(g);
		return;
	}
	is_int(hgc_tmpl_bind(t, op, 4, &b), 0, "MatMul binds to matmul_core");
	is_int(b.env.v[hgc_tmpl_sym(t, "M")], 128, "M is bound");
	is_int(b.env.v[hgc_tmpl_sym(t, "threads")], 4, "threads is bound");
	n = hgc_tmpl_enumerate(&b, NULL, 0, NULL, NULL);
	ok(n > 100, "the space has %ld valid candidates", n);
	is_int(hgc_tmpl_choose(&b, NULL, 0, &e, &d), 0, "a default is chosen");
	is_int(hgc_tmpl_padding(&b, &e), 0, "with no padding for 128x256x64");
	is_int(e.v[hgc_tmpl_sym(t, "MPN")] * e.v[hgc_tmpl_sym(t, "NPN")], 4,
	       "the grid covers the threads");
	ok(hgc_tmpl_bind(hgc_tmpl_find("conv_direct"), op, 4, &b) < 0 && strstr(b.why, "serves"),
	   "a conv template does not bind a MatMul: %s", b.why);
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/*
 * An empty space names the constraint that closed it: matmul_plain on a K
 * that is a multiple of 1024 fails `K % 1024 != 0` for every candidate that
 * got that far, although divides(M) of MB rejects more (every MB value
 * that does not divide M).
 */
static void test_empty_space_blame(void)
{
	const struct hgc_tmpl *t = hgc_tmpl_find("matmul_plain");
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tmpl_bind b;
	struct hgc_tmpl_env e;
	struct hgc_diag d;
	struct hgc_op *op;

	hgc_diag_init(&d);
	op = lc_op(g, HGC_OP_MATMUL, UNDEF, 2, lc_input(g, "a", F32, 2, (int64_t[]){1024, 1024}),
		   lc_input(g, "b", F32, 2, (int64_t[]){1024, 64}));
	lc_out(g, op);
	if (ok(t && hgc_tmpl_bind(t, op, 1, &b) == 0, "matmul_plain binds a 1024x1024x64 MatMul")) {
		is_int(hgc_tmpl_choose_padding(&b, NULL, 0, &e, &d), -1, "but no candidate is valid");
		if (!ok(strstr(hgc_diag_text(&d), "no parameter values satisfy K % 1024 != 0"),
			"the error names K %% 1024 != 0"))
			diag("got: %s", hgc_diag_text(&d));
	}
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* The valid candidates of a walk in order: their count and a hash of every slot. */
struct visits {
	long n;
	uint64_t hash;
};

/* Fold one candidate into the visits. */
static int record(const struct hgc_tmpl_env *e, void *ctx)
{
	struct visits *v = ctx;
	int i;

	v->n++;
	for (i = 0; i < e->t->nsyms; i++)
		v->hash = (v->hash ^ (uint64_t)e->v[i]) * 1099511628211u;
	return 0;
}

/* Every template of op's kind, bound at 1 to 4 threads, without and with
   its first parameter pinned to its first valid value: the pruned walk
   visits exactly the candidates of the full walk, in the same order.
   Counts the bindings that had candidates into *nonempty. */
static void same_walks(const struct hgc_op *op, const char *what, int *nonempty)
{
	const struct hgc_tmpl *t;
	struct hgc_tmpl_bind b;
	struct hgc_tmpl_env first;
	struct hgc_tmpl_pin pin;
	struct visits p, f;
	int i, th, bad = 0, runs = 0;

	for (i = 0; (t = hgc_tmpl_registry[i]); i++) {
		for (th = 1; t->op == op->kind && th <= 4; th++) {
			if (hgc_tmpl_bind(t, op, th, &b) < 0)
				continue;
			p = f = (struct visits){0, 14695981039346656037u};
			hgc_tmpl_enumerate(&b, NULL, 0, record, &p);
			hgc_tmpl_enumerate_full(&b, NULL, 0, record, &f);
			bad += p.n != f.n || p.hash != f.hash;
			runs++;
			if (!f.n || !t->nparams || hgc_tmpl_choose_padding(&b, NULL, 0, &first, NULL))
				continue;
			++*nonempty;
			pin = (struct hgc_tmpl_pin){ .sym = t->params[0].sym[0],
						     .value = first.v[t->params[0].sym[0]] };
			p = f = (struct visits){0, 14695981039346656037u};
			hgc_tmpl_enumerate(&b, &pin, 1, record, &p);
			hgc_tmpl_enumerate_full(&b, &pin, 1, record, &f);
			bad += p.n != f.n || p.hash != f.hash || !f.n;
		}
	}
	ok(!bad, "%s: the pruned walk visits what the full walk does (%d bindings)", what, runs);
}

/* The pruning walk against the full one over matmul and conv shapes. */
static void test_pruning(void)
{
	static const int64_t mm[][3] = {
		{128, 256, 64}, {13, 479, 97}, {1, 512, 256}, {384, 64, 384}, {2048, 2048, 2048},
		{128, 256, 1}, {40, 64, 40},
	};
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_op *op;
	int i, nonempty = 0;
	char what[64];

	for (i = 0; i < (int)NCASES(mm); i++) {
		op = lc_op(g, HGC_OP_MATMUL, UNDEF, 2,
			   lc_input(g, "a", F32, 2, (int64_t[]){mm[i][0], mm[i][1]}),
			   lc_input(g, "b", F32, 2, (int64_t[]){mm[i][1], mm[i][2]}));
		snprintf(what, sizeof(what), "MatMul %lldx%lldx%lld", (long long)mm[i][0],
			 (long long)mm[i][1], (long long)mm[i][2]);
		same_walks(op, what, &nonempty);
	}
	op = lc_op(g, HGC_OP_MATMUL, UNDEF, 2, lc_input(g, "a", F32, 3, (int64_t[]){12, 128, 64}),
		   lc_input(g, "b", F32, 3, (int64_t[]){12, 64, 128}));
	same_walks(op, "batched MatMul 12 x 128x64x128", &nonempty);
	for (i = 0; i < (int)NCASES(conv_cases); i++) {
		struct hgc_graph *cg = hgc_graph_new();

		add_conv(cg, &conv_cases[i]);
		op = HGC_VEC_AT(&cg->ops, struct hgc_op *, cg->ops.len - 1);
		snprintf(what, sizeof(what), "Convolution %s", conv_cases[i].name);
		same_walks(op, what, &nonempty);
		hgc_graph_free(cg);
	}
	ok(nonempty > 20, "%d bindings had candidates, also walked with a pin", nonempty);
	hgc_graph_free(g);
}

/* Print the module of g lowered with templates; compare with t/tir/NAME.golden. */
static void golden(struct hgc_graph *g, const char *name, const struct hgc_tmpl_rule *rules,
		   int nrules)
{
	struct hgc_tmpl_opts o;
	struct hgc_lower_opts lo;
	struct hgc_tir_module *m;
	struct hgc_diag d;
	char path[256], *text, *want;
	FILE *f;

	opts(&o, &lo, rules, nrules);
	hgc_diag_init(&d);
	m = hgc_lower_graph(g, &lo, &d);
	text = m ? hgc_tir_module_str(m) : strdup(hgc_diag_text(&d));
	snprintf(path, sizeof(path), "t/tir/%s.golden", name);
	if (getenv("HGC_UPDATE_GOLDEN") && (f = fopen(path, "w"))) {
		fputs(text, f);
		fclose(f);
	}
	want = hgc_read_file(path, NULL, &d);
	is_str(text, want ? want : "(no golden file)", "%s: the printout matches %s", name, path);
	ok(m && hgc_tir_verify(m, &d) == 0, "%s: the module verifies", name);
	free(want);
	free(text);
	hgc_tir_module_free(m);
	hgc_tmpl_opts_release(&o);
	hgc_diag_release(&d);
	hgc_graph_free(g);
}

/* Golden printouts of the three kinds of templates. */
static void test_goldens(void)
{
	static const struct hgc_tmpl_rule pins[] = {
		{"use", "MatMul", "matmul_core", {NULL, 0, 0}},
		{"pin", "matmul_core.MB", "16", {NULL, 0, 0}},
		{"pin", "matmul_core.ORDER", "1", {NULL, 0, 0}},
	};
	static const struct mmcase mm = {"y", F32, F32, UNDEF, 2, 2, {13, 97}, {97, 33}, false,
					 false, 1, {33}, F32, ""};
	static const struct mmcase ks = {"y", F32, F32, UNDEF, 2, 2, {1, 100}, {100, 16}, false,
					 false, 0, {0}, UNDEF, ""};
	static const struct mmcase bt = {"y", F32, F32, UNDEF, 3, 3, {2, 5, 3}, {2, 7, 5}, true,
					 true, 0, {0}, UNDEF, ""};
	/* A and C in place: no packing, no write-back copy (the bias added in place) */
	static const struct mmcase bp = {"y", F32, F32, UNDEF, 3, 3, {2, 4, 8}, {2, 8, 16}, false,
					 false, 0, {0}, UNDEF, ""};
	static const struct mmcase pl = {"y", F32, F32, UNDEF, 2, 2, {16, 8}, {8, 32}, false,
					 false, 1, {32}, F32, ""};
	/* int8: B packed 4 k to a column's lane, the 4 k values one statement each
	   (tmpl_inst.c, pack_phys), so that the backend vectorizes along the columns */
	static const struct mmcase bq = {"y", U8, S8, UNDEF, 3, 3, {2, 4, 8}, {2, 8, 16}, false,
					 false, 0, {0}, UNDEF, ""};
	static const struct hgc_tmpl_rule batch[] = {
		{"use", "MatMul", "matmul_batch", {NULL, 0, 0}},
	};
	static const struct hgc_tmpl_rule ksplit[] = {
		{"use", "MatMul", "matmul_ksplit", {NULL, 0, 0}},
	};
	static const struct hgc_tmpl_rule grow[] = {{"use", "MatMul", "gemv_row", {NULL, 0, 0}}};
	/* 3 input channels take conv_kwrow by default */
	static const struct hgc_tmpl_rule direct[] = {
		{"use", "Convolution", "conv_direct", {NULL, 0, 0}},
	};
	static const struct hgc_tmpl_rule gcol[] = {{"use", "MatMul", "gemv_col", {NULL, 0, 0}}};
	static const struct mmcase gr = {"y", F32, F32, UNDEF, 2, 2, {1, 5}, {5, 32}, false,
					 false, 1, {32}, F32, ""};
	static const struct mmcase gc = {"y", F32, F32, UNDEF, 2, 2, {4, 40}, {40, 1}, false,
					 false, 0, {0}, UNDEF, ""};
	static const struct convcase cv = {"y", F32, F32, {1, 3, 5, 5}, {4, 3, 3, 3}, {1, 1},
					   {1, 1}, {1, 1}, {1, 1}, 1, "NCX", "OIX", false, ""};
	struct hgc_graph *g;

	g = hgc_graph_new();
	add_mm(g, &mm);
	golden(g, "tmpl_matmul_core", pins, 3);
	g = hgc_graph_new();
	add_mm(g, &ks);
	golden(g, "tmpl_matmul_ksplit", ksplit, 1);
	g = hgc_graph_new();
	add_conv(g, &cv);
	golden(g, "tmpl_conv_direct", direct, 1);
	g = hgc_graph_new();
	add_mm(g, &bt);
	golden(g, "tmpl_matmul_batch", batch, 1);
	g = hgc_graph_new();
	add_mm(g, &bp);
	golden(g, "tmpl_matmul_batch_plain", NULL, 0);
	g = hgc_graph_new();
	add_mm(g, &bq);
	golden(g, "tmpl_matmul_batch_plain_int8", NULL, 0);
	g = hgc_graph_new();
	add_mm(g, &pl);
	golden(g, "tmpl_matmul_plain", NULL, 0);
	g = hgc_graph_new();
	add_mm(g, &gr);
	golden(g, "tmpl_gemv_row", grow, 1);
	g = hgc_graph_new();
	add_mm(g, &gc);
	golden(g, "tmpl_gemv_col", gcol, 1);
}

/* Whether the entry function of module text m stores into a module
   constant called B (a packed weight): a line that starts with "B[". */
static bool entry_writes_b(const char *m)
{
	const char *e = strstr(m, "entry func"), *end = e ? strstr(e, "init func") : NULL;
	const char *l;

	for (l = e; l && (!end || l < end); l = strchr(l, '\n')) {
		while (*l == '\n' || *l == ' ')
			l++;
		if (!strncmp(l, "B[", 2) && (!end || l < end))
			return true;
	}
	return false;
}

/*
 * Constant weights are packed once, by init (docs/templates.md): for each
 * MatMul template the default choice takes on a constant B, the entry
 * function (the hot path) never writes the packed B, and init does.
 */
static void test_const_b(void)
{
	static const struct {
		int ra, rb;
		int64_t ad[3], bd[3];
		const char *want;
	} c[] = {
		{2, 2, {64, 128}, {128, 96}, "matmul_plain"},
		{2, 2, {64, 1004}, {1004, 128}, "matmul_packa"},
		{2, 2, {13, 97}, {97, 479}, "matmul_core"},
		{2, 2, {4, 4096}, {4096, 8}, "matmul_ksplit"},
		{3, 3, {2, 16, 8}, {2, 8, 24}, "matmul_batch_plain"},
		{2, 2, {1, 4000}, {4000, 64}, "gemv_row"},
		{2, 2, {1, 97}, {97, 64}, "gemv_row_serial"},
	};
	struct hgc_tmpl_opts o;
	struct hgc_lower_opts lo;
	struct hgc_tir_module *m;
	struct hgc_diag d;
	struct hgc_graph *g;
	struct hgc_op *op;
	char *text;
	size_t i;

	for (i = 0; i < NCASES(c); i++) {
		g = hgc_graph_new();
		op = lc_op(g, HGC_OP_MATMUL, HGC_DT_UNDEF, 2, lc_input(g, "a", F32, c[i].ra, c[i].ad),
			   hgc_graph_add_input(g, "b", F32, c[i].rb, c[i].bd, HGC_PROP_CONSTANT, NULL));
		op->out[0]->name = "y";
		lc_out(g, op);
		opts(&o, &lo, NULL, 0);
		hgc_diag_init(&d);
		m = hgc_lower_graph(g, &lo, &d);
		text = m ? hgc_tir_module_str(m) : strdup(hgc_diag_text(&d));
		check_log(&o, "y", c[i].want);
		ok(m && strstr(text, "const B:") && strstr(text, "init func") &&
		   !entry_writes_b(text) && strstr(strstr(text, "init func"), "B["),
		   "%s: constant B packed by init, never by the entry function", c[i].want);
		free(text);
		hgc_tir_module_free(m);
		hgc_diag_release(&d);
		hgc_tmpl_opts_release(&o);
		hgc_graph_free(g);
	}
}

int main(void)
{
	pin_machine();
	run_mm("matmul f32", f32_cases, NCASES(f32_cases), LC_TOL(1e-4, 1e-4, 0));
	run_mm("matmul bf16", low_cases, 4, LC_TOL(2e-2, 2e-2, 0));
	run_mm("matmul int8", low_cases + 4, NCASES(low_cases) - 4, LC_TOL(0, 0, 0));
	test_conv();
	test_rules();
	test_rule_errors();
	test_space();
	test_empty_space_blame();
	test_pruning();
	test_goldens();
	test_const_b();
	return done_testing();
}
