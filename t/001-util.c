/* 001-util: arena, vector and diagnostics. */
#include "core/util/util.h"
#include "t/tap.h"

static void test_arena(void)
{
	struct hgc_arena a;
	char *s, *big;
	int *v;

	hgc_arena_init(&a);
	s = hgc_arena_strdup(&a, "hello");
	is_str(s, "hello", "arena strdup copies");
	v = hgc_arena_calloc(&a, 100, sizeof(int));
	ok(v[0] == 0 && v[99] == 0, "arena calloc zeroes");
	ok(((uintptr_t)v & 15) == 0, "arena allocations are 16-byte aligned");
	big = hgc_arena_alloc(&a, 10u << 20);
	big[(10u << 20) - 1] = 1;
	ok(big != NULL, "arena serves a block bigger than a chunk");
	is_str(hgc_arena_printf(&a, "%s-%d", "x", 42), "x-42", "arena printf formats");
	hgc_arena_release(&a);
}

static void test_vec(void)
{
	struct hgc_vec v;
	int i, sum = 0;

	hgc_vec_init(&v, sizeof(int));
	for (i = 0; i < 1000; i++)
		*(int *)hgc_vec_push(&v) = i;
	for (i = 0; i < (int)v.len; i++)
		sum += HGC_VEC_AT(&v, int, i);
	is_int(v.len, 1000, "vector holds every pushed element");
	is_int(sum, 999 * 1000 / 2, "vector keeps the values in order");
	hgc_vec_release(&v);
}

static void test_diag(void)
{
	struct hgc_diag d;
	struct hgc_loc loc = {"a.hgc", 2, 5};
	int i;

	hgc_diag_init(&d);
	hgc_diag_set_source(&d, "a.hgc", "line one\nabc defg\n");
	is_int(hgc_error(&d, &loc, "bad %s", "thing"), -1, "hgc_error returns -1");
	is_str(hgc_diag_text(&d), "a.hgc:2:5: error: bad thing\n  abc defg\n      ^\n",
	       "error has file:line:col, the source line and a caret");
	for (i = 0; i < 30; i++)
		hgc_error(&d, NULL, "more");
	is_int(d.nerr, 31, "every error is counted");
	ok(strstr(hgc_diag_text(&d), "too many errors") != NULL, "text stops at the cap");
	hgc_diag_release(&d);
}

int main(void)
{
	test_arena();
	test_vec();
	test_diag();
	return done_testing();
}
