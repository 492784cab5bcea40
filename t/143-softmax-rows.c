/*
 * t/143: attention's rows (core/lower/row_fold.c, lower_reduce.c).  The
 * softmax of a row of scores is three loops: scale, mask add and max in
 * one; subtract, exp and sum in one; the divide, a multiply by the sum's
 * reciprocal (the division kept for a sum outside the normal range).  Rows
 * of -inf, NaN and +inf in the mask, a plain ReduceMax/ReduceMin over rows
 * holding NaN and infinities, and a division by row sums that are NaN,
 * infinite, zero or subnormal (whose reciprocal overflows) give the
 * interpreter's answer (NaN where it has NaN, the same infinities) on both
 * backends, with fusion on and off.  The exp of x - ReduceMax(x) is
 * exp_nonpos, an exp of anything else the general one.  ReduceMax and
 * ReduceMin with ignore_nan (SoftMax's max) pass NaNs by, split into lanes
 * (64 columns) or not (10).
 */
#include "t/driver_check.h"
#include "core/tir/tir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define S 128

static const char src[] =
	"spec att {\n"
	"  input q : f32[1, 2, 128, 64] = uniform(lo = -1, hi = 1, seed = 1);\n"
	"  input kt : f32[1, 2, 64, 128] = uniform(lo = -1, hi = 1, seed = 2);\n"
	"  input v : f32[1, 2, 128, 64] = uniform(lo = -1, hi = 1, seed = 3);\n"
	"  input mask : f32[1, 1, 128, 128] = uniform(lo = -4, hi = 0, seed = 4);\n"
	"  const scale : f32[] = [0.125];\n"
	"  s = MatMul(q, kt); ss = Multiply(s, scale); sm = Add(ss, mask);\n"
	"  p = SoftMax(sm, axis = -1); y = MatMul(p, v); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec red {\n"
	"  input x : f32[6, 64] = uniform(lo = -4, hi = 4, seed = 5);\n"
	"  mx = ReduceMax(x, axes = [1]); mn = ReduceMin(x, axes = [1]); output mx, mn; }\n"
	"spec div {\n"
	"  input a : f32[64, 64] = uniform(lo = 0.5, hi = 1, seed = 6);\n"
	"  input b : f32[64, 128] = ones();\n"
	"  s = MatMul(a, b); r = ReduceSum(s, axes = [1], keep_dims = true);\n"
	"  y = Divide(s, r); output y; }\n"
	"spec shift_other {\n"
	"  input x : f32[4, 64] = uniform(lo = -100, hi = 100, seed = 7);\n"
	"  m = ReduceMean(x, axes = [1], keep_dims = true); d = Subtract(x, m); e = Exp(d);\n"
	"  mx = ReduceMax(x, axes = [1], keep_dims = true); r = Subtract(mx, x); f = Exp(r);\n"
	"  const two : f32[] = [2]; y = Multiply(x, two); g = Subtract(y, mx); h = Exp(g);\n"
	"  k = Add(x, mx); l = Exp(k);\n"
	"  output e, f, h, l; }\n"
	"spec shift_max {\n"
	"  input x : f32[4, 64] = uniform(lo = -100, hi = 100, seed = 8);\n"
	"  mx = ReduceMax(x, axes = [1], keep_dims = true); d = Subtract(x, mx); e = Exp(d);\n"
	"  output e; }\n"
	"spec skip {\n"
	"  input x : f32[6, 64] = uniform(lo = -4, hi = 4, seed = 9);\n"
	"  input z : f32[6, 10] = uniform(lo = -4, hi = 4, seed = 10);\n"
	"  mx = ReduceMax(x, axes = [1], ignore_nan = true);\n"
	"  mn = ReduceMin(x, axes = [-1], keep_dims = true, ignore_nan = true);\n"
	"  zx = ReduceMax(z, axes = [1], ignore_nan = true); output mx, mn, zx; }\n";

/* The TIR of sp after the passes (2 threads), as text. */
static char *tir_of(const struct hgc_spec *sp)
{
	return dc_tir_text(sp->graph, 2, NULL, NULL);
}

/* The text of the loop that starts at the line holding at, to its brace. */
static char *loop_text(const char *at)
{
	const char *bol = at, *end;
	char close[64];
	int indent;

	while (bol > at - 200 && bol[-1] != '\n')
		bol--;
	indent = (int)(at - bol);
	snprintf(close, sizeof(close), "\n%*s}", indent, "");
	end = strstr(at, close);
	return end ? strndup(at, (size_t)(end - at)) : strdup("");
}

/* The text from the n-th (from 1) occurrence of what in s, or NULL. */
static const char *nth(const char *s, const char *what, int n)
{
	for (s = strstr(s, what); s && --n > 0; s = strstr(s + 1, what))
		;
	return s;
}

/* The row of softmax: three loops over it, exp folded with the sum; two
   rows an iteration, their loops taken in turns. */
static void test_rows(const struct hgc_spec *sp)
{
	char *s = tir_of(sp), *row;
	const char *at = strstr(s, "for (row in"), *exp1;

	ok(at != NULL, "att: the members go row by row");
	row = loop_text(at ? at : s);
	ok(strstr(s, "for (row in [0, 64))") && strstr(row, "row * 2 + 1"),
	   "att: two rows (of 128) an iteration");
	is_int(dc_count(row, "for ("), 9,
	       "att: the row loop holds three loops a row (and the divide kept for odd sums)");
	exp1 = strstr(row, "exp_nonpos(");
	ok(exp1 && nth(row, "for (l", 2) < exp1 && strstr(nth(row, "for (l", 2), "mask[") < exp1,
	   "att: both rows' max loops (with the mask add) come before the first exp");
	ok(dc_count(row, "= 1.0f / rowd") == 2 && dc_count(row, "* rowr") == 2,
	   "att: the divide multiplies by the sum's reciprocal");
	ok(!strstr(row, "= exp_nonpos(") || strstr(row, ": f32 = exp_nonpos("),
	   "att: exp's result is a let of the sum's loop, not a store of its own loop");
	ok(strstr(row, "mask[") && strstr(row, "max(") &&
	   strstr(strstr(row, "mask["), "max(") < strstr(row, "exp_nonpos("),
	   "att: the mask add sits in the max loop");
	ok(dc_count(row, "exp_nonpos(") >= 1 &&
	   dc_count(row, "exp_nonpos(") == dc_count(row, ": f32 = exp_nonpos("),
	   "att: every exp is a let (its value goes to the sum, not through memory)");
	ok(!strstr(row, " exp("), "att: the exp of x - max(x) is exp_nonpos, never the general exp");
	is_int(dc_count(s, "parallel for"), 1, "att: one parallel loop");
	free(row);
	free(s);
}

/* Only x - max(x) takes exp_nonpos: not x - mean(x), max(x) - x, 2x - max(x)
   or x + max(x). */
static void test_exp_kinds(const struct hgc_spec *other, const struct hgc_spec *shift)
{
	char *s = tir_of(other), *t = tir_of(shift);

	ok(dc_count(s, "exp(") > 0 && !strstr(s, "exp_nonpos("),
	   "exp of x - mean(x), max(x) - x, 2x - max(x), x + max(x): the general exp");
	ok(dc_count(t, "exp_nonpos(") > 0 && !strstr(t, "exp("), "exp(x - max(x)) takes exp_nonpos");
	free(s);
	free(t);
}

/* NaN, -inf and +inf in rows of x (4 x 64). */
static void poison_shift(float *x)
{
	x[0 * 64 + 5] = NAN;
	x[1 * 64 + 0] = -INFINITY;
	x[2 * 64 + 63] = INFINITY;
	x[3 * 64 + 9] = -1000;
}

/* Put NaN, -inf and +inf into rows of the attention's mask (row-major S x S). */
static void poison_mask(float *m)
{
	for (int j = 0; j < S; j++)
		m[0 * S + j] = -INFINITY;	/* a row of -inf: NaN throughout */
	m[1 * S + 5] = NAN;			/* one NaN: a NaN row */
	for (int j = 0; j < S; j++)
		m[2 * S + j] = j == 7 ? 0 : -INFINITY;	/* one finite value: a one-hot row */
	m[3 * S + 3] = INFINITY;		/* +inf: inf - inf is NaN */
	m[4 * S + 127] = -INFINITY;		/* the last column masked */
	m[5 * S + 64] = NAN;			/* a NaN in the second half */
}

/* Put NaN into rows of red's x (6 x 64). */
static void poison_x(float *x)
{
	x[0 * 64 + 0] = NAN;
	x[1 * 64 + 63] = NAN;
	x[2 * 64 + 17] = NAN;
	x[2 * 64 + 40] = INFINITY;
	for (int j = 0; j < 64; j++)
		x[3 * 64 + j] = -INFINITY;
	x[4 * 64 + 9] = -INFINITY;
}

/* Rows of div's a (64 x 64; b is ones, so row i of s is a's row sum
   everywhere): NaN, infinite, zero, and a sum of 2^-133, whose reciprocal
   is no float (each y is 1/128 exactly, x * (1 / sum) would be inf). */
static void poison_a(float *a)
{
	a[0 * 64 + 3] = NAN;
	a[1 * 64 + 0] = INFINITY;
	for (int j = 0; j < 64; j++)
		a[2 * 64 + j] = 0, a[3 * 64 + j] = j ? 0 : 0x1p-140f;
}

/* Run h and the interpreter on b's inputs; whether every output element
   agrees: both NaN, equal (infinities), or within sp's tolerances. */
static bool agree(struct hgc_driver_graph *h, const struct hgc_spec *sp, struct dc_bufs *b,
		  char *why, size_t size)
{
	struct hgc_diag d;
	double rtol, atol;
	bool same = true;

	hgc_diag_init(&d);
	if (hgc_driver_run(h, (const void *const *)b->in, b->out, &d) < 0 ||
	    hgc_interp_run(sp->graph, (const void *const *)b->in, b->ref, &d) < 0) {
		snprintf(why, size, "%s", hgc_diag_text(&d));
		same = false;
	}
	hgc_diag_release(&d);
	dc_tol(sp, HGC_DT_F32, &rtol, &atol);
	for (int i = 0; i < b->nout && same; i++) {
		const struct hgc_tensor *t = HGC_GRAPH_OUTPUT(sp->graph, i);
		const float *g = b->out[i], *w = b->ref[i];

		for (int64_t k = 0; k < hgc_tensor_nelems(t) && same; k++) {
			same = (isnan(g[k]) && isnan(w[k])) || g[k] == w[k] ||
			       fabs((double)g[k] - w[k]) <= atol + rtol * fabs((double)w[k]);
			if (!same)
				snprintf(why, size, "%s[%lld]: got %.9g, want %.9g", t->name,
					 (long long)k, g[k], w[k]);
		}
	}
	return same;
}

/* The max (max) or min of row r of x (n columns), NaNs passed by. */
static float skip_nan(const float *x, int r, int n, bool max)
{
	float m = max ? -INFINITY : INFINITY;

	for (int j = 0; j < n; j++)
		if (max ? x[r * n + j] > m : x[r * n + j] < m)
			m = x[r * n + j];
	return m;
}

/* skip's rows with poison_x's NaNs and infinities (z: a NaN, a row of NaN),
   on backend b: the max and min of the others, as the interpreter says. */
static void test_skip(const struct hgc_spec *sp, enum hgc_driver_backend b)
{
	struct hgc_driver_opts o;
	struct hgc_driver_graph *h;
	struct dc_bufs bufs;
	struct hgc_diag d;
	const float *x, *z, *mx, *mn, *zx;
	char why[512] = "";
	int bad = 0;

	hgc_driver_opts_init(&o);
	o.backend = b;
	o.disk_cache = false;
	o.threads = 2;
	hgc_diag_init(&d);
	dc_alloc(&bufs, sp->graph);
	h = hgc_driver_compile(sp->graph, &o, NULL, &d);
	for (int i = 0; h && i < bufs.nin && !d.nerr; i++)
		hgc_gen_fill(&sp->gens[i], HGC_GRAPH_INPUT(sp->graph, i), bufs.in[i], &d);
	if (!h || d.nerr) {
		ok(false, "skip on %s: %s", hgc_driver_backend_name(b), hgc_diag_text(&d));
		goto out;
	}
	poison_x(bufs.in[0]);
	((float *)bufs.in[1])[13] = NAN;
	for (int j = 0; j < 10; j++)
		((float *)bufs.in[1])[30 + j] = NAN;
	x = bufs.in[0], z = bufs.in[1], mx = bufs.out[0], mn = bufs.out[1], zx = bufs.out[2];
	if (!agree(h, sp, &bufs, why, sizeof(why)))
		bad++, diag("%s", why);
	for (int r = 0; r < 6; r++) {
		bad += mx[r] != skip_nan(x, r, 64, true) || mn[r] != skip_nan(x, r, 64, false);
		bad += zx[r] != skip_nan(z, r, 10, true);
	}
	ok(bad == 0 && !isnan(mx[0]) && mx[3] == -INFINITY && mx[2] == INFINITY &&
	   zx[3] == -INFINITY,
	   "skip on %s: ignore_nan's max and min pass NaNs by (a row of NaN: -inf)",
	   hgc_driver_backend_name(b));
out:
	hgc_driver_release(h);
	dc_release(&bufs);
	hgc_diag_release(&d);
}

/* Compile sp on backend b (fusion off when nofuse), fill, poison input pi, compare. */
static void run(const struct hgc_spec *sp, enum hgc_driver_backend b, bool nofuse, int pi,
		void (*poison)(float *))
{
	static const struct hgc_tmpl_rule off = { "pass", "fuse", "off", { NULL, 0, 0 } };
	struct hgc_driver_opts o;
	struct hgc_driver_graph *h;
	struct dc_bufs bufs;
	struct hgc_diag d;
	char why[512] = "";
	bool same = false, nan = false;

	hgc_driver_opts_init(&o);
	o.backend = b;
	o.disk_cache = false;
	o.threads = 2;
	if (nofuse)
		o.rules = &off, o.nrules = 1;
	hgc_diag_init(&d);
	dc_alloc(&bufs, sp->graph);
	h = hgc_driver_compile(sp->graph, &o, NULL, &d);
	for (int i = 0; h && i < bufs.nin && !d.nerr; i++)
		hgc_gen_fill(&sp->gens[i], HGC_GRAPH_INPUT(sp->graph, i), bufs.in[i], &d);
	if (h && !d.nerr) {
		poison(bufs.in[pi]);
		same = agree(h, sp, &bufs, why, sizeof(why));
		nan = isnan(((float *)bufs.ref[0])[0]) && isnan(((float *)bufs.out[0])[0]);
	} else {
		snprintf(why, sizeof(why), "%s", hgc_diag_text(&d));
	}
	if (!ok(same && nan, "%s on %s%s: NaN and infinities give the interpreter's answer",
		sp->name, hgc_driver_backend_name(b), nofuse ? ", fuse off" : ""))
		diag("%s%s", why, nan ? "" : " (row 0 is not NaN)");
	hgc_driver_release(h);
	dc_release(&bufs);
	hgc_diag_release(&d);
}

int main(void)
{
	struct hgc_program p;

	dc_load(&p, "rows.hgc", src);
	is_int((int)p.specs.len, 6, "the specs load");
	if (p.specs.len == 6) {
		test_skip(HGC_PROGRAM_SPEC(&p, 5), HGC_DRIVER_JIT);
		test_skip(HGC_PROGRAM_SPEC(&p, 5), HGC_DRIVER_C);
		test_rows(HGC_PROGRAM_SPEC(&p, 0));
		test_exp_kinds(HGC_PROGRAM_SPEC(&p, 3), HGC_PROGRAM_SPEC(&p, 4));
		for (int f = 0; f < 2; f++) {
			run(HGC_PROGRAM_SPEC(&p, 0), HGC_DRIVER_JIT, f, 3, poison_mask);
			run(HGC_PROGRAM_SPEC(&p, 0), HGC_DRIVER_C, f, 3, poison_mask);
			run(HGC_PROGRAM_SPEC(&p, 1), HGC_DRIVER_JIT, f, 0, poison_x);
			run(HGC_PROGRAM_SPEC(&p, 1), HGC_DRIVER_C, f, 0, poison_x);
			run(HGC_PROGRAM_SPEC(&p, 2), HGC_DRIVER_JIT, f, 0, poison_a);
			run(HGC_PROGRAM_SPEC(&p, 2), HGC_DRIVER_C, f, 0, poison_a);
			for (int k = 3; k < 5; k++) {
				run(HGC_PROGRAM_SPEC(&p, k), HGC_DRIVER_JIT, f, 0, poison_shift);
				run(HGC_PROGRAM_SPEC(&p, k), HGC_DRIVER_C, f, 0, poison_shift);
			}
		}
	}
	hgc_program_release(&p);
	done_testing();
}
