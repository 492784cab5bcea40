/*
 * tmpl_kernel.c: the two computing statements of templates.  brgemm: batch
 * loops fill arrays of A and B block addresses (sized by the batch's bounds),
 * then one brgemm intrinsic takes them, its sizes and leading dimensions read
 * from the slices' ranges over the buffers' physical dims.  Elementwise
 * assignment: loops over the ranges of the left side, element loads of the
 * slices on the right, arithmetic in a common type, a converting store.
 */
#include "tmpl.h"

#include <string.h>

/* Elements between consecutive indices of physical dim i of t. */
static int64_t stride(const struct hgc_tir_tensor *t, int i)
{
	int64_t s = 1;
	int j;

	for (j = i + 1; j < t->ndims; j++)
		s *= hgc_tir_tensor_dim(t, j);
	return s;
}

/* Positions of a slice's ranges, outermost first. */
static int ranges(const struct hgc_tmpl_slice *s, int *pos)
{
	int i, n = 0;

	for (i = 0; i < s->n; i++)
		if (s->range[i])
			pos[n++] = i;
	return n;
}

/* &T[start...] with the slice's extents, for the verifier's bounds check. */
static struct hgc_tir_expr *address(struct hgc_tmpl_build *b, const struct hgc_tmpl_slice *s)
{
	struct hgc_tir_expr *idx[HGC_TMPL_MAX_PHYS];
	int64_t ext[HGC_TMPL_MAX_PHYS];
	int i;

	for (i = 0; i < s->n; i++) {
		idx[i] = hgc_tir_expr_copy(b->m, s->start[i]);
		ext[i] = s->range[i] ? (s->len[i] - 1) * s->step[i] + 1 : 1;
	}
	return hgc_tir_addr(b->m, s->tensor, s->n, idx, ext);
}

/* Whether two expressions are the same (variables, constants, operators). */
static bool same(const struct hgc_tir_expr *x, const struct hgc_tir_expr *y)
{
	int i;

	if (x->kind != y->kind || x->op != y->op || x->nops != y->nops ||
	    !hgc_tir_type_eq(x->type, y->type))
		return false;
	if (x->kind == HGC_TIR_E_INT && x->u.i != y->u.i)
		return false;
	if (x->kind == HGC_TIR_E_VAR && x->u.var != y->u.var)
		return false;
	if (x->kind != HGC_TIR_E_INT && x->kind != HGC_TIR_E_VAR && x->kind != HGC_TIR_E_BINARY &&
	    x->kind != HGC_TIR_E_UNARY)
		return false;
	for (i = 0; i < x->nops; i++)
		if (!same(x->ops[i], y->ops[i]))
			return false;
	return true;
}

/* The upper bound of hi - lo, for the size of the address arrays. */
static int batch_cap(struct hgc_tmpl_build *b, struct hgc_tir_expr *lo, struct hgc_tir_expr *hi,
		     int64_t *cap)
{
	struct hgc_tir_expr *n = hgc_tmpl_bin(b, HGC_TIR_SUB, hgc_tir_expr_copy(b->m, hi),
					      hgc_tir_expr_copy(b->m, lo));
	int64_t c;

	if (hi->kind == HGC_TIR_E_BINARY && hi->op == HGC_TIR_ADD && same(hi->ops[0], lo))
		n = hi->ops[1];
	if (n->kind == HGC_TIR_E_INT) {
		*cap = n->u.i;
		return 0;
	}
	if (!hgc_tmpl_bounds(b, n, &c, cap))
		return -1;
	return 0;
}

/* Batch loops; the arrays and the call come at the end. */
int hgc_tmpl_brgemm_begin(struct hgc_tmpl_build *b, struct hgc_tmpl_brgemm *g,
			  struct hgc_tir_stmt *block, int n, struct hgc_tir_var *const *vars,
			  struct hgc_tir_expr *const *lo, struct hgc_tir_expr *const *hi,
			  struct hgc_loc loc)
{
	int64_t c;
	int i;

	memset(g, 0, sizeof(*g));
	g->outer = g->body = block;
	g->cap = 1;
	g->loc = loc;
	g->pos = block->u.block.n;
	for (i = 0; i < n; i++) {
		if (batch_cap(b, lo[i], hi[i], &c) < 0)
			return hgc_tmpl_fail(b, loc, "brgemm: cannot bound the batch loop of '%s'",
					     vars[i]->name);
		g->cap *= c > 0 ? c : 1;
	}
	if (g->cap > (1 << 20))
		return hgc_tmpl_fail(b, loc, "brgemm: a batch of up to %lld blocks",
				     (long long)g->cap);
	g->count = hgc_tir_var_new(b->m, "bs", hgc_tir_ty(HGC_TIR_INDEX));
	for (i = 0; i < n; i++)
		g->body = hgc_tmpl_for(b, g->body, vars[i], lo[i], hi[i], NULL, loc);
	return 0;
}

/* The element kinds brgemm takes: A, B, C. */
static const enum hgc_tir_kind kinds[3][3] = {
	{HGC_TIR_F32, HGC_TIR_F32, HGC_TIR_F32},
	{HGC_TIR_U8, HGC_TIR_S8, HGC_TIR_S32},
	{HGC_TIR_BF16, HGC_TIR_BF16, HGC_TIR_F32},
};

/* The packing of B that the runtime expects for A's element kind. */
static int64_t want_pack(enum hgc_tir_kind a)
{
	return a == HGC_TIR_U8 ? 4 : a == HGC_TIR_BF16 ? 2 : 1;
}

/* Whether a slice's first two of three ranges are one run of rows: the
   outer steps over exactly the inner one's rows (several rows of a plain
   channels-last image, all of their pixels), the last range dense. */
static bool rows_merge(const struct hgc_tmpl_slice *s, const int *pos)
{
	return pos[2] == s->n - 1 && s->step[pos[2]] == 1 &&
	       stride(s->tensor, pos[0]) * s->step[pos[0]] ==
		       stride(s->tensor, pos[1]) * s->step[pos[1]] * s->len[pos[1]];
}

/* A 2-D operand (A or C): rows and columns, the columns innermost and dense;
   two ranges of rows that are one run (rows_merge) count as one. */
static int matrix(struct hgc_tmpl_build *b, const struct hgc_tmpl_slice *s, const char *role,
		  int64_t *rows, int64_t *cols, int64_t *ld)
{
	int pos[HGC_TMPL_MAX_PHYS], n = ranges(s, pos);

	if (n == 3 && rows_merge(s, pos)) {
		*rows = s->len[pos[0]] * s->len[pos[1]];
		*cols = s->len[pos[2]];
		*ld = stride(s->tensor, pos[1]) * s->step[pos[1]];
		return 0;
	}
	if (n != 2 || pos[1] != s->n - 1 || s->step[pos[1]] != 1)
		return hgc_tmpl_fail(b, s->loc, "brgemm: %s must be rows and columns with the "
				     "columns innermost and dense", role);
	*rows = s->len[pos[0]];
	*cols = s->len[pos[1]];
	*ld = stride(s->tensor, pos[0]) * s->step[pos[0]];
	return 0;
}

/* B: k rows and n columns, or k / p packed rows, n columns and p packed values.
   An unpacked B (pack 1, the last range not a packing of 1) may have two
   ranges of k rows that are one run (a window's taps and its channels). */
static int b_matrix(struct hgc_tmpl_build *b, const struct hgc_tmpl_slice *s, int64_t pack,
		    int64_t *k, int64_t *cols, int64_t *ld)
{
	int pos[HGC_TMPL_MAX_PHYS], n = ranges(s, pos);

	if (pack == 1 && (n == 2 || (n == 3 && s->len[pos[2]] != 1 && rows_merge(s, pos))))
		return matrix(b, s, "B", k, cols, ld);
	if (n != 3 || pos[1] != s->n - 2 || pos[2] != s->n - 1 || s->step[pos[1]] != 1 ||
	    s->len[pos[2]] != hgc_tir_tensor_dim(s->tensor, s->n - 1))
		return hgc_tmpl_fail(b, s->loc, "brgemm: B must be packed rows, columns and the "
				     "packed values, the last two innermost and dense");
	if (s->len[pos[2]] != pack)
		return hgc_tmpl_fail(b, s->loc, "brgemm: B is packed by %lld, the runtime takes %lld "
				     "for %s", (long long)s->len[pos[2]], (long long)pack,
				     hgc_tir_kind_name((enum hgc_tir_kind)s->tensor->elem.kind));
	*k = s->len[pos[0]] * pack;
	*cols = s->len[pos[1]];
	*ld = stride(s->tensor, pos[0]) * s->step[pos[0]];
	return 0;
}

/* The element types must be a triple the runtime has. */
static int check_types(struct hgc_tmpl_build *b, const struct hgc_tmpl_brgemm *g,
		       const struct hgc_tmpl_slice *a, const struct hgc_tmpl_slice *bs,
		       const struct hgc_tmpl_slice *c)
{
	enum hgc_tir_kind ka = a->tensor->elem.kind, kb = bs->tensor->elem.kind,
			  kc = c->tensor->elem.kind;
	int i;

	for (i = 0; i < 3; i++)
		if (kinds[i][0] == ka && kinds[i][1] == kb && kinds[i][2] == kc)
			return 0;
	return hgc_tmpl_fail(b, g->loc, "brgemm takes f32 x f32 -> f32, u8 x s8 -> s32 or "
			     "bf16 x bf16 -> f32, not %s x %s -> %s", hgc_tir_kind_name(ka),
			     hgc_tir_kind_name(kb), hgc_tir_kind_name(kc));
}

/* The address arrays and the counter, defined before the batch loops. */
static void arrays(struct hgc_tmpl_build *b, struct hgc_tmpl_brgemm *g,
		   const struct hgc_tmpl_slice *a, const struct hgc_tmpl_slice *bs)
{
	struct hgc_tir_stmt *s[3];
	int i;

	g->aa = hgc_tir_tensor_newc(b->m, "a_addr", hgc_tir_ptr_to(a->tensor->elem), HGC_TIR_LOCAL,
				    1, &g->cap);
	g->ba = hgc_tir_tensor_newc(b->m, "b_addr", hgc_tir_ptr_to(bs->tensor->elem),
				    HGC_TIR_LOCAL, 1, &g->cap);
	s[0] = hgc_tir_def_tensor(b->m, NULL, g->aa);
	s[1] = hgc_tir_def_tensor(b->m, NULL, g->ba);
	s[2] = hgc_tir_let(b->m, NULL, g->count, hgc_tmpl_k(b, 0));
	for (i = 0; i < 3; i++) {
		s[i]->loc = g->loc;
		hgc_tir_insert(g->outer, g->pos + i, s[i]);
	}
}

/* Fill the arrays in the batch loops, then call brgemm after them. */
int hgc_tmpl_brgemm_end(struct hgc_tmpl_build *b, struct hgc_tmpl_brgemm *g,
			const struct hgc_tmpl_slice *a, const struct hgc_tmpl_slice *bs,
			const struct hgc_tmpl_slice *c, struct hgc_tir_expr *first)
{
	struct hgc_tir_module *m = b->m;
	int64_t M, K, K2, N, N2, M2, lda, ldb, ldc;
	struct hgc_tir_expr *args[11];

	if (check_types(b, g, a, bs, c) || matrix(b, a, "A", &M, &K, &lda) ||
	    b_matrix(b, bs, want_pack(a->tensor->elem.kind), &K2, &N, &ldb) ||
	    matrix(b, c, "C", &M2, &N2, &ldc))
		return -1;
	if (K != K2 || M != M2 || N != N2)
		return hgc_tmpl_fail(b, g->loc, "brgemm: A is %lldx%lld, B %lldx%lld, C %lldx%lld",
				     (long long)M, (long long)K, (long long)K2, (long long)N,
				     (long long)M2, (long long)N2);
	arrays(b, g, a, bs);
	hgc_tir_storev(m, g->body, g->aa, address(b, a), 1, hgc_tmpl_ref(b, g->count))->loc = g->loc;
	hgc_tir_storev(m, g->body, g->ba, address(b, bs), 1, hgc_tmpl_ref(b, g->count))->loc = g->loc;
	hgc_tir_assign(m, g->body, g->count, hgc_tmpl_bin(b, HGC_TIR_ADD, hgc_tmpl_ref(b, g->count),
							  hgc_tmpl_k(b, 1)))->loc = g->loc;
	args[0] = hgc_tir_addrv(m, g->aa, 1, hgc_tmpl_k(b, 0));
	args[1] = hgc_tir_addrv(m, g->ba, 1, hgc_tmpl_k(b, 0));
	args[2] = address(b, c);
	args[3] = hgc_tmpl_ref(b, g->count);
	args[4] = hgc_tmpl_k(b, M), args[5] = hgc_tmpl_k(b, N), args[6] = hgc_tmpl_k(b, K);
	args[7] = hgc_tmpl_k(b, lda), args[8] = hgc_tmpl_k(b, ldb), args[9] = hgc_tmpl_k(b, ldc);
	args[10] = hgc_tmpl_not_x(b, first);
	hgc_tir_eval(m, g->outer, hgc_tir_intrin(m, HGC_TIR_I_BRGEMM, 11, args))->loc = g->loc;
	return 0;
}

/* Loops over the ranges of the left side. */
int hgc_tmpl_ew_begin(struct hgc_tmpl_build *b, struct hgc_tmpl_ew *w,
		      struct hgc_tir_stmt *block, const struct hgc_tmpl_slice *lhs)
{
	int pos[HGC_TMPL_MAX_PHYS], i;

	memset(w, 0, sizeof(*w));
	w->rank = ranges(lhs, pos);
	w->body = block;
	w->loc = lhs->loc;
	for (i = 0; i < w->rank; i++) {
		w->len[i] = lhs->len[pos[i]];
		w->var[i] = hgc_tmpl_var(b, "e");
		w->body = hgc_tmpl_for(b, w->body, w->var[i], hgc_tmpl_k(b, 0),
				       hgc_tmpl_k(b, w->len[i]), NULL, w->loc);
	}
	return 0;
}

/* The indices of slice s at the nest's position (its k-th range follows var k). */
static int indices(struct hgc_tmpl_build *b, const struct hgc_tmpl_ew *w,
		   const struct hgc_tmpl_slice *s, struct hgc_tir_expr **idx)
{
	int i, k = 0;

	for (i = 0; i < s->n; i++) {
		idx[i] = hgc_tir_expr_copy(b->m, s->start[i]);
		if (!s->range[i])
			continue;
		if (k >= w->rank || s->len[i] != w->len[k])
			return hgc_tmpl_fail(b, s->loc, "slice of '%s': range %d has %lld elements, "
					     "the assignment %lld", s->tensor->name, k,
					     (long long)s->len[i],
					     (long long)(k < w->rank ? w->len[k] : 1));
		idx[i] = hgc_tmpl_bin(b, HGC_TIR_ADD, idx[i],
				      hgc_tmpl_bin(b, HGC_TIR_MUL, hgc_tmpl_ref(b, w->var[k]),
						   hgc_tmpl_k(b, s->step[i])));
		k++;
	}
	return 0;
}

/* An element of slice s at the nest's position. */
struct hgc_tir_expr *hgc_tmpl_eload(struct hgc_tmpl_build *b, const struct hgc_tmpl_ew *w,
				    const struct hgc_tmpl_slice *s)
{
	struct hgc_tir_expr *idx[HGC_TMPL_MAX_PHYS];

	if (indices(b, w, s, idx) < 0)
		return hgc_tir_f32(b->m, 0);
	return hgc_tir_load(b->m, s->tensor, s->n, idx);
}

/* The kind two element values meet in: f32 if either is a float, else s32. */
static enum hgc_tir_kind common(struct hgc_tir_type x, struct hgc_tir_type y)
{
	if (hgc_tir_type_is_float(x) || hgc_tir_type_is_float(y))
		return HGC_TIR_F32;
	return x.kind == HGC_TIR_INDEX && y.kind == HGC_TIR_INDEX ? HGC_TIR_INDEX : HGC_TIR_S32;
}

/* x converted to kind k. */
static struct hgc_tir_expr *to(struct hgc_tmpl_build *b, struct hgc_tir_expr *x,
			       enum hgc_tir_kind k)
{
	if (x->type.kind == k)
		return x;
	return hgc_tir_cast(b->m, hgc_tir_ty(k), x);
}

/* x op y on element values. */
struct hgc_tir_expr *hgc_tmpl_ebin(struct hgc_tmpl_build *b, enum hgc_tir_binop op,
				   struct hgc_tir_expr *x, struct hgc_tir_expr *y)
{
	enum hgc_tir_kind k = common(x->type, y->type);

	if (k == HGC_TIR_INDEX)
		return hgc_tmpl_bin(b, op, x, y);
	return hgc_tir_binary(b->m, op, to(b, x, k), to(b, y, k));
}

/* -x on an element value. */
struct hgc_tir_expr *hgc_tmpl_eneg(struct hgc_tmpl_build *b, struct hgc_tir_expr *x)
{
	if (x->type.kind == HGC_TIR_BF16)
		x = to(b, x, HGC_TIR_F32);
	return hgc_tir_unary(b->m, HGC_TIR_NEG, x);
}

/* Store value into the left side at the nest's position. */
int hgc_tmpl_ew_end(struct hgc_tmpl_build *b, struct hgc_tmpl_ew *w,
		    const struct hgc_tmpl_slice *lhs, struct hgc_tir_expr *value)
{
	struct hgc_tir_expr *idx[HGC_TMPL_MAX_PHYS];

	if (indices(b, w, lhs, idx) < 0)
		return -1;
	value = to(b, value, (enum hgc_tir_kind)lhs->tensor->elem.kind);
	hgc_tir_store(b->m, w->body, lhs->tensor, lhs->n, idx, value)->loc = w->loc;
	return 0;
}
