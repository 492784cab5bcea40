/*
 * tmpl_lower.c: templates in the lowering.  hgc_tmpl_lower_tunable is the
 * hgc_lower_opts.lower_tunable hook: for each MatMul and Convolution it
 * takes the template a config's `use T for OP;` names, or else the first
 * registered template that applies (its operands bind and some parameter
 * values satisfy its constraints), pins parameters from `pin T.P = V;`,
 * chooses the rest by default, and instantiates it.  When none applies the
 * op falls back to the naive loops, the reason logged.
 */
#include "lower_int.h"
#include "tmpl.h"

#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Empty options: templates on, the machine's threads, no rules. */
void hgc_tmpl_opts_init(struct hgc_tmpl_opts *o)
{
	memset(o, 0, sizeof(*o));
	hgc_vec_init(&o->log, sizeof(char *));
}

/* Free the log. */
void hgc_tmpl_opts_release(struct hgc_tmpl_opts *o)
{
	size_t i;

	for (i = 0; i < o->log.len; i++)
		free(HGC_VEC_AT(&o->log, char *, i));
	hgc_vec_release(&o->log);
}

static void logf_(struct hgc_tmpl_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Add a line to the log. */
static void logf_(struct hgc_tmpl_opts *o, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	*(char **)hgc_vec_push(&o->log) = strdup(buf);
}

/* The op kind a rule's key names (case-insensitive), or HGC_OP_COUNT. */
static enum hgc_op_kind op_named(const char *key)
{
	int i;

	for (i = 0; i < HGC_OP_COUNT; i++)
		if (!strcasecmp(hgc_op_table[i].name, key))
			return (enum hgc_op_kind)i;
	return HGC_OP_COUNT;
}

/* Parse a pin's integer value: 0, or -1 when s is no integer, or ERANGE when it is one
 * that does not fit in int64 (reported apart: it is an integer, just too big). */
static int int_parse(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	if (end == s || *end)
		return -1;
	return errno == ERANGE ? ERANGE : 0;
}

/* True when s is an integer that fits in int64 (into v). */
static bool int_value(const char *s, int64_t *v)
{
	return int_parse(s, v) == 0;
}

/* Check one rule; -1 with d set. */
static int check_rule(const struct hgc_tmpl_rule *r, struct hgc_diag *d)
{
	const struct hgc_tmpl *t;
	const char *dot;
	char name[128];
	int64_t v;
	int sym, rc;

	if (!strcmp(r->kind, "use")) {
		if (!(t = hgc_tmpl_find(r->value)))
			return hgc_error(d, &r->loc, "unknown template '%s'", r->value);
		if (op_named(r->key) != t->op ||
		    (t->op == HGC_TMPL_REGION && strcasecmp(r->key, "Region")))
			return hgc_error(d, &r->loc, "template %s serves %s, not '%s'", t->name,
					 hgc_tmpl_op_name(t->op), r->key);
		return 0;
	}
	if (strcmp(r->kind, "pin"))
		return 0;
	dot = strchr(r->key, '.');
	if (!dot || dot - r->key >= (long)sizeof(name))
		return hgc_error(d, &r->loc, "a pin is TEMPLATE.PARAM, not '%s'", r->key);
	snprintf(name, sizeof(name), "%.*s", (int)(dot - r->key), r->key);
	if (!(t = hgc_tmpl_find(name)))
		return hgc_error(d, &r->loc, "unknown template '%s'", name);
	sym = hgc_tmpl_sym(t, dot + 1);
	if (sym < 0 || t->syms[sym].kind != HGC_TMPL_PARAM)
		return hgc_error(d, &r->loc, "'%s' is not a parameter of template %s", dot + 1,
				 t->name);
	if ((rc = int_parse(r->value, &v)) == ERANGE)
		return hgc_error(d, &r->loc,
				 "pin %s = %s: the value %s is out of range (at %s %" PRId64 ")",
				 r->key, r->value, r->value, v < 0 ? "least" : "most", v);
	if (rc)
		return hgc_error(d, &r->loc, "pin %s = %s: the value must be an integer", r->key,
				 r->value);
	return 0;
}

/* Check every rule. */
int hgc_tmpl_check_rules(const struct hgc_tmpl_rule *r, int n, struct hgc_diag *d)
{
	int i, rc = 0;

	for (i = 0; i < n; i++)
		rc |= check_rule(&r[i], d);
	return rc ? -1 : 0;
}

/* The pins of template t (checked rules), into pins; their count. */
int hgc_tmpl_pins_of(const struct hgc_tmpl_opts *o, const struct hgc_tmpl *t,
		   struct hgc_tmpl_pin *pins, int cap)
{
	const struct hgc_tmpl_rule *r;
	size_t len = strlen(t->name);
	int i, n = 0;

	for (i = 0; i < o->nrules && n < cap; i++) {
		r = &o->rules[i];
		if (strcmp(r->kind, "pin") || strncmp(r->key, t->name, len) || r->key[len] != '.')
			continue;
		pins[n].sym = hgc_tmpl_sym(t, r->key + len + 1);
		pins[n].rule = r;
		if (pins[n].sym >= 0 && int_value(r->value, &pins[n].value))
			n++;
	}
	return n;
}

/* The `use` rule for op kind k, or NULL. */
static const struct hgc_tmpl_rule *use_of(const struct hgc_tmpl_opts *o, enum hgc_op_kind k)
{
	int i;

	for (i = 0; i < o->nrules; i++)
		if (!strcmp(o->rules[i].kind, "use") && op_named(o->rules[i].key) == k)
			return &o->rules[i];
	return NULL;
}

/* The template a `use` rule names for op, or NULL. */
const struct hgc_tmpl *hgc_tmpl_used(const struct hgc_tmpl_opts *o, const struct hgc_op *op)
{
	const struct hgc_tmpl_rule *r = use_of(o, op->kind);

	return r ? hgc_tmpl_find(r->value) : NULL;
}

/* Whether the views are the op's whole tensors (templates bind whole tensors). */
static bool whole(const struct hgc_op *op, struct hgc_lower_view *const *in,
		  const struct hgc_lower_view *out)
{
	int i;

	for (i = 0; i <= op->nin; i++) {
		const struct hgc_lower_view *v = i < op->nin ? in[i] : out;
		const struct hgc_tensor *t = i < op->nin ? op->in[i] : op->out[0];

		if (v->ndims != t->ndims ||
		    memcmp(v->dims, t->dims, (size_t)t->ndims * sizeof(*t->dims)))
			return false;
	}
	return true;
}

/* "MatMul y (file:line)" for the log. */
static const char *op_text(const struct hgc_op *op, char *buf, size_t n)
{
	const struct hgc_tensor *t = op->out[0];

	if (t->name)
		snprintf(buf, n, "%s %s", hgc_op_table[op->kind].name, t->name);
	else
		snprintf(buf, n, "%s %%%d", hgc_op_table[op->kind].name, t->id);
	return buf;
}

/* Log the template, parameters and write-back anchor (wb, or -1) an op took. */
static void log_instance(struct hgc_tmpl_opts *o, const struct hgc_op *op,
			 const struct hgc_tmpl_env *env, int wb)
{
	const struct hgc_tmpl *t = env->t;
	char buf[128], params[512] = "";
	FILE *f = fmemopen(params, sizeof(params), "w");

	if (f) {
		hgc_tmpl_print_params(f, env);
		fclose(f);
	}
	logf_(o, "%s: template %s (%s), write-back %s%s", op_text(op, buf, sizeof(buf)), t->name,
	      params, wb >= 0 ? "at anchor " : "after the nest", wb >= 0 ? t->anchors[wb].name : "");
}

/* Why t has no parameter values for an op: the constraint the choice names in its
   message ("... no parameter values satisfy C for this OP"), else in general. */
static void no_values(const struct hgc_tmpl *t, const char *msg, char *why, size_t nwhy)
{
	const char *c = msg ? strstr(msg, "satisfy ") : NULL;
	const char *end = c ? strstr(c, " for this") : NULL;

	if (c && end)
		snprintf(why, nwhy, "%s: no parameter values %.*s", t->name, (int)(end - c), c);
	else
		snprintf(why, nwhy, "%s: no parameter values satisfy its constraints", t->name);
}

/* Bind template t to op and choose its parameters: 1 (bind, env set), 0 does not
   apply (why set), -1 a pin fails (d set).  Shared by the lowering and by
   hgc_tmpl_why_naive, so that both give the same reason. */
static int applies(struct hgc_tmpl_opts *o, const struct hgc_tmpl *t, const struct hgc_op *op,
		   struct hgc_tmpl_bind *bind, struct hgc_tmpl_env *env, char *why, size_t nwhy,
		   struct hgc_diag *d)
{
	struct hgc_tmpl_pin pins[32];
	struct hgc_diag tmp;
	int npins, threads = o->threads > 0 ? o->threads : omp_get_max_threads(), rc;

	if (hgc_tmpl_bind(t, op, threads, bind) < 0)
		return snprintf(why, nwhy, "%s: %s", t->name, bind->why), 0;
	npins = hgc_tmpl_pins_of(o, t, pins, 32);
	hgc_diag_init(&tmp);
	rc = hgc_tmpl_choose(bind, pins, npins, env, npins ? d : &tmp);
	if (rc < 0 && !npins)
		no_values(t, hgc_diag_text(&tmp), why, nwhy);
	hgc_diag_release(&tmp);
	if (rc < 0)
		return npins ? -1 : 0;
	return 1;
}

/* Why no template takes op (the reason hgc_tmpl_lower_tunable logs with "naive loops"),
   into why; for fused ops, whose choice fails the same way (core/lower/fused.c). */
void hgc_tmpl_why_naive(struct hgc_tmpl_opts *o, const struct hgc_op *op, char *why, size_t n)
{
	const struct hgc_tmpl_rule *use = use_of(o, op->kind);
	struct hgc_tmpl_rank rank[HGC_TMPL_RANK_MAX];
	struct hgc_tmpl_bind bind;
	struct hgc_tmpl_env env;
	struct hgc_diag tmp;
	int i, k;

	snprintf(why, n, "no template serves it");
	hgc_diag_init(&tmp);
	if (use && hgc_tmpl_find(use->value)) {
		applies(o, hgc_tmpl_find(use->value), op, &bind, &env, why, n, &tmp);
	} else if (!use) {
		k = hgc_tmpl_rank(o, op, o->threads > 0 ? o->threads : omp_get_max_threads(), rank,
				  HGC_TMPL_RANK_MAX);
		for (i = 0; i < k; i++)
			if (applies(o, rank[i].t, op, &bind, &env, why, n, &tmp))
				break;
	}
	hgc_diag_release(&tmp);
}

/*
 * When a config's `use T for OP` rule sent op to the naive loops (T does not
 * serve it: why), a log line "warning: use T for OP: ..." that the tools
 * print at the rule (tools/backend.c: the plan is cached with the graph, so
 * the rule's place comes from the config that compiles it).  The op still
 * runs and matches the interpreter, but orders of magnitude slower than any
 * template (a strided conv under `use conv_1x1_rows` ran 130x slower), and
 * a user who pinned T expects T.
 */
void hgc_tmpl_warn_use(struct hgc_tmpl_opts *o, const struct hgc_op *op, const char *why)
{
	const struct hgc_tmpl_rule *use = use_of(o, op->kind);
	char buf[128];

	if (!use)
		return;
	logf_(o, HGC_TMPL_USE_WARNING "it does not serve %s (%s); that op runs naive loops",
	      use->value, use->key, op_text(op, buf, sizeof(buf)), why);
}

/* Try template t on op: 1 instantiated, 0 does not apply (why set), -1 error. */
static int try_template(struct hgc_lower_ctx *cx, struct hgc_tmpl_opts *o,
			const struct hgc_tmpl *t, const struct hgc_op *op,
			struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			struct hgc_lower_view *out, char *why, size_t nwhy, struct hgc_diag *d)
{
	struct hgc_tmpl_bind bind;
	struct hgc_tmpl_env env;
	struct hgc_tmpl_inst inst;
	int rc;

	if ((rc = applies(o, t, op, &bind, &env, why, nwhy, d)) <= 0)
		return rc;
	if (hgc_tmpl_instantiate(cx, block, &bind, &env, in, out, &inst, d) < 0)
		return -1;
	log_instance(o, op, &env, inst.writeback);
	hgc_tmpl_inst_release(&inst);
	return 1;
}

/* The lowering hook. */
int hgc_tmpl_lower_tunable(struct hgc_lower_ctx *cx, const struct hgc_op *op,
			   struct hgc_tir_stmt *block, struct hgc_lower_view *const *in,
			   struct hgc_lower_view *out, struct hgc_diag *d)
{
	struct hgc_tmpl_opts *o = cx->opts->user;
	const struct hgc_tmpl_rule *use;
	struct hgc_tmpl_rank rank[HGC_TMPL_RANK_MAX];
	char why[256] = "no template serves it", buf[128];
	int i, n, rc;

	if (!o || o->off)
		return 0;
	use = use_of(o, op->kind);
	if (!whole(op, in, out)) {
		snprintf(why, sizeof(why), "its views are slices (templates take whole tensors)");
	} else if (use) {
		if (check_rule(use, d) < 0)
			return -1;
		if ((rc = try_template(cx, o, hgc_tmpl_find(use->value), op, block, in, out, why,
				       sizeof(why), d)))
			return rc;
	} else {
		/* cheapest estimate first (hgc_tmpl_rank, core/lower/tmpl.c) */
		n = hgc_tmpl_rank(o, op, o->threads > 0 ? o->threads : omp_get_max_threads(), rank,
				  HGC_TMPL_RANK_MAX);
		for (i = 0; i < n; i++)
			if ((rc = try_template(cx, o, rank[i].t, op, block, in, out, why,
					       sizeof(why), d)))
				return rc;
	}
	logf_(o, "%s: naive loops: %s", op_text(op, buf, sizeof(buf)), why);
	hgc_tmpl_warn_use(o, op, why);
	return 0;
}

/* Lower a whole graph with templates. */
struct hgc_tir_module *hgc_tmpl_lower_graph(const struct hgc_graph *g, struct hgc_tmpl_opts *o,
					    struct hgc_diag *d)
{
	struct hgc_lower_opts lo;

	if (hgc_tmpl_check_rules(o->rules, o->nrules, d) < 0)
		return NULL;
	memset(&lo, 0, sizeof(lo));
	lo.lower_tunable = hgc_tmpl_lower_tunable;
	lo.user = o;
	return hgc_lower_graph(g, &lo, d);
}
