/*
 * 051-tir-verify: the Tensor IR verifier catches use before definition, use
 * out of scope, type mismatches, wrong index counts, statically out-of-bounds
 * indices and slices, bad intrinsic calls and races on scalars, each with an
 * exact message, and accepts guarded tails.
 */
#include "core/tir/tir.h"
#include "t/tap.h"
#include "t/tir/modules.h"

/* A fresh module with entry f(A: f32[8, 8], Y: f32[8], n: index). */
struct fixture {
	struct hgc_tir_module *m;
	struct hgc_tir_func *f;
	struct hgc_tir_tensor *A, *Y;
	struct hgc_tir_var *n;
	struct hgc_tir_stmt *b;
};

static struct fixture setup(void)
{
	struct fixture x;
	struct hgc_tir_module *m = hgc_tir_module_new("v");

	x.m = m;
	x.f = hgc_tir_func_new(m, "f", TY(VOID));
	x.A = hgc_tir_func_add_tensor(x.f, "A", TY(F32), 2, (int64_t[]){ 8, 8 });
	x.Y = hgc_tir_func_add_tensor(x.f, "Y", TY(F32), 1, (int64_t[]){ 8 });
	x.n = hgc_tir_func_add_scalar(x.f, "n", TY(INDEX));
	x.b = x.f->body;
	m->entry = x.f;
	return x;
}

/* Verify, compare the whole diagnostic text with want ("" for success), free. */
static void expect(struct fixture *x, const char *want, const char *what)
{
	struct hgc_diag d;
	int rc;

	hgc_diag_init(&d);
	rc = hgc_tir_verify(x->m, &d);
	is_str(hgc_diag_text(&d), want, "%s", what);
	is_int(rc, *want ? -1 : 0, "%s: return code", what);
	hgc_diag_release(&d);
	hgc_tir_module_free(x->m);
}

#define ERR(msg) "hgc: error: in 'f': " msg "\n"

/* Variables and tensors must be defined, and used only in their scope. */
static void test_definitions(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_var *v = hgc_tir_var_new(m, "x", TY(F32)), *i = ivar(m, "i");
	struct hgc_tir_tensor *t = hgc_tir_tensor_newc(m, "tmp", TY(F32), HGC_TIR_LOCAL, 1,
						       (int64_t[]){ 4 });
	struct hgc_tir_stmt *l;

	hgc_tir_storev(m, x.b, x.Y, V(v), 1, I(0));
	hgc_tir_let(m, x.b, v, hgc_tir_f32(m, 1));
	l = hgc_tir_for(m, x.b, i, I(0), I(4), NULL);
	hgc_tir_def_tensor(m, hgc_tir_body(l), t);
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_f32(m, 0), 1, V(i));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_loadv(m, t, 1, I(0)), 1, I(1));
	expect(&x, ERR("'x' is used before its definition")
		   ERR("'i' is used outside its scope")
		   ERR("tensor 'tmp' is used outside its scope"),
	       "use before definition and out of scope");

	x = setup();
	m = x.m;
	v = hgc_tir_var_new(m, "x", TY(F32));
	hgc_tir_let(m, x.b, v, hgc_tir_f32(m, 1));
	hgc_tir_let(m, x.b, v, hgc_tir_f32(m, 2));
	expect(&x, ERR("'x' is defined twice"), "a let defines a variable once");
}

/* A tensor of another function is not in scope; a parallel for cannot use its
   own indices in its ranges. */
static void test_foreign(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_func *g = hgc_tir_func_new(m, "g", TY(VOID));
	struct hgc_tir_tensor *G = hgc_tir_func_add_tensor(g, "G", TY(F32), 1, (int64_t[]){ 2 });
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j");

	hgc_tir_storev(m, x.b, G, hgc_tir_f32(m, 0), 1, I(0));
	hgc_tir_pfor(m, x.b, 2, (struct hgc_tir_var *[]){ i, j },
		     (struct hgc_tir_expr *[]){ I(0), V(i) },
		     (struct hgc_tir_expr *[]){ I(4), I(4) }, NULL);
	expect(&x, ERR("tensor 'G' is not a parameter of this function")
		   ERR("'i' is used before its definition"),
	       "foreign tensors and parallel indices in ranges");
}

/* Operand types must agree; bf16 needs a cast before arithmetic. */
static void test_types(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_var *h = hgc_tir_var_new(m, "h", TY(BF16)), *k = ivar(m, "k");

	hgc_tir_storev(m, x.b, x.Y, hgc_tir_add(m, hgc_tir_f32(m, 1), V(x.n)), 1, I(0));
	hgc_tir_storev(m, x.b, x.Y, V(x.n), 1, I(1));
	hgc_tir_let(m, x.b, h, hgc_tir_cast(m, TY(BF16), hgc_tir_f32(m, 1)));
	hgc_tir_assign(m, x.b, h, hgc_tir_add(m, V(h), V(h)));
	hgc_tir_let(m, x.b, k, hgc_tir_f32(m, 2));
	hgc_tir_if(m, x.b, V(x.n), false);
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_select(m, hgc_tir_bool(m, true), hgc_tir_f32(m, 1),
						    hgc_tir_int(m, HGC_TIR_S32, 1)), 1, I(2));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_cast(m, TY(F32), hgc_tir_addrv(m, x.Y, 1, I(0))), 1,
		       I(3));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_binary(m, HGC_TIR_MOD, hgc_tir_f32(m, 1),
						    hgc_tir_f32(m, 2)), 1, I(4));
	hgc_tir_return(m, x.b, hgc_tir_f32(m, 0));
	expect(&x, ERR("operands of '+' have different types: f32 and index")
		   ERR("store to 'Y' is given index, not f32")
		   ERR("'+' takes numbers (cast bf16 to f32), not bf16")
		   ERR("let 'k' is given f32, not index")
		   ERR("condition of 'if' is given index, not bool")
		   ERR("select branches have different types: f32 and s32")
		   ERR("cannot cast ptr<f32> to f32")
		   ERR("'%' takes integer operands, not f32")
		   ERR("return with a value in a void function"),
	       "type mismatches");
}

/* Loads, stores and addresses take exactly one index of type index per dim. */
static void test_index_counts(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;

	hgc_tir_storev(m, x.b, x.Y, hgc_tir_loadv(m, x.A, 3, I(0), I(0), I(0)), 1, I(0));
	hgc_tir_storev(m, x.b, x.A, hgc_tir_f32(m, 0), 1, I(0));
	hgc_tir_eval(m, x.b, hgc_tir_intrinv(m, HGC_TIR_I_FILL, 3, hgc_tir_addrv(m, x.Y, 0),
					      hgc_tir_f32(m, 0), I(8)));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_f32(m, 0), 1, hgc_tir_int(m, HGC_TIR_S32, 0));
	expect(&x, ERR("'A' has 2 dimensions but is indexed with 3")
		   ERR("'A' has 2 dimensions but is indexed with 1")
		   ERR("'Y' has 1 dimension but is indexed with 0")
		   ERR("index 0 of 'Y' has type s32, not index"),
	       "wrong index counts and index types");
}

/* Indices and slices that are out of bounds for every iteration box are caught. */
static void test_bounds(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_var *i = ivar(m, "i"), *j = ivar(m, "j"), *r;
	struct hgc_tir_stmt *b;

	hgc_tir_storev(m, x.b, x.Y, hgc_tir_f32(m, 0), 1, I(8));
	b = hgc_tir_body(hgc_tir_for(m, x.b, i, I(0), I(9), NULL));
	hgc_tir_storev(m, b, x.Y, hgc_tir_loadv(m, x.A, 2, V(i), I(0)), 1, hgc_tir_sub(m, V(i), I(1)));
	b = hgc_tir_body(hgc_tir_for(m, x.b, j, I(0), I(2), NULL));
	r = ilet(m, b, "r", hgc_tir_add(m, hgc_tir_mul(m, V(j), I(4)), I(1)));
	hgc_tir_eval(m, b, hgc_tir_intrinv(m, HGC_TIR_I_FILL, 3,
		hgc_tir_addr(m, x.A, 2, (struct hgc_tir_expr *[]){ I(0), V(r) }, (int64_t[]){ 1, 4 }),
		hgc_tir_f32(m, 0), I(4)));
	expect(&x, ERR("index 0 of 'Y' is 8, beyond its size 8")
		   ERR("index 0 of 'Y' can be -1, below 0")
		   ERR("index 0 of 'A' can be 8, beyond its size 8")
		   ERR("slice 1 of 'A' reaches 9, beyond its size 8"),
	       "static bounds");
}

/* Guarded tails and dynamic ranges are not reported; constants still are. */
static void test_bounds_guarded(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_var *i = ivar(m, "i"), *k = ivar(m, "k");
	struct hgc_tir_stmt *b, *c;

	b = hgc_tir_body(hgc_tir_for(m, x.b, i, I(0), I(8), I(4)));
	hgc_tir_storev(m, b, x.Y, hgc_tir_f32(m, 0), 1, V(i));
	c = hgc_tir_if(m, b, hgc_tir_binary(m, HGC_TIR_LT, hgc_tir_add(m, V(i), I(4)), I(8)), false);
	hgc_tir_storev(m, hgc_tir_body(c), x.Y, hgc_tir_f32(m, 0), 1, hgc_tir_add(m, V(i), I(4)));
	hgc_tir_storev(m, hgc_tir_body(c), x.Y, hgc_tir_f32(m, 0), 1, I(9));
	hgc_tir_storev(m, b, x.Y, hgc_tir_select(m, hgc_tir_bool(m, true),
		hgc_tir_loadv(m, x.Y, 1, hgc_tir_add(m, V(i), I(5))), hgc_tir_f32(m, 0)), 1, I(0));
	b = hgc_tir_body(hgc_tir_for(m, x.b, k, I(0), V(x.n), NULL));
	hgc_tir_storev(m, b, x.Y, hgc_tir_f32(m, 0), 1, V(k));
	expect(&x, ERR("index 0 of 'Y' is 9, beyond its size 8"),
	       "guards and dynamic ranges silence range checks, not constant ones");
}

/* Intrinsics check their argument count and types. */
static void test_intrinsics(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_tensor *S = hgc_tir_func_add_tensor(x.f, "S", TY(S8), 1, (int64_t[]){ 8 });
	struct hgc_tir_expr *bad;

	hgc_tir_eval(m, x.b, hgc_tir_intrinv(m, HGC_TIR_I_BRGEMM_STRD, 13,
		hgc_tir_addrv(m, S, 1, I(0)), hgc_tir_addrv(m, S, 1, I(0)),
		hgc_tir_addrv(m, x.Y, 1, I(0)), I(1), I(0), I(0), I(1), I(1), I(1), I(1), I(1), I(1),
		hgc_tir_bool(m, false)));
	hgc_tir_eval(m, x.b, hgc_tir_intrinv(m, HGC_TIR_I_COPY, 2, hgc_tir_addrv(m, x.Y, 1, I(0)),
					      hgc_tir_addrv(m, x.Y, 1, I(0))));
	hgc_tir_eval(m, x.b, hgc_tir_intrinv(m, HGC_TIR_I_FILL, 3, hgc_tir_addrv(m, x.Y, 1, I(0)),
					      V(x.n), I(8)));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_intrinv(m, HGC_TIR_I_EXP, 1, V(x.n)), 1, I(0));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_intrinv(m, HGC_TIR_I_LANES_ADD, 2,
						    hgc_tir_addrv(m, x.Y, 1, I(0)), I(8)), 1, I(0));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_intrinv(m, HGC_TIR_I_LANES_MAX, 2,
						    hgc_tir_addrv(m, x.Y, 1, I(0)), I(6)), 1, I(1));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_intrinv(m, HGC_TIR_I_LANES_MIN, 2,
						    hgc_tir_addrv(m, x.Y, 1, I(0)), V(x.n)), 1, I(2));
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_intrinv(m, HGC_TIR_I_LANES_MUL, 2,
						    hgc_tir_addrv(m, S, 1, I(0)), I(128)), 1, I(3));
	bad = hgc_tir_intrinv(m, HGC_TIR_I_EXP, 0);
	bad->op = 999;
	hgc_tir_eval(m, x.b, bad);
	hgc_tir_eval(m, x.b, hgc_tir_add(m, I(1), I(2)));
	expect(&x, ERR("brgemm_strd takes A, B, C pointers to f32 f32 f32, u8 s8 s32 or bf16 "
		       "bf16 f32 (A and B as bases), not ptr<s8> ptr<s8> ptr<f32>")
		   ERR("copy takes 3 arguments, not 2")
		   ERR("argument 2 of fill must be f32, not index")
		   ERR("argument 1 of exp must be f32, not index")
		   ERR("argument 2 of lanes_max must be a constant power of two up to 64, not index")
		   ERR("argument 2 of lanes_min must be a constant power of two up to 64, not index")
		   ERR("argument 1 of lanes_mul must be ptr<f32>, not ptr<s8>")
		   ERR("argument 2 of lanes_mul must be a constant power of two up to 64, not index")
		   ERR("unknown intrinsic #999")
		   ERR("a call statement must call something"),
	       "intrinsic signatures");
}

/* A scalar defined outside a parallel for cannot be assigned inside it, nor
   can a parallel for return. */
static void test_race(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_var *acc = hgc_tir_var_new(m, "acc", TY(F32)), *i = ivar(m, "i");
	struct hgc_tir_var *own = hgc_tir_var_new(m, "own", TY(F32));
	struct hgc_tir_stmt *b;

	hgc_tir_let(m, x.b, acc, hgc_tir_f32(m, 0));
	b = hgc_tir_body(hgc_tir_pfor(m, x.b, 1, &i, (struct hgc_tir_expr *[]){ I(0) },
				      (struct hgc_tir_expr *[]){ I(8) }, NULL));
	hgc_tir_assign(m, b, acc, hgc_tir_add(m, V(acc), hgc_tir_loadv(m, x.Y, 1, V(i))));
	hgc_tir_let(m, b, own, hgc_tir_f32(m, 0));
	hgc_tir_assign(m, b, own, hgc_tir_loadv(m, x.Y, 1, V(i)));
	hgc_tir_return(m, b, NULL);
	expect(&x, ERR("'acc' is assigned in a parallel for but defined outside it")
		   ERR("return inside a parallel for"),
	       "assignments racing across threads");
}

/* Calls match the callee's parameters; the module needs a void entry. */
static void test_calls_module(void)
{
	struct fixture x = setup();
	struct hgc_tir_module *m = x.m;
	struct hgc_tir_func *g = hgc_tir_func_new(m, "g", TY(F32));
	struct hgc_tir_stmt *s;

	hgc_tir_func_add_tensor(g, "G", TY(F32), 1, (int64_t[]){ 8 });
	hgc_tir_func_add_scalar(g, "k", TY(INDEX));
	hgc_tir_return(m, g->body, NULL);
	hgc_tir_eval(m, x.b, hgc_tir_call(m, g, 1, (struct hgc_tir_expr *[]){ I(0) }));
	hgc_tir_eval(m, x.b, hgc_tir_call(m, g, 2, (struct hgc_tir_expr *[]){
		hgc_tir_addrv(m, x.A, 2, I(0), I(0)), hgc_tir_f32(m, 0) }));
	hgc_tir_eval(m, x.b, hgc_tir_call(m, g, 2, (struct hgc_tir_expr *[]){
		hgc_tir_addrv(m, x.A, 2, I(0), I(0)), V(x.n) }));
	s = hgc_tir_return(m, x.b, NULL);
	s->loc = (struct hgc_loc){ "mm.tmpl", 3, 7 };
	hgc_tir_storev(m, x.b, x.Y, hgc_tir_f32(m, 0), 1, I(-1))->loc = s->loc;
	m->entry = g;
	expect(&x, "hgc: error: in 'v': entry function 'g' must return void\n"
		   ERR("'g' takes 2 arguments, not 1")
		   ERR("argument 2 of 'g' must be index, not f32")
		   "mm.tmpl:3:7: error: in 'f': index 0 of 'Y' is -1, below 0\n"
		   "hgc: error: in 'g': return without a value in a function returning a value\n",
	       "calls, locations and the entry");
	x = setup();
	x.m->entry = NULL;
	expect(&x, "hgc: error: in 'v': the module has no entry function\n", "an entry is required");
}

/* Every hand-built module of 050 and 052 is clean, including dynamic tails. */
static void test_clean(void)
{
	static const float w[3] = { 1, 2, 3 };
	struct hgc_tir_module *ms[] = { build_matmul(13, 97, 97, 4, 16, 32),
					build_matmul(5, 3, 16, 8, 8, 32), build_eltwise(3, 3),
					build_softmax(2, 9), build_pfor2(2, 3, w) };
	struct hgc_diag d;
	size_t i;

	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		hgc_diag_init(&d);
		is_str(hgc_diag_text(&d), "", "module %zu (%s) verifies", i, ms[i]->name);
		is_int(hgc_tir_verify(ms[i], &d), 0, "module %zu returns 0", i);
		if (d.nerr)
			diag("%s", hgc_diag_text(&d));
		hgc_diag_release(&d);
		hgc_tir_module_free(ms[i]);
	}
}

int main(void)
{
	test_definitions();
	test_foreign();
	test_types();
	test_index_counts();
	test_bounds();
	test_bounds_guarded();
	test_intrinsics();
	test_race();
	test_calls_module();
	test_clean();
	return done_testing();
}
