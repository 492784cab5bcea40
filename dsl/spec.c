/*
 * spec.c: spec blocks.  Each spec builds its own Graph IR through the graph
 * API (inputs, ops checked and shape-inferred by hgc_graph_finish_op,
 * outputs), with one generator per input, golden values, tolerances and
 * bench settings.  Every error is reported; a name whose definition failed
 * is poisoned so that its uses do not cascade.  A negative spec (`expect
 * error`) builds its graph into a scratch diagnostic: the text becomes
 * build_error instead of an error of the program.
 */
#include <string.h>

#include "dsl/dsl_int.h"

/* Tensors above this many elements are surely a typo (and would overflow). */
#define MAX_ELEMS (INT64_C(1) << 40)
/* More arguments than this in one op call are surely a mistake. */
#define MAX_ARGS 1024

static const char *const op_names[] = {
#define X(e, n, c, lo, hi, f) n,
	HGC_OP_LIST(X)
#undef X
};

static const char *const expect_keys[] = {"rtol", "atol"};
static const char *const bench_keys[] = {"iters", "warmup"};

/* A name bound in the spec: its tensor, or NULL when its definition failed. */
struct sym {
	const struct hgc_ast *def;	/* the defining statement (tok = the name) */
	struct hgc_tensor *t;
};

/* The state of building one spec. */
struct build {
	struct hgc_load *ld;
	struct hgc_spec *s;
	struct hgc_graph *g;
	struct hgc_diag *main_d;	/* the program's diag (ld->d may be a scratch one) */
	struct hgc_diag neg;		/* a negative spec's build errors */
	bool negative;
	struct hgc_vec syms;		/* struct sym */
	struct hgc_names symtab;	/* name -> index in syms */
	struct hgc_vec gens;		/* struct hgc_gen, in graph input order */
	struct hgc_vec outs;		/* const struct hgc_ast *: the NAMEs of output statements */
	struct hgc_names outnames;	/* output name -> 1 */
	struct hgc_vec golden;		/* const struct hgc_ast *: GOLDEN statements */
	const struct hgc_ast *seen_config, *seen_error;
	unsigned seen_keys;		/* expect and bench keys given: bits of KEY_* */
};

/* Keys of expect and bench blocks, each allowed once per spec. */
enum { KEY_RTOL = 1, KEY_ATOL = 2, KEY_ITERS = 4, KEY_WARMUP = 8 };

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The symbol called like tok, or NULL. */
static struct sym *find(struct build *b, const struct hgc_tok *tok)
{
	int i = hgc_dsl_names_get(&b->symtab, tok->z, tok->n);

	return i < 0 ? NULL : &HGC_VEC_AT(&b->syms, struct sym, i);
}

/* Bind def's name to t (NULL: poisoned); a second definition is an error. */
static void bind(struct build *b, const struct hgc_ast *def, struct hgc_tensor *t)
{
	struct sym *old = find(b, &def->tok), *s;

	if (old) {
		hgc_dsl_error(b->ld, &def->loc, "redefinition of '%.*s'", def->tok.n, def->tok.z);
		hgc_dsl_note(b->ld, &old->def->loc, "previous definition of '%.*s' is here",
			     def->tok.n, def->tok.z);
		return;
	}
	hgc_dsl_names_put(&b->symtab, def->tok.z, def->tok.n, (int)b->syms.len);
	s = hgc_vec_push(&b->syms);
	s->def = def;
	s->t = t;
}

/* A dtype name; UNDEF after reporting an unknown one. */
static enum hgc_dtype dtype(struct build *b, const struct hgc_ast *at)
{
	enum hgc_dtype dt = hgc_dtype_parse(at->tok.z, (size_t)at->tok.n);

	if (dt == HGC_DT_UNDEF)
		hgc_dsl_error(b->ld, &at->loc,
			      "unknown dtype '%.*s' (expected f32, bf16, s32, s8, u8 or boolean)",
			      at->tok.n, at->tok.z);
	return dt;
}

/* The dims of a declaration: positive, at most HGC_MAX_DIMS, not absurdly many elements. */
static int dims(struct build *b, const struct hgc_ast *st, int64_t *out, int *nd)
{
	const struct hgc_ast *v;
	int64_t n = 1;
	int bad = 0;

	*nd = 0;
	for (v = st->a->a; v; v = v->next) {
		if (*nd == HGC_MAX_DIMS)
			return hgc_dsl_error(b->ld, &v->loc, "'%.*s' has more than %d dimensions",
					     st->tok.n, st->tok.z, HGC_MAX_DIMS);
		if (hgc_dsl_int(b->ld, v, "a dimension", &out[*nd]) < 0) {
			bad = 1;
			out[*nd] = 1;
		} else if (out[*nd] <= 0) {
			bad = hgc_dsl_error(b->ld, &v->loc, "a dimension of '%.*s' must be positive, not %lld",
					    st->tok.n, st->tok.z, (long long)out[*nd]);
			out[*nd] = 1;
		}
		n = n > MAX_ELEMS / out[*nd] ? MAX_ELEMS + 1 : n * out[*nd];
		++*nd;
	}
	if (!bad && n > MAX_ELEMS)
		return hgc_dsl_error(b->ld, &st->a->loc, "'%.*s' has too many elements", st->tok.n,
				     st->tok.z);
	return bad ? -1 : 0;
}

/* Element count of dims[0..nd). */
static int64_t count(int nd, const int64_t *d)
{
	int64_t n = 1;

	while (nd-- > 0)
		n *= d[nd];
	return n;
}

/* The default seed of a tensor of this spec. */
static uint64_t seed_of(struct build *b, const struct hgc_tok *name, const char *suffix)
{
	char *t = hgc_arena_printf(&b->ld->p->arena, "%.*s%s", name->n, name->z, suffix);

	return hgc_dsl_seed(b->s->name, t);
}

/* `input|const NAME : DTYPE[DIMS] [= GEN];` a graph input and its generator. */
static void input(struct build *b, const struct hgc_ast *st)
{
	int64_t d[HGC_MAX_DIMS];
	int nd, bad;
	enum hgc_dtype dt = dtype(b, st->a);
	struct hgc_gen gen;
	struct hgc_tensor *t = NULL;

	bad = dims(b, st, d, &nd) < 0 || dt == HGC_DT_UNDEF;
	if (st->b)
		bad |= hgc_dsl_gen(b->ld, st->b, dt, bad ? -1 : count(nd, d),
				   seed_of(b, &st->tok, ""), &gen) < 0;
	else
		hgc_dsl_gen_default(dt, seed_of(b, &st->tok, ""), &st->loc, &gen);
	if (!bad) {
		t = hgc_graph_add_input(b->g, hgc_dsl_tok_str(&b->ld->p->arena, &st->tok), dt, nd, d,
					st->kind == HGC_AST_CONST ? HGC_PROP_CONSTANT
								  : HGC_PROP_VARIABLE,
					&st->loc);
		*(struct hgc_gen *)hgc_vec_push(&b->gens) = gen;
	}
	bind(b, st, t);
}

/* A list attribute: all integers (INTS) or numbers (FLOATS). */
static int list_attr(struct build *b, const struct hgc_ast *named, struct hgc_attr *a)
{
	const struct hgc_ast *v;
	int64_t *ints;
	double *floats;
	int n = 0, i, bad = 0;

	a->type = HGC_ATTR_INTS;
	for (v = named->a->a; v; v = v->next, n++) {
		if (v->kind == HGC_AST_FLOAT)
			a->type = HGC_ATTR_FLOATS;
		else if (v->kind != HGC_AST_INT)
			return hgc_dsl_error(b->ld, &v->loc, "attribute '%.*s': lists hold only numbers",
					     named->tok.n, named->tok.z);
	}
	a->n = n;
	ints = hgc_arena_calloc(&b->ld->p->arena, (size_t)n, sizeof(*ints));
	floats = hgc_arena_calloc(&b->ld->p->arena, (size_t)n, sizeof(*floats));
	for (i = 0, v = named->a->a; v; v = v->next, i++) {
		if (a->type == HGC_ATTR_INTS)
			bad |= hgc_dsl_int(b->ld, v, "a list value", &ints[i]);
		else
			bad |= hgc_dsl_num(b->ld, v, "a list value", &floats[i]);
	}
	if (a->type == HGC_ATTR_INTS)
		a->v.ints = ints;
	else
		a->v.floats = floats;
	return bad ? -1 : 0;
}

/* The attribute `name = value`, typed by the value's form. */
static int attr(struct build *b, const struct hgc_ast *named, struct hgc_attr *a)
{
	const struct hgc_ast *v = named->a;

	memset(a, 0, sizeof(*a));
	a->name = hgc_dsl_tok_str(&b->ld->p->arena, &named->tok);
	a->loc = named->loc;
	switch (v->kind) {
	case HGC_AST_INT:
		a->type = HGC_ATTR_INT;
		return hgc_dsl_int(b->ld, v, "the value", &a->v.i);
	case HGC_AST_FLOAT:
		a->type = HGC_ATTR_FLOAT;
		return hgc_dsl_num(b->ld, v, "the value", &a->v.f);
	case HGC_AST_BOOL:
		a->type = HGC_ATTR_BOOL;
		a->v.i = hgc_dsl_tok_is(&v->tok, "true");
		return 0;
	case HGC_AST_STRING:
		a->type = HGC_ATTR_STRING;
		a->v.s = hgc_dsl_unquote(&b->ld->p->arena, &v->tok);
		return 0;
	case HGC_AST_LIST:
		return list_attr(b, named, a);
	default:
		return hgc_dsl_error(b->ld, &v->loc,
				     "attribute '%.*s' has a bare name as its value; strings need quotes",
				     named->tok.n, named->tok.z);
	}
}

/* An op's arguments: operands (defined tensors) and attributes (each once). */
static int op_args(struct build *b, const struct hgc_ast *call, struct hgc_tensor **in,
		   struct hgc_attr *attrs, int *nin, int *nattr)
{
	const struct hgc_ast *arg;
	struct hgc_names names;
	struct sym *s;
	int bad = 0;

	*nin = *nattr = 0;
	hgc_dsl_names_init(&names);
	for (arg = call->a; arg; arg = arg->next) {
		if (arg->kind == HGC_AST_NAMED) {
			if (hgc_dsl_names_get(&names, arg->tok.z, arg->tok.n) >= 0) {
				bad = hgc_dsl_error(b->ld, &arg->loc, "duplicate attribute '%.*s'",
						    arg->tok.n, arg->tok.z);
				continue;
			}
			hgc_dsl_names_put(&names, arg->tok.z, arg->tok.n, 1);
			bad |= attr(b, arg, &attrs[(*nattr)++]);
		} else if (arg->kind != HGC_AST_NAME) {
			bad = hgc_dsl_error(b->ld, &arg->loc, "an operand must be a tensor name");
		} else if (!(s = find(b, &arg->tok))) {
			bad = hgc_dsl_error(b->ld, &arg->loc, "undefined name '%.*s'", arg->tok.n,
					    arg->tok.z);
		} else if (!s->t) {
			bad = -1;	/* poisoned: its error was reported already */
		} else {
			in[(*nin)++] = s->t;
		}
	}
	hgc_dsl_names_release(&names);
	return bad ? -1 : 0;
}

/* The number of arguments of a call. */
static int nargs(const struct hgc_ast *call)
{
	const struct hgc_ast *a;
	int n = 0;

	for (a = call->a; a; a = a->next)
		n++;
	return n;
}

/* `NAME [: DTYPE] = Kind(operands, attr = value, ...);` */
static void op(struct build *b, const struct hgc_ast *st)
{
	const struct hgc_ast *call = st->b;
	enum hgc_op_kind kind = hgc_op_kind_parse(call->tok.z, (size_t)call->tok.n);
	enum hgc_dtype out_dt = st->a ? dtype(b, st->a) : HGC_DT_UNDEF;
	int n = nargs(call), nin, nattr, i, bad = 0;
	struct hgc_tensor **in;
	struct hgc_attr *attrs;
	struct hgc_op *o;

	if (n > MAX_ARGS) {
		hgc_dsl_error(b->ld, &call->loc, "%d arguments; at most %d are allowed", n, MAX_ARGS);
		bind(b, st, NULL);
		return;
	}
	in = hgc_arena_calloc(&b->ld->p->arena, (size_t)n + 1, sizeof(*in));
	attrs = hgc_arena_calloc(&b->ld->p->arena, (size_t)n + 1, sizeof(*attrs));
	if (kind == HGC_OP_COUNT)
		bad = hgc_dsl_unknown(b->ld, &call->loc, "op", call->tok.z, (size_t)call->tok.n,
				      op_names, COUNT(op_names));
	bad |= st->a && out_dt == HGC_DT_UNDEF;
	bad |= op_args(b, call, in, attrs, &nin, &nattr);
	if (bad) {
		bind(b, st, NULL);
		return;
	}
	o = hgc_graph_add_op(b->g, kind, nin, in, out_dt, &call->loc);
	for (i = 0; i < nattr; i++)
		hgc_op_set_attr(b->g, o, &attrs[i]);
	hgc_dsl_use_source(b->ld, st->loc.file);
	if (hgc_graph_finish_op(b->g, o, b->ld->d) < 0) {
		bind(b, st, NULL);
		return;
	}
	o->out[0]->name = hgc_arena_strndup(&b->g->arena, st->tok.z, (size_t)st->tok.n);
	o->out[0]->loc = st->loc;
	bind(b, st, o->out[0]);
}

/* The graph's outputs, in the order of the output statements. */
static void outputs(struct build *b)
{
	const struct hgc_ast *n;
	struct sym *s;
	size_t i;

	for (i = 0; i < b->outs.len; i++) {
		n = HGC_VEC_AT(&b->outs, const struct hgc_ast *, i);
		if (hgc_dsl_names_get(&b->outnames, n->tok.z, n->tok.n) >= 0)
			hgc_dsl_error(b->ld, &n->loc, "duplicate output '%.*s'", n->tok.n, n->tok.z);
		else if (!(s = find(b, &n->tok)))
			hgc_dsl_error(b->ld, &n->loc, "output '%.*s' is not defined", n->tok.n,
				      n->tok.z);
		else if (s->t)
			hgc_graph_add_output(b->g, s->t);
		hgc_dsl_names_put(&b->outnames, n->tok.z, n->tok.n, 1);
	}
}

/* Report a non-negative number setting (`rtol = R;`); -1 when bad. */
static int non_negative(struct build *b, const struct hgc_ast *kv, double *out)
{
	char what[48];

	snprintf(what, sizeof(what), "'%.*s'", kv->tok.n, kv->tok.z);
	if (hgc_dsl_num(b->ld, kv->a, what, out) < 0)
		return -1;
	if (*out < 0)
		return hgc_dsl_error(b->ld, &kv->a->loc, "%s must not be negative", what);
	return 0;
}

/* Whether key was given before in this spec (reported as a duplicate); marks it given. */
static bool duplicate_key(struct build *b, const struct hgc_ast *kv, unsigned key)
{
	if (!(b->seen_keys & key)) {
		b->seen_keys |= key;
		return false;
	}
	hgc_dsl_error(b->ld, &kv->loc, "duplicate key '%.*s'", kv->tok.n, kv->tok.z);
	return true;
}

/* `expect { rtol = R; atol = A; }` */
static void expect(struct build *b, const struct hgc_ast *st)
{
	const struct hgc_ast *kv;
	bool rtol;
	double v;

	for (kv = st->a; kv; kv = kv->next) {
		rtol = hgc_dsl_tok_is(&kv->tok, "rtol");
		if (!rtol && !hgc_dsl_tok_is(&kv->tok, "atol"))
			hgc_dsl_unknown(b->ld, &kv->loc, "expect key", kv->tok.z, (size_t)kv->tok.n,
					expect_keys, COUNT(expect_keys));
		else if (duplicate_key(b, kv, rtol ? KEY_RTOL : KEY_ATOL) || non_negative(b, kv, &v))
			continue;
		else if (rtol)
			b->s->rtol = v, b->s->has_tol = true;
		else
			b->s->atol = v, b->s->has_tol = true;
	}
}

/* `bench { iters = N; warmup = N; }`: iters at least 1, warmup at least 0. */
static void bench(struct build *b, const struct hgc_ast *st)
{
	const struct hgc_ast *kv;
	bool iters;
	int64_t n;

	for (kv = st->a; kv; kv = kv->next) {
		iters = hgc_dsl_tok_is(&kv->tok, "iters");
		if (!iters && !hgc_dsl_tok_is(&kv->tok, "warmup")) {
			hgc_dsl_unknown(b->ld, &kv->loc, "bench key", kv->tok.z, (size_t)kv->tok.n,
					bench_keys, COUNT(bench_keys));
		} else if (duplicate_key(b, kv, iters ? KEY_ITERS : KEY_WARMUP)) {
			continue;
		} else if (hgc_dsl_int(b->ld, kv->a, iters ? "'iters'" : "'warmup'", &n) < 0) {
			continue;
		} else if (n < !!iters || n > 1000000000) {
			hgc_dsl_error(b->ld, &kv->a->loc, "'%s' must be between %d and 1000000000",
				      iters ? "iters" : "warmup", iters);
		} else if (iters) {
			b->s->iters = (int)n;
		} else {
			b->s->warmup = (int)n;
		}
	}
}

/* `expect NAME = GEN;` golden values for an output, checked once outputs are known. */
static void golden(struct build *b, const struct hgc_ast *st, struct hgc_golden *out)
{
	struct sym *s = find(b, &st->tok);

	if (hgc_dsl_names_get(&b->outnames, st->tok.z, st->tok.n) < 0) {
		hgc_dsl_error(b->ld, &st->loc, "'%.*s' is not an output of spec '%s'", st->tok.n,
			      st->tok.z, b->s->name);
		return;
	}
	if (!s || !s->t)
		return;	/* reported already */
	out->tensor = s->t;
	if (hgc_dsl_gen(b->ld, st->a, s->t->dtype, count(s->t->ndims, s->t->dims),
			seed_of(b, &st->tok, ".expect"), &out->gen) < 0)
		out->tensor = NULL;
}

/* Every golden statement, each output at most once. */
static void goldens(struct build *b)
{
	const struct hgc_ast *st;
	struct hgc_golden *g;
	struct hgc_names seen;
	size_t i;

	hgc_dsl_names_init(&seen);
	b->s->golden = hgc_arena_calloc(&b->ld->p->arena, b->golden.len, sizeof(*g));
	for (i = 0; i < b->golden.len; i++) {
		st = HGC_VEC_AT(&b->golden, const struct hgc_ast *, i);
		if (hgc_dsl_names_get(&seen, st->tok.z, st->tok.n) >= 0) {
			hgc_dsl_error(b->ld, &st->loc, "duplicate golden values for '%.*s'", st->tok.n,
				      st->tok.z);
			continue;
		}
		hgc_dsl_names_put(&seen, st->tok.z, st->tok.n, 1);
		g = &b->s->golden[b->s->ngolden];
		golden(b, st, g);
		if (g->tensor)
			b->s->ngolden++;
	}
	hgc_dsl_names_release(&seen);
}

/* Route the errors of graph statements of a negative spec into its scratch diag. */
static void graph_diag(struct build *b, bool on)
{
	if (b->negative)
		b->ld->d = on ? &b->neg : b->main_d;
}

static void stmts(struct build *b, const struct hgc_ast *st, bool in_graph);

/* `config NAME;` resolved after the whole load (the config may come later). */
static void use_config(struct build *b, const struct hgc_ast *st)
{
	struct hgc_config_ref *ref;

	if (b->seen_config) {
		hgc_dsl_error(b->ld, &st->loc, "spec '%s' names a config twice", b->s->name);
		return;
	}
	b->seen_config = st;
	b->s->config_name = hgc_dsl_tok_str(&b->ld->p->arena, &st->tok);
	ref = hgc_vec_push(&b->ld->config_refs);
	ref->spec = b->s;
	ref->loc = st->loc;
}

/* A statement about the spec rather than its graph. */
static void spec_stmt(struct build *b, const struct hgc_ast *st)
{
	switch (st->kind) {
	case HGC_AST_USE_CONFIG:
		use_config(b, st);
		break;
	case HGC_AST_EXPECT:
		expect(b, st);
		break;
	case HGC_AST_GOLDEN:
		if (b->negative)
			hgc_dsl_error(b->ld, &st->loc, "a negative spec has no golden values");
		else
			*(const struct hgc_ast **)hgc_vec_push(&b->golden) = st;
		break;
	case HGC_AST_EXPECT_ERROR:
		if (b->seen_error != st)
			hgc_dsl_error(b->ld, &st->loc, "spec '%s' expects an error twice", b->s->name);
		break;
	case HGC_AST_BENCH:
		bench(b, st);
		break;
	default:
		hgc_bug("unexpected spec statement %d", (int)st->kind);
	}
}

/* One statement: graph statements build, the others configure the spec. */
static void stmt(struct build *b, const struct hgc_ast *st, bool in_graph)
{
	switch (st->kind) {
	case HGC_AST_INPUT:
	case HGC_AST_CONST:
	case HGC_AST_OP:
		graph_diag(b, true);
		st->kind == HGC_AST_OP ? op(b, st) : input(b, st);
		graph_diag(b, false);
		break;
	case HGC_AST_OUTPUT:
		for (st = st->a; st; st = st->next)
			*(const struct hgc_ast **)hgc_vec_push(&b->outs) = st;
		break;
	case HGC_AST_GRAPH:
		if (in_graph)
			hgc_dsl_error(b->ld, &st->loc, "graph blocks do not nest");
		else
			stmts(b, st->a, true);
		break;
	default:
		if (in_graph)
			hgc_dsl_error(b->ld, &st->loc,
				      "only inputs, constants, ops and outputs belong in graph { }");
		else
			spec_stmt(b, st);
	}
}

/* A list of statements, in order. */
static void stmts(struct build *b, const struct hgc_ast *st, bool in_graph)
{
	for (; st; st = st->next)
		stmt(b, st, in_graph);
}

/*
 * Whether the int8 conversion (core/graph/passes/lowprec.c) may compute the
 * graph: a Dequantize and a MatMul or Convolution in it.  The int8 MatMul
 * scales its exact integer sum once, where the reference sums the
 * dequantized f32 products, so a result within an f32 rounding error of a
 * rounding tie can be quantized one step apart.
 */
static bool quantized(const struct hgc_graph *g)
{
	bool deq = false, compute = false;

	for (size_t i = 0; i < g->ops.len; i++) {
		enum hgc_op_kind k = HGC_GRAPH_OP(g, i)->kind;

		deq |= k == HGC_OP_DEQUANTIZE;
		compute |= k == HGC_OP_MATMUL || k == HGC_OP_CONVOLUTION;
	}
	return deq && compute;
}

/* The default tolerances: 1e-2 when bf16 is anywhere in the graph, else f32's or 0. */
static void tolerances(struct build *b)
{
	struct hgc_tensor *t;
	bool bf16 = false, f32 = false;
	size_t i;

	for (i = 0; i < b->g->tensors.len; i++) {
		t = HGC_VEC_AT(&b->g->tensors, struct hgc_tensor *, i);
		bf16 |= t->dtype == HGC_DT_BF16;
	}
	for (i = 0; i < b->g->outputs.len; i++)
		f32 |= HGC_GRAPH_OUTPUT(b->g, i)->dtype == HGC_DT_F32;
	if (bf16)
		b->s->rtol = b->s->atol = 1e-2;
	else if (f32)
		b->s->rtol = 1e-5, b->s->atol = 1e-6;
}

/* The first `expect error "text";` of a spec block, or NULL. */
static const struct hgc_ast *negative(const struct hgc_ast *blk)
{
	const struct hgc_ast *st;

	for (st = blk->a; st; st = st->next)
		if (st->kind == HGC_AST_EXPECT_ERROR)
			return st;
	return NULL;
}

/* Whether a spec of that name was seen (reported as a redefinition); records it. */
static bool redefined(struct hgc_load *ld, const struct hgc_ast *blk)
{
	int k = hgc_dsl_names_get(&ld->spec_names, blk->tok.z, blk->tok.n);

	if (k < 0) {
		hgc_dsl_names_put(&ld->spec_names, blk->tok.z, blk->tok.n, (int)ld->spec_locs.len);
		*(const struct hgc_loc **)hgc_vec_push(&ld->spec_locs) = &blk->loc;
		return false;
	}
	hgc_dsl_error(ld, &blk->loc, "redefinition of spec '%.*s'", blk->tok.n, blk->tok.z);
	hgc_dsl_note(ld, HGC_VEC_AT(&ld->spec_locs, const struct hgc_loc *, k),
		     "previous definition of spec '%.*s' is here", blk->tok.n, blk->tok.z);
	return true;
}

/* A negative spec keeps its build errors as text and no graph. */
static void finish_negative(struct build *b)
{
	const char *text = hgc_diag_text(&b->neg);

	if (b->neg.nerr)
		b->s->build_error = hgc_arena_strndup(&b->ld->p->arena, text, strlen(text));
	hgc_diag_release(&b->neg);
	hgc_graph_free(b->g);
	b->s->graph = b->g = NULL;
}

/* Close the graph: outputs, goldens, tolerances, generators. */
static void finish_graph(struct build *b, const struct hgc_ast *blk)
{
	graph_diag(b, true);
	outputs(b);
	if (!b->outs.len)
		hgc_dsl_error(b->ld, &blk->loc, "spec '%s' has no outputs", b->s->name);
	graph_diag(b, false);
	if (b->negative) {
		finish_negative(b);
		return;
	}
	goldens(b);
	b->s->quantized = quantized(b->g);
	if (!b->s->has_tol)
		tolerances(b);
	b->s->gens = hgc_arena_calloc(&b->ld->p->arena, b->gens.len, sizeof(struct hgc_gen));
	if (b->gens.len)
		memcpy(b->s->gens, b->gens.data, b->gens.len * sizeof(struct hgc_gen));
	if (b->gens.len != b->g->inputs.len)
		hgc_bug("%zu generators for %zu inputs", b->gens.len, b->g->inputs.len);
}

/* Check a spec block, build its graph and add it to the program if all is well. */
void hgc_dsl_check_spec(struct hgc_load *ld, const struct hgc_ast *blk)
{
	struct hgc_spec *s = hgc_arena_calloc(&ld->p->arena, 1, sizeof(*s));
	struct build b = {.ld = ld, .s = s, .main_d = ld->d};
	int nerr0 = ld->d->nerr;
	bool dup = redefined(ld, blk);

	s->name = hgc_dsl_tok_str(&ld->p->arena, &blk->tok);
	s->loc = blk->loc;
	s->file = blk->loc.file;
	s->graph = b.g = hgc_graph_new();
	b.seen_error = negative(blk);
	if (b.seen_error) {
		b.negative = true;
		s->expect_error = hgc_dsl_unquote(&ld->p->arena, &b.seen_error->tok);
		hgc_diag_init(&b.neg);
	}
	hgc_vec_init(&b.syms, sizeof(struct sym));
	hgc_vec_init(&b.gens, sizeof(struct hgc_gen));
	hgc_vec_init(&b.outs, sizeof(const struct hgc_ast *));
	hgc_vec_init(&b.golden, sizeof(const struct hgc_ast *));
	hgc_dsl_names_init(&b.symtab);
	hgc_dsl_names_init(&b.outnames);
	stmts(&b, blk->a, false);
	finish_graph(&b, blk);
	hgc_vec_release(&b.syms);
	hgc_vec_release(&b.gens);
	hgc_vec_release(&b.outs);
	hgc_vec_release(&b.golden);
	hgc_dsl_names_release(&b.symtab);
	hgc_dsl_names_release(&b.outnames);
	if (dup || ld->d->nerr > nerr0) {
		if (s->graph)
			hgc_graph_free(s->graph);
		s->graph = NULL;
		return;
	}
	*(struct hgc_spec **)hgc_vec_push(&ld->p->specs) = s;
}
