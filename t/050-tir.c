/*
 * 050-tir: the Tensor IR builder, printer, walker and mutator.  Hand-built
 * modules print as in t/tir/NAME.golden (HGC_UPDATE_GOLDEN=1 rewrites them).
 */
#include "core/tir/tir.h"
#include "t/tap.h"
#include "t/tir/modules.h"

#include <errno.h>

/* The directory of this source file, where tir/ lives. */
static const char *golden_path(const char *name)
{
	static char buf[512];
	const char *file = __FILE__, *slash = strrchr(file, '/');
	int dirlen = slash ? (int)(slash - file) : 1;

	snprintf(buf, sizeof(buf), "%.*s/tir/%s.golden", dirlen, slash ? file : ".", name);
	return buf;
}

/* Compare text with a golden file, or rewrite the file under HGC_UPDATE_GOLDEN=1. */
static void is_golden(const char *text, const char *name)
{
	const char *path = golden_path(name), *upd = getenv("HGC_UPDATE_GOLDEN");
	struct hgc_diag d;
	char *want;
	FILE *f;

	if (upd && !strcmp(upd, "1")) {
		f = fopen(path, "w");
		ok(f && fputs(text, f) >= 0 && !fclose(f), "rewrote %s", path);
		return;
	}
	hgc_diag_init(&d);
	want = hgc_read_file(path, NULL, &d);
	if (!want)
		diag("%s", hgc_diag_text(&d));
	is_str(text, want, "%s prints as its golden file", name);
	if (want && strcmp(text, want))
		diag("got:\n%s", text);
	free(want);
	hgc_diag_release(&d);
}

/* A module verifies cleanly and prints as its golden file. */
static void check_module(struct hgc_tir_module *m, const char *name)
{
	struct hgc_diag d;
	char *text;

	hgc_diag_init(&d);
	is_int(hgc_tir_verify(m, &d), 0, "%s verifies", name);
	if (d.nerr)
		diag("%s", hgc_diag_text(&d));
	text = hgc_tir_module_str(m);
	is_golden(text, name);
	free(text);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* Count the nodes a visitor sees. */
struct counts {
	int stmts, loads, exprs, stores;
};

static bool count_stmt(struct hgc_tir_visitor *v, struct hgc_tir_stmt *s)
{
	struct counts *c = v->ctx;

	c->stmts++;
	c->stores += s->kind == HGC_TIR_S_STORE;
	return true;
}

static void count_expr(struct hgc_tir_visitor *v, struct hgc_tir_expr *e)
{
	struct counts *c = v->ctx;

	c->exprs++;
	c->loads += e->kind == HGC_TIR_E_LOAD;
}

/* The walker reaches every statement and expression, and stmt_pre can prune. */
static void test_walk(void)
{
	struct hgc_tir_module *m = build_softmax(3, 5);
	struct counts c = { 0 };
	struct hgc_tir_visitor v = { count_stmt, NULL, count_expr, &c };

	hgc_tir_walk_module(m, &v);
	is_int(c.loads, 4, "walker sees the 4 loads of softmax");
	is_int(c.stores, 2, "walker sees the 2 stores of softmax");
	is_int(c.stmts, 17, "walker sees every statement of softmax");
	hgc_tir_module_free(m);
}

/* Mutator: replace every f32 constant 0.125 by 0.25, and delete the stores of J. */
static struct hgc_tir_expr *bump(struct hgc_tir_mutator *mu, struct hgc_tir_expr *e)
{
	if (e->kind == HGC_TIR_E_FLOAT && e->u.f == 0.125)
		return hgc_tir_f32(mu->m, 0.25);
	return e;
}

static struct hgc_tir_stmt *drop_j(struct hgc_tir_mutator *mu, struct hgc_tir_stmt *s)
{
	if (s->kind == HGC_TIR_S_STORE && !strcmp(s->u.store.tensor->name, "J"))
		return NULL;
	return s;
}

/* The mutator rewrites expressions and deletes statements in place. */
static void test_mutate(void)
{
	struct hgc_tir_module *m = build_eltwise(2, 3);
	struct hgc_tir_mutator mu = { bump, drop_j, m, NULL };
	struct hgc_diag d;
	char *text;

	hgc_tir_mutate_stmt(m->entry->body, &mu);
	text = hgc_tir_module_str(m);
	ok(strstr(text, "x * 0.25f") && !strstr(text, "0.125"), "mutator replaced a constant");
	ok(!strstr(text, "J[i, j] ="), "mutator deleted the stores to J");
	hgc_diag_init(&d);
	is_int(hgc_tir_verify(m, &d), 0, "the mutated module still verifies");
	free(text);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* Statement copies print the same; insert puts a statement where asked. */
static void test_copy_insert(void)
{
	struct hgc_tir_module *m = build_softmax(2, 3);
	struct hgc_tir_stmt *body = m->entry->body, *copy;
	char *a, *b;
	size_t la, lb;
	FILE *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb);

	copy = hgc_tir_stmt_copy(m, body);
	hgc_tir_print_stmt(fa, body, 0);
	hgc_tir_print_stmt(fb, copy, 0);
	fclose(fa);
	fclose(fb);
	is_str(b, a, "a deep copy prints like the original");
	ok(copy->u.block.stmts[0] != body->u.block.stmts[0], "the copy has its own statements");
	free(a);
	free(b);
	hgc_tir_insert(body, 0, hgc_tir_return(m, NULL, NULL));
	is_int(body->u.block.n, 2, "insert adds a statement");
	is_int(body->u.block.stmts[0]->kind, HGC_TIR_S_RETURN, "insert at 0 puts it first");
	hgc_tir_module_free(m);
}

/* An expression prints as want. */
static void print_is(struct hgc_tir_module *m, struct hgc_tir_expr *e, const char *want,
		     const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)m;
	hgc_tir_print_expr(f, e);
	fclose(f);
	is_str(buf, want, "%s", what);
	free(buf);
}

/* Names are unique within a module and safe as C identifiers. */
static void test_names(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("names");
	char buf[64];

	is_str(hgc_tir_var_new(m, "i", TY(INDEX))->name, "i", "first i keeps its name");
	is_str(hgc_tir_var_new(m, "i", TY(INDEX))->name, "i_1", "second i gets a suffix");
	is_str(hgc_tir_var_new(m, "int", TY(INDEX))->name, "int_1", "a C keyword is renamed");
	is_str(hgc_tir_var_new(m, "3x-y", TY(INDEX))->name, "v3x_y", "non-identifiers are fixed");
	is_str(hgc_tir_var_new(m, "hgc_x", TY(INDEX))->name, "vhgc_x", "the emitter prefix is kept free");
	is_str(hgc_tir_tensor_newc(m, "i", TY(F32), HGC_TIR_LOCAL, 0, NULL)->name, "i_2",
	       "tensors and variables share one name space");
	is_str(hgc_tir_var_new(m, "x_3", TY(INDEX))->name, "x_3", "a name with a suffix of its own");
	{
		bool in_order = true;
		char want[32];

		is_str(hgc_tir_var_new(m, "x", TY(INDEX))->name, "x", "the first x");
		for (int k = 1; k <= 3000; k++) {
			snprintf(want, sizeof(want), "x_%d", k < 3 ? k : k + 1);
			in_order &= !strcmp(hgc_tir_var_new(m, "x", TY(INDEX))->name, want);
		}
		ok(in_order, "3000 more x: x_1, x_2, x_4 (x_3 is taken) ... x_3001, the first free each");
		is_str(hgc_tir_var_new(m, "x_3001", TY(INDEX))->name, "x_3001_1",
		       "a taken name with a suffix gets one more");
	}
	is_str(hgc_tir_type_str(hgc_tir_ptr_to(hgc_tir_ptr_to(TY(U8))), buf, sizeof(buf)),
	       "ptr<ptr<u8>>", "pointer types spell out");
	is_str(hgc_tir_type_str((struct hgc_tir_type){ HGC_TIR_F32, 0, 16 }, buf, sizeof(buf)),
	       "f32x16", "vector types spell their lanes");
	is_int(hgc_tir_intrin_lookup("brgemm_strd"), HGC_TIR_I_BRGEMM_STRD, "intrinsics by name");
	is_int(hgc_tir_intrin_lookup("nope"), -1, "unknown intrinsic names give -1");
	print_is(m, hgc_tir_unary(m, HGC_TIR_NEG, hgc_tir_idx(m, -3)), "-(-3)",
		 "negating a negative constant keeps both signs apart");
	print_is(m, hgc_tir_sub(m, hgc_tir_idx(m, 1), hgc_tir_sub(m, hgc_tir_idx(m, 2),
		 hgc_tir_idx(m, 3))), "1 - (2 - 3)", "right operands of equal precedence get parentheses");
	print_is(m, hgc_tir_mul(m, hgc_tir_add(m, hgc_tir_idx(m, 1), hgc_tir_idx(m, 2)),
		 hgc_tir_int(m, HGC_TIR_S32, 3)), "(1 + 2) * s32(3)", "typed constants and grouping");
	hgc_tir_module_free(m);
}

/* A pass that breaks the module: run_pass reports it through the verifier. */
static int bad_pass(struct hgc_tir_module *m, struct hgc_diag *d)
{
	struct hgc_tir_stmt *b = hgc_tir_body(m->entry->body->u.block.stmts[0]);

	b = hgc_tir_body(b->u.block.stmts[0]);
	b->u.block.stmts[0] = hgc_tir_block(m, NULL);	/* drop "let x" */
	return 0;
}

static int good_pass(struct hgc_tir_module *m, struct hgc_diag *d)
{
	return 0;
}

/* run_pass verifies after each pass and names the pass that broke the module. */
static void test_run_pass(void)
{
	struct hgc_tir_module *m = build_eltwise(2, 3);
	struct hgc_diag d;

	hgc_diag_init(&d);
	is_int(hgc_tir_run_pass(m, "nothing", good_pass, &d), 0, "a harmless pass passes");
	is_int(hgc_tir_run_pass(m, "breaker", bad_pass, &d), -1, "a breaking pass fails");
	ok(strstr(hgc_diag_text(&d), "'x' is used before its definition") != NULL,
	   "the verifier says what broke");
	ok(strstr(hgc_diag_text(&d), "after pass 'breaker'") != NULL, "and after which pass");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

int main(void)
{
	static const float w[6] = { 1, -2, 0.5f, 3, 0, 1.25f };

	check_module(build_matmul(13, 16, 97, 4, 8, 32), "matmul");
	check_module(build_eltwise(7, 33), "eltwise");
	check_module(build_softmax(5, 37), "softmax");
	check_module(build_pfor2(4, 6, w), "pfor2");
	test_walk();
	test_mutate();
	test_copy_insert();
	test_names();
	test_run_pass();
	return done_testing();
}
