/*
 * region.c: a region of fusible ops (no tunable op: softmax alone,
 * layernorm after a residual add, an elementwise chain) into Tensor IR, at
 * its first member: one loop over blocks of rows of the region's domain,
 * every member lowered on the block's box, so a block is read from memory
 * once and stays in L1 across the members.  See docs/fusion.md.
 */
#include "fused_int.h"

#include <stdio.h>

/* Rows per block of a region: the largest divisor of rows whose block of
   every tensor touched (nt of them, rowlen f32 elements a row) fits in L1,
   at least 1. */
static int64_t region_rows(int64_t rows, int64_t rowlen, int nt)
{
	int64_t rb;

	for (rb = rows; rb > 1; rb--)
		if (rows % rb == 0 && rb * rowlen * 4 * nt <= L1_BYTES)
			break;
	return rb;
}

/* The box of block i of a region: the dims before k-1 one index each, dim
   k-1 in blocks of rb rows, the dims from k whole. */
static void region_box(struct hgc_tir_module *m, const struct hgc_tensor *dom, int k, int64_t rb,
		       struct hgc_tir_var *i, struct box *bx)
{
	int64_t inner = dom->dims[k - 1] / rb;
	int j;

	bx->n = dom->ndims;
	for (j = 0; j < dom->ndims; j++)
		bx->start[j] = NULL, bx->ext[j] = j < k ? 1 : dom->dims[j];
	bx->start[k - 1] = hgc_tir_mul(m, hgc_fused_fold_index(m, hgc_tir_ref(m, i), 1, inner),
				       hgc_tir_idx(m, rb));
	bx->ext[k - 1] = rb;
	for (j = k - 2; j >= 0; inner *= dom->dims[j--])
		bx->start[j] = hgc_fused_fold_index(m, hgc_tir_ref(m, i), inner, dom->dims[j]);
}

/* A loop over n blocks in block: parallel unless the lowering is serial or
   inside a parallel loop already; its body. */
static struct hgc_tir_stmt *block_loop(struct hgc_lower_ctx *cx, struct hgc_tir_stmt *block,
				       struct hgc_tir_var *i, int64_t n)
{
	struct hgc_tir_expr *b = hgc_tir_idx(cx->m, 0), *e = hgc_tir_idx(cx->m, n);

	if (cx->in_parallel || cx->opts->serial || n < 2)
		return hgc_tir_body(hgc_tir_for(cx->m, block, i, b, e, NULL));
	return hgc_tir_body(hgc_tir_pfor(cx->m, block, 1, &i, &b, &e, NULL));
}

/* Lower region fo (fusible ops alone): a loop over blocks of rows of its
   domain, every member on the block's box, so a block is read from memory
   once and stays in L1 across the members. */
int hgc_fused_lower_region(struct hgc_lower_ctx *cx, struct fstate *st,
			   const struct hgc_fused_op *fo, struct hgc_diag *d)
{
	const struct hgc_tensor *dom = fo->domain;
	int k = dom->ndims - 1, i, rc, from;
	int64_t rowlen = 1, rb, nblk = 1;
	struct hgc_tir_var *v;
	struct hgc_tir_stmt *body;
	bool saved = cx->in_parallel;
	struct box bx;
	char line[256];

	if (hgc_fused_prepare(cx, st, fo, d))
		return -1;
	for (i = 0; fo->reduces && i < dom->ndims; i++)
		if (fo->reduced[i] && i < k)
			k = i;
	if (k == 0) {
		st->last = NULL;
		return hgc_fused_members(cx, fo, cx->f->body, NULL, d) ? -1 : 1;
	}
	for (i = k; i < dom->ndims; i++)
		rowlen *= dom->dims[i];
	rb = region_rows(dom->dims[k - 1], rowlen, 1 + fo->nmembers);
	for (i = 0; i < k; i++)
		nblk *= dom->dims[i];
	nblk /= rb;
	v = hgc_tir_var_new(cx->m, "blk", hgc_tir_ty(HGC_TIR_INDEX));
	from = cx->f->body->u.block.n;
	body = block_loop(cx, cx->f->body, v, nblk);
	region_box(cx->m, dom, k, rb, v, &bx);
	cx->in_parallel = true;
	rc = hgc_fused_members(cx, fo, body, &bx, d);
	cx->in_parallel = saved;
	snprintf(line, sizeof(line), "region of %d fusible ops (%s ...): %lld blocks of %lld x %lld",
		 fo->nmembers, hgc_op_table[fo->member[0]->kind].name, (long long)nblk,
		 (long long)rb, (long long)rowlen);
	hgc_fused_log(st->o, line);
	hgc_fused_mark_merge(st, hgc_fused_new_pfor(cx->f->body, from), hgc_fused_name(cx, fo));
	return rc ? -1 : 1;
}

