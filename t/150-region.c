/*
 * 150-region: regions of fusible ops (no tunable op) lowered through a
 * Region template written in the language (templates/region.tmpl).  The
 * template checks: every t/region/NAME.tmpl is a malformed Region template
 * that must fail with exactly the diagnostics of t/region/NAME.err
 * (HGC_UPDATE_GOLDEN=1 rewrites them).  The compiled template and its
 * binding (a domain as [B, R, L]).  The lowering: the template log names
 * the template, its parameters and anchor; `use` and `pin` rules reach it,
 * bad ones are errors.  Every layernorm, softmax and elementwise spec of
 * spec/ that forms a region, and graphs of other shapes, match the
 * reference interpreter through the template (JIT; the C backend for the
 * graphs here).
 */
#include "t/driver_check.h"

#include <dirent.h>

#include "core/lower/fused.h"
#include "dsl/template.h"
#include "t/tmpl_check.h"

#define DIR_ "t/region"

/* Graphs: a 4-D softmax (B folds two dims), layernorm over two trailing
   axes (L folds two dims), an elementwise chain on a prime number of rows,
   layernorm on a 2-D tensor (B = 1). */
static const char src[] =
	"spec sm4 { input x : f32[2, 3, 20, 64] = uniform(lo = -3, hi = 3, seed = 1);\n"
	"  input m : f32[2, 1, 1, 64] = uniform(lo = -1, hi = 0, seed = 2);\n"
	"  a = Add(x, m); y = SoftMax(a, axis = -1); output y; }\n"
	"spec ln2 { input x : f32[4, 6, 8, 16] = uniform(lo = -1, hi = 1, seed = 3);\n"
	"  input r : f32[4, 6, 8, 16] = uniform(lo = -1, hi = 1, seed = 4);\n"
	"  a = Add(x, r); y = LayerNorm(a, begin_norm_axis = 2, use_affine = false,\n"
	"  keep_stats = false, epsilon = 0.00001); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec chain { input x : f32[3, 37, 24] = uniform(lo = -1, hi = 1, seed = 5);\n"
	"  input s : f32[24] = uniform(lo = -1, hi = 1, seed = 6);\n"
	"  a = Multiply(x, s); e = Tanh(a); y = Add(e, x); output y; }\n"
	"spec ln_flat { input x : f32[96, 768] = uniform(lo = -1, hi = 1, seed = 7);\n"
	"  input r : f32[96, 768] = uniform(lo = -1, hi = 1, seed = 8);\n"
	"  const g : f32[768] = uniform(lo = 0.8, hi = 1.2, seed = 9);\n"
	"  const b : f32[768] = uniform(lo = -0.1, hi = 0.1, seed = 10);\n"
	"  a = Add(x, r); y = LayerNorm(a, g, b, keep_stats = false, epsilon = 0.00001);\n"
	"  output y; expect { rtol = 1e-4; atol = 1e-5; } }\n";

/* The spec files whose layernorm, softmax and elementwise graphs form regions. */
static const char *const files[] = {
	"spec/models/layernorm.hgc", "spec/ops/norm.hgc", "spec/ops/softmax.hgc",
	"spec/ops/activation.hgc", "spec/ops/fusion.hgc", "spec/ops/reduce.hgc",
	"spec/ops/numpy.hgc",
};

/* Every t/region/NAME.tmpl. */
static void test_checks(void)
{
	DIR *dir = opendir(DIR_);
	struct dirent *e;
	struct hgc_diag d;
	size_t len;
	int n = 0;

	while (dir && (e = readdir(dir))) {
		len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".tmpl"))
			tc_bad_case(DIR_, e->d_name), n++;
	}
	if (dir)
		closedir(dir);
	ok(n >= 6, "%d malformed Region templates", n);
	hgc_diag_init(&d);
	is_int(tc_load("templates/region.tmpl", &d), 1, "templates/region.tmpl: one template");
	is_str(hgc_diag_text(&d), "", "templates/region.tmpl checks clean");
	hgc_diag_release(&d);
}

/* The compiled template and the binding of a domain. */
static void test_bind(void)
{
	const struct hgc_tmpl *t = hgc_tmpl_find("region_rows");
	int64_t dims[4] = {4, 3, 5, 7};
	struct hgc_tmpl_bind b;

	if (!ok(t != NULL, "region_rows is compiled in"))
		return;
	ok(t->op == HGC_TMPL_REGION && t->ninputs == 1, "it serves Region, one operand");
	is_str(hgc_tmpl_op_name(t->op), "Region", "the op's name");
	is_str(t->signature, "Region(X:[B, R, L]) -> Y:[B, R, L]", "signature");
	is_int(hgc_tmpl_bind_region(t, dims, 4, 2, 2, &b), 0,
	       "bind a [4, 3, 5, 7] domain, rows at 2");
	ok(b.dims[1][0] == 4 && b.dims[1][1] == 3 && b.dims[1][2] == 35, "B 4, R 3, L 35");
	ok(b.map[1].n == 4 && b.map[1].d[0].c == 0 && b.map[1].d[1].c == 1 &&
	   b.map[1].d[2].c == 2 && b.map[1].d[2].div == 7 && b.map[1].d[3].c == 2 &&
	   b.map[1].d[3].div == 1 && b.map[1].d[3].mod == 7, "the map: L folds dims 2 and 3");
	is_int(b.env.v[hgc_tmpl_sym(t, "L")], 35, "L in the environment");
	dims[0] = 6;
	is_int(hgc_tmpl_bind_region(t, dims, 2, 1, 2, &b), 0, "bind a [6, 3] domain, rows at 1");
	ok(b.dims[1][0] == 1 && b.dims[1][1] == 6 && b.dims[1][2] == 3, "B 1, R 6, L 3");
	ok(hgc_tmpl_bind_region(hgc_tmpl_find("matmul_core"), dims, 2, 1, 2, &b) < 0 &&
	   strstr(b.why, "serves MatMul"), "a MatMul template does not bind a region");
}

/* The template log of lowering sp under rules (NULL: d's error), threads 2. */
static char *log_rules(const struct hgc_spec *sp, const struct hgc_tmpl_rule *r, int n,
		       struct hgc_diag *d)
{
	struct hgc_driver_opts o;
	struct hgc_tir_module *m;
	char *plan = NULL;

	hgc_driver_opts_init(&o);
	o.threads = 2;
	o.rules = r, o.nrules = n;
	m = hgc_driver_lower(sp->graph, &o, &plan, d);
	if (!m) {
		free(plan);
		return NULL;
	}
	hgc_tir_module_free(m);
	return plan;
}

/* Compile sp on backend b under rules r, run it, compare with the interpreter. */
static void run(const struct hgc_spec *sp, enum hgc_driver_backend b,
		const struct hgc_tmpl_rule *r, int n, const char *what)
{
	struct hgc_driver_opts o;
	char why[512];

	hgc_driver_opts_init(&o);
	o.backend = b;
	o.disk_cache = false;
	o.threads = 2;
	o.rules = r, o.nrules = n;
	if (!ok(dc_spec_matches(sp, &o, why, sizeof(why)), "%s on %s%s", sp->name,
		hgc_driver_backend_name(b), what))
		diag("%s", why);
}

/* Whether sp's lowering puts a region through region_rows. */
static bool via_template(const struct hgc_spec *sp)
{
	struct hgc_diag d;
	char *t;
	bool yes;

	hgc_diag_init(&d);
	t = log_rules(sp, NULL, 0, &d);
	yes = t && strstr(t, "; template region_rows (RB=");
	free(t);
	hgc_diag_release(&d);
	return yes;
}

/* The log: template, parameters, anchor, candidates; rules reach it. */
static void test_log(const struct hgc_program *p)
{
	static const struct hgc_tmpl_rule use[] = {
		{ "use", "region", "region_rows", { NULL, 0, 0 } },
		{ "pin", "region_rows.RB", "4", { NULL, 0, 0 } } };
	static const struct hgc_tmpl_rule bad_pin[] = {
		{ "pin", "region_rows.RB", "7", { "t/150.hgc", 1, 1 } } };
	static const struct hgc_tmpl_rule bad_use[] = {
		{ "use", "MatMul", "region_rows", { "t/150.hgc", 2, 1 } } };
	static const struct hgc_tmpl_rule bad_op[] = {
		{ "use", "Regoin", "region_rows", { "t/150.hgc", 3, 1 } } };
	static const struct hgc_tmpl_rule mm_use[] = {
		{ "use", "Region", "matmul_core", { "t/150.hgc", 4, 1 } } };
	const struct hgc_spec *sm4 = HGC_PROGRAM_SPEC(p, 0), *ln_flat = HGC_PROGRAM_SPEC(p, 3);
	struct hgc_diag d;
	char *t;

	hgc_diag_init(&d);
	t = log_rules(sm4, NULL, 0, &d);
	ok(t && strstr(t, "region of 6 fusible ops (Add ...): 12 blocks of 10 x 64; template "
		       "region_rows (RB=10) at rows; candidates: rows(ws=640 calls=12 cost=768)"),
	   "sm4: 6 x 20 rows of 64 in blocks of 10 (7 tensors of a block in 32 KiB)");
	if (t && !strstr(t, "RB=10"))
		diag("%s", t);
	free(t);
	t = log_rules(ln_flat, NULL, 0, &d);
	ok(t && strstr(t, ": 96 blocks of 1 x 768; template region_rows (RB=1) at rows"),
	   "ln_flat: a row of 768 for 14 tensors leaves L1: one row per block");
	if (t && !strstr(t, "(RB=1)"))
		diag("%s", t);
	free(t);
	t = log_rules(sm4, use, 2, &d);
	ok(t && strstr(t, ": 30 blocks of 4 x 64; template region_rows (RB=4)"),
	   "use region_rows for Region; pin region_rows.RB = 4");
	free(t);
	run(sm4, HGC_DRIVER_JIT, use, 2, ", RB pinned to 4");
	t = log_rules(sm4, bad_pin, 1, &d);
	ok(!t && strstr(hgc_diag_text(&d), "t/150.hgc:1:1: error: pin region_rows.RB = 7: not "
			"in the domain divisor_of(R) of 'RB' here"), "a pin outside the domain");
	if (t || !strstr(hgc_diag_text(&d), "pin region_rows.RB = 7"))
		diag("%s", hgc_diag_text(&d));
	free(t);
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	t = log_rules(sm4, bad_use, 1, &d);
	ok(!t && strstr(hgc_diag_text(&d), "t/150.hgc:2:1: error: template region_rows serves "
			"Region, not 'MatMul'"), "use a Region template for MatMul");
	free(t);
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	t = log_rules(sm4, bad_op, 1, &d);
	ok(!t && strstr(hgc_diag_text(&d), "t/150.hgc:3:1: error: template region_rows serves "
			"Region, not 'Regoin'"), "use a Region template for an unknown op");
	free(t);
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	t = log_rules(sm4, mm_use, 1, &d);
	ok(!t && strstr(hgc_diag_text(&d), "t/150.hgc:4:1: error: template matmul_core serves "
			"MatMul, not 'Region'"), "use a MatMul template for Region");
	free(t);
	hgc_diag_release(&d);
}

/* The graphs here on both backends, and every region spec of spec/ on the JIT. */
static void test_specs(const struct hgc_program *p)
{
	struct hgc_program q;
	const struct hgc_spec *sp;
	struct hgc_diag d;
	size_t i, f;
	int n = 0;

	for (i = 0; i < p->specs.len; i++) {
		ok(via_template(HGC_PROGRAM_SPEC(p, i)), "%s: through region_rows",
		   HGC_PROGRAM_SPEC(p, i)->name);
		run(HGC_PROGRAM_SPEC(p, i), HGC_DRIVER_JIT, NULL, 0, "");
		run(HGC_PROGRAM_SPEC(p, i), HGC_DRIVER_C, NULL, 0, "");
	}
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		hgc_program_init(&q);
		hgc_diag_init(&d);
		if (!ok(hgc_program_load(&q, files[f], &d) == 0, "load %s", files[f]))
			diag("%s", hgc_diag_text(&d));
		for (i = 0; i < q.specs.len; i++) {
			sp = HGC_PROGRAM_SPEC(&q, i);
			if (!sp->graph || !via_template(sp))
				continue;
			run(sp, HGC_DRIVER_JIT, NULL, 0, ", region through its template");
			n++;
		}
		hgc_diag_release(&d);
		hgc_program_release(&q);
	}
	ok(n >= 15, "%d specs of spec/ lower a region through region_rows", n);
}

int main(void)
{
	struct hgc_program p;
	struct hgc_diag d;

	test_checks();
	test_bind();
	hgc_program_init(&p);
	hgc_diag_init(&d);
	if (!ok(hgc_program_load_string(&p, "t/150.hgc", src, &d) == 0, "load the specs"))
		diag("%s", hgc_diag_text(&d));
	else {
		test_log(&p);
		test_specs(&p);
	}
	hgc_driver_cache_clear();
	hgc_diag_release(&d);
	hgc_program_release(&p);
	done_testing();
}
