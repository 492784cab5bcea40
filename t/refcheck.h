/*
 * refcheck.h: checking the reference interpreter against NumPy, for the
 * t/02x-interp*.c tests.  Each case is a small graph built with the API; its
 * inputs are filled at random, hgc_interp_run computes the outputs, and the
 * inputs, outputs and graph go into a temporary directory.  rc_finish() then
 * runs t/numpy_ref.py once over all cases (python start-up is the slow part)
 * and turns its verdicts into one TAP line per case.
 */
#ifndef HGC_T_REFCHECK_H
#define HGC_T_REFCHECK_H

#include "core/graph/graph.h"
#include "t/tap.h"

#include <libgen.h>
#include <stdarg.h>
#include <unistd.h>

#define RC_MAX_CASES 1024
#define RC_MAX_TENSORS 64

/* How to fill an input: uniform in [lo, hi] (integers: inclusive), or multiples of 0.5. */
enum rc_gen { RC_UNIFORM, RC_HALVES };

static struct {
	char dir[64];			/* the temporary directory */
	FILE *manifest;			/* DIR/manifest.jsonl */
	int ncases;
	char *desc[RC_MAX_CASES];	/* each case's description */
	uint64_t rng;
	struct hgc_graph *g;		/* the case being built */
	enum rc_gen gen[RC_MAX_TENSORS];	/* per input tensor id */
	double lo[RC_MAX_TENSORS], hi[RC_MAX_TENSORS];
	const char *argv0;
	double rtol, atol;		/* overrides for the next case (< 0: defaults) */
} rc;

/* xorshift64*: reproducible random numbers. */
static inline uint64_t rc_next(void)
{
	rc.rng ^= rc.rng >> 12;
	rc.rng ^= rc.rng << 25;
	rc.rng ^= rc.rng >> 27;
	return rc.rng * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, 1). */
static inline double rc_unit(void)
{
	return (double)(rc_next() >> 11) / 9007199254740992.0;
}

/* An integer in [lo, hi]. */
static inline int64_t rc_int(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rc_next() % (uint64_t)(hi - lo + 1));
}

/* Make the temporary directory and the manifest. */
static inline void rc_init(const char *argv0, uint64_t seed)
{
	char path[128];

	rc.argv0 = argv0;
	rc.rng = seed;
	rc.rtol = rc.atol = -1;
	if (!mkdtemp(strcpy(rc.dir, "/tmp/hgc-interp-XXXXXX"))) {
		printf("1..0 # SKIP cannot make a temporary directory\n");
		exit(0);
	}
	snprintf(path, sizeof(path), "%s/manifest.jsonl", rc.dir);
	rc.manifest = fopen(path, "w");
	if (!rc.manifest)
		exit(1);
}

/* Start a case: a fresh graph. */
static inline struct hgc_graph *rc_graph(void)
{
	hgc_graph_free(rc.g);
	rc.g = hgc_graph_new();
	return rc.g;
}

/* An input filled uniformly in [lo, hi] (dims given as ints). */
static inline struct hgc_tensor *rc_input_v(enum hgc_dtype dt, enum rc_gen gen, double lo, double hi,
				     int nd, va_list ap)
{
	int64_t dims[HGC_MAX_DIMS];
	struct hgc_tensor *t;
	int i;

	for (i = 0; i < nd; i++)
		dims[i] = va_arg(ap, int);
	t = hgc_graph_add_input(rc.g, NULL, dt, nd, dims, HGC_PROP_VARIABLE, NULL);
	if (t->id >= RC_MAX_TENSORS)
		hgc_bug("too many tensors in a case");
	rc.gen[t->id] = gen;
	rc.lo[t->id] = lo;
	rc.hi[t->id] = hi;
	return t;
}

/* An input with values in [lo, hi]. */
static inline struct hgc_tensor *rc_in(enum hgc_dtype dt, double lo, double hi, int nd, ...)
{
	struct hgc_tensor *t;
	va_list ap;

	va_start(ap, nd);
	t = rc_input_v(dt, RC_UNIFORM, lo, hi, nd, ap);
	va_end(ap);
	return t;
}

/* An f32 input in [-2, 2]. */
static inline struct hgc_tensor *rc_f32(int nd, ...)
{
	struct hgc_tensor *t;
	va_list ap;

	va_start(ap, nd);
	t = rc_input_v(HGC_DT_F32, RC_UNIFORM, -2, 2, nd, ap);
	va_end(ap);
	return t;
}

/* An input of exact halves in [lo, hi] (ties for rounding). */
static inline struct hgc_tensor *rc_halves(enum hgc_dtype dt, double lo, double hi, int nd, ...)
{
	struct hgc_tensor *t;
	va_list ap;

	va_start(ap, nd);
	t = rc_input_v(dt, RC_HALVES, lo, hi, nd, ap);
	va_end(ap);
	return t;
}

/* An op on nin inputs (not finished yet). */
static inline struct hgc_op *rc_op(enum hgc_op_kind k, enum hgc_dtype dt, int nin, ...)
{
	struct hgc_tensor *t[64];
	va_list ap;
	int i;

	va_start(ap, nin);
	for (i = 0; i < nin; i++)
		t[i] = va_arg(ap, struct hgc_tensor *);
	va_end(ap);
	return hgc_graph_add_op(rc.g, k, nin, t, dt, NULL);
}

/* Attribute setters. */
static inline void rc_int_attr(struct hgc_op *o, const char *n, int64_t v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_INT, .v.i = v};
	hgc_op_set_attr(rc.g, o, &a);
}
static inline void rc_bool(struct hgc_op *o, const char *n, bool v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_BOOL, .v.i = v};
	hgc_op_set_attr(rc.g, o, &a);
}
static inline void rc_float(struct hgc_op *o, const char *n, double v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_FLOAT, .v.f = v};
	hgc_op_set_attr(rc.g, o, &a);
}
static inline void rc_str(struct hgc_op *o, const char *n, const char *v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_STRING, .v.s = v};
	hgc_op_set_attr(rc.g, o, &a);
}
static inline void rc_ints(struct hgc_op *o, const char *n, int cnt, const int64_t *v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_INTS, .n = cnt, .v.ints = v};
	hgc_op_set_attr(rc.g, o, &a);
}
static inline void rc_floats(struct hgc_op *o, const char *n, int cnt, const double *v)
{
	struct hgc_attr a = {.name = n, .type = HGC_ATTR_FLOATS, .n = cnt, .v.floats = v};
	hgc_op_set_attr(rc.g, o, &a);
}
#define RC_INTS(o, n, ...) \
	rc_ints(o, n, sizeof((int64_t[]){__VA_ARGS__}) / 8, (int64_t[]){__VA_ARGS__})
#define RC_FLOATS(o, n, ...) \
	rc_floats(o, n, sizeof((double[]){__VA_ARGS__}) / 8, (double[]){__VA_ARGS__})

/* Finish op; a failure is a test failure (the case is then dropped). */
static inline struct hgc_tensor *rc_done(struct hgc_op *o)
{
	struct hgc_diag d;

	hgc_diag_init(&d);
	if (hgc_graph_finish_op(rc.g, o, &d))
		ok(0, "building %s: %s", hgc_op_table[o->kind].name, hgc_diag_text(&d));
	hgc_diag_release(&d);
	return o->out[0];
}

/* Fill an input buffer from its generator. */
static inline void rc_fill(const struct hgc_tensor *t, void *p)
{
	int64_t i, n = hgc_tensor_nelems(t);
	double lo = rc.lo[t->id], hi = rc.hi[t->id];

	for (i = 0; i < n; i++) {
		double v;

		if (rc.gen[t->id] == RC_HALVES)
			v = (double)rc_int((int64_t)(2 * lo), (int64_t)(2 * hi)) / 2;
		else if (hgc_dtype_is_int(t->dtype) || t->dtype == HGC_DT_BOOL)
			v = (double)rc_int((int64_t)lo, (int64_t)hi);
		else
			v = lo + (hi - lo) * rc_unit();
		hgc_store_f32(t->dtype, p, i, (float)v);
	}
}

/* Write t's buffer as DIR/c<case>_t<id>.npy and its JSON reference. */
static inline void rc_write_tensor(const struct hgc_tensor *t, const void *p, bool last)
{
	char name[64], path[160];
	struct hgc_diag d;

	snprintf(name, sizeof(name), "c%d_t%d.npy", rc.ncases, t->id);
	snprintf(path, sizeof(path), "%s/%s", rc.dir, name);
	hgc_diag_init(&d);
	if (hgc_npy_write(path, t->dtype, t->ndims, t->dims, p, &d))
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	fprintf(rc.manifest, "{\"id\": %d, \"dtype\": \"%s\", \"file\": \"%s\"}%s", t->id,
		hgc_dtype_name(t->dtype), name, last ? "" : ", ");
}

/* An attribute as JSON. */
static inline void rc_json_attr(const struct hgc_attr *a)
{
	int i;

	fprintf(rc.manifest, "\"%s\": ", a->name);
	switch (a->type) {
	case HGC_ATTR_BOOL: fputs(a->v.i ? "true" : "false", rc.manifest); break;
	case HGC_ATTR_INT: fprintf(rc.manifest, "%lld", (long long)a->v.i); break;
	case HGC_ATTR_FLOAT: fprintf(rc.manifest, "%.17g", a->v.f); break;
	case HGC_ATTR_STRING: fprintf(rc.manifest, "\"%s\"", a->v.s); break;
	default:
		fputc('[', rc.manifest);
		for (i = 0; i < a->n; i++) {
			if (a->type == HGC_ATTR_INTS)
				fprintf(rc.manifest, "%s%lld", i ? ", " : "", (long long)a->v.ints[i]);
			else
				fprintf(rc.manifest, "%s%.17g", i ? ", " : "", a->v.floats[i]);
		}
		fputc(']', rc.manifest);
	}
}

/* An op as JSON: kind, input and output ids, declared type and shape, attributes. */
static inline void rc_json_op(const struct hgc_op *o, bool last)
{
	const struct hgc_tensor *t = o->out[0];
	int i;

	fprintf(rc.manifest, "{\"kind\": \"%s\", \"in\": [", hgc_op_table[o->kind].name);
	for (i = 0; i < o->nin; i++)
		fprintf(rc.manifest, "%s%d", i ? ", " : "", o->in[i]->id);
	fprintf(rc.manifest, "], \"out\": %d, \"dtype\": \"%s\", \"shape\": [", t->id,
		hgc_dtype_name(t->dtype));
	for (i = 0; i < t->ndims; i++)
		fprintf(rc.manifest, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
	fputs("], \"attrs\": {", rc.manifest);
	for (i = 0; i < o->nattr; i++) {
		if (i)
			fputs(", ", rc.manifest);
		rc_json_attr(&o->attrs[i]);
	}
	fprintf(rc.manifest, "}}%s", last ? "" : ", ");
}

/* Run the case's graph in the interpreter and record it for numpy_ref.py. */
static inline void rc_case(const char *fmt, ...)
{
	struct hgc_graph *g = rc.g;
	void *bufs[2 * RC_MAX_TENSORS];
	size_t ni = g->inputs.len, no = g->outputs.len, i;
	struct hgc_diag d;
	char desc[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	for (i = 0; i < ni; i++) {
		bufs[i] = hgc_xcalloc(hgc_tensor_nbytes(HGC_GRAPH_INPUT(g, i)) + 1, 1);
		rc_fill(HGC_GRAPH_INPUT(g, i), bufs[i]);
	}
	for (i = 0; i < no; i++)
		bufs[ni + i] = hgc_xcalloc(hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, i)) + 1, 1);
	hgc_diag_init(&d);
	if (hgc_interp_run(g, (const void *const *)bufs, bufs + ni, &d)) {
		ok(0, "%s: interp failed: %s", desc, hgc_diag_text(&d));
	} else if (rc.ncases < RC_MAX_CASES) {
		fputs("{\"inputs\": [", rc.manifest);
		for (i = 0; i < ni; i++)
			rc_write_tensor(HGC_GRAPH_INPUT(g, i), bufs[i], i + 1 == ni);
		fputs("], \"ops\": [", rc.manifest);
		for (i = 0; i < g->ops.len; i++)
			rc_json_op(HGC_GRAPH_OP(g, i), i + 1 == g->ops.len);
		fputs("], \"outputs\": [", rc.manifest);
		for (i = 0; i < no; i++)
			rc_write_tensor(HGC_GRAPH_OUTPUT(g, i), bufs[ni + i], i + 1 == no);
		fputs("]", rc.manifest);
		if (rc.rtol >= 0)
			fprintf(rc.manifest, ", \"rtol\": %.17g", rc.rtol);
		if (rc.atol >= 0)
			fprintf(rc.manifest, ", \"atol\": %.17g", rc.atol);
		fputs("}\n", rc.manifest);
		rc.desc[rc.ncases++] = strdup(desc);
	}
	hgc_diag_release(&d);
	for (i = 0; i < ni + no; i++)
		free(bufs[i]);
	rc.rtol = rc.atol = -1;
}

/* Finish o, make it the output and check the case. */
static inline void rc_check(struct hgc_op *o, const char *fmt, ...)
{
	char desc[256];
	struct hgc_diag d;
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	hgc_diag_init(&d);
	r = hgc_graph_finish_op(rc.g, o, &d);
	if (r)
		ok(0, "%s: building %s: %s", desc, hgc_op_table[o->kind].name, hgc_diag_text(&d));
	hgc_diag_release(&d);
	if (r)
		return;
	hgc_graph_add_output(rc.g, o->out[0]);
	rc_case("%s", desc);
}

/* Where t/numpy_ref.py is: under the current directory, or two up from the test binary. */
static inline const char *rc_script(void)
{
	static char path[512];
	char copy[400];

	if (access("t/numpy_ref.py", R_OK) == 0)
		return "t/numpy_ref.py";
	snprintf(copy, sizeof(copy), "%s", rc.argv0);
	snprintf(path, sizeof(path), "%s/../../t/numpy_ref.py", dirname(copy));
	return path;
}

/* Run numpy_ref.py over every case and report one TAP line per case. */
static inline void rc_finish(void)
{
	const char *py = getenv("PYTHON") ? getenv("PYTHON") : "/usr/bin/python3";
	char cmd[1024], line[4096];
	int seen = 0, n, i;
	FILE *p;

	fclose(rc.manifest);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s'", py, rc_script(), rc.dir);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		bool good = !strncmp(line, "ok ", 3);

		line[strcspn(line, "\n")] = 0;
		n = atoi(line + (good ? 3 : 7));
		if (n != seen || n >= rc.ncases) {
			ok(0, "numpy_ref.py: unexpected line '%s'", line);
			continue;
		}
		ok(good, "%s", rc.desc[n]);
		if (!good)
			diag("%s", line + 7);
		seen++;
	}
	if (!p || pclose(p) != 0 || seen != rc.ncases)
		ok(0, "numpy_ref.py checked %d of %d cases (%s)", seen, rc.ncases, cmd);
	for (i = 0; i < rc.ncases; i++)
		free(rc.desc[i]);
	hgc_graph_free(rc.g);
	rc.g = NULL;
	if (!getenv("HGC_KEEP_TMP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rc.dir);
		if (system(cmd))
			diag("cannot remove %s", rc.dir);
	} else {
		diag("cases kept in %s", rc.dir);
	}
}

#endif
