/*
 * llvm_type.c: Tensor IR types as LLVM types, and the conversions between
 * them.  Values live in registers as i1 (bool), i8 (s8, u8), i32, i64
 * (index), float, and i16 for bf16 (its bits, as the C backend keeps them);
 * lanes > 1 make vectors.  In memory bool is an i8.  Casts follow the C
 * backend exactly: float to integer saturates (NaN gives 0), f32 to bf16
 * rounds to nearest even and keeps NaNs quiet.
 */
#include "llvm_int.h"

/* Cache the types every file uses. */
void hgc_llvm_types_init(struct hgc_llvm_gen *g)
{
	g->t.v = LLVMVoidTypeInContext(g->ctx);
	g->t.i1 = LLVMInt1TypeInContext(g->ctx);
	g->t.i8 = LLVMInt8TypeInContext(g->ctx);
	g->t.i16 = LLVMInt16TypeInContext(g->ctx);
	g->t.i32 = LLVMInt32TypeInContext(g->ctx);
	g->t.i64 = LLVMInt64TypeInContext(g->ctx);
	g->t.f32 = LLVMFloatTypeInContext(g->ctx);
	g->t.i8p = LLVMPointerType(g->t.i8, 0);
}

/* The scalar type of kind k in registers (storage: in memory). */
static LLVMTypeRef kind_type(struct hgc_llvm_gen *g, enum hgc_tir_kind k, bool storage)
{
	switch (k) {
	case HGC_TIR_BOOL: return storage ? g->t.i8 : g->t.i1;
	case HGC_TIR_S8: case HGC_TIR_U8: return g->t.i8;
	case HGC_TIR_S32: return g->t.i32;
	case HGC_TIR_INDEX: return g->t.i64;
	case HGC_TIR_BF16: return g->t.i16;
	case HGC_TIR_F32: return g->t.f32;
	default: return storage ? g->t.i8 : g->t.v;
	}
}

/* Pointers point to storage types ({void, 1} is an i8*). */
static LLVMTypeRef pointer_type(struct hgc_llvm_gen *g, struct hgc_tir_type t)
{
	LLVMTypeRef ty = kind_type(g, t.kind, true);
	int i;

	for (i = 0; i < t.ptr; i++)
		ty = LLVMPointerType(ty, 0);
	return ty;
}

/* The register type of values of t. */
LLVMTypeRef hgc_llvm_type(struct hgc_llvm_gen *g, struct hgc_tir_type t)
{
	LLVMTypeRef ty = t.ptr ? pointer_type(g, t) : kind_type(g, t.kind, false);

	if (t.lanes > 1 && !t.ptr && t.kind != HGC_TIR_VOID)
		return LLVMVectorType(ty, t.lanes);
	return ty;
}

/* The type elements of type elem are stored as. */
LLVMTypeRef hgc_llvm_mem_type(struct hgc_llvm_gen *g, struct hgc_tir_type elem)
{
	return elem.ptr ? pointer_type(g, elem) : kind_type(g, elem.kind, true);
}

/* Bytes per stored element. */
int hgc_llvm_elem_size(struct hgc_tir_type elem)
{
	return elem.ptr ? 8 : elem.kind == HGC_TIR_VOID ? 1 : hgc_tir_kind_size(elem.kind);
}

/* Signed integer kinds. */
bool hgc_llvm_signed(enum hgc_tir_kind k)
{
	return k == HGC_TIR_S8 || k == HGC_TIR_S32 || k == HGC_TIR_INDEX;
}

/* v in every one of n lanes. */
LLVMValueRef hgc_llvm_splat(struct hgc_llvm_gen *g, LLVMValueRef v, int n)
{
	LLVMValueRef vec, zero;

	if (n <= 1)
		return v;
	vec = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(v), (unsigned)n));
	vec = LLVMBuildInsertElement(g->b, vec, v, LLVMConstInt(g->t.i32, 0, 0), "");
	zero = LLVMConstNull(LLVMVectorType(g->t.i32, (unsigned)n));
	return LLVMBuildShuffleVector(g->b, vec, vec, zero, "");
}

/* An integer constant of type t (splat over its lanes). */
LLVMValueRef hgc_llvm_const_int(struct hgc_llvm_gen *g, struct hgc_tir_type t, int64_t v)
{
	struct hgc_tir_type s = t;

	s.lanes = 1;
	return hgc_llvm_splat(g, LLVMConstInt(hgc_llvm_type(g, s), (unsigned long long)v,
					      hgc_llvm_signed(t.kind)), t.lanes);
}

/* An i32 constant of the lanes of v's type (a vector type or a scalar). */
static LLVMValueRef i32_like(struct hgc_llvm_gen *g, LLVMValueRef v, uint32_t c)
{
	LLVMTypeRef ty = LLVMTypeOf(v);
	int n = LLVMGetTypeKind(ty) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(ty) : 1;

	return hgc_llvm_splat(g, LLVMConstInt(g->t.i32, c, 0), n);
}

/* The lanes of v's type as a vector of elem (or elem itself). */
static LLVMTypeRef like(LLVMValueRef v, LLVMTypeRef elem)
{
	LLVMTypeRef ty = LLVMTypeOf(v);

	return LLVMGetTypeKind(ty) == LLVMVectorTypeKind ? LLVMVectorType(elem, LLVMGetVectorSize(ty))
							 : elem;
}

/* bf16 bits of f32 v: NaN keeps its top bits and turns quiet, others round to
   nearest even: (u + 0x7fff + ((u >> 16) & 1)) >> 16. */
LLVMValueRef hgc_llvm_f32_to_bf16(struct hgc_llvm_gen *g, LLVMValueRef v)
{
	LLVMBuilderRef b = g->b;
	LLVMValueRef u = LLVMBuildBitCast(b, v, like(v, g->t.i32), "");
	LLVMValueRef hi = LLVMBuildLShr(b, u, i32_like(g, v, 16), "");
	LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT,
					 LLVMBuildAnd(b, u, i32_like(g, v, 0x7fffffff), ""),
					 i32_like(g, v, 0x7f800000), "");
	LLVMValueRef odd = LLVMBuildAnd(b, hi, i32_like(g, v, 1), "");
	LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildAdd(b, u, i32_like(g, v, 0x7fff), ""), odd, "");
	LLVMValueRef q = LLVMBuildOr(b, hi, i32_like(g, v, 0x40), "");

	r = LLVMBuildSelect(b, nan, q, LLVMBuildLShr(b, r, i32_like(g, v, 16), ""), "");
	return LLVMBuildTrunc(b, r, like(v, g->t.i16), "");
}

/* f32 of bf16 bits: exact. */
LLVMValueRef hgc_llvm_bf16_to_f32(struct hgc_llvm_gen *g, LLVMValueRef v)
{
	LLVMValueRef u = LLVMBuildZExt(g->b, v, like(v, g->t.i32), "");

	u = LLVMBuildShl(g->b, u, i32_like(g, u, 16), "");
	return LLVMBuildBitCast(g->b, u, like(v, g->t.f32), "");
}

/* Registers to memory: bool becomes 0 or 1 in an i8. */
LLVMValueRef hgc_llvm_to_mem(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type t)
{
	if (t.kind == HGC_TIR_BOOL && !t.ptr)
		return LLVMBuildZExt(g->b, v, like(v, g->t.i8), "");
	return v;
}

/* Memory to registers: any nonzero byte is true. */
LLVMValueRef hgc_llvm_from_mem(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type t)
{
	if (t.kind == HGC_TIR_BOOL && !t.ptr)
		return LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
	return v;
}

/*
 * f32 to s8 or u8 as llvm.fpto[su]i.sat converts (NaN 0, saturating): a
 * select of NaN to 0 (s8 only: for u8 the clamp below does it), the clamp
 * as a compare and a select each, and a plain conversion of the clamped
 * value, which LLVM 14 vectorizes (the sat intrinsics stayed scalar, and
 * the u8 stores after a quantized MatMul took 40% of a batched int8
 * MatMul's run).  `x > lo ? x : lo` is one vmaxps on x86 (NaN gives lo),
 * where llvm.maxnum's NaN rule cost a compare, an and and a blend more.
 * With AVX-512VL the clamped value goes to i32 and is truncated to i8: one
 * vpmovdb per vector, which can store by itself, where the direct
 * conversion took vpmovdw, inserts and vpmovwb (a batched int8 MatMul
 * with K = 64, 12x128x64x128 on the Xeon: 65 -> 50 us); on AVX2 the direct
 * one is the shorter (two saturating packs against two vpshufb and an
 * unpack).
 */
/* v where `v p bound` holds, else bound. */
static LLVMValueRef bound_by(struct hgc_llvm_gen *g, LLVMValueRef v, LLVMRealPredicate p,
				double bound, int n)
{
	LLVMValueRef c = hgc_llvm_splat(g, LLVMConstReal(g->t.f32, bound), n);

	return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, p, v, c, ""), v, c, "");
}

/* f32 v with NaN as 0 and clamped to the range of u8 or s8 (to). */
static LLVMValueRef clamp_to_byte(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type to)
{
	LLVMTypeRef ty = LLVMTypeOf(v);
	int n = LLVMGetTypeKind(ty) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(ty) : 1;
	bool u = to.kind == HGC_TIR_U8;

	if (!u)
		v = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealORD, v, v, ""), v,
				    LLVMConstNull(ty), "");
	v = bound_by(g, v, LLVMRealOGT, u ? 0 : -128, n);
	return bound_by(g, v, LLVMRealOLT, u ? 255 : 127, n);
}

static LLVMValueRef float_to_byte(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type to)
{
	bool u = to.kind == HGC_TIR_U8;

	v = clamp_to_byte(g, v, to);
	if (hgc_llvm_has_feature("avx512vl"))
		return LLVMBuildTrunc(g->b, LLVMBuildFPToSI(g->b, v, like(v, g->t.i32), ""),
				      like(v, g->t.i8), "");
	return u ? LLVMBuildFPToUI(g->b, v, like(v, g->t.i8), "")
		 : LLVMBuildFPToSI(g->b, v, like(v, g->t.i8), "");
}

/*
 * (u8)round(x) or (s8)round(x), round half to even, with AVX-512VL: x
 * clamped as float_to_byte does, then rounded by adding 1.5 * 2^23 (every
 * sum lands in [2^23, 2^24), where a float's unit in the last place is 1,
 * so the add rounds x to an integer, half to even), whose bits minus the
 * constant's are that integer; truncated with vpmovdb.  One add and one
 * integer subtract instead of vrndscaleps (two uops) and vcvttps2dq: the
 * u8 epilogue of an int8 MatMul is a few instructions per vector.  NULL
 * without AVX-512VL (the caller converts the rounded value).
 */
LLVMValueRef hgc_llvm_round_to_byte(struct hgc_llvm_gen *g, LLVMValueRef x, struct hgc_tir_type to)
{
	LLVMTypeRef ty = LLVMTypeOf(x);
	int n = LLVMGetTypeKind(ty) == LLVMVectorTypeKind ? (int)LLVMGetVectorSize(ty) : 1;
	LLVMValueRef magic, i;

	if (!hgc_llvm_has_feature("avx512vl"))
		return NULL;
	magic = hgc_llvm_splat(g, LLVMConstReal(g->t.f32, 12582912.0), n);
	x = clamp_to_byte(g, x, to);
	i = LLVMBuildBitCast(g->b, LLVMBuildFAdd(g->b, x, magic, ""), like(x, g->t.i32), "");
	i = LLVMBuildSub(g->b, i, LLVMBuildBitCast(g->b, magic, like(x, g->t.i32), ""), "");
	return LLVMBuildTrunc(g->b, i, like(x, g->t.i8), "");
}

/* f32 to an integer kind: llvm.fpto[su]i.sat (NaN 0, saturating), or != 0 for bool. */
static LLVMValueRef from_float(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type to)
{
	LLVMTypeRef ov[2];

	if (to.kind == HGC_TIR_F32)
		return v;
	if (to.kind == HGC_TIR_BOOL)
		return LLVMBuildFCmp(g->b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
	if (to.kind == HGC_TIR_U8 || to.kind == HGC_TIR_S8)
		return float_to_byte(g, v, to);
	ov[0] = hgc_llvm_type(g, to);
	ov[1] = LLVMTypeOf(v);
	return hgc_llvm_call_intrinsic(g, to.kind == HGC_TIR_U8 ? "llvm.fptoui.sat" : "llvm.fptosi.sat",
				       ov, 2, &v, 1);
}

/* An integer or bool (of kind from) to any value kind but bf16. */
static LLVMValueRef from_int(struct hgc_llvm_gen *g, LLVMValueRef v, enum hgc_tir_kind from,
			     struct hgc_tir_type to)
{
	LLVMTypeRef ty = hgc_llvm_type(g, to);

	if (to.kind == HGC_TIR_F32)
		return hgc_llvm_signed(from) ? LLVMBuildSIToFP(g->b, v, ty, "")
					     : LLVMBuildUIToFP(g->b, v, ty, "");
	if (to.kind == HGC_TIR_BOOL)
		return LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
	return LLVMBuildIntCast2(g->b, v, ty, hgc_llvm_signed(from), "");
}

/* (to)v as the C backend casts: bf16 through f32, pointers by bitcast. */
LLVMValueRef hgc_llvm_cast(struct hgc_llvm_gen *g, LLVMValueRef v, struct hgc_tir_type from,
			   struct hgc_tir_type to)
{
	struct hgc_tir_type f32 = to;

	if (hgc_tir_type_eq(from, to))
		return v;
	if (from.ptr || to.ptr) {
		if (from.ptr && to.ptr)
			return LLVMBuildBitCast(g->b, v, hgc_llvm_type(g, to), "");
		hgc_llvm_err(g, "cannot cast between pointers and values");
		return LLVMGetUndef(hgc_llvm_type(g, to));
	}
	f32.kind = HGC_TIR_F32;
	if (to.kind == HGC_TIR_BF16)
		return hgc_llvm_f32_to_bf16(g, hgc_llvm_cast(g, v, from, f32));
	if (from.kind == HGC_TIR_BF16) {
		v = hgc_llvm_bf16_to_f32(g, v);
		from.kind = HGC_TIR_F32;
	}
	if (from.kind == HGC_TIR_F32)
		return from_float(g, v, to);
	return from_int(g, v, from.kind, to);
}
