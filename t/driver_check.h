/*
 * driver_check.h: helpers for the driver, cache and pass tests (t/110,
 * t/111, t/14x): buffers for a graph's inputs and outputs, deterministic
 * inputs, running a compiled graph and the reference interpreter on them,
 * comparing outputs under a spec's tolerances, the TIR and plan a graph
 * lowers to, and one-line checks on them.
 */
#ifndef HGC_T_DRIVER_CHECK_H
#define HGC_T_DRIVER_CHECK_H

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/driver/driver.h"
#include "core/graph/graph.h"
#include "dsl/dsl.h"
#include "t/tap.h"

/* Load libgomp for good before a C-backend module can (see t/lower_check.h). */
__attribute__((constructor)) static void dc_preload_gomp(void)
{
	if (!dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE))
		fprintf(stderr, "# cannot preload libgomp: %s\n", dlerror());
}

/* The inputs, the outputs of a compiled graph and those of the interpreter. */
struct dc_bufs {
	int nin, nout;
	void **in, **out, **ref;
};

/* A zeroed buffer for t, at least one byte. */
static inline void *dc_buf(const struct hgc_tensor *t, int poison)
{
	size_t n = hgc_tensor_nbytes(t) + 1;
	void *p = malloc(n);

	memset(p, poison, n);
	return p;
}

/* Buffers for every input and output of g (outputs poisoned differently). */
static inline void dc_alloc(struct dc_bufs *b, const struct hgc_graph *g)
{
	b->nin = (int)g->inputs.len;
	b->nout = (int)g->outputs.len;
	b->in = calloc((size_t)b->nin + 1, sizeof(void *));
	b->out = calloc((size_t)b->nout + 1, sizeof(void *));
	b->ref = calloc((size_t)b->nout + 1, sizeof(void *));
	for (int i = 0; i < b->nin; i++)
		b->in[i] = dc_buf(HGC_GRAPH_INPUT(g, i), 0);
	for (int i = 0; i < b->nout; i++) {
		b->out[i] = dc_buf(HGC_GRAPH_OUTPUT(g, i), 0xff);
		b->ref[i] = dc_buf(HGC_GRAPH_OUTPUT(g, i), 0xfe);
	}
}

/* Free what dc_alloc made. */
static inline void dc_release(struct dc_bufs *b)
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

/* Deterministic inputs: small values of each input's dtype. */
static inline void dc_fill(struct dc_bufs *b, const struct hgc_graph *g, unsigned seed)
{
	for (int i = 0; i < b->nin; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_INPUT(g, i);
		int64_t n = hgc_tensor_nelems(t);

		for (int64_t k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			hgc_store_f32(t->dtype, b->in[i], k, (float)((seed >> 9) % 17) * 0.25f - 2);
		}
	}
}

/* Whether got matches want for every element of t; why says where not. */
static inline bool dc_same(const struct hgc_tensor *t, const void *got, const void *want,
			   double rtol, double atol, char *why, size_t size)
{
	int64_t n = hgc_tensor_nelems(t);
	bool fl = t->dtype == HGC_DT_F32 || t->dtype == HGC_DT_BF16;

	if (!fl && memcmp(got, want, hgc_tensor_nbytes(t))) {
		snprintf(why, size, "%s: integer outputs differ", t->name ? t->name : "?");
		return false;
	}
	for (int64_t i = 0; fl && i < n; i++) {
		double g = hgc_load_f32(t->dtype, got, i), w = hgc_load_f32(t->dtype, want, i);

		if ((isnan(g) && isnan(w)) || fabs(g - w) <= atol + rtol * fabs(w))
			continue;
		snprintf(why, size, "%s[%lld]: got %.9g, want %.9g", t->name ? t->name : "?",
			 (long long)i, g, w);
		return false;
	}
	return true;
}

/* The tolerances of a spec for dtype dt: its own, else 1e-5/1e-6 (bf16 1e-2). */
static inline void dc_tol(const struct hgc_spec *sp, enum hgc_dtype dt, double *rtol,
			  double *atol)
{
	if (sp && sp->has_tol) {
		*rtol = sp->rtol;
		*atol = sp->atol;
	} else {
		*rtol = dt == HGC_DT_BF16 ? 1e-2 : 1e-5;
		*atol = dt == HGC_DT_BF16 ? 1e-2 : 1e-6;
	}
}

/* Run h and the interpreter on b's inputs; whether every output agrees. */
static inline bool dc_check(struct hgc_driver_graph *h, const struct hgc_graph *g,
			    const struct hgc_spec *sp, struct dc_bufs *b, char *why,
			    size_t size)
{
	struct hgc_diag d;
	double rtol, atol;
	bool same = true;

	hgc_diag_init(&d);
	if (hgc_driver_run(h, (const void *const *)b->in, b->out, &d) < 0 ||
	    hgc_interp_run(g, (const void *const *)b->in, b->ref, &d) < 0) {
		snprintf(why, size, "%s", hgc_diag_text(&d));
		hgc_diag_release(&d);
		return false;
	}
	hgc_diag_release(&d);
	for (int i = 0; i < b->nout && same; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(g, i);

		dc_tol(sp, t->dtype, &rtol, &atol);
		same = dc_same(t, b->out[i], b->ref[i], rtol, atol, why, size);
	}
	return same;
}

/* Compile sp's graph under o, run it on the inputs of sp's generators and
   compare with the interpreter: whether it matched; else why (compile,
   fill or run errors, or the first output that differs) goes into why. */
static inline bool dc_spec_matches(const struct hgc_spec *sp, const struct hgc_driver_opts *o,
				   char *why, size_t size)
{
	struct hgc_driver_graph *h;
	struct dc_bufs bufs;
	struct hgc_diag d;
	bool same = false;

	why[0] = 0;
	hgc_diag_init(&d);
	dc_alloc(&bufs, sp->graph);
	h = hgc_driver_compile(sp->graph, o, NULL, &d);
	for (int i = 0; h && i < bufs.nin && !d.nerr; i++)
		hgc_gen_fill(&sp->gens[i], HGC_GRAPH_INPUT(sp->graph, i), bufs.in[i], &d);
	if (h && !d.nerr)
		same = dc_check(h, sp->graph, sp, &bufs, why, size);
	else
		snprintf(why, size, "%s", hgc_diag_text(&d));
	hgc_driver_release(h);
	dc_release(&bufs);
	hgc_diag_release(&d);
	return same;
}

/* A graph y = ReLU(MatMul(x, w)) of f32 x[m, k] (variable), w[k, n] (constant). */
static inline struct hgc_graph *dc_matmul(int64_t m, int64_t k, int64_t n, bool relu)
{
	struct hgc_graph *g = hgc_graph_new();
	struct hgc_tensor *in[2];
	struct hgc_op *op;
	struct hgc_diag d;

	hgc_diag_init(&d);
	in[0] = hgc_graph_add_input(g, "x", HGC_DT_F32, 2, (int64_t[]){ m, k }, HGC_PROP_VARIABLE,
				    NULL);
	in[1] = hgc_graph_add_input(g, "w", HGC_DT_F32, 2, (int64_t[]){ k, n }, HGC_PROP_CONSTANT,
				    NULL);
	op = hgc_graph_add_op(g, HGC_OP_MATMUL, 2, in, HGC_DT_UNDEF, NULL);
	if (hgc_graph_finish_op(g, op, &d) < 0)
		hgc_bug("%s", hgc_diag_text(&d));
	if (relu) {
		op = hgc_graph_add_op(g, HGC_OP_RELU, 1, op->out, HGC_DT_UNDEF, NULL);
		if (hgc_graph_finish_op(g, op, &d) < 0)
			hgc_bug("%s", hgc_diag_text(&d));
	}
	op->out[0]->name = "y";
	hgc_graph_add_output(g, op->out[0]);
	hgc_diag_release(&d);
	return g;
}

/* Count the occurrences of needle in hay. */
static inline int dc_count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

/* The TIR of g after the passes (threads, one rule or none) as text (malloc'ed;
   "" when lowering fails, its error a TAP diag); the template log into *plan
   when plan is not NULL ("" when none). */
static inline char *dc_tir_text(const struct hgc_graph *g, int threads,
				const struct hgc_tmpl_rule *rule, char **plan)
{
	struct hgc_driver_opts o;
	struct hgc_tir_module *m;
	struct hgc_diag d;
	char *log = NULL, *s = NULL;

	hgc_driver_opts_init(&o);
	o.threads = threads;
	if (rule)
		o.rules = rule, o.nrules = 1;
	hgc_diag_init(&d);
	m = hgc_driver_lower(g, &o, &log, &d);
	if (m)
		s = hgc_tir_module_str(m);
	else
		diag("%s", hgc_diag_text(&d));
	hgc_tir_module_free(m);
	hgc_diag_release(&d);
	if (plan)
		*plan = log ? log : strdup("");
	else
		free(log);
	return s ? s : strdup("");
}

/* Load the specs of text into p as file (diagnostics go to the TAP output). */
static inline void dc_load(struct hgc_program *p, const char *file, const char *text)
{
	struct hgc_diag d;

	hgc_diag_init(&d);
	hgc_program_init(p);
	if (hgc_program_load_string(p, file, text, &d) < 0)
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
}

/* Whether text has needle; else say what it has. */
static inline bool dc_has(const char *text, const char *needle)
{
	if (strstr(text, needle))
		return true;
	diag("no '%s' in:\n%s", needle, text);
	return false;
}

/* One TAP test: sp compiled on backend b for threads under one rule (NULL: none) matches
   the interpreter. */
static inline void dc_run_ok(const struct hgc_spec *sp, enum hgc_driver_backend b, int threads,
			     const struct hgc_tmpl_rule *rule)
{
	struct hgc_driver_opts o;
	char why[512];

	hgc_driver_opts_init(&o);
	o.backend = b;
	o.disk_cache = false;
	o.threads = threads;
	if (rule)
		o.rules = rule, o.nrules = 1;
	if (!ok(dc_spec_matches(sp, &o, why, sizeof(why)), "%s on %s, %d threads, %s %s",
		sp->name, hgc_driver_backend_name(b), threads, rule ? rule->key : "every pass",
		rule ? rule->value : "on"))
		diag("%s", why);
}

#endif
