/*
 * c_emit.c: a Tensor IR module printed as one C translation unit that
 * compiles with cc -fopenmp and no headers.  It defines hgc_entry(args),
 * hgc_init(args) when the module has an init function, and
 * hgc_bind(fns), which the loader calls with the runtime functions of
 * HGC_CODEGEN_C_RUNTIME in order.  Module functions are static; parallel
 * fors become `#pragma omp parallel for collapse(n)`.
 */
#include "c_int.h"
#include "math_poly.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* Types, conversions and min/max helpers every emitted module starts with. */
static const char prelude[] =
	"#ifdef __INT8_TYPE__\n"
	"typedef __INT8_TYPE__ int8_t;\n"
	"typedef __UINT8_TYPE__ uint8_t;\n"
	"typedef __UINT16_TYPE__ uint16_t;\n"
	"typedef __INT32_TYPE__ int32_t;\n"
	"typedef __UINT32_TYPE__ uint32_t;\n"
	"typedef __INT64_TYPE__ int64_t;\n"
	"typedef __SIZE_TYPE__ hgc_size_t;\n"
	"#else\n"
	"#include <stddef.h>\n"
	"#include <stdint.h>\n"
	"typedef size_t hgc_size_t;\n"
	"#endif\n\n"
	"int omp_get_thread_num(void);\n"
	"int omp_get_num_threads(void);\n"
	"int posix_memalign(void **, hgc_size_t, hgc_size_t);\n"
	"void free(void *);\n\n"
	"static inline void *hgc_alloc(int64_t n)\n{\n\tvoid *p = 0;\n\n"
	"\tif (posix_memalign(&p, 64, n > 0 ? (hgc_size_t)n : 1))\n\t\t__builtin_trap();\n"
	"\treturn p;\n}\n\n"
	"static inline float hgc_bf16_to_f32(uint16_t h)\n{\n"
	"\tunion { uint32_t u; float f; } v = { (uint32_t)h << 16 };\n\n\treturn v.f;\n}\n\n"
	"static inline uint16_t hgc_f32_to_bf16(float f)\n{\n"
	"\tunion { float f; uint32_t u; } v = { f };\n\n"
	"\tif ((v.u & 0x7fffffffu) > 0x7f800000u)\n\t\treturn (uint16_t)((v.u >> 16) | 0x40);\n"
	"\treturn (uint16_t)((v.u + 0x7fffu + ((v.u >> 16) & 1)) >> 16);\n}\n\n"
	"#define HGC_F2I(k, t, lo, hi) \\\n"
	"static inline t hgc_f32_to_##k(float x) \\\n"
	"{ return x != x ? 0 : x <= (float)(lo) ? (t)(lo) : x >= (float)(hi) ? (t)(hi) : (t)x; }\n"
	"HGC_F2I(s8, int8_t, -128, 127)\n"
	"HGC_F2I(u8, uint8_t, 0, 255)\n"
	"HGC_F2I(s32, int32_t, -2147483647 - 1, 2147483647)\n"
	"HGC_F2I(index, int64_t, -9223372036854775807L - 1, 9223372036854775807L)\n"
	"#undef HGC_F2I\n\n"
	"#define HGC_MINMAX(k, t) \\\n"
	"static inline t hgc_min_##k(t a, t b) { return a < b ? a : b; } \\\n"
	"static inline t hgc_max_##k(t a, t b) { return a > b ? a : b; } \\\n"
	"static inline t hgc_abs_##k(t a) { return a < 0 ? (t)-a : a; }\n"
	"HGC_MINMAX(s8, int8_t)\n"
	"HGC_MINMAX(u8, uint8_t)\n"
	"HGC_MINMAX(s32, int32_t)\n"
	"HGC_MINMAX(index, int64_t)\n"
	"HGC_MINMAX(f32, float)\n"
	"#undef HGC_MINMAX\n\n"
	/* lanes_*: llvm_intrin.c's lanes_fold, the same tree of halves */
	"#define HGC_LANES(k, f) \\\n"
	"static inline float hgc_lanes_##k(const float *p, int64_t n) \\\n"
	"{ \\\n"
	"\tfloat t[64], a, b; \\\n"
	"\tint64_t h, v; \\\n"
	"\tfor (v = 0; v < n; v++) t[v] = p[v]; \\\n"
	"\tfor (h = n / 2; h > 0; h /= 2) \\\n"
	"\t\tfor (v = 0; v < h; v++) { a = t[v]; b = t[v + h]; t[v] = f; } \\\n"
	"\treturn t[0]; \\\n"
	"}\n"
	"HGC_LANES(add, a + b)\n"
	"HGC_LANES(mul, a * b)\n"
	"HGC_LANES(max, b != b ? b : b > a ? b : a)\n"
	"HGC_LANES(min, b != b ? b : b < a ? b : a)\n"
	"#undef HGC_LANES\n\n";

/* Horner's rule over c[0..n) in fmaf steps on t, as C text (llvm_intrin.c's horner). */
static void horner_text(FILE *out, const double *c, int n, const char *t)
{
	int i;

	fprintf(out, "(float)%.17g", c[0]);
	for (i = 1; i < n; i++)
		fprintf(out, ";\n\tp = __builtin_fmaf(p, %s, (float)%.17g)", t, c[i]);
}

/*
 * hgc_expf and hgc_expf_nonpos: the LLVM backend's inline exps (llvm_intrin.c:
 * exp_inline, exp_nonpos_inline, reduce_ln2, exp_poly, scale_pow2;
 * math_poly.h), the same operations in the same order, bit for bit.
 * hgc_exp_poly takes x and n to e^(x - n ln2).  In hgc_expf, p * 2^h goes
 * into p's exponent field as an integer add (exact); h = floor(n / 2) is an
 * arithmetic shift (gcc and clang shift signed values so).  In
 * hgc_expf_nonpos, t's bits shifted left by 23 are 2^n, or zero or negative
 * as an integer where 2^n is below 2^-126.
 */
static void exp_text(FILE *out)
{
	fputs("static inline float hgc_exp_poly(float xc, float n)\n{\n"
	      "\tfloat r = __builtin_fmaf(n, -0.693359375f, xc), p;\n\n"
	      "\tr = __builtin_fmaf(n, (float)2.12194440e-4, r);\n\tp = ", out);
	horner_text(out, hgc_exp_poly, HGC_EXP_POLY_N, "r");
	fputs(";\n\treturn p;\n}\n\n", out);
	fputs("static inline float hgc_expf(float x)\n{\n"
	      "\tfloat xc = x != x ? 0.0f : x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x;\n"
	      "\tfloat n = __builtin_nearbyintf(xc * (float)1.44269504088896341);\n"
	      "\tint32_t ni = (int32_t)n, h = ni >> 1;\n"
	      "\tunion { uint32_t u; float f; } v, s;\n\n"
	      "\tv.f = hgc_exp_poly(xc, n);\n"
	      "\tv.u += (uint32_t)h << 23;\n"
	      "\ts.u = (uint32_t)(ni - h + 127) << 23;\n"
	      "\treturn x != x ? x : v.f * s.f;\n}\n\n", out);
	fputs("static inline float hgc_expf_nonpos(float x)\n{\n"
	      "\tfloat xc = x < -104.0f ? -104.0f : x;\n"
	      "\tfloat t = __builtin_fmaf(xc, (float)1.44269504088896341, 12583039.0f);\n"
	      "\tunion { uint32_t u; int32_t i; float f; } s;\n\n"
	      "\ts.f = t;\n"
	      "\ts.u <<= 23;\n"
	      "\tif (s.i < 0)\n"
	      "\t\ts.i = 0;\n"
	      "\treturn hgc_exp_poly(xc, t - 12583039.0f) * s.f;\n}\n\n", out);
}

/* hgc_erff: the LLVM backend's inline erf (llvm_intrin.c, math_poly.h), bit for bit. */
static void erf_text(FILE *out)
{
	fputs("static inline float hgc_erff(float x)\n{\n"
	      "\tfloat a = __builtin_fabsf(x), t = a * a, p, small, large;\n\n\tp = ", out);
	horner_text(out, hgc_erf_small, HGC_ERF_SMALL_N, "t");
	fputs(";\n\tsmall = x * p;\n\tp = ", out);
	horner_text(out, hgc_erf_large, HGC_ERF_LARGE_N, "a");
	fputs(";\n\tlarge = __builtin_copysignf(1.0f - hgc_expf_nonpos(p), x);\n"
	      "\treturn a < 1.0f ? small : a >= 4.0f ? __builtin_copysignf(1.0f, x) : large;\n"
	      "}\n\n", out);
}

/* Function pointers for the runtime and hgc_bind to fill them. */
static void runtime(struct cemit *c)
{
	int i = 0;

#define X(name, params) fprintf(c->out, "static void (*%s)%s;\n", #name, params);
	HGC_CODEGEN_C_RUNTIME(X)
#undef X
	fputs("\nvoid hgc_bind(void (*const *fns)(void))\n{\n", c->out);
#define X(name, params) fprintf(c->out, "\t%s = (void (*)%s)fns[%d];\n", #name, params, i++);
	HGC_CODEGEN_C_RUNTIME(X)
#undef X
	fputs("}\n\n", c->out);
}

/* Prototypes of external symbols, from the first call of each. */
struct externs {
	struct hgc_tir_visitor v;
	struct cemit *c;
	struct hgc_vec seen;	/* const char * */
};

/* Whether s can be declared in C (other backends may call names like llvm.sqrt.f32). */
static bool is_identifier(const char *s)
{
	const char *p;

	if (!s || !*s || isdigit((unsigned char)*s))
		return false;
	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

/* Declare sym as called by e, once. */
static void extern_expr(struct hgc_tir_visitor *v, struct hgc_tir_expr *e)
{
	struct externs *x = (struct externs *)v;
	char buf[64];
	size_t i;
	int k;

	if (e->kind != HGC_TIR_E_CALL || e->callee)
		return;
	if (!is_identifier(e->u.sym)) {
		hgc_c_err(x->c, "external symbol '%s' is not a C identifier", e->u.sym);
		return;
	}
	for (i = 0; i < x->seen.len; i++)
		if (!strcmp(HGC_VEC_AT(&x->seen, const char *, i), e->u.sym))
			return;
	*(const char **)hgc_vec_push(&x->seen) = e->u.sym;
	fprintf(x->c->out, "extern %s %s(", hgc_c_type(x->c, e->type, buf, sizeof(buf)), e->u.sym);
	for (k = 0; k < e->nops; k++)
		fprintf(x->c->out, "%s%s", k ? ", " : "",
			hgc_c_type(x->c, e->ops[k]->type, buf, sizeof(buf)));
	fputs(e->nops ? ");\n" : "void);\n", x->c->out);
}

/* Declare every external symbol the module calls. */
static void externs(struct cemit *c)
{
	struct externs x = { { NULL, NULL, extern_expr, NULL }, c, { 0 } };

	hgc_vec_init(&x.seen, sizeof(const char *));
	hgc_tir_walk_module((struct hgc_tir_module *)c->m, &x.v);
	if (x.seen.len)
		fputc('\n', c->out);
	hgc_vec_release(&x.seen);
}

/* One element of a constant's initial data. */
static void const_value(struct cemit *c, enum hgc_tir_kind k, const unsigned char *p)
{
	float f;
	int32_t s32;
	int64_t i64;
	uint16_t u16;

	switch (k) {
	case HGC_TIR_F32:
		memcpy(&f, p, 4);
		if (isnan(f))
			fputs("__builtin_nanf(\"\")", c->out);
		else if (isinf(f))
			fputs(f < 0 ? "-__builtin_inff()" : "__builtin_inff()", c->out);
		else
			fprintf(c->out, "%af", f);
		break;
	case HGC_TIR_S32: memcpy(&s32, p, 4); fprintf(c->out, "%d", s32); break;
	case HGC_TIR_INDEX: memcpy(&i64, p, 8); fprintf(c->out, "%lldL", (long long)i64); break;
	case HGC_TIR_BF16: memcpy(&u16, p, 2); fprintf(c->out, "0x%04x", u16); break;
	case HGC_TIR_S8: fprintf(c->out, "%d", (int)(int8_t)*p); break;
	default: fprintf(c->out, "%u", *p); break;
	}
}

/* A module-level constant buffer, with its data when it has some. */
static void constant(struct cemit *c, const struct hgc_tir_tensor *t)
{
	int64_t n = hgc_tir_tensor_size(t), i;
	int size = hgc_tir_kind_size(t->elem.kind);
	char buf[64];

	fprintf(c->out, "static %s %s[%lld] __attribute__((aligned(64)))",
		hgc_c_store_type(c, t->elem, buf, sizeof(buf)), t->name, (long long)(n > 0 ? n : 1));
	if (t->data && !t->elem.ptr) {
		fputs(" = {", c->out);
		for (i = 0; i < n; i++) {
			fputs(i % 8 ? " " : "\n\t", c->out);
			const_value(c, t->elem.kind, (const unsigned char *)t->data + i * size);
			fputc(',', c->out);
		}
		fputs("\n}", c->out);
	}
	fputs(";\n", c->out);
}

/* "static RET name(params)" */
static void signature(struct cemit *c, const struct hgc_tir_func *f)
{
	const struct hgc_tir_param *p;
	char buf[64];
	int i;

	fprintf(c->out, "static %s %s(", hgc_c_type(c, f->ret, buf, sizeof(buf)), f->name);
	for (i = 0; i < f->nparams; i++) {
		p = &f->params[i];
		if (p->tensor)
			fprintf(c->out, "%s%s *%s", i ? ", " : "",
				hgc_c_store_type(c, p->tensor->elem, buf, sizeof(buf)), p->tensor->name);
		else
			fprintf(c->out, "%s%s %s", i ? ", " : "",
				hgc_c_type(c, p->var->type, buf, sizeof(buf)), p->var->name);
	}
	fputs(f->nparams ? ")" : "void)", c->out);
}

/* A function definition. */
static void function(struct cemit *c, const struct hgc_tir_func *f)
{
	c->f = f;
	c->heap.len = 0;
	signature(c, f);
	fputc('\n', c->out);
	hgc_c_block(c, f->body);
	fputs("\n\n", c->out);
	c->f = NULL;
}

/* hgc_entry or hgc_init: unpack args into the function's parameters. */
static void wrapper(struct cemit *c, const char *name, const struct hgc_tir_func *f)
{
	const struct hgc_tir_param *p;
	char buf[64];
	int i;

	fprintf(c->out, "void %s(void **args)\n{\n\t(void)args;\n\t%s(", name, f->name);
	for (i = 0; i < f->nparams; i++) {
		p = &f->params[i];
		if (p->tensor)
			fprintf(c->out, "%s(%s *)args[%d]", i ? ", " : "",
				hgc_c_store_type(c, p->tensor->elem, buf, sizeof(buf)), i);
		else
			fprintf(c->out, "%s*(%s *)args[%d]", i ? ", " : "",
				hgc_c_type(c, p->var->type, buf, sizeof(buf)), i);
	}
	fputs(");\n}\n\n", c->out);
}

/* Emit the whole module. */
int hgc_codegen_c_emit(FILE *out, const struct hgc_tir_module *m, struct hgc_diag *d)
{
	struct cemit c = { out, m, NULL, d, 0, 0, 0, { 0 } };
	size_t i;

	if (!m->entry)
		return hgc_c_err(&c, "the module has no entry function");
	hgc_vec_init(&c.heap, sizeof(const struct hgc_tir_tensor *));
	fprintf(out, "/* Generated by hgc from Tensor IR module %s. */\n", m->name);
	fputs(prelude, out);
	exp_text(out);
	erf_text(out);
	runtime(&c);
	externs(&c);
	for (i = 0; i < m->consts.len; i++)
		constant(&c, HGC_TIR_CONST_AT(m, i));
	fputc('\n', out);
	for (i = 0; i < m->funcs.len; i++) {
		signature(&c, HGC_TIR_FUNC(m, i));
		fputs(";\n", out);
	}
	fputc('\n', out);
	for (i = 0; i < m->funcs.len; i++)
		function(&c, HGC_TIR_FUNC(m, i));
	wrapper(&c, "hgc_entry", m->entry);
	if (m->init)
		wrapper(&c, "hgc_init", m->init);
	hgc_vec_release(&c.heap);
	return c.nerr ? -1 : 0;
}
