/*
 * llvm_check.h: helpers shared by the LLVM backend tests (t/08x-llvm*.c):
 * compile through the JIT, run a module on both backends and compare, and
 * the reference conversions the backends must agree with.
 */
#ifndef HGC_T_LLVM_CHECK_H
#define HGC_T_LLVM_CHECK_H

#include "core/codegen/codegen.h"
#include "core/tir/tir.h"
#include "t/tap.h"
#include "t/tir/modules.h"

#define F32C(v) hgc_tir_f32(m, (v))
#define BIN(op, a, b) hgc_tir_binary(m, HGC_TIR_##op, (a), (b))
#define LD1(t, i) hgc_tir_loadv(m, (t), 1, (i))
#define LD2(t, i, j) hgc_tir_loadv(m, (t), 2, (i), (j))
#define ST1(b, t, i, v) hgc_tir_storev(m, (b), (t), (v), 1, (i))
#define ST2(b, t, i, j, v) hgc_tir_storev(m, (b), (t), (v), 2, (i), (j))
#define CAST(k, e) hgc_tir_cast(m, TY(k), (e))
#define MAXARGS 16

/* A deterministic pseudo-random float in [-1, 1). */
static inline float rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* JIT-compile m (not freed), or NULL with the diagnostic shown. */
static inline struct hgc_compiled *jit(struct hgc_tir_module *m, const char *what)
{
	struct hgc_diag d;
	struct hgc_compiled *c;

	hgc_diag_init(&d);
	c = hgc_codegen_llvm_compile(m, NULL, &d);
	ok(c != NULL, "%s compiles through LLVM", what);
	if (!c)
		diag("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return c;
}

/* The optimized LLVM IR hgc_codegen_llvm_dump prints for m (malloc'ed), or NULL with d set. */
static inline char *llvm_ir_text(const struct hgc_tir_module *m,
				 const struct hgc_codegen_llvm_opts *o, struct hgc_diag *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc = hgc_codegen_llvm_dump(f, m, o, d);

	fclose(f);
	if (rc) {
		free(text);
		return NULL;
	}
	return text;
}

/* Whether the backends may disagree on the f32 element i of argument arg
   (with the C backend's value c and the JIT's j). */
typedef bool (*may_differ_fn)(int arg, size_t i, float c, float j);

/* How many f32 elements of c and j (bytes bytes each) differ where may_differ does
   not allow it (the first three are shown). */
static inline int disagreements(int arg, const void *c, const void *j, size_t bytes,
				may_differ_fn may_differ)
{
	size_t i;
	int bad = 0;
	float x, y;

	for (i = 0; i + 4 <= bytes; i += 4) {
		if (!memcmp((const char *)c + i, (const char *)j + i, 4))
			continue;
		memcpy(&x, (const char *)c + i, 4);
		memcpy(&y, (const char *)j + i, 4);
		if (!may_differ(arg, i / 4, x, y)) {
			if (bad++ < 3)
				diag("argument %d, element %zu: C %a, LLVM %a", arg, i / 4, x, y);
		}
	}
	return bad;
}

/*
 * Run m with the C backend on inputs in[] and compare each buffer with want[]
 * (byte for byte, or f32 element by element outside what may_differ allows).
 * Not under AddressSanitizer: the C backend's dlopen'ed modules leak a few
 * bytes from a library initializer there, which is not this test's business.
 */
static inline void same_as_c_but(struct hgc_tir_module *m, void **in, void *const *want,
				 const size_t *sizes, int n, const char *what,
				 may_differ_fn may_differ)
{
	struct hgc_compiled *c;
	struct hgc_diag d;
	int i, same = 1;

#ifdef __SANITIZE_ADDRESS__
	return;
#endif
	hgc_diag_init(&d);
	c = hgc_codegen_c_compile(m, NULL, &d);
	ok(c != NULL, "%s: the C backend compiles it too", what);
	if (!c) {
		diag("%s", hgc_diag_text(&d));
		hgc_diag_release(&d);
		return;
	}
	hgc_codegen_run(c, in);
	for (i = 0; i < n; i++)
		if (memcmp(in[i], want[i], sizes[i]) &&
		    (!may_differ || disagreements(i, in[i], want[i], sizes[i], may_differ))) {
			diag("%s: argument %d differs between the backends", what, i);
			same = 0;
		}
	ok(same, "%s: the LLVM and C backends agree byte for byte%s", what,
	   may_differ ? " (where they must)" : "");
	hgc_codegen_free(c);
	hgc_diag_release(&d);
}

/* same_as_c_but with no difference allowed. */
static inline void same_as_c(struct hgc_tir_module *m, void **in, void *const *want,
			     const size_t *sizes, int n, const char *what)
{
	same_as_c_but(m, in, want, sizes, n, what, NULL);
}

/*
 * Run m through the JIT on args (n buffers of sizes[i] bytes, results in
 * place), and through the C backend on copies of the inputs: every buffer
 * must come out the same, but for the f32 elements may_differ (if not NULL)
 * allows.  Frees m; returns whether the JIT ran.
 */
static inline bool run_both_but(struct hgc_tir_module *m, void **args, const size_t *sizes,
				int n, const char *what, may_differ_fn may_differ)
{
	void *in[MAXARGS];
	struct hgc_compiled *c;
	int i;

	for (i = 0; i < n && i < MAXARGS; i++)
		in[i] = memcpy(malloc(sizes[i]), args[i], sizes[i]);
	c = jit(m, what);
	if (c) {
		hgc_codegen_run(c, args);
		hgc_codegen_free(c);
		same_as_c_but(m, in, args, sizes, n, what, may_differ);
	}
	for (i = 0; i < n && i < MAXARGS; i++)
		free(in[i]);
	hgc_tir_module_free(m);
	return c != NULL;
}

/* run_both_but with no difference allowed. */
static inline bool run_both(struct hgc_tir_module *m, void **args, const size_t *sizes, int n,
			    const char *what)
{
	return run_both_but(m, args, sizes, n, what, NULL);
}

/* The largest relative error of got against want over n values. */
static inline double max_err(const float *got, const float *want, int64_t n)
{
	double e = 0, x;
	int64_t i;

	for (i = 0; i < n; i++) {
		x = fabs((double)got[i] - want[i]) / (1 + fabs((double)want[i]));
		if (!(x <= e))
			e = x;
	}
	return e;
}

/* f32 to bf16 bits, nearest even, NaNs kept quiet. */
static inline uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

/* bf16 bits to f32. */
static inline float from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* An f32 with the given bits. */
static inline float fbits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

#endif
