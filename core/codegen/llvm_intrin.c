/*
 * llvm_intrin.c: Tensor IR intrinsics.  brgemm and brgemm_strd call the
 * runtime's hgc_brgemm_{f32,u8s8s32,bf16}[_strd] chosen by A's element type,
 * with the IR's element strides turned into the runtime's byte strides and
 * "accumulate" into beta, as the C backend does; fill is a loop LLVM turns
 * into memset when it can; copy and copy2d are memmoves.  sqrt, abs, floor
 * and round (nearbyint: halves to even, like the C backend) are LLVM
 * intrinsics, single instructions that vectorize; exp and exp_nonpos are
 * inline IR (a range reduction and a polynomial, within 2 ulp of expf) so that loops
 * around it vectorize too (exp_nonpos on AVX-512 as a call whose vector
 * variants use vscalefps: llvm_vfabi.c), and so is erf (math_poly.h); log, pow and tanh
 * call libm (logf ...) as
 * the C backend does: such a call may set errno, so
 * LLVM does not turn it into a vector call that codegen splits back into
 * scalar calls (and unrolls), which bloats code for no speed.  Thread
 * queries go to OpenMP.
 */
#include "llvm_int.h"
#include "math_poly.h"
#include "runtime/runtime.h"

#include <stdio.h>
#include <string.h>

/* Call an overloaded LLVM intrinsic by name. */
LLVMValueRef hgc_llvm_call_intrinsic(struct hgc_llvm_gen *g, const char *name, LLVMTypeRef *ov,
				     int nov, LLVMValueRef *args, int n)
{
	unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
	LLVMValueRef fn;

	if (!id) {
		hgc_llvm_err(g, "LLVM has no intrinsic %s", name);
		return LLVMGetUndef(ov[0]);
	}
	fn = LLVMGetIntrinsicDeclaration(g->mod, id, ov, (size_t)nov);
	return LLVMBuildCall2(g->b, LLVMIntrinsicGetType(g->ctx, id, ov, (size_t)nov), fn, args,
			      (unsigned)n, "");
}

/*
 * Let LLVM vectorize the function around a brgemm call with zmm where the
 * microkernels are the zmm (or AMX) ones: they run the core at its
 * AVX-512 clock anyway, so the loops beside them (epilogues, softmax rows)
 * lose nothing by being 512 bits wide, and do half the instructions.
 * Measured on the Xeon, one thread, alternated: an int8 12x128x64x128
 * MatMul with its u8 epilogue 48-52 -> 40 us, BERT's FFN (GELU) 10.4 ->
 * 9.5-9.6 ms.  Elsewhere the default (256 on Intel) stays: a LayerNorm
 * region, with no zmm code of its own, ran 20% slower with one zmm loop
 * (its clock drops for it).
 */
static void prefer_zmm(struct hgc_llvm_gen *g)
{
	static const char key[] = "prefer-vector-width", val[] = "512";

	if (hgc_rt_isa() != HGC_ISA_AVX512 || !hgc_llvm_has_feature("avx512f"))
		return;
	LLVMAddAttributeAtIndex(g->fn, LLVMAttributeFunctionIndex,
				LLVMCreateStringAttribute(g->ctx, key, sizeof(key) - 1, val,
							  sizeof(val) - 1));
}

/* brgemm(A, B, C, bs, M, N, K, lda, ldb, ldc, acc), brgemm_strd(A, B, C, bs,
   stride_a, stride_b, M, N, K, lda, ldb, ldc, acc), brgemm_post(A, B, C,
   bs, M, N, K, lda, ldb, ldc, acc, bias, relu) and brgemm_q(A, B, C, bs, M,
   N, K, lda, ldb, ldc, acc, Y, ldy, steps, v0, v1, v2, v3). */
static LLVMValueRef brgemm(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	static const char *const names[3][3] = {
		{ "hgc_brgemm_f32", "hgc_brgemm_u8s8s32", "hgc_brgemm_bf16" },
		{ "hgc_brgemm_f32_strd", "hgc_brgemm_u8s8s32_strd", "hgc_brgemm_bf16_strd" },
		{ "hgc_brgemm_f32_post", "", "" },
	};
	enum hgc_tir_kind ka = (enum hgc_tir_kind)e->ops[0]->type.kind;
	bool strd = e->op == HGC_TIR_I_BRGEMM_STRD, post = e->op == HGC_TIR_I_BRGEMM_POST;
	bool q = e->op == HGC_TIR_I_BRGEMM_Q;
	LLVMValueRef args[18];
	LLVMTypeRef types[18];
	int i, k = ka == HGC_TIR_U8 ? 1 : ka == HGC_TIR_BF16 ? 2 : 0, size;

	for (i = 0; i < e->nops && i < 18; i++) {
		args[i] = hgc_llvm_expr(g, e->ops[i]);
		if (i < 3 || (post && i == 11) || (q && (i == 11 || i >= 14))) {
			args[i] = LLVMBuildBitCast(g->b, args[i], g->t.i8p, "");
		} else if ((!q && i == e->nops - 1) || ((post || q) && i == 10)) {
			args[i] = LLVMBuildZExt(g->b, args[i], g->t.i32, "");
		} else if (strd && (i == 4 || i == 5)) {
			size = hgc_tir_kind_size((enum hgc_tir_kind)e->ops[i - 4]->type.kind);
			args[i] = LLVMBuildNSWMul(g->b, args[i], LLVMConstInt(g->t.i64, size, 0), "");
		}
		types[i] = LLVMTypeOf(args[i]);
	}
	prefer_zmm(g);
	return hgc_llvm_call_extern(g, q ? "hgc_brgemm_u8s8_q" : names[post ? 2 : strd][k], g->t.v,
				    types, args, i);
}

/* The element type behind pointer operand i of e. */
static struct hgc_tir_type pointee(const struct hgc_tir_expr *e, int i)
{
	struct hgc_tir_type t = e->ops[i]->type;

	t.ptr--;
	return t;
}

/* fill(dst, value, n): dst[i] = value for i in [0, n). */
static void fill(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type elem = pointee(e, 0);
	LLVMValueRef d = hgc_llvm_expr(g, e->ops[0]);
	LLVMValueRef v = hgc_llvm_to_mem(g, hgc_llvm_expr(g, e->ops[1]), elem);
	LLVMValueRef p, st;
	struct hgc_llvm_loop l;

	hgc_llvm_loop_open(g, &l, hgc_llvm_expr(g, e->ops[2]));
	p = LLVMBuildInBoundsGEP2(g->b, hgc_llvm_mem_type(g, elem), d, &l.i, 1, "");
	st = LLVMBuildStore(g->b, v, p);
	LLVMSetAlignment(st, (unsigned)hgc_llvm_elem_size(elem));
	hgc_llvm_loop_close(g, &l);
}

/* memmove of n elements of elem. */
static void move(struct hgc_llvm_gen *g, struct hgc_tir_type elem, LLVMValueRef d,
		 LLVMValueRef s, LLVMValueRef n)
{
	int size = hgc_llvm_elem_size(elem);
	LLVMValueRef bytes = LLVMBuildNSWMul(g->b, n, LLVMConstInt(g->t.i64, size, 0), "");

	LLVMBuildMemMove(g->b, d, (unsigned)size, s, (unsigned)size, bytes);
}

/* copy(dst, src, n) and copy2d(dst, src, rows, cols, ldd, lds). */
static void copy(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	struct hgc_tir_type elem = pointee(e, 0);
	LLVMTypeRef ty = hgc_llvm_mem_type(g, elem);
	LLVMValueRef d = hgc_llvm_expr(g, e->ops[0]), s = hgc_llvm_expr(g, e->ops[1]);
	LLVMValueRef cols, ldd, lds, off;
	struct hgc_llvm_loop l;

	if (e->op == HGC_TIR_I_COPY) {
		move(g, elem, d, s, hgc_llvm_expr(g, e->ops[2]));
		return;
	}
	cols = hgc_llvm_expr(g, e->ops[3]);
	ldd = hgc_llvm_expr(g, e->ops[4]);
	lds = hgc_llvm_expr(g, e->ops[5]);
	hgc_llvm_loop_open(g, &l, hgc_llvm_expr(g, e->ops[2]));
	off = LLVMBuildNSWMul(g->b, l.i, ldd, "");
	d = LLVMBuildInBoundsGEP2(g->b, ty, d, &off, 1, "");
	off = LLVMBuildNSWMul(g->b, l.i, lds, "");
	s = LLVMBuildInBoundsGEP2(g->b, ty, s, &off, 1, "");
	move(g, elem, d, s, cols);
	hgc_llvm_loop_close(g, &l);
}

/* A libm function of n (1 or 2) floats, lane by lane for vectors. */
static LLVMValueRef libm(struct hgc_llvm_gen *g, const char *name, LLVMValueRef *v, int n,
			 int lanes)
{
	LLVMTypeRef types[2] = { g->t.f32, g->t.f32 };
	LLVMValueRef r, x[2], idx;
	int i, k;

	if (lanes <= 1)
		return hgc_llvm_call_extern(g, name, g->t.f32, types, v, n);
	r = LLVMGetUndef(LLVMTypeOf(v[0]));
	for (i = 0; i < lanes; i++) {
		idx = LLVMConstInt(g->t.i32, (unsigned)i, 0);
		for (k = 0; k < n; k++)
			x[k] = LLVMBuildExtractElement(g->b, v[k], idx, "");
		x[0] = hgc_llvm_call_extern(g, name, g->t.f32, types, x, n);
		r = LLVMBuildInsertElement(g->b, r, x[0], idx, "");
	}
	return r;
}

/* A constant f32 (or a vector of them) of type ty. */
static LLVMValueRef fconst(LLVMTypeRef ty, double v)
{
	LLVMValueRef c = LLVMConstReal(LLVMGetTypeKind(ty) == LLVMVectorTypeKind
					       ? LLVMGetElementType(ty) : ty, v);
	LLVMValueRef lanes[64];
	unsigned n, i;

	if (LLVMGetTypeKind(ty) != LLVMVectorTypeKind)
		return c;
	n = LLVMGetVectorSize(ty);
	for (i = 0; i < n && i < 64; i++)
		lanes[i] = c;
	return LLVMConstVector(lanes, n);
}

/* The same type with i32 elements. */
static LLVMTypeRef int_like(struct hgc_llvm_gen *g, LLVMTypeRef ty)
{
	if (LLVMGetTypeKind(ty) == LLVMVectorTypeKind)
		return LLVMVectorType(g->t.i32, LLVMGetVectorSize(ty));
	return g->t.i32;
}

/* An i32 constant of integer type ity (splat when ity is a vector). */
static LLVMValueRef iconst(LLVMTypeRef ity, int v)
{
	LLVMValueRef c = LLVMConstInt(LLVMInt32TypeInContext(LLVMGetTypeContext(ity)),
				      (unsigned long long)(long long)v, 1);

	if (LLVMGetTypeKind(ity) == LLVMVectorTypeKind) {
		LLVMValueRef a[64];
		unsigned k, w = LLVMGetVectorSize(ity);

		for (k = 0; k < w && k < 64; k++)
			a[k] = c;
		return LLVMConstVector(a, w);
	}
	return c;
}

/*
 * p * 2^n for integral n (as f32) in [-150, 128] and p in [0.7, 1.42] (e^r):
 * 2^n = 2^h * 2^(n - h) with h = floor(n / 2), each factor a normal float.
 * p * 2^h is a normal float too, so it is exact as an integer add to p's
 * exponent field; only 2^(n - h) needs the multiply, which rounds into the
 * subnormals or overflows to inf as expf does.  The same value as two
 * multiplies, with one multiply, the float halving and its floor fewer.
 */
static LLVMValueRef scale_pow2(struct hgc_llvm_gen *g, LLVMValueRef p, LLVMValueRef n)
{
	LLVMTypeRef fty = LLVMTypeOf(p), ity = int_like(g, fty);
	LLVMValueRef ni = LLVMBuildFPToSI(g->b, n, ity, "");
	LLVMValueRef h = LLVMBuildAShr(g->b, ni, iconst(ity, 1), "");
	LLVMValueRef l = LLVMBuildSub(g->b, ni, h, "");
	LLVMValueRef bits = LLVMBuildBitCast(g->b, p, ity, "");

	bits = LLVMBuildAdd(g->b, bits, LLVMBuildShl(g->b, h, iconst(ity, 23), ""), "");
	l = LLVMBuildShl(g->b, LLVMBuildAdd(g->b, l, iconst(ity, 127), ""), iconst(ity, 23), "");
	return LLVMBuildFMul(g->b, LLVMBuildBitCast(g->b, bits, fty, ""),
			     LLVMBuildBitCast(g->b, l, fty, ""), "");
}

/* fma(a, b, c) on f32 values of one type. */
static LLVMValueRef fma3(struct hgc_llvm_gen *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
	LLVMTypeRef ty = LLVMTypeOf(c);
	LLVMValueRef args[3] = { a, b, c };

	return hgc_llvm_call_intrinsic(g, "llvm.fma", &ty, 1, args, 3);
}

/* Horner's rule in fma steps over n coefficients, highest degree first. */
static LLVMValueRef horner(struct hgc_llvm_gen *g, const double *c, int n, LLVMValueRef t)
{
	LLVMTypeRef ty = LLVMTypeOf(t);
	LLVMValueRef p = fconst(ty, c[0]), a[3];
	int i;

	for (i = 1; i < n; i++) {
		a[0] = p, a[1] = t, a[2] = fconst(ty, c[i]);
		p = hgc_llvm_call_intrinsic(g, "llvm.fma", &ty, 1, a, 3);
	}
	return p;
}

/*
 * e^r on |r| <= ln2 / 2 by math_poly.h's degree-6 polynomial in Horner's
 * form: six fmas.  The split form it replaced ((1 + r) + r^2 ((c2 + c3 r) +
 * r^2 ((c4 + c5 r) + c6 r^2)), four dependent steps after r^2) took seven
 * operations and was less exact: over every f32 from -0 down to -87,
 * exp_nonpos was within 1.275 ulp of the exact value with it and differed
 * from glibc's expf on 39.0 million inputs, within 0.901 ulp and on 5.2
 * million in Horner's form (both within 1 ulp of expf).  The exp loops
 * (softmax's) are bound by the vector ports, not by this chain's latency.
 */
static LLVMValueRef exp_poly(struct hgc_llvm_gen *g, LLVMValueRef r)
{
	return horner(g, hgc_exp_poly, HGC_EXP_POLY_N, r);
}

/* c where x compares to c by pred (x < c: clamped below), else x; a NaN
   compares false and stays. */
static LLVMValueRef clamp_to(struct hgc_llvm_gen *g, LLVMValueRef x, LLVMRealPredicate pred,
			     double c)
{
	LLVMValueRef k = fconst(LLVMTypeOf(x), c);

	return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, pred, x, k, ""), k, x, "");
}

/* r = x - n ln2 (Cody-Waite: ln2 in a high part exact in n ln2, and a low part). */
static LLVMValueRef reduce_ln2(struct hgc_llvm_gen *g, LLVMValueRef x, LLVMValueRef n)
{
	LLVMTypeRef ty = LLVMTypeOf(x);

	return fma3(g, n, fconst(ty, 2.12194440e-4), fma3(g, n, fconst(ty, -0.693359375), x));
}

/*
 * expf as inline IR, so that the loops around it vectorize (a libm call
 * keeps a loop scalar: a softmax over attention scores spent most of its
 * time in expf).  x = n ln2 + r with |r| <= ln2/2 (reduce_ln2), e^r by a
 * degree-6 polynomial (exp_poly: relative error below 4e-9; the whole exp
 * is within 1 ulp of glibc's expf over every float), times 2^n applied as
 * two halves so that n from -150 to 128 stays in range (scale_pow2): large
 * x overflows to inf and very negative x underflows to 0 as expf does; x is
 * first clamped to [-104, 89] (beyond, the result is 0 or inf anyway), and
 * a NaN comes back as itself.
 */
static LLVMValueRef exp_inline(struct hgc_llvm_gen *g, LLVMValueRef x)
{
	LLVMTypeRef ty = LLVMTypeOf(x);
	LLVMTypeRef tys[1] = { ty };
	LLVMValueRef xc, n, p, isnan;

	xc = clamp_to(g, clamp_to(g, x, LLVMRealOLT, -104.0), LLVMRealOGT, 89.0);
	n = LLVMBuildFMul(g->b, xc, fconst(ty, 1.44269504088896341), "");
	n = hgc_llvm_call_intrinsic(g, "llvm.nearbyint", tys, 1, &n, 1);
	p = scale_pow2(g, exp_poly(g, reduce_ln2(g, xc, n)), n);
	isnan = LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, "");
	return LLVMBuildSelect(g->b, isnan, x, p, "");
}

/*
 * exp_nonpos: e^x for x <= 88 (softmax's exp(x - max x), erf's 1 - exp(Q)),
 * exp_inline's value wherever that is at least 2^-126 and 0 below (no
 * subnormal results), in 14 vector operations where exp_inline takes 23:
 * n = round(x / ln2) is the fma x log2(e) + 1.5 * 2^23 + 127, whose low
 * mantissa bits are then n + 127, so that shifting its bits left by 23
 * gives the float 2^n (for n >= -126; zero or a negative integer below,
 * which the integer max with 0 turns into +0).  No NaN test: a NaN x goes
 * through the polynomial and the multiply as a NaN; no upper clamp: above
 * 88 the result is not expf's (n + 127 runs into the sign bit).  On Intel's
 * zmm ports the exp is most of a softmax row's time: attention at BERT-large
 * seq 384 ran 6.5% faster.
 */
/* e^x's pieces for exp_nonpos: p = e^r (returned), n = round(x / ln2) and t, the
   fma whose low mantissa bits are n + 127 (see exp_nonpos_inline). */
static LLVMValueRef exp_nonpos_parts(struct hgc_llvm_gen *g, LLVMValueRef x, LLVMValueRef *t,
				     LLVMValueRef *n)
{
	LLVMTypeRef ty = LLVMTypeOf(x);
	const double round_bias = 12582912.0 + 127.0;
	LLVMValueRef xc = clamp_to(g, x, LLVMRealOLT, -104.0);

	*t = fma3(g, xc, fconst(ty, 1.44269504088896341), fconst(ty, round_bias));
	*n = LLVMBuildFSub(g->b, *t, fconst(ty, round_bias), "");
	return exp_poly(g, reduce_ln2(g, xc, *n));
}

static LLVMValueRef exp_nonpos_inline(struct hgc_llvm_gen *g, LLVMValueRef x)
{
	LLVMTypeRef ty = LLVMTypeOf(x), ity = int_like(g, ty);
	LLVMValueRef t, n, p = exp_nonpos_parts(g, x, &t, &n), s;

	s = LLVMBuildShl(g->b, LLVMBuildBitCast(g->b, t, ity, ""), iconst(ity, 23), "");
	s = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSGT, s, iconst(ity, 0), ""), s,
			    iconst(ity, 0), "");
	return LLVMBuildFMul(g->b, p, LLVMBuildBitCast(g->b, s, ty, ""), "");
}

/*
 * exp_nonpos's vector form on AVX-512 (llvm_vfabi.c's variants): p * 2^n by
 * vscalefps, where exp_nonpos_inline takes a shift, an integer max and a
 * multiply.  The same values wherever those are at least 2^-126; below,
 * vscalefps rounds p * 2^n into the subnormals (n >= -150 after the clamp,
 * so -inf still comes out 0) where the shift flushes to 0: the intrinsic
 * leaves that range's result to the backend (docs/tir.md).
 */
static LLVMValueRef exp_nonpos_scalef(struct hgc_llvm_gen *g, LLVMValueRef x)
{
	LLVMTypeRef ty = LLVMTypeOf(x);
	unsigned w = LLVMGetVectorSize(ty);
	LLVMTypeRef mty = w == 16 ? g->t.i16 : g->t.i8;
	LLVMValueRef t, a[5];
	char name[48];

	a[0] = exp_nonpos_parts(g, x, &t, &a[1]);
	a[2] = LLVMGetUndef(ty);
	a[3] = LLVMConstAllOnes(mty);
	a[4] = LLVMConstInt(g->t.i32, 4, 0);	/* the current rounding mode */
	snprintf(name, sizeof(name), "llvm.x86.avx512.mask.scalef.ps.%u", w * 32);
	return hgc_llvm_call_intrinsic(g, name, &ty, 0, a, w == 16 ? 5 : 4);
}

/* exp_nonpos on x: the scalar IR, or vscalefps on a vector variant's lanes. */
static LLVMValueRef exp_nonpos_body(struct hgc_llvm_gen *g, LLVMValueRef x)
{
	if (LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind)
		return exp_nonpos_scalef(g, x);
	return exp_nonpos_inline(g, x);
}

/* exp_nonpos of a scalar: with vector variants where AVX-512 (and VL, for
   the 4- and 8-lane ones) has vscalefps, else the inline IR. */
static LLVMValueRef exp_nonpos(struct hgc_llvm_gen *g, LLVMValueRef x)
{
	if (LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind ||
	    !hgc_llvm_has_feature("avx512f") || !hgc_llvm_has_feature("avx512vl"))
		return exp_nonpos_inline(g, x);
	return hgc_llvm_vfabi_call(g, "exp_nonpos", x, exp_nonpos_body);
}


/*
 * erff as inline IR (math_poly.h has the pieces): both polynomials are
 * computed and a select keeps one, so the code has no branch and the loop
 * around it (GELU after a MatMul) vectorizes.  NaN falls through to the
 * large branch and comes out NaN.  The large branch's Q(|x|) is log erfc,
 * at most -1.8 where it is kept (|x| in [1, 4)), so exp_nonpos serves; its
 * results there are above 2^-126, exactly exp_inline's.
 */
static LLVMValueRef erf_inline(struct hgc_llvm_gen *g, LLVMValueRef x)
{
	LLVMTypeRef ty = LLVMTypeOf(x);
	LLVMValueRef a, small, large, one, r, args[2];

	args[0] = x;
	a = hgc_llvm_call_intrinsic(g, "llvm.fabs", &ty, 1, args, 1);
	small = horner(g, hgc_erf_small, HGC_ERF_SMALL_N, LLVMBuildFMul(g->b, a, a, ""));
	small = LLVMBuildFMul(g->b, x, small, "");
	large = exp_nonpos_inline(g, horner(g, hgc_erf_large, HGC_ERF_LARGE_N, a));
	args[0] = LLVMBuildFSub(g->b, fconst(ty, 1.0), large, ""), args[1] = x;
	large = hgc_llvm_call_intrinsic(g, "llvm.copysign", &ty, 1, args, 2);
	args[0] = fconst(ty, 1.0);
	one = hgc_llvm_call_intrinsic(g, "llvm.copysign", &ty, 1, args, 2);
	r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOGE, a, fconst(ty, 4.0), ""), one,
			    large, "");
	return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOLT, a, fconst(ty, 1.0), ""),
			       small, r, "");
}

/* |a| of an integer: a < 0 ? -a : a. */
static LLVMValueRef int_abs(struct hgc_llvm_gen *g, LLVMValueRef a, struct hgc_tir_type t)
{
	LLVMValueRef neg;

	if (!hgc_llvm_signed(t.kind))
		return a;
	neg = LLVMBuildICmp(g->b, LLVMIntSLT, a, LLVMConstNull(LLVMTypeOf(a)), "");
	return LLVMBuildSelect(g->b, neg, LLVMBuildNeg(g->b, a, ""), a, "");
}

/* exp exp_nonpos log sqrt tanh erf abs floor round pow. */
static LLVMValueRef math(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	static const char *const fns[HGC_TIR_INTRIN_COUNT] = {
		[HGC_TIR_I_SQRT] = "llvm.sqrt", [HGC_TIR_I_ABS] = "llvm.fabs",
		[HGC_TIR_I_FLOOR] = "llvm.floor", [HGC_TIR_I_ROUND] = "llvm.nearbyint",
	};
	static const char *const libm_fns[HGC_TIR_INTRIN_COUNT] = {
		[HGC_TIR_I_EXP] = "expf", [HGC_TIR_I_EXP_NONPOS] = "expf", [HGC_TIR_I_LOG] = "logf",
		[HGC_TIR_I_TANH] = "tanhf",
		[HGC_TIR_I_ERF] = "erff", [HGC_TIR_I_POW] = "powf",
	};
	LLVMValueRef a[2] = { NULL, NULL };
	LLVMTypeRef ty;
	int i;

	for (i = 0; i < e->nops && i < 2; i++)
		a[i] = hgc_llvm_expr(g, e->ops[i]);
	ty = LLVMTypeOf(a[0]);
	if (e->op == HGC_TIR_I_ABS && e->type.kind != HGC_TIR_F32)
		return int_abs(g, a[0], e->type);
	if (e->op == HGC_TIR_I_EXP && e->type.kind == HGC_TIR_F32)
		return exp_inline(g, a[0]);
	if (e->op == HGC_TIR_I_EXP_NONPOS && e->type.kind == HGC_TIR_F32)
		return exp_nonpos(g, a[0]);
	if (e->op == HGC_TIR_I_ERF && e->type.kind == HGC_TIR_F32)
		return erf_inline(g, a[0]);
	if (libm_fns[e->op])
		return libm(g, libm_fns[e->op], a, e->nops, e->type.lanes);
	return hgc_llvm_call_intrinsic(g, fns[e->op], &ty, 1, a, e->nops);
}

/* thread_id() and num_threads() as OpenMP reports them, widened to index. */
static LLVMValueRef thread_query(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	const char *name = e->op == HGC_TIR_I_THREAD_ID ? "omp_get_thread_num"
							: "omp_get_num_threads";
	LLVMValueRef r = hgc_llvm_call_extern(g, name, g->t.i32, NULL, NULL, 0);

	return LLVMBuildSExt(g->b, r, g->t.i64, "");
}

/* Lanes lo[v] and hi[v] of a split reduction combined (lanes_fold); a max
   or min is the lowering's NaN-aware fold with hi as the element:
   hi != hi ? hi : (hi > lo ? hi : lo). */
static LLVMValueRef lanes_combine(struct hgc_llvm_gen *g, int op, LLVMValueRef lo,
				  LLVMValueRef hi)
{
	LLVMValueRef pick;

	switch (op) {
	case HGC_TIR_I_LANES_ADD:
		return LLVMBuildFAdd(g->b, lo, hi, "");
	case HGC_TIR_I_LANES_MUL:
		return LLVMBuildFMul(g->b, lo, hi, "");
	default:
		pick = LLVMBuildFCmp(g->b, op == HGC_TIR_I_LANES_MAX ? LLVMRealOGT : LLVMRealOLT,
				     hi, lo, "");
		pick = LLVMBuildOr(g->b, LLVMBuildFCmp(g->b, LLVMRealUNO, hi, hi, ""), pick, "");
		return LLVMBuildSelect(g->b, pick, hi, lo, "");
	}
}

/* lanes_add/mul/max/min(p, n): one <n x float> load, then halves combined
   until one lane is left: log2(n) dependent steps where folding the lanes
   one by one was n - 1 (the C backend's hgc_lanes_* do the same tree).
   Every step stays n lanes wide (the upper half shuffled down onto the
   lower, the lanes above h unused): the split reduction's accumulators are
   stored to p just before, and a whole-width use of them is what keeps the
   SLP vectorizer building their loop n lanes wide (halves of <n x float>
   made it two loops of n/2). */
static LLVMValueRef lanes_fold(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	int n = (int)e->ops[1]->u.i, h, v;
	LLVMTypeRef vt = LLVMVectorType(g->t.f32, (unsigned)n);
	LLVMValueRef p = LLVMBuildBitCast(g->b, hgc_llvm_expr(g, e->ops[0]),
					  LLVMPointerType(vt, 0), "");
	LLVMValueRef x = LLVMBuildLoad2(g->b, vt, p, ""), hi, sel[HGC_TIR_LANES_MAX];

	LLVMSetAlignment(x, 4);
	for (h = n / 2; h > 0; h /= 2) {
		for (v = 0; v < n; v++)
			sel[v] = v < h ? LLVMConstInt(g->t.i32, (unsigned long long)(v + h), 0)
				       : LLVMGetUndef(g->t.i32);
		hi = LLVMBuildShuffleVector(g->b, x, LLVMGetUndef(vt),
					    LLVMConstVector(sel, (unsigned)n), "");
		x = lanes_combine(g, e->op, x, hi);
	}
	return LLVMBuildExtractElement(g->b, x, LLVMConstInt(g->t.i32, 0, 0), "");
}

/* An intrinsic: a value for math and thread queries, a call statement for the rest. */
LLVMValueRef hgc_llvm_intrin(struct hgc_llvm_gen *g, const struct hgc_tir_expr *e)
{
	switch (e->op) {
	case HGC_TIR_I_BRGEMM:
	case HGC_TIR_I_BRGEMM_STRD:
	case HGC_TIR_I_BRGEMM_POST:
	case HGC_TIR_I_BRGEMM_Q:
		return brgemm(g, e);
	case HGC_TIR_I_FILL:
		fill(g, e);
		return NULL;
	case HGC_TIR_I_COPY:
	case HGC_TIR_I_COPY2D:
		copy(g, e);
		return NULL;
	case HGC_TIR_I_THREAD_ID:
	case HGC_TIR_I_NUM_THREADS:
		return thread_query(g, e);
	case HGC_TIR_I_LANES_ADD:
	case HGC_TIR_I_LANES_MUL:
	case HGC_TIR_I_LANES_MAX:
	case HGC_TIR_I_LANES_MIN:
		return lanes_fold(g, e);
	default:
		if ((unsigned)e->op < HGC_TIR_INTRIN_COUNT && e->nops >= 1)
			return math(g, e);
		hgc_llvm_err(g, "unknown intrinsic #%d", e->op);
		return LLVMGetUndef(g->t.i64);
	}
}
