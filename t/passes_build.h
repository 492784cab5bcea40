/*
 * passes_build.h: building small graphs by hand for the pass tests
 * (t/120-passes.c, t/122-lowprec.c, t/123-transpose.c), and checking one
 * pass on them: the exact op kinds it leaves, the number of rewrites it
 * reports, a clean hgc_graph_check, and the interpreter's results on
 * random inputs against the graph before the pass.
 */
#ifndef HGC_T_PASSES_BUILD_H
#define HGC_T_PASSES_BUILD_H

#include "core/graph/passes/passes_int.h"
#include "t/passes_check.h"

#include <stdarg.h>

/* The graph being built and its builder. */
static struct {
	struct hgc_graph *g;
	struct hgc_pb b;
	struct hgc_diag d;
} pt;

/* Start a new graph. */
static inline void pt_new(void)
{
	pt.g = hgc_graph_new();
	hgc_diag_init(&pt.d);
	hgc_pb_init(&pt.b, pt.g, &pt.d);
}

/* An input of nd dims given as varargs (int64_t). */
static inline struct hgc_tensor *pt_input(const char *name, enum hgc_dtype dt,
					  enum hgc_property prop, int nd, ...)
{
	int64_t dims[HGC_MAX_DIMS];
	va_list ap;
	int i;

	va_start(ap, nd);
	for (i = 0; i < nd; i++)
		dims[i] = va_arg(ap, int64_t);
	va_end(ap);
	return hgc_graph_add_input(pt.g, name, dt, nd, dims, prop, NULL);
}

#define pt_var(name, dt, ...) pt_input(name, dt, HGC_PROP_VARIABLE, __VA_ARGS__)
#define pt_const(name, dt, ...) pt_input(name, dt, HGC_PROP_CONSTANT, __VA_ARGS__)

/* An op to give attributes to, then pt_end. */
static inline struct hgc_op *pt_op(enum hgc_op_kind k, enum hgc_dtype out, int nin, ...)
{
	struct hgc_tensor *in[8];
	va_list ap;
	int i;

	va_start(ap, nin);
	for (i = 0; i < nin; i++)
		in[i] = va_arg(ap, struct hgc_tensor *);
	va_end(ap);
	return hgc_pb_begin(&pt.b, k, out, nin, in);
}

/* Finish an op; a failure is a broken test. */
static inline struct hgc_tensor *pt_end(struct hgc_op *op)
{
	struct hgc_tensor *t = hgc_pb_end(&pt.b, op);

	if (pt.b.failed) {
		diag("building a test graph failed: %s", hgc_diag_text(&pt.d));
		exit(1);
	}
	return t;
}

/* A finished op without attributes. */
#define pt_un(k, x) pt_end(pt_op(k, HGC_DT_UNDEF, 1, x))
#define pt_bin(k, x, y) pt_end(pt_op(k, HGC_DT_UNDEF, 2, x, y))

/* Mark outputs. */
static inline void pt_out(struct hgc_tensor *t)
{
	hgc_graph_add_output(pt.g, t);
}

/* The kinds of g's ops in order, space-separated (a static buffer). */
static inline const char *pt_kinds(const struct hgc_graph *g)
{
	static char buf[4096];
	size_t i, n = 0;

	buf[0] = 0;
	for (i = 0; i < g->ops.len && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "",
				      hgc_op_table[HGC_GRAPH_OP(g, i)->kind].name);
	return buf;
}

/* Do a and c have inputs and outputs of the same types and shapes? */
static inline bool pt_same_interface(const struct hgc_graph *a, const struct hgc_graph *c)
{
	const struct hgc_vec *va[2] = {&a->inputs, &a->outputs}, *vc[2] = {&c->inputs, &c->outputs};
	size_t i;
	int k;

	for (k = 0; k < 2; k++) {
		if (va[k]->len != vc[k]->len)
			return false;
		for (i = 0; i < va[k]->len; i++) {
			const struct hgc_tensor *x = HGC_VEC_AT(va[k], struct hgc_tensor *, i);
			const struct hgc_tensor *y = HGC_VEC_AT(vc[k], struct hgc_tensor *, i);

			if (x->dtype != y->dtype || x->ndims != y->ndims ||
			    memcmp(x->dims, y->dims, (size_t)x->ndims * sizeof(*x->dims)))
				return false;
		}
	}
	return true;
}

typedef int pt_pass_fn(struct hgc_graph *, const struct hgc_pass_switches *,
		       struct hgc_diag *);

/*
 * Run pass on the graph being built (then free it): it must report changes
 * rewrites, leave exactly the op kinds kinds, check, and compute what the
 * graph computed before within rtol/atol (integers exact, u8/s8 off by one
 * allowed when off1).  Five TAP lines.
 */
static inline void pt_check(pt_pass_fn *pass, const struct hgc_pass_switches *sw, int changes,
			    const char *kinds, double rtol, double atol, bool off1,
			    const char *what)
{
	struct hgc_graph *before = hgc_graph_clone(pt.g);
	struct pc_bufs in = {0}, want = {0}, got = {0};
	struct hgc_diag d;
	int n;

	hgc_diag_init(&d);
	n = pass(pt.g, sw, &d);
	is_int(n, changes, "%s: %d rewrites", what, changes);
	if (n < 0)
		diag("%s", hgc_diag_text(&d));
	is_str(pt_kinds(pt.g), kinds, "%s: ops", what);
	ok(!hgc_graph_check(pt.g, &d) && pt_same_interface(before, pt.g), "%s: the graph checks",
	   what);
	pc_random_inputs(&in, before, 12345);
	ok(!pc_run(before, &in, &want) && !pc_run(pt.g, &in, &got), "%s: both run", what);
	pc_check_outputs(pt.g, &got, &want, rtol, atol, off1, what);
	pc_free(&in);
	pc_free(&want);
	pc_free(&got);
	hgc_diag_release(&d);
	hgc_diag_release(&pt.d);
	hgc_graph_free(before);
	hgc_graph_free(pt.g);
	pt.g = NULL;
}

#endif
