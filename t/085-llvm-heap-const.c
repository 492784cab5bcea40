/*
 * 085-llvm-heap-const: large constants the init function fills (weights
 * packed into a template's layout) live in memory init maps, not in a
 * zero-initialized global that the JIT's linker would clear at load
 * (runtime/constbuf.c).  The IR maps them in init and unmaps them in fini;
 * smaller ones stay globals; the compiled graph matches the interpreter on
 * repeated runs, after a release and a compile again, and at two threads;
 * an object file's header declares fini.
 */
#include "t/driver_check.h"

#include "core/codegen/codegen.h"

/* The optimized IR of g's module (malloc'ed), or NULL. */
static char *llvm_text(const struct hgc_graph *g)
{
	struct hgc_driver_opts o;
	struct hgc_tir_module *m;
	struct hgc_diag d;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	hgc_driver_opts_init(&o);
	o.threads = 1;
	hgc_diag_init(&d);
	m = hgc_driver_lower(g, &o, NULL, &d);
	f = open_memstream(&text, &len);
	if (!m || hgc_codegen_llvm_dump(f, m, NULL, &d) < 0) {
		diag("%s", hgc_diag_text(&d));
		fclose(f);
		free(text);
		text = NULL;
	} else {
		fclose(f);
	}
	hgc_tir_module_free(m);
	hgc_diag_release(&d);
	return text;
}

/* The largest "[N x i8] zeroinitializer" global in text, 0 when none. */
static long long largest_zero_global(const char *text)
{
	long long n, best = 0;
	const char *s;

	for (s = text; (s = strstr(s, "internal global [")); s++)
		if (sscanf(s, "internal global [%lld x i8] zeroinitializer", &n) == 1 && n > best)
			best = n;
	return best;
}

/* A 2 MiB weight becomes a heap constant; a 16 KiB one stays a global. */
static void test_ir(void)
{
	struct hgc_graph *big = dc_matmul(64, 512, 1024, false), *small = dc_matmul(8, 64, 64, false);
	char *t = llvm_text(big), *u = llvm_text(small);

	ok(t && strstr(t, "call i8* @hgc_rt_const_alloc(i64 ") && strstr(t, "define void @hgc_fini()") &&
	   strstr(t, "call void @hgc_rt_const_free("),
	   "2 MiB of packed weights: init maps them, fini unmaps them");
	ok(t && largest_zero_global(t) < (1 << 20), "no zero-initialized global of 1 MiB or more "
	   "(largest %lld bytes)", t ? largest_zero_global(t) : -1);
	ok(u && !strstr(u, "@hgc_rt_const_alloc(") && strstr(u, "define void @hgc_fini()"),
	   "16 KiB of weights stay a global; fini is there all the same");
	free(t);
	free(u);
	hgc_graph_free(big);
	hgc_graph_free(small);
}

/* Compile g (threads), run it twice against the interpreter, release. */
static void run_twice(struct hgc_graph *g, int threads, const char *what)
{
	struct hgc_driver_opts o;
	struct hgc_driver_graph *h;
	struct dc_bufs b;
	struct hgc_diag d;
	char why[512] = "";

	hgc_driver_opts_init(&o);
	o.threads = threads;
	o.disk_cache = false;
	hgc_diag_init(&d);
	dc_alloc(&b, g);
	dc_fill(&b, g, 7);
	h = hgc_driver_compile(g, &o, NULL, &d);
	ok(h != NULL, "%s: compiles", what);
	if (!h)
		diag("%s", hgc_diag_text(&d));
	ok(h && dc_check(h, g, NULL, &b, why, sizeof(why)), "%s: first run (init) matches%s%s",
	   what, why[0] ? ": " : "", why);
	for (int64_t k = 0; k < hgc_tensor_nelems(HGC_GRAPH_INPUT(g, 0)); k++)
		((float *)b.in[0])[k] *= -0.5f;	/* a new x; the constant w stays */
	ok(h && dc_check(h, g, NULL, &b, why, sizeof(why)), "%s: second run, new x, matches%s%s",
	   what, why[0] ? ": " : "", why);
	hgc_driver_release(h);
	hgc_driver_cache_clear();
	dc_release(&b);
	hgc_diag_release(&d);
}

/* Runs: once, again after release (init maps afresh), and at two threads. */
static void test_runs(void)
{
	struct hgc_graph *g = dc_matmul(48, 520, 1030, true);

	run_twice(g, 1, "48x520x1030 + ReLU, 1 thread");
	run_twice(g, 1, "compiled again after the release");
	run_twice(g, 2, "at 2 threads");
	hgc_graph_free(g);
}

int main(void)
{
	test_ir();
	test_runs();
	done_testing();
}
