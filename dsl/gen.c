/*
 * gen.c: data generators.  Checking turns a generator written in a spec
 * into struct hgc_gen; filling makes the data with a PRNG of our own
 * (splitmix64 seeding xoshiro256**, normal values by Box-Muller), so that
 * the same seed gives the same data on every machine and libc.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_int.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define MAX_PARAMS 3

/* The generators, their parameters (positional order) and defaults. */
static const struct gen_info {
	const char *name;
	enum hgc_gen_kind kind;
	int nparams;
	const char *params[MAX_PARAMS];	/* "seed" is handled apart from a and b */
	double a, b;			/* defaults */
} gen_table[] = {
	{"uniform", HGC_GEN_UNIFORM, 3, {"lo", "hi", "seed"}, -1, 1},
	{"normal", HGC_GEN_NORMAL, 3, {"mean", "std", "seed"}, 0, 1},
	{"randint", HGC_GEN_RANDINT, 3, {"lo", "hi", "seed"}, 0, 0},
	{"arange", HGC_GEN_ARANGE, 2, {"start", "step"}, 0, 1},
	{"zeros", HGC_GEN_ZEROS, 0, {NULL}, 0, 0},
	{"ones", HGC_GEN_ONES, 0, {NULL}, 0, 0},
	{"npy", HGC_GEN_NPY, 1, {"path"}, 0, 0},
};

/* FNV-1a over "spec/tensor": the default seed of a tensor's generator. */
uint64_t hgc_dsl_seed(const char *spec, const char *tensor)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *parts[3] = {spec, "/", tensor};
	const unsigned char *p;
	int i;

	for (i = 0; i < 3; i++)
		for (p = (const unsigned char *)parts[i]; *p; p++)
			h = (h ^ *p) * 0x100000001b3ull;
	return h;
}

/* randint's default range for a dtype (documented in docs/language.md). */
static void int_range(enum hgc_dtype dt, double *lo, double *hi)
{
	switch (dt) {
	case HGC_DT_S8: *lo = -128, *hi = 127; break;
	case HGC_DT_U8: *lo = 0, *hi = 255; break;
	case HGC_DT_BOOL: *lo = 0, *hi = 1; break;
	case HGC_DT_S32: *lo = -1000, *hi = 1000; break;
	default: *lo = -10, *hi = 10; break;
	}
}

/* An input without a generator: uniform(-1, 1) for floats, randint() for the rest. */
void hgc_dsl_gen_default(enum hgc_dtype dt, uint64_t seed, const struct hgc_loc *loc,
			 struct hgc_gen *out)
{
	memset(out, 0, sizeof(*out));
	out->seed = seed;
	out->loc = *loc;
	if (hgc_dtype_is_int(dt) || dt == HGC_DT_BOOL) {
		out->kind = HGC_GEN_RANDINT;
		int_range(dt, &out->a, &out->b);
	} else {
		out->kind = HGC_GEN_UNIFORM;
		out->a = -1;
		out->b = 1;
	}
}

/* A literal list: numbers (or true/false), one per element (nelems < 0: unknown). */
static int literal(struct hgc_load *ld, const struct hgc_ast *g, int64_t nelems,
		   struct hgc_gen *out)
{
	const struct hgc_ast *v;
	double *vals;
	int n = 0, bad = 0;

	for (v = g->a; v; v = v->next)
		n++;
	if (nelems >= 0 && n != nelems)
		return hgc_dsl_error(ld, &g->loc, "the list has %d values but the tensor has %lld elements",
				     n, (long long)nelems);
	vals = hgc_arena_calloc(&ld->p->arena, (size_t)n, sizeof(double));
	for (n = 0, v = g->a; v; v = v->next, n++) {
		if (v->kind == HGC_AST_BOOL)
			vals[n] = hgc_dsl_tok_is(&v->tok, "true");
		else
			bad |= hgc_dsl_num(ld, v, "a list value", &vals[n]);
	}
	out->kind = HGC_GEN_LITERAL;
	out->n = n;
	out->values = vals;
	return bad ? -1 : 0;
}

/* Which parameter an argument sets: by position or by name; -1 after reporting. */
static int param_of(struct hgc_load *ld, const struct gen_info *gi, const struct hgc_ast *arg,
		    int pos)
{
	int i;

	if (arg->kind != HGC_AST_NAMED) {
		if (pos < gi->nparams)
			return pos;
		return hgc_dsl_error(ld, &arg->loc, "too many arguments for %s (it takes %d)",
				     gi->name, gi->nparams);
	}
	for (i = 0; i < gi->nparams; i++)
		if (hgc_dsl_tok_is(&arg->tok, gi->params[i]))
			return i;
	if (!gi->nparams)
		return hgc_dsl_error(ld, &arg->loc, "%s takes no arguments", gi->name);
	hgc_dsl_unknown(ld, &arg->loc, "argument", arg->tok.z, (size_t)arg->tok.n, gi->params,
			gi->nparams);
	return -1;
}

/* Store the value of parameter i; -1 after reporting a wrong type or range. */
static int set_param(struct hgc_load *ld, const struct gen_info *gi, int i,
		     const struct hgc_ast *v, struct hgc_gen *out)
{
	char what[32];
	int64_t n;
	double *slot = i == 0 ? &out->a : &out->b;

	snprintf(what, sizeof(what), "'%s'", gi->params[i]);
	if (gi->kind == HGC_GEN_NPY) {
		if (v->kind != HGC_AST_STRING)
			return hgc_dsl_error(ld, &v->loc, "'path' must be a string");
		out->path = hgc_dsl_relative(&ld->p->arena, v->loc.file,
					     hgc_dsl_unquote(&ld->p->arena, &v->tok));
		return 0;
	}
	if (!strcmp(gi->params[i], "seed")) {
		if (hgc_dsl_int(ld, v, what, &n) < 0)
			return -1;
		if (n < 0)
			return hgc_dsl_error(ld, &v->loc, "'seed' must not be negative");
		out->seed = (uint64_t)n;
		return 0;
	}
	if (gi->kind == HGC_GEN_RANDINT) {
		if (hgc_dsl_int(ld, v, what, &n) < 0)
			return -1;
		*slot = (double)n;
		return 0;
	}
	return hgc_dsl_num(ld, v, what, slot);
}

/* Bounds that make sense: lo <= hi, std >= 0. */
static int check_bounds(struct hgc_load *ld, const struct hgc_ast *g, struct hgc_gen *out)
{
	if ((out->kind == HGC_GEN_UNIFORM || out->kind == HGC_GEN_RANDINT) && out->a > out->b)
		return hgc_dsl_error(ld, &g->loc, "%.*s: lo (%g) is greater than hi (%g)", g->tok.n,
				     g->tok.z, out->a, out->b);
	if (out->kind == HGC_GEN_NORMAL && out->b < 0)
		return hgc_dsl_error(ld, &g->loc, "normal: 'std' must not be negative");
	if (out->kind == HGC_GEN_NPY && !out->path)
		return hgc_dsl_error(ld, &g->loc, "npy needs a path: npy(\"file.npy\")");
	return 0;
}

/* A generator call: known name, known arguments each given once, sane values. */
static int call(struct hgc_load *ld, const struct hgc_ast *g, enum hgc_dtype dt,
		struct hgc_gen *out)
{
	const char *names[COUNT(gen_table)];
	const struct gen_info *gi = NULL;
	const struct hgc_ast *arg, *seen[MAX_PARAMS] = {NULL};
	int i, pos = 0, bad = 0;

	for (i = 0; i < COUNT(gen_table); i++) {
		names[i] = gen_table[i].name;
		if (hgc_dsl_tok_is(&g->tok, gen_table[i].name))
			gi = &gen_table[i];
	}
	if (!gi)
		return hgc_dsl_unknown(ld, &g->loc, "generator", g->tok.z, (size_t)g->tok.n, names,
				       COUNT(names));
	out->kind = gi->kind;
	out->a = gi->a;
	out->b = gi->b;
	if (gi->kind == HGC_GEN_RANDINT)
		int_range(dt, &out->a, &out->b);
	for (arg = g->a; arg; arg = arg->next, pos++) {
		i = param_of(ld, gi, arg, pos);
		if (i < 0) {
			bad = 1;
			continue;
		}
		if (seen[i]) {
			bad = hgc_dsl_error(ld, &arg->loc, "duplicate argument '%s'", gi->params[i]);
			continue;
		}
		seen[i] = arg;
		bad |= set_param(ld, gi, i, arg->kind == HGC_AST_NAMED ? arg->a : arg, out);
	}
	return bad || check_bounds(ld, g, out) < 0 ? -1 : 0;
}

/* Check a generator (a call or a literal list) for its tensor and fill out. */
int hgc_dsl_gen(struct hgc_load *ld, const struct hgc_ast *g, enum hgc_dtype dt,
		int64_t nelems, uint64_t seed, struct hgc_gen *out)
{
	memset(out, 0, sizeof(*out));
	out->seed = seed;
	out->loc = g->loc;
	if (g->kind == HGC_AST_LIST)
		return literal(ld, g, nelems, out);
	return call(ld, g, dt, out);
}

/* The PRNG: xoshiro256** state, and a spare normal value from Box-Muller. */
struct rng {
	uint64_t s[4];
	double spare;		/* the second value of the last Box-Muller pair */
	bool has_spare;
};

/* splitmix64: spreads one seed over the xoshiro state. */
static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Seed the xoshiro state through splitmix64, as its authors advise. */
static void rng_init(struct rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
	r->spare = 0;
	r->has_spare = false;
}

/* Rotate left by k (0 < k < 64). */
static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256**: the next 64 random bits. */
static uint64_t next(struct rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* Uniform in [0, 1) with 53 random bits. */
static double unit(struct rng *r)
{
	return (double)(next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal by Box-Muller, two values per pair of uniforms. */
static double gauss(struct rng *r)
{
	double u1, u2, rad;

	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	u1 = 1.0 - unit(r);
	u2 = unit(r);
	rad = sqrt(-2.0 * log(u1));
	r->spare = rad * sin(2 * M_PI * u2);
	r->has_spare = true;
	return rad * cos(2 * M_PI * u2);
}

/* An int64 from a double bound, clamped far from overflow. */
static int64_t clamp_i64(double v)
{
	const double lim = 0x1.0p62;

	return (int64_t)(v < -lim ? -lim : v > lim ? lim : v);
}

/* Uniform integer in [lo, hi] without modulo bias. */
static int64_t randint(struct rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1, x, floor_;

	if (!span)
		return (int64_t)next(r);
	floor_ = (0 - span) % span;
	do
		x = next(r);
	while (x < floor_);
	return (int64_t)((uint64_t)lo + x % span);
}

/* Round half to even and saturate into [lo, hi]; NaN becomes 0. */
static double sat(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	v = nearbyint(v);
	return v < lo ? lo : v > hi ? hi : v;
}

/* Store v as element i of a dense dt buffer, rounded and saturated. */
static void store(enum hgc_dtype dt, void *buf, int64_t i, double v)
{
	float f = fabs(v) > FLT_MAX && !isinf(v) ? (v > 0 ? INFINITY : -INFINITY) : (float)v;

	switch (dt) {
	case HGC_DT_F32: ((float *)buf)[i] = f; break;
	case HGC_DT_BF16: ((uint16_t *)buf)[i] = hgc_f32_to_bf16(f); break;
	case HGC_DT_S32: ((int32_t *)buf)[i] = (int32_t)sat(v, INT32_MIN, INT32_MAX); break;
	case HGC_DT_S8: ((int8_t *)buf)[i] = (int8_t)sat(v, INT8_MIN, INT8_MAX); break;
	case HGC_DT_U8: ((uint8_t *)buf)[i] = (uint8_t)sat(v, 0, UINT8_MAX); break;
	case HGC_DT_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
	default: hgc_bug("no data for dtype %d", (int)dt);
	}
}

/* Elements of t, from its dims. */
static int64_t nelems(const struct hgc_tensor *t)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < t->ndims; i++)
		n *= t->dims[i];
	return n;
}

/* "[2,3]": dims for messages. */
static void dims_text(char *buf, size_t size, int nd, const int64_t *dims)
{
	size_t len = 0;
	int i;

	len += (size_t)snprintf(buf, size, "[");
	for (i = 0; i < nd && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
					(long long)dims[i]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
}

/* The message of the first error in a scratch diag, without "file: error: ". */
static const char *first_message(const struct hgc_diag *d, char *buf, size_t size)
{
	const char *text = hgc_diag_text(d), *msg = strstr(text, "error: ");
	size_t n;

	msg = msg ? msg + strlen("error: ") : text;
	n = strcspn(msg, "\n");
	snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), msg);
	return buf;
}

/* Fill from an .npy file whose dtype and shape must match t exactly. */
static int fill_npy(const struct hgc_gen *gen, const struct hgc_tensor *t, void *buf,
		    struct hgc_diag *d)
{
	struct hgc_diag scratch;
	enum hgc_dtype dt;
	int64_t dims[HGC_MAX_DIMS];
	char msg[512], want[200], got[200];
	const char *name = t->name ? t->name : "the tensor";
	int nd, i, same;
	void *data;

	hgc_diag_init(&scratch);
	data = hgc_npy_read(gen->path, &dt, &nd, dims, &scratch);
	if (!data) {
		hgc_error(d, &gen->loc, "%s", first_message(&scratch, msg, sizeof(msg)));
		hgc_diag_release(&scratch);
		return -1;
	}
	hgc_diag_release(&scratch);
	same = nd == t->ndims;
	for (i = 0; same && i < nd; i++)
		same = dims[i] == t->dims[i];
	dims_text(want, sizeof(want), t->ndims, t->dims);
	dims_text(got, sizeof(got), nd, dims);
	if (dt != t->dtype)
		hgc_error(d, &gen->loc, "'%s' holds %s data but '%s' is %s", gen->path,
			  hgc_dtype_name(dt), name, hgc_dtype_name(t->dtype));
	else if (!same)
		hgc_error(d, &gen->loc, "'%s' has shape %s but '%s' has shape %s", gen->path, got,
			  name, want);
	else
		memcpy(buf, data, (size_t)nelems(t) * hgc_dtype_size(dt));
	free(data);
	return dt == t->dtype && same ? 0 : -1;
}

/* Fill buf with n random elements of gen's kind. */
static void fill_random(const struct hgc_gen *gen, enum hgc_dtype dt, int64_t n, void *buf)
{
	struct rng r;
	int64_t i, lo = clamp_i64(gen->a), hi = clamp_i64(gen->b);

	rng_init(&r, gen->seed);
	for (i = 0; i < n; i++) {
		if (gen->kind == HGC_GEN_UNIFORM)
			store(dt, buf, i, gen->a + (gen->b - gen->a) * unit(&r));
		else if (gen->kind == HGC_GEN_NORMAL)
			store(dt, buf, i, gen->a + gen->b * gauss(&r));
		else
			store(dt, buf, i, (double)randint(&r, lo, hi));
	}
}

/* Make the data of t into buf (dense, t's dtype) as gen says; -1 with d set. */
int hgc_gen_fill(const struct hgc_gen *gen, const struct hgc_tensor *t, void *buf,
		 struct hgc_diag *d)
{
	int64_t i, n = nelems(t);

	switch (gen->kind) {
	case HGC_GEN_UNIFORM:
	case HGC_GEN_NORMAL:
	case HGC_GEN_RANDINT:
		fill_random(gen, t->dtype, n, buf);
		return 0;
	case HGC_GEN_ARANGE:
		for (i = 0; i < n; i++)
			store(t->dtype, buf, i, gen->a + gen->b * (double)i);
		return 0;
	case HGC_GEN_ZEROS:
	case HGC_GEN_ONES:
		for (i = 0; i < n; i++)
			store(t->dtype, buf, i, gen->kind == HGC_GEN_ONES);
		return 0;
	case HGC_GEN_LITERAL:
		if (gen->n != n)
			return hgc_error(d, &gen->loc, "the list has %d values but the tensor has %lld elements",
					 gen->n, (long long)n);
		for (i = 0; i < n; i++)
			store(t->dtype, buf, i, gen->values[i]);
		return 0;
	case HGC_GEN_NPY:
		return fill_npy(gen, t, buf, d);
	}
	return hgc_error(d, &gen->loc, "bad generator kind %d", (int)gen->kind);
}
