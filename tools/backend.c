/*
 * backend.c: the table of backends `hgc run` can run a spec on.  Adding a
 * backend is one row: a name and its compile/run/release/explain functions.
 * A row without functions names a backend this build does not have yet.
 */
#include "tools/tools.h"

#include <string.h>

/* The interpreter needs no compiled form: the handle is the graph itself. */
static void *interp_compile(const struct hgc_graph *g, const struct hgc_config *cfg,
			    struct hgc_diag *d)
{
	return (void *)g;
}

/* Run the reference interpreter. */
static int interp_run(void *h, const struct hgc_graph *g, const void *const *in,
		      void *const *out, struct hgc_diag *d)
{
	return hgc_interp_run(g, in, out, d);
}

/* Nothing to release: the handle is borrowed. */
static void interp_release(void *h)
{
}

/* The interpreter's plan: every op alone, in graph order. */
static void interp_explain(FILE *f, const void *h, const struct hgc_graph *g)
{
	size_t n = g->ops.len;

	fprintf(f, "  plan: no fusion yet: each of the %zu op%s runs unfused in the "
		   "interpreter,\n        in graph order, with naive loops on plain "
		   "row-major buffers\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, i);

		fprintf(f, "    step %zu: %s alone -> %s\n", i + 1, hgc_op_table[op->kind].name,
			op->out[0]->name ? op->out[0]->name : "(unnamed)");
	}
}

/* ORDER: least to most preferred; HGC_BACKEND_DEFAULT is the last one built in. */
static const struct hgc_tool_backend backends[] = {
	{"interp", HGC_BACKEND_INTERP, "the reference interpreter (naive loops, plain layouts)",
	 interp_compile, interp_run, interp_release, interp_explain},
	{"c", HGC_BACKEND_C, "Tensor IR emitted as C and compiled", NULL, NULL, NULL, NULL},
	{"jit", HGC_BACKEND_JIT, "Tensor IR through LLVM and the ORC JIT", NULL, NULL, NULL,
	 NULL},
};

#define NBACKENDS ((int)(sizeof(backends) / sizeof(backends[0])))

/* The backend called name (available or not), or NULL. */
const struct hgc_tool_backend *hgc_tool_backend_find(const char *name)
{
	for (int i = 0; i < NBACKENDS; i++)
		if (!strcmp(backends[i].name, name))
			return &backends[i];
	return NULL;
}

/* The backend of a config's kind; HGC_BACKEND_DEFAULT is the best one built in. */
const struct hgc_tool_backend *hgc_tool_backend_of(enum hgc_backend kind)
{
	const struct hgc_tool_backend *best = &backends[0];

	for (int i = 0; i < NBACKENDS; i++) {
		if (backends[i].kind == kind)
			return &backends[i];
		if (backends[i].compile)
			best = &backends[i];
	}
	return best;
}

/* The names of every backend, for messages; returns how many were stored. */
int hgc_tool_backend_names(const char **names, int cap)
{
	int n = 0;

	for (int i = 0; i < NBACKENDS && n < cap; i++)
		names[n++] = backends[i].name;
	return n;
}
