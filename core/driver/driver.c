/*
 * driver.c: the pipeline, one direction:
 *
 *     graph -> graph passes (on a copy) -> lowering (MatMul and
 *     Convolution through the templates) -> TIR verification -> TIR passes
 *     (core/tir/passes: parallel merge, buffer reuse, tensor shrink, index
 *     flattening; the module verified after them) -> backend (C or LLVM
 *     JIT)
 *
 * hgc_driver_compile wraps it in the cache (cache.c): a key, the process
 * table, then for the JIT the disk cache of object code; only on a miss
 * does the pipeline run.  Every failure on the way is a diagnostic.
 */
#include "driver_int.h"
#include "../lower/fused.h"
#include "../graph/passes/passes.h"
#include "../tir/passes/tir_passes.h"
#include "runtime/runtime.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Defaults: the JIT, every thread OpenMP offers, the disk cache on. */
void hgc_driver_opts_init(struct hgc_driver_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = HGC_DRIVER_JIT;
	o->disk_cache = true;
}

/* The backend's name, as --backend spells it. */
const char *hgc_driver_backend_name(enum hgc_driver_backend b)
{
	return b == HGC_DRIVER_C ? "c" : "jit";
}

/* The template log as text, a line per tunable op (malloc'ed). */
static char *plan_text(const struct hgc_tmpl_opts *to)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		hgc_bug("open_memstream: out of memory");
	for (size_t i = 0; i < to->log.len; i++)
		fprintf(f, "%s\n", HGC_VEC_AT(&to->log, char *, i));
	if (fclose(f))
		hgc_bug("open_memstream: out of memory");
	return text;
}

/* Graph -> Tensor IR: each op in graph order over whole-tensor views, MatMul and
   Convolution offered to the templates (the config's rules checked first). */
static struct hgc_tir_module *lower(const struct hgc_graph *g, const struct hgc_driver_opts *o,
				    char **plan, int64_t *in_place, struct hgc_diag *d)
{
	struct hgc_tmpl_opts to;
	struct hgc_lower_opts lo = { .serial = o->serial, .parallel_min = o->parallel_min,
				     .lower_tunable = hgc_tmpl_lower_tunable, .user = &to };
	struct hgc_tir_module *m = NULL;
	struct hgc_fusion fu = {0};

	hgc_tmpl_opts_init(&to);
	to.threads = o->threads > 0 ? o->threads : omp_get_max_threads();
	to.rules = o->rules;
	to.nrules = o->nrules;
	if (!hgc_fused_pass_off(o->rules, o->nrules, "fuse"))
		hgc_fusion_plan(g, &fu);
	/* members' results in place at lowering are buffer reuse too: same switch */
	fu.in_place = !hgc_fused_pass_off(o->rules, o->nrules, "buffer_reuse");
	fu.in_place_bytes = in_place;
	if (hgc_tmpl_check_rules(o->rules, o->nrules, d) == 0)
		m = hgc_fused_lower_graph(g, &lo, &to, &fu, d);
	if (m && plan)
		*plan = plan_text(&to);
	hgc_fusion_release(&fu);
	hgc_tmpl_opts_release(&to);
	return m;
}

/* A name that is neither a graph pass nor a TIR pass: one error naming both
   lists, so the user sees every switch a config may set. */
static int unknown_pass(const struct hgc_tmpl_rule *r, struct hgc_diag *d)
{
	char list[768] = "";
	size_t n = 0;

	for (int i = 0; i < HGC_PASS_COUNT; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				      hgc_pass_name((enum hgc_pass)i));
	n += (size_t)snprintf(list + n, sizeof(list) - n, "; tensor IR passes: ");
	for (int i = 0; i < HGC_TIR_PASS_COUNT && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				      hgc_tir_pass_name((enum hgc_tir_pass)i));
	return hgc_error(d, &r->loc, "unknown pass '%s' (graph passes: %s)", r->key, list);
}

/* The `pass` rules among rules[0..n): graph pass names into sw, TIR pass names
   into tp (either may be NULL: those rules are only checked).  -1 with d set
   for an unknown name or a bad value. */
int hgc_driver_pass_rules(const struct hgc_tmpl_rule *rules, int n, struct hgc_pass_switches *sw,
			  struct hgc_tir_passes *tp, struct hgc_diag *d)
{
	for (int i = 0; i < n; i++) {
		const struct hgc_tmpl_rule *r = &rules[i];
		struct hgc_pass_switches gs;
		struct hgc_tir_passes ts;

		if (strcmp(r->kind, "pass"))
			continue;
		if (hgc_tir_pass_find(r->key) != HGC_TIR_PASS_COUNT) {
			if (hgc_tir_passes_set(tp ? tp : &ts, r->key, r->value, &r->loc, d) < 0)
				return -1;
		} else if (hgc_pass_find(r->key) != HGC_PASS_COUNT) {
			if (hgc_pass_switches_set(sw ? sw : &gs, r->key, r->value, &r->loc, d) < 0)
				return -1;
		} else {
			return unknown_pass(r, d);
		}
	}
	return 0;
}

/* The graph passes on a copy of g (the caller's graph, which the reference
   interpreter runs, stays as written), switched by the `pass` rules. */
struct hgc_graph *hgc_driver_graph_passes(const struct hgc_graph *g,
					  const struct hgc_driver_opts *o, struct hgc_diag *d)
{
	struct hgc_pass_switches sw;
	struct hgc_graph *work;

	hgc_pass_switches_init(&sw);
	if (hgc_driver_pass_rules(o->rules, o->nrules, &sw, NULL, d) < 0)
		return NULL;
	work = hgc_graph_clone(g);
	if (hgc_graph_passes_run(work, &sw, d) < 0) {
		hgc_graph_free(work);
		return NULL;
	}
	return work;
}

/* The `pass` rules that name TIR passes, into p; -1 with d set for a bad value. */
static int tir_switches(const struct hgc_driver_opts *o, struct hgc_tir_passes *p,
			struct hgc_diag *d)
{
	hgc_tir_passes_init(p);
	p->threads = o->threads > 0 ? o->threads : omp_get_max_threads();
	p->amx = hgc_rt_has_amx();
	return hgc_driver_pass_rules(o->rules, o->nrules, NULL, p, d);
}

/* Append text to the malloc'ed string *plan (when plan is not NULL). */
static void plan_append(char **plan, const char *text)
{
	size_t a, b;

	if (!plan)
		return;
	a = *plan ? strlen(*plan) : 0;
	b = strlen(text);
	*plan = realloc(*plan, a + b + 1);
	if (!*plan)
		hgc_bug("out of memory");
	memcpy(*plan + a, text, b + 1);
}

/* The plan's line for a fold pass that rewrote n calls (none when n is 0). */
static void plan_folds(char **plan, const char *pass, int n, const char *what)
{
	char line[200];

	if (!n)
		return;
	snprintf(line, sizeof(line), "  %s: %d %s, no pass over C after them\n", pass, n, what);
	plan_append(plan, line);
}

/* The TIR passes on a verified module, switched by the `pass` rules; the buffer
   plan is appended to *plan.  -1 with d set. */
static int tir_passes(struct hgc_tir_module *m, const struct hgc_driver_opts *o, char **plan,
		      int64_t in_place, struct hgc_diag *d)
{
	struct hgc_tir_passes p;
	char *text;
	int rc = tir_switches(o, &p, d);

	if (rc == 0)
		rc = hgc_tir_passes_run(m, &p, d);
	if (rc == 0) {
		/* the lowering already shared these (fused members in place): without
		   reuse each would have had a buffer of its own */
		p.plan.bytes_lowered += in_place;
		text = hgc_tir_plan_text(&p.plan);
		plan_append(plan, text);
		free(text);
		if (in_place) {
			char line[160];

			snprintf(line, sizeof(line), "  in place at lowering: %lld bytes of fused "
				 "members' results took a dying input's buffer (counted above)\n",
				 (long long)in_place);
			plan_append(plan, line);
		}
		/* the members the fusion log placed at an anchor "into the call" */
		plan_folds(plan, "fold_post", p.changes[HGC_TIR_PASS_FOLD_POST],
			   "brgemm call(s) apply their bias (and ReLU) to each register tile");
		plan_folds(plan, "fold_quant", p.changes[HGC_TIR_PASS_FOLD_QUANT],
			   "int8 brgemm call(s) requantize their blocks into the 8-bit result");
	}
	hgc_tir_passes_release(&p);
	return rc;
}

/* The pipeline up to the backends: graph passes, lowering, verification, TIR passes. */
struct hgc_tir_module *hgc_driver_lower(const struct hgc_graph *g,
					const struct hgc_driver_opts *o, char **plan,
					struct hgc_diag *d)
{
	struct hgc_tir_module *m = NULL;
	struct hgc_graph *work;
	int64_t in_place = 0;

	if (plan)
		*plan = NULL;
	if ((work = hgc_driver_graph_passes(g, o, d))) {
		m = lower(work, o, plan, &in_place, d);
		hgc_graph_free(work);
	}
	if (m && hgc_tir_verify(m, d) < 0) {
		hgc_note(d, NULL, "the lowering of the graph built invalid Tensor IR (a bug)");
		hgc_tir_module_free(m);
		m = NULL;
	}
	if (m && tir_passes(m, o, plan, in_place, d) < 0) {
		hgc_tir_module_free(m);
		m = NULL;
	}
	if (!m && plan) {
		free(*plan);
		*plan = NULL;
	}
	return m;
}

/* The template log of lowering g (each fused op's anchor candidates with
   their costs, the chosen anchor, regions, merge marks), as comments. */
static void dump_anchors(FILE *out, const struct hgc_graph *g, const struct hgc_driver_opts *o)
{
	struct hgc_tir_module *m;
	struct hgc_diag tmp;
	char *plan = NULL, *line, *save = NULL;

	hgc_diag_init(&tmp);
	m = hgc_driver_lower(g, o, &plan, &tmp);
	fprintf(out, "# anchors (candidates with their cost; the members at the chosen one):\n");
	for (line = plan ? strtok_r(plan, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		fprintf(out, "#   %s\n", line);
	if (!m)
		fprintf(out, "#   (lowering failed: %s)\n", hgc_diag_text(&tmp));
	hgc_tir_module_free(m);
	free(plan);
	hgc_diag_release(&tmp);
}

/* `hgc compile --dump=fused`: the graph after the passes and the fusion plan. */
int hgc_driver_dump_fused(FILE *out, const struct hgc_graph *g,
			  const struct hgc_driver_opts *o, struct hgc_diag *d)
{
	struct hgc_fusion fu = {0};
	struct hgc_graph *work = hgc_driver_graph_passes(g, o, d);

	if (!work)
		return -1;
	fprintf(out, "# the graph after the graph passes\n");
	hgc_graph_print(out, work);
	if (hgc_fused_pass_off(o->rules, o->nrules, "fuse")) {
		fprintf(out, "# fusion plan: off (pass fuse = off)\n");
	} else {
		hgc_fusion_plan(work, &fu);
		fprintf(out, "# fusion plan: %d fused op%s\n", fu.n, fu.n == 1 ? "" : "s");
		hgc_fusion_print(out, &fu);
		if (fu.n)
			dump_anchors(out, g, o);
		hgc_fusion_release(&fu);
	}
	hgc_graph_free(work);
	return 0;
}

/* Compile a verified module with the chosen backend. */
static struct hgc_compiled *backend(const struct hgc_tir_module *m,
				    const struct hgc_driver_opts *o, struct hgc_diag *d)
{
	if (o->backend == HGC_DRIVER_C)
		return hgc_codegen_c_compile(m, NULL, d);
	return hgc_codegen_llvm_compile(m, NULL, d);
}

/* The whole pipeline without the cache. */
struct hgc_compiled *hgc_driver_build(const struct hgc_graph *g, const struct hgc_driver_opts *o,
				      char **plan, struct hgc_diag *d)
{
	struct hgc_tir_module *m = hgc_driver_lower(g, o, plan, d);
	struct hgc_compiled *c;

	if (!m)
		return NULL;
	c = backend(m, o, d);
	hgc_tir_module_free(m);
	if (!c && plan) {
		free(*plan);
		*plan = NULL;
	}
	return c;
}

/* The JIT by way of object code: compile to an object once, store it in the disk
   cache, load it into the JIT (the same path a later process takes). */
static struct hgc_compiled *build_object(const struct hgc_graph *g,
					 const struct hgc_driver_opts *o, const char *key,
					 char **plan, struct hgc_driver_info *info,
					 struct hgc_diag *d)
{
	struct hgc_tir_module *m = hgc_driver_lower(g, o, plan, d);
	struct hgc_codegen_llvm_opts lo = { 0 };
	struct hgc_compiled *c = NULL;
	char prefix[40];
	void *obj;
	size_t size;
	int nargs;
	bool init;

	if (!m)
		return NULL;
	hgc_driver_obj_prefix(key, prefix);
	lo.prefix = prefix;
	init = m->init != NULL;
	nargs = m->entry->nparams;
	if (hgc_codegen_llvm_object(m, &lo, &obj, &size, d) == 0) {
		hgc_driver_disk_store(o, key, obj, size, *plan, nargs, init, info);
		c = hgc_codegen_llvm_load_object(obj, size, prefix, nargs, init, d);
		free(obj);
	}
	hgc_tir_module_free(m);
	return c;
}

/* A compiled graph must take the graph's inputs then outputs. */
static int check_args(const struct hgc_graph *g, const struct hgc_compiled *c,
		      struct hgc_diag *d)
{
	size_t n = g->inputs.len + g->outputs.len;

	if ((size_t)c->nargs != n)
		return hgc_error(d, NULL, "the compiled graph takes %d arguments, not the %zu "
				 "inputs and outputs of the graph (a bug)", c->nargs, n);
	return 0;
}

/* Compile on a miss: through the disk cache for the JIT when it is on. */
static struct hgc_compiled *compile_miss(const struct hgc_graph *g,
					 const struct hgc_driver_opts *o, const char *key,
					 char **plan, struct hgc_driver_info *info,
					 struct hgc_diag *d)
{
	int nargs = (int)(g->inputs.len + g->outputs.len);
	struct hgc_compiled *c = NULL;

	if (hgc_driver_disk_on(o)) {
		c = hgc_driver_disk_load(o, key, nargs, plan, info);
		if (c) {
			info->source = HGC_DRIVER_DISK;
			return c;
		}
		c = build_object(g, o, key, plan, info, d);
	} else {
		c = hgc_driver_build(g, o, plan, d);
	}
	if (!c) {
		free(*plan);
		*plan = NULL;
	}
	return c;
}

/*
 * The init function packs constant inputs into module buffers once, and the
 * code is shared by every graph with the same key: two specs whose weights
 * differ share it too.  So a new holder (a cache hit) must init again, and
 * so must a run whose constant inputs are other buffers than those init
 * packed.  Constants are trusted not to change inside the same buffers, as
 * oneDNN's constant cache does.
 */
static void forget_constants(struct hgc_driver_graph *h)
{
	h->code->inited = false;
	free(h->init_in);
	h->init_in = NULL;
}

/* Which inputs are constants (the key covers constness, so once per entry). */
static void mark_constants(struct hgc_driver_graph *h, const struct hgc_graph *g)
{
	h->is_const = hgc_xcalloc((size_t)h->nin + 1, sizeof(bool));
	for (int i = 0; i < h->nin; i++)
		h->is_const[i] = HGC_GRAPH_INPUT(g, i)->prop == HGC_PROP_CONSTANT;
}

/* Run init again when the constant inputs are not the buffers it packed. */
static void check_constants(struct hgc_driver_graph *h, const void *const *in)
{
	if (!h->code->init)
		return;
	if (h->init_in && h->code->inited)
		for (int i = 0; i < h->nin; i++)
			if (h->is_const && h->is_const[i] && h->init_in[i] != in[i])
				h->code->inited = false;
	if (h->code->inited)
		return;
	if (!h->init_in)
		h->init_in = hgc_xcalloc((size_t)h->nin + 1, sizeof(*h->init_in));
	memcpy(h->init_in, in, (size_t)h->nin * sizeof(*in));
}

/* The cached or freshly compiled form of g (see driver.h). */
struct hgc_driver_graph *hgc_driver_compile(const struct hgc_graph *g,
					    const struct hgc_driver_opts *o,
					    struct hgc_driver_info *info, struct hgc_diag *d)
{
	struct hgc_driver_info local;
	struct hgc_driver_graph *h;
	struct hgc_compiled *c;
	double t0 = hgc_now();
	char key[33], *plan = NULL;

	info = info ? info : &local;
	memset(info, 0, sizeof(*info));
	if (hgc_driver_key(g, o, key, d) < 0)
		return NULL;
	if ((h = hgc_driver_cache_find(key))) {
		info->source = HGC_DRIVER_MEMORY;
		forget_constants(h);
	} else {
		if (!(c = compile_miss(g, o, key, &plan, info, d)))
			return NULL;
		if (check_args(g, c, d) < 0) {
			hgc_codegen_free(c);
			free(plan);
			return NULL;
		}
		h = hgc_driver_cache_add(key, c, o->backend, (int)g->inputs.len,
					 (int)g->outputs.len, plan, hgc_now() - t0);
	}
	if (!h->is_const)
		mark_constants(h, g);
	info->seconds = hgc_now() - t0;
	return h;
}

/* The argument array: inputs, then outputs. */
int hgc_driver_run(struct hgc_driver_graph *h, const void *const *in, void *const *out,
		   struct hgc_diag *d)
{
	void *small[64], **args = small;
	int n = h->nin + h->nout;

	if (n != h->code->nargs)
		return hgc_error(d, NULL, "the compiled graph takes %d arguments, not %d",
				 h->code->nargs, n);
	if (n > 64)
		args = hgc_xcalloc((size_t)n, sizeof(*args));
	for (int i = 0; i < h->nin; i++)
		args[i] = (void *)in[i];
	for (int i = 0; i < h->nout; i++)
		args[h->nin + i] = out[i];
	check_constants(h, in);
	hgc_codegen_run(h->code, args);
	if (args != small)
		free(args);
	return 0;
}
