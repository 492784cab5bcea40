/*
 * exec.c: run one spec.  Fill the inputs (generators or --inputs), compile
 * and run the chosen backend (bench: median of the timed runs), write --io
 * files, run the reference interpreter, compare every output with it and
 * with the golden values.  What went wrong goes into the result's diag.
 */
#include "tools/tools.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The buffers of one spec run: inputs, backend outputs, reference outputs. */
struct bufs {
	int nin, nout;
	void **in, **out, **ref;
};

/* Resolve --config across the loaded files and check --backend and --io up front. */
int hgc_tool_exec_setup(const struct hgc_tool_opts *o, const struct hgc_tool_session *s,
			const struct hgc_config **cfg)
{
	const struct hgc_tool_backend *b = o->backend ? hgc_tool_backend_find(o->backend) : NULL;
	struct hgc_diag d;

	*cfg = NULL;
	if (b && !b->compile) {
		fprintf(stderr, "hgc: error: backend '%s' is not available in this build\n",
			b->name);
		return HGC_EXIT_FAIL;
	}
	if (o->config && !(*cfg = hgc_tool_session_config(s, o->config))) {
		fprintf(stderr, "hgc: error: no config '%s' in the loaded files\n", o->config);
		return HGC_EXIT_FAIL;
	}
	if (!o->io_dir)
		return 0;
	hgc_diag_init(&d);
	if (hgc_tool_mkdirs(o->io_dir, &d) < 0) {
		fputs(hgc_diag_text(&d), stderr);
		hgc_diag_release(&d);
		return HGC_EXIT_FAIL;
	}
	hgc_diag_release(&d);
	return 0;
}

/* Half the machine's memory: a spec typo must not eat the machine. */
static double mem_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (double)pages * (double)size / 2 : 4e9;
}

/* A 64-byte-aligned buffer for t, filled with byte poison; NULL if out of memory. */
static void *tensor_buf(const struct hgc_tensor *t, int poison)
{
	size_t n = hgc_tensor_nbytes(t), size = (n + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, size ? size : 64);

	if (p)
		memset(p, poison, size ? size : 64);
	return p;
}

/* Free every buffer of b. */
static void bufs_release(struct bufs *b)
{
	for (int i = 0; i < b->nin; i++)
		free(b->in[i]);
	for (int i = 0; i < b->nout; i++) {
		free(b->out[i]);
		free(b->ref[i]);
	}
	free(b->in);
	free(b->out);
	free(b->ref);
}

/* Bytes of every input and twice every output (backend and reference). */
static double io_bytes(const struct hgc_graph *g)
{
	double sum = 0;

	for (size_t i = 0; i < g->inputs.len; i++)
		sum += (double)hgc_tensor_nbytes(HGC_GRAPH_INPUT(g, i));
	for (size_t i = 0; i < g->outputs.len; i++)
		sum += 2.0 * (double)hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, i));
	return sum;
}

/* Allocate every buffer of g; output and reference get different poison bytes. */
static int bufs_alloc(struct bufs *b, const struct hgc_graph *g, struct hgc_diag *d)
{
	if (io_bytes(g) > mem_budget())
		return hgc_error(d, NULL, "inputs and outputs need %.3g GB, more than half of this "
				 "machine's memory", io_bytes(g) * 1e-9);
	b->nin = (int)g->inputs.len;
	b->nout = (int)g->outputs.len;
	b->in = hgc_xcalloc((size_t)b->nin + 1, sizeof(void *));
	b->out = hgc_xcalloc((size_t)b->nout + 1, sizeof(void *));
	b->ref = hgc_xcalloc((size_t)b->nout + 1, sizeof(void *));
	for (int i = 0; i < b->nin; i++)
		if (!(b->in[i] = tensor_buf(HGC_GRAPH_INPUT(g, i), 0)))
			return hgc_error(d, &HGC_GRAPH_INPUT(g, i)->loc,
					 "out of memory for %zu bytes of input",
					 hgc_tensor_nbytes(HGC_GRAPH_INPUT(g, i)));
	for (int i = 0; i < b->nout; i++) {
		b->out[i] = tensor_buf(HGC_GRAPH_OUTPUT(g, i), 0xff);
		b->ref[i] = tensor_buf(HGC_GRAPH_OUTPUT(g, i), 0xfe);
		if (!b->out[i] || !b->ref[i])
			return hgc_error(d, &HGC_GRAPH_OUTPUT(g, i)->loc,
					 "out of memory for %zu bytes of output",
					 hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, i)));
	}
	return 0;
}

/* Fill every input from its generator, or from --inputs files. */
static int fill_inputs(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
		       struct bufs *b, struct hgc_diag *d)
{
	const struct hgc_graph *g = sp->graph;
	int rc = 0;

	for (int i = 0; i < b->nin; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_INPUT(g, i);

		if (o->inputs_dir)
			rc |= hgc_tool_npy_load(o->inputs_dir, sp, t, b->in[i], d);
		else
			rc |= hgc_gen_fill(&sp->gens[i], t, b->in[i], d);
	}
	return rc ? -1 : 0;
}

/* Write every input and output of the backend run as --io files. */
static int save_io(const char *dir, const struct hgc_spec *sp, const struct bufs *b,
		   struct hgc_diag *d)
{
	const struct hgc_graph *g = sp->graph;
	int rc = 0;

	for (int i = 0; i < b->nin; i++)
		rc |= hgc_tool_npy_save(dir, sp, HGC_GRAPH_INPUT(g, i), b->in[i], d);
	for (int i = 0; i < b->nout; i++)
		rc |= hgc_tool_npy_save(dir, sp, HGC_GRAPH_OUTPUT(g, i), b->out[i], d);
	return rc ? -1 : 0;
}

/* qsort comparator for doubles. */
static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Run the backend warmup + iters times; the median of the timed runs (the
   fastest with --fastest) goes in r. */
static int timed_runs(const struct hgc_tool_opts *o, const struct hgc_tool_backend *be,
		      void *h, const struct hgc_spec *sp, struct bufs *b,
		      struct hgc_tool_result *r)
{
	int iters = sp->iters > 0 ? sp->iters : 1, warmup = sp->warmup > 0 ? sp->warmup : 0;
	double *t = hgc_xcalloc((size_t)iters, sizeof(double)), t0;
	int rc = 0;

	for (int i = 0; i < warmup + iters && !rc; i++) {
		t0 = hgc_now();
		rc = be->run(h, sp->graph, (const void *const *)b->in, b->out, &r->why);
		if (i >= warmup)
			t[i - warmup] = hgc_now() - t0;
	}
	qsort(t, (size_t)iters, sizeof(double), by_value);
	r->t.run = o->fastest ? t[0] : iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
	r->t.fastest = o->fastest;
	r->t.iters = iters;
	r->t.warmup = warmup;
	free(t);
	return rc;
}

/* Record why an output differs from what it should be ("reference" or "golden"). */
static void report_bad(struct hgc_tool_result *r, const struct hgc_tensor *t,
		       const struct hgc_tool_cmp *c, const char *what, double rtol, double atol)
{
	char idx[128];

	hgc_tool_index_str(t, c->first_bad, idx, sizeof(idx));
	hgc_error(&r->why, NULL, "output '%s': %lld of %lld elements differ from the %s "
		  "(rtol %g, atol %g); first at %s%s: got %.9g, want %.9g",
		  t->name ? t->name : "?", (long long)c->nbad, (long long)hgc_tensor_nelems(t),
		  what, rtol, atol, t->name ? t->name : "", idx, c->got, c->want);
}

/* Compare every backend output with the reference interpreter's. */
static void check_reference(const struct hgc_spec *sp, const struct bufs *b,
			    struct hgc_tool_result *r)
{
	struct hgc_tool_cmp c;
	double rtol, atol;

	for (int i = 0; i < b->nout; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(sp->graph, i);

		hgc_tool_tolerance(sp, t->dtype, &rtol, &atol);
		hgc_tool_compare(t, b->out[i], b->ref[i], rtol, atol, &c);
		r->max_err = fmax(r->max_err, c.max_err);
		if (c.nbad)
			report_bad(r, t, &c, "reference interpreter", rtol, atol);
	}
}

/* The index of t among g's outputs, or -1. */
static int output_index(const struct hgc_graph *g, const struct hgc_tensor *t)
{
	for (size_t i = 0; i < g->outputs.len; i++)
		if (HGC_GRAPH_OUTPUT(g, i) == t)
			return (int)i;
	return -1;
}

/* Compare backend outputs with the spec's golden values. */
static void check_golden(const struct hgc_spec *sp, const struct bufs *b,
			 struct hgc_tool_result *r)
{
	for (int k = 0; k < sp->ngolden; k++) {
		const struct hgc_golden *gd = &sp->golden[k];
		int i = output_index(sp->graph, gd->tensor);
		void *want;
		struct hgc_tool_cmp c;
		double rtol, atol;

		if (i < 0) {
			hgc_error(&r->why, &gd->gen.loc, "golden values for a tensor that is not "
				  "an output");
			continue;
		}
		want = tensor_buf(gd->tensor, 0);
		if (!want || hgc_gen_fill(&gd->gen, gd->tensor, want, &r->why) < 0) {
			free(want);
			continue;
		}
		hgc_tool_tolerance(sp, gd->tensor->dtype, &rtol, &atol);
		hgc_tool_compare(gd->tensor, b->out[i], want, rtol, atol, &c);
		r->max_err = fmax(r->max_err, c.max_err);
		if (c.nbad)
			report_bad(r, gd->tensor, &c, "golden values", rtol, atol);
		free(want);
	}
}

/* A negative spec passes when building it failed with the expected text. */
static void exec_negative(const struct hgc_spec *sp, struct hgc_tool_result *r)
{
	r->negative = true;
	if (!sp->build_error)
		hgc_error(&r->why, &sp->loc, "expected the error \"%s\", but the spec built "
			  "without error", sp->expect_error);
	else if (!strstr(sp->build_error, sp->expect_error))
		hgc_error(&r->why, &sp->loc, "expected the error \"%s\", but building failed "
			  "with: %s", sp->expect_error, sp->build_error);
	r->ok = !r->why.nerr;
}

/* The backend the spec runs on: --backend, else its config's, else the default. */
static const struct hgc_tool_backend *pick_backend(const struct hgc_tool_opts *o,
						   const struct hgc_config *cfg)
{
	if (o->backend)
		return hgc_tool_backend_find(o->backend);
	return hgc_tool_backend_of(cfg ? cfg->backend : HGC_BACKEND_DEFAULT);
}

/* The OpenMP thread count: --threads, else the config's, else every core. */
static int pick_threads(const struct hgc_tool_opts *o, const struct hgc_config *cfg)
{
	if (o->threads > 0)
		return o->threads;
	if (cfg && cfg->threads > 0)
		return cfg->threads;
	return omp_get_num_procs();
}

/* Compile, fill, run, save, check: the body of a positive spec. */
static void exec_graph(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
		       struct bufs *b, struct hgc_tool_result *r)
{
	const struct hgc_tool_backend *be = r->backend;
	const struct hgc_graph *g = sp->graph;
	void *h;
	double t0 = hgc_now();

	if (!(h = be->compile(g, r->config, &r->why)))
		return;
	r->t.build = hgc_now() - t0;
	t0 = hgc_now();
	if (bufs_alloc(b, g, &r->why) < 0 || fill_inputs(o, sp, b, &r->why) < 0)
		goto release;
	r->t.inputs = hgc_now() - t0;
	if (timed_runs(o, be, h, sp, b, r) < 0)
		goto release;
	if (o->io_dir && save_io(o->io_dir, sp, b, &r->why) < 0)
		goto release;
	t0 = hgc_now();
	if (hgc_interp_run(g, (const void *const *)b->in, b->ref, &r->why) < 0)
		goto release;
	r->t.ref = hgc_now() - t0;
	t0 = hgc_now();
	r->max_err = 0;
	check_reference(sp, b, r);
	check_golden(sp, b, r);
	r->t.check = hgc_now() - t0;
	if (o->explain && be->explain)
		be->explain(stdout, h, g);
release:
	be->release(h);
}

/* Run spec sp (under cfg when --config gave one) and fill r; r->ok says if it passed. */
void hgc_tool_exec_spec(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
			const struct hgc_config *cfg, struct hgc_tool_result *r)
{
	struct bufs b = {0};

	memset(r, 0, sizeof(*r));
	hgc_diag_init(&r->why);
	r->max_err = NAN;	/* until outputs are compared */
	r->config = cfg ? cfg : sp->config;
	if (sp->expect_error) {
		exec_negative(sp, r);
		return;
	}
	r->backend = pick_backend(o, r->config);
	r->threads = pick_threads(o, r->config);
	omp_set_num_threads(r->threads);
	if (o->explain)
		hgc_tool_explain_graph(stdout, sp, r);
	if (!sp->graph)
		hgc_error(&r->why, &sp->loc, "spec has no graph");
	else if (!r->backend->compile)
		hgc_error(&r->why, NULL, "backend '%s' is not available in this build",
			  r->backend->name);
	else
		exec_graph(o, sp, &b, r);
	bufs_release(&b);
	r->ok = !r->why.nerr;
}

/* Free the result's diagnostics. */
void hgc_tool_result_release(struct hgc_tool_result *r)
{
	hgc_diag_release(&r->why);
}
