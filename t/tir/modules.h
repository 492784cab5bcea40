/*
 * modules.h: Tensor IR modules built by hand with the builder, shared by
 * t/050-tir.c (printed against goldens) and t/052-c-backend.c (compiled and
 * run against plain C).
 */
#ifndef HGC_T_TIR_MODULES_H
#define HGC_T_TIR_MODULES_H

#include <math.h>

#include "core/tir/tir.h"

#define I(v) hgc_tir_idx(m, (v))
#define V(x) hgc_tir_ref(m, (x))
#define TY(k) hgc_tir_ty(HGC_TIR_##k)

/* A fresh index variable. */
static inline struct hgc_tir_var *ivar(struct hgc_tir_module *m, const char *name)
{
	return hgc_tir_var_new(m, name, TY(INDEX));
}

/* let name: index = value, returning the variable. */
static inline struct hgc_tir_var *ilet(struct hgc_tir_module *m, struct hgc_tir_stmt *b,
				       const char *name, struct hgc_tir_expr *value)
{
	struct hgc_tir_var *v = ivar(m, name);

	hgc_tir_let(m, b, v, value);
	return v;
}

/*
 * C[M, N] = A[M, K] * B[K, N], plain row-major f32, blocked MB x NB over a
 * parallel for of the C blocks.  Full KB blocks of K go to one brgemm call
 * through arrays of block addresses; a K tail goes to brgemm_strd with a
 * batch of one.  M and N tails shrink the block (min).
 */
static inline struct hgc_tir_module *build_matmul(int64_t M, int64_t N, int64_t K, int64_t MB,
						  int64_t NB, int64_t KB)
{
	struct hgc_tir_module *m = hgc_tir_module_new("matmul");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "matmul", TY(VOID));
	struct hgc_tir_tensor *A = hgc_tir_func_add_tensor(f, "A", TY(F32), 2, (int64_t[]){ M, K });
	struct hgc_tir_tensor *B = hgc_tir_func_add_tensor(f, "B", TY(F32), 2, (int64_t[]){ K, N });
	struct hgc_tir_tensor *C = hgc_tir_func_add_tensor(f, "C", TY(F32), 2, (int64_t[]){ M, N });
	int64_t kbn = K / KB, ktail = K % KB;
	struct hgc_tir_var *mi = ivar(m, "mi"), *ni = ivar(m, "ni"), *kb, *m0, *n0, *mb, *nb;
	struct hgc_tir_tensor *aa, *ba;
	struct hgc_tir_stmt *p, *body, *loop;

	m->entry = f;
	p = hgc_tir_pfor(m, f->body, 2, (struct hgc_tir_var *[]){ mi, ni },
			 (struct hgc_tir_expr *[]){ I(0), I(0) },
			 (struct hgc_tir_expr *[]){ I((M + MB - 1) / MB), I((N + NB - 1) / NB) },
			 NULL);
	body = hgc_tir_body(p);
	m0 = ilet(m, body, "m0", hgc_tir_mul(m, V(mi), I(MB)));
	n0 = ilet(m, body, "n0", hgc_tir_mul(m, V(ni), I(NB)));
	mb = ilet(m, body, "mb", hgc_tir_binary(m, HGC_TIR_MIN, I(MB), hgc_tir_sub(m, I(M), V(m0))));
	nb = ilet(m, body, "nb", hgc_tir_binary(m, HGC_TIR_MIN, I(NB), hgc_tir_sub(m, I(N), V(n0))));
	if (kbn) {
		aa = hgc_tir_tensor_newc(m, "a_addr", hgc_tir_ptr_to(TY(F32)), HGC_TIR_LOCAL, 1,
					 (int64_t[]){ kbn });
		ba = hgc_tir_tensor_newc(m, "b_addr", hgc_tir_ptr_to(TY(F32)), HGC_TIR_LOCAL, 1,
					 (int64_t[]){ kbn });
		hgc_tir_def_tensor(m, body, aa);
		hgc_tir_def_tensor(m, body, ba);
		kb = ivar(m, "kb");
		loop = hgc_tir_for(m, body, kb, I(0), I(kbn), NULL);
		hgc_tir_storev(m, hgc_tir_body(loop), aa,
			       hgc_tir_addr(m, A, 2, (struct hgc_tir_expr *[]){ V(m0),
					    hgc_tir_mul(m, V(kb), I(KB)) }, (int64_t[]){ 1, KB }),
			       1, V(kb));
		hgc_tir_storev(m, hgc_tir_body(loop), ba,
			       hgc_tir_addr(m, B, 2, (struct hgc_tir_expr *[]){
					    hgc_tir_mul(m, V(kb), I(KB)), V(n0) }, (int64_t[]){ KB, 1 }),
			       1, V(kb));
		hgc_tir_eval(m, body, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM, 11,
			hgc_tir_addrv(m, aa, 1, I(0)), hgc_tir_addrv(m, ba, 1, I(0)),
			hgc_tir_addrv(m, C, 2, V(m0), V(n0)), I(kbn), V(mb), V(nb), I(KB),
			I(K), I(N), I(N), hgc_tir_bool(m, false)));
	}
	if (ktail)
		hgc_tir_eval(m, body, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM_STRD, 13,
			hgc_tir_addrv(m, A, 2, V(m0), I(kbn * KB)),
			hgc_tir_addrv(m, B, 2, I(kbn * KB), V(n0)),
			hgc_tir_addrv(m, C, 2, V(m0), V(n0)), I(1), I(0), I(0), V(mb), V(nb),
			I(ktail), I(K), I(N), I(N), hgc_tir_bool(m, kbn > 0)));
	return m;
}

/*
 * Elementwise over X: f32[R, C] with a per-column s8 scale S: a leaky scaled
 * value Y (select), its u8 quantization Q (round, clamp, cast) and its bf16
 * rounding H, plus the column index as f32 in J.
 */
static inline struct hgc_tir_module *build_eltwise(int64_t R, int64_t Cn)
{
	struct hgc_tir_module *m = hgc_tir_module_new("eltwise");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "eltwise", TY(VOID));
	int64_t rc[2] = { R, Cn };
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, rc);
	struct hgc_tir_tensor *S = hgc_tir_func_add_tensor(f, "S", TY(S8), 1, &Cn);
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, rc);
	struct hgc_tir_tensor *Q = hgc_tir_func_add_tensor(f, "Q", TY(U8), 2, rc);
	struct hgc_tir_tensor *H = hgc_tir_func_add_tensor(f, "H", TY(BF16), 2, rc);
	struct hgc_tir_tensor *J = hgc_tir_func_add_tensor(f, "J", TY(F32), 2, rc);
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j");
	struct hgc_tir_var *x = hgc_tir_var_new(m, "x", TY(F32));
	struct hgc_tir_var *s = hgc_tir_var_new(m, "s", TY(F32));
	struct hgc_tir_var *r = hgc_tir_var_new(m, "r", TY(F32));
	struct hgc_tir_stmt *b;
	struct hgc_tir_expr *q;

	m->entry = f;
	b = hgc_tir_body(hgc_tir_for(m, f->body, i, I(0), I(R), NULL));
	b = hgc_tir_body(hgc_tir_for(m, b, j, I(0), I(Cn), NULL));
	hgc_tir_let(m, b, x, hgc_tir_loadv(m, X, 2, V(i), V(j)));
	hgc_tir_let(m, b, s, hgc_tir_cast(m, TY(F32), hgc_tir_loadv(m, S, 1, V(j))));
	hgc_tir_let(m, b, r, hgc_tir_select(m,
		hgc_tir_binary(m, HGC_TIR_GT, V(x), hgc_tir_f32(m, 0)),
		hgc_tir_mul(m, V(x), V(s)), hgc_tir_mul(m, V(x), hgc_tir_f32(m, 0.125))));
	hgc_tir_storev(m, b, Y, V(r), 2, V(i), V(j));
	q = hgc_tir_add(m, hgc_tir_intrinv(m, HGC_TIR_I_ROUND, 1, V(r)), hgc_tir_f32(m, 128));
	q = hgc_tir_binary(m, HGC_TIR_MAX, hgc_tir_binary(m, HGC_TIR_MIN, q, hgc_tir_f32(m, 255)),
			   hgc_tir_f32(m, 0));
	hgc_tir_storev(m, b, Q, hgc_tir_cast(m, TY(U8), q), 2, V(i), V(j));
	hgc_tir_storev(m, b, H, hgc_tir_cast(m, TY(BF16), V(r)), 2, V(i), V(j));
	hgc_tir_storev(m, b, J, hgc_tir_cast(m, TY(F32), hgc_tir_sub(m, V(j), I(Cn / 2))), 2,
		       V(i), V(j));
	return m;
}

/* A loop over j in [0, n) appended to b; returns its body. */
static inline struct hgc_tir_stmt *loop_to(struct hgc_tir_module *m, struct hgc_tir_stmt *b,
					   struct hgc_tir_var *j, int64_t n)
{
	return hgc_tir_body(hgc_tir_for(m, b, j, I(0), I(n), NULL));
}

/*
 * Softmax over the rows of X: f32[R, C]: a max reduction, exponentials into
 * a local buffer with a sum reduction, then a scale, one row per iteration of
 * a parallel for.
 */
static inline struct hgc_tir_module *build_softmax(int64_t R, int64_t Cn)
{
	struct hgc_tir_module *m = hgc_tir_module_new("softmax");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "softmax", TY(VOID));
	int64_t rc[2] = { R, Cn };
	struct hgc_tir_tensor *X = hgc_tir_func_add_tensor(f, "X", TY(F32), 2, rc);
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", TY(F32), 2, rc);
	struct hgc_tir_tensor *e = hgc_tir_tensor_newc(m, "e", TY(F32), HGC_TIR_LOCAL, 1, &Cn);
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *j2 = ivar(m, "j"),
			   *j3 = ivar(m, "j");
	struct hgc_tir_var *mx = hgc_tir_var_new(m, "mx", TY(F32));
	struct hgc_tir_var *sum = hgc_tir_var_new(m, "sum", TY(F32));
	struct hgc_tir_var *inv = hgc_tir_var_new(m, "inv", TY(F32));
	struct hgc_tir_stmt *b, *l;

	m->entry = f;
	b = hgc_tir_body(hgc_tir_pfor(m, f->body, 1, &i, (struct hgc_tir_expr *[]){ I(0) },
				      (struct hgc_tir_expr *[]){ I(R) }, NULL));
	hgc_tir_let(m, b, mx, hgc_tir_f32(m, -INFINITY));
	l = loop_to(m, b, j, Cn);
	hgc_tir_assign(m, l, mx, hgc_tir_binary(m, HGC_TIR_MAX, V(mx),
						hgc_tir_loadv(m, X, 2, V(i), V(j))));
	hgc_tir_def_tensor(m, b, e);
	hgc_tir_let(m, b, sum, hgc_tir_f32(m, 0));
	l = loop_to(m, b, j2, Cn);
	hgc_tir_storev(m, l, e, hgc_tir_intrinv(m, HGC_TIR_I_EXP, 1,
		hgc_tir_sub(m, hgc_tir_loadv(m, X, 2, V(i), V(j2)), V(mx))), 1, V(j2));
	hgc_tir_assign(m, l, sum, hgc_tir_add(m, V(sum), hgc_tir_loadv(m, e, 1, V(j2))));
	hgc_tir_let(m, b, inv, hgc_tir_binary(m, HGC_TIR_DIV, hgc_tir_f32(m, 1), V(sum)));
	l = loop_to(m, b, j3, Cn);
	hgc_tir_storev(m, l, Y, hgc_tir_mul(m, hgc_tir_loadv(m, e, 1, V(j3)), V(inv)), 2, V(i),
		       V(j3));
	return m;
}

/*
 * A parallel for over two indices writing the thread that ran each (i, j)
 * into T and a value into O: O[i, j] = scale * W2[j] + (i * cols + j), or
 * its negation on the diagonal.  W2 is a module constant the init function
 * computes from the constant data W (W2 = W * W).
 */
static inline struct hgc_tir_module *build_pfor2(int64_t R, int64_t Cn, const float *w)
{
	struct hgc_tir_module *m = hgc_tir_module_new("pfor2");
	struct hgc_tir_tensor *W = hgc_tir_module_add_const(m, "W", TY(F32), 1, &Cn, w);
	struct hgc_tir_tensor *W2 = hgc_tir_module_add_const(m, "W2", TY(F32), 1, &Cn, NULL);
	struct hgc_tir_func *init = hgc_tir_func_new(m, "init", TY(VOID));
	struct hgc_tir_func *f = hgc_tir_func_new(m, "main", TY(VOID));
	int64_t rc[2] = { R, Cn };
	struct hgc_tir_tensor *T = hgc_tir_func_add_tensor(f, "T", TY(INDEX), 2, rc);
	struct hgc_tir_tensor *O = hgc_tir_func_add_tensor(f, "O", TY(F32), 2, rc);
	struct hgc_tir_var *scale = hgc_tir_func_add_scalar(f, "scale", TY(F32));
	struct hgc_tir_var *k = ivar(m, "k"), *i = ivar(m, "i"), *j = ivar(m, "j");
	struct hgc_tir_var *val = hgc_tir_var_new(m, "val", TY(F32));
	struct hgc_tir_stmt *b, *p, *c;

	m->init = init;
	m->entry = f;
	b = loop_to(m, init->body, k, Cn);
	hgc_tir_storev(m, b, W2, hgc_tir_mul(m, hgc_tir_loadv(m, W, 1, V(k)),
					     hgc_tir_loadv(m, W, 1, V(k))), 1, V(k));
	p = hgc_tir_pfor(m, f->body, 2, (struct hgc_tir_var *[]){ i, j },
			 (struct hgc_tir_expr *[]){ I(0), I(0) },
			 (struct hgc_tir_expr *[]){ I(R), I(Cn) }, NULL);
	p->u.pfor.merge_group = 1;
	b = hgc_tir_body(p);
	hgc_tir_storev(m, b, T, hgc_tir_intrinv(m, HGC_TIR_I_THREAD_ID, 0), 2, V(i), V(j));
	hgc_tir_let(m, b, val, hgc_tir_add(m, hgc_tir_mul(m, V(scale), hgc_tir_loadv(m, W2, 1, V(j))),
		hgc_tir_cast(m, TY(F32), hgc_tir_add(m, hgc_tir_mul(m, V(i), I(Cn)), V(j)))));
	c = hgc_tir_if(m, b, hgc_tir_binary(m, HGC_TIR_EQ, V(i), V(j)), true);
	hgc_tir_storev(m, hgc_tir_body(c), O, hgc_tir_unary(m, HGC_TIR_NEG, V(val)), 2, V(i), V(j));
	hgc_tir_storev(m, hgc_tir_else(c), O, V(val), 2, V(i), V(j));
	return m;
}

#endif
