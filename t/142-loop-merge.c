/*
 * 142-loop-merge: hgc_fused_merge_loops joins adjacent elementwise loops
 * over the same range only when every tensor either loop writes is read
 * and written at the same index in both; otherwise the loops stay apart.
 */
#include "t/tap.h"

#include "core/lower/fused_int.h"

/* for (i in [0, n)) dst[i + dsh] = src[i + ssh] * 2 into block. */
static struct hgc_tir_stmt *loop(struct hgc_tir_module *m, struct hgc_tir_stmt *block,
				 struct hgc_tir_tensor *dst, int64_t dsh,
				 struct hgc_tir_tensor *src, int64_t ssh, int64_t n)
{
	struct hgc_tir_var *i = hgc_tir_var_new(m, "i", hgc_tir_ty(HGC_TIR_INDEX));
	struct hgc_tir_var *x = hgc_tir_var_new(m, "x", hgc_tir_ty(HGC_TIR_F32));
	struct hgc_tir_stmt *f = hgc_tir_for(m, block, i, hgc_tir_idx(m, 0), hgc_tir_idx(m, n), NULL);
	struct hgc_tir_expr *si = hgc_tir_add(m, hgc_tir_ref(m, i), hgc_tir_idx(m, ssh));
	struct hgc_tir_expr *di = hgc_tir_add(m, hgc_tir_ref(m, i), hgc_tir_idx(m, dsh));

	hgc_tir_let(m, hgc_tir_body(f), x, hgc_tir_load(m, src, 1, &si));
	hgc_tir_store(m, hgc_tir_body(f), dst, 1, &di,
		      hgc_tir_mul(m, hgc_tir_ref(m, x), hgc_tir_f32(m, 2.0)));
	return f;
}

/* Two loops a then b on fresh tensors; the statement count after merging. */
static int merged(int64_t a_dsh, int64_t b_ssh, int64_t b_dsh, bool b_to_src, int64_t nb,
		  int *inner)
{
	struct hgc_tir_module *m = hgc_tir_module_new("t");
	int64_t dims[1] = { 64 };
	struct hgc_tir_tensor *s = hgc_tir_tensor_newc(m, "s", hgc_tir_ty(HGC_TIR_F32),
						       HGC_TIR_GLOBAL, 1, dims);
	struct hgc_tir_tensor *t = hgc_tir_tensor_newc(m, "t", hgc_tir_ty(HGC_TIR_F32),
						       HGC_TIR_GLOBAL, 1, dims);
	struct hgc_tir_stmt *block = hgc_tir_block(m, NULL), *f;
	int n;

	f = loop(m, block, t, a_dsh, s, 0, 32);
	loop(m, block, b_to_src ? s : t, b_dsh, t, b_ssh, nb);
	hgc_fused_merge_loops(m, block, 0);
	n = block->u.block.n;
	*inner = hgc_tir_body(f)->u.block.n;
	hgc_tir_module_free(m);
	return n;
}

int main(void)
{
	int inner;

	plan(10);
	is_int(merged(0, 0, 0, false, 32, &inner), 1, "same index: one loop");
	is_int(inner, 4, "its body holds both loops' statements");
	is_int(merged(0, 1, 0, false, 32, &inner), 2, "b reads t one ahead of a's write: apart");
	is_int(inner, 2, "a's body untouched");
	is_int(merged(1, 1, 1, false, 32, &inner), 1, "both at i + 1: one loop");
	is_int(merged(0, 0, 0, false, 16, &inner), 2, "other range: apart");
	is_int(merged(0, 0, 3, true, 32, &inner), 2, "b writes s (a reads s[i]) at i + 3: apart");
	is_int(merged(0, 0, 0, true, 32, &inner), 1, "b writes s[i] that a read at i: one loop");
	{
		struct hgc_tir_module *m = hgc_tir_module_new("t");
		struct hgc_tir_stmt *block = hgc_tir_block(m, NULL);

		hgc_fused_merge_loops(m, block, 0);
		is_int(block->u.block.n, 0, "empty block stays empty");
		hgc_tir_module_free(m);
	}
	is_int(merged(0, 0, 0, false, 32, &inner) + merged(0, 0, 0, false, 32, &inner), 2,
	       "repeatable");
	return done_testing();
}
