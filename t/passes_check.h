/*
 * passes_check.h: running a graph before and after the graph passes on the
 * reference interpreter and comparing the outputs, for t/12x-*.c.
 * Floats compare as |got - want| <= atol + rtol |want| (NaN only with NaN;
 * bf16 with at least 1e-2 unless both are 0, which asks for exact bits);
 * integers exactly, except that u8/s8 outputs may be off by one where the
 * caller allows it (a quantization whose rounding tie moved: see
 * docs/passes.md) and the number of such elements is reported.
 */
#ifndef HGC_T_PASSES_CHECK_H
#define HGC_T_PASSES_CHECK_H

#include "core/graph/graph.h"
#include "core/graph/passes/passes.h"
#include "t/tap.h"

#include <libgen.h>
#include <math.h>
#include <unistd.h>

/* Dense buffers for every input and output of a graph. */
struct pc_bufs {
	int nin, nout;
	void **in, **out;
};

/* Buffers for g's outputs (inputs left NULL). */
static inline void pc_alloc_out(struct pc_bufs *b, const struct hgc_graph *g)
{
	size_t i;

	b->nout = (int)g->outputs.len;
	b->out = hgc_xcalloc(g->outputs.len + 1, sizeof(*b->out));
	for (i = 0; i < g->outputs.len; i++)
		b->out[i] = hgc_xcalloc(hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, i)) + 1, 1);
}

/* Free every buffer. */
static inline void pc_free(struct pc_bufs *b)
{
	int i;

	for (i = 0; i < b->nin && b->in; i++)
		free(b->in[i]);
	for (i = 0; i < b->nout && b->out; i++)
		free(b->out[i]);
	free(b->in);
	free(b->out);
	b->in = b->out = NULL;
	b->nin = b->nout = 0;
}

/* Random inputs (a fixed seed per call site) for every input of g; known data is kept. */
static inline void pc_random_inputs(struct pc_bufs *b, const struct hgc_graph *g, uint64_t seed)
{
	size_t i;
	int64_t k;

	b->nin = (int)g->inputs.len;
	b->in = hgc_xcalloc(g->inputs.len + 1, sizeof(*b->in));
	for (i = 0; i < g->inputs.len; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_INPUT(g, i);
		int64_t n = hgc_tensor_nelems(t);

		b->in[i] = hgc_xcalloc(hgc_tensor_nbytes(t) + 1, 1);
		if (t->data) {
			memcpy(b->in[i], t->data, hgc_tensor_nbytes(t));
			continue;
		}
		for (k = 0; k < n; k++) {
			double u;

			seed = seed * 6364136223846793005u + 1442695040888963407u;
			u = (double)(seed >> 11) / 9007199254740992.0;
			if (t->dtype == HGC_DT_U8)
				u = floor(u * 256);
			else if (t->dtype == HGC_DT_S8)
				u = floor(u * 256) - 128;
			else if (t->dtype == HGC_DT_S32)
				u = floor(u * 2001) - 1000;
			else if (t->dtype == HGC_DT_BOOL)
				u = u < 0.5;
			else
				u = u * 4 - 2;
			hgc_store_f32(t->dtype, b->in[i], k, (float)u);
		}
	}
}

/* Run g on the interpreter with b's inputs into fresh output buffers; -1 with a diag. */
static inline int pc_run(const struct hgc_graph *g, const struct pc_bufs *in, struct pc_bufs *out)
{
	struct hgc_diag d;
	int r;

	pc_alloc_out(out, g);
	hgc_diag_init(&d);
	r = hgc_interp_run(g, (const void *const *)in->in, out->out, &d);
	if (r)
		diag("interp: %s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return r;
}

/* What a comparison found. */
struct pc_cmp {
	int64_t bad;		/* elements out of tolerance */
	int64_t off1;		/* u8/s8 elements off by exactly one (allowed when asked) */
	int64_t first;		/* first bad element, -1 */
	double got, want, max_err;
};

/* Element i of a dense buffer as a double. */
static inline double pc_load(enum hgc_dtype dt, const void *p, int64_t i)
{
	switch (dt) {
	case HGC_DT_S32: return ((const int32_t *)p)[i];
	case HGC_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
	default: return hgc_load_f32(dt, p, i);
	}
}

/* Compare got with want (t's dtype and shape). */
static inline void pc_compare(const struct hgc_tensor *t, const void *got, const void *want,
			      double rtol, double atol, bool allow_off1, struct pc_cmp *c)
{
	bool ints = hgc_dtype_is_int(t->dtype) || t->dtype == HGC_DT_BOOL;
	bool q8 = t->dtype == HGC_DT_U8 || t->dtype == HGC_DT_S8;
	int64_t i, n = hgc_tensor_nelems(t);

	memset(c, 0, sizeof(*c));
	c->first = -1;
	for (i = 0; i < n; i++) {
		double g = pc_load(t->dtype, got, i), w = pc_load(t->dtype, want, i);
		double e = g == w ? 0 : fabs(g - w);	/* equal infinities: no error */
		bool bad;

		if (isnan(g) || isnan(w))
			bad = !(isnan(g) && isnan(w)), e = bad ? INFINITY : 0;
		else if (ints && q8 && allow_off1 && e == 1)
			bad = false, c->off1++;
		else
			bad = ints ? e != 0 : !(e <= atol + rtol * fabs(w));
		if (e > c->max_err)
			c->max_err = e;
		if (bad && !c->bad++) {
			c->first = i;
			c->got = g;
			c->want = w;
		}
	}
}

/* Compare every output of two runs of graphs with the same interface; ok() once. */
static inline int pc_check_outputs(const struct hgc_graph *g, const struct pc_bufs *got,
				   const struct pc_bufs *want, double rtol, double atol,
				   bool allow_off1, const char *what)
{
	int64_t off1 = 0;
	size_t i;
	int good = 1;

	for (i = 0; i < g->outputs.len; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(g, i);
		bool f = !hgc_dtype_is_int(t->dtype) && t->dtype != HGC_DT_BOOL;
		bool widen = f && t->dtype == HGC_DT_BF16 && (rtol > 0 || atol > 0);
		double rt = widen ? fmax(rtol, 1e-2) : rtol;
		double at = widen ? fmax(atol, 1e-2) : atol;
		struct pc_cmp c;

		pc_compare(t, got->out[i], want->out[i], rt, at, allow_off1, &c);
		off1 += c.off1;
		if (c.bad) {
			if (good)
				diag("%s: output %zu (%s): %lld bad, first at %lld: got %.9g want %.9g",
				     what, i, t->name ? t->name : "?", (long long)c.bad,
				     (long long)c.first, c.got, c.want);
			good = 0;
		}
	}
	if (off1)
		diag("%s: %lld quantized element%s off by one (rounding ties)", what,
		     (long long)off1, off1 == 1 ? "" : "s");
	return ok(good, "%s", what);
}

/* Count the ops of kind k in g. */
static inline int pc_count(const struct hgc_graph *g, enum hgc_op_kind k)
{
	size_t i;
	int n = 0;

	for (i = 0; i < g->ops.len; i++)
		n += HGC_GRAPH_OP(g, i)->kind == k;
	return n;
}

/* Work from the top of the tree whatever directory prove started in. */
static inline void pc_chdir_top(const char *argv0)
{
	char buf[4096];

	if (access("spec", F_OK) == 0)
		return;
	snprintf(buf, sizeof(buf), "%s", argv0);
	if (chdir(dirname(buf)) == 0 && chdir("../..") == 0 && access("spec", F_OK) == 0)
		return;
	diag("cannot find spec/ from %s", argv0);
}

#endif
