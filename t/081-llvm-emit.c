/*
 * 081-llvm-emit: what the LLVM backend writes and how it fails.  The
 * optimized IR dump; an object file and its header linked by cc into a
 * separate C program with only the runtime's objects (no LLVM), run and
 * checked; assembly output; and every error path giving a diagnostic, not
 * a crash: malformed TIR, invalid LLVM IR, an unknown pass pipeline, an
 * unresolved symbol, unwritable files, a return inside a parallel for, and
 * the JIT still working afterwards and after a shutdown.
 */
#include "t/llvm_check.h"

#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

static char build_dir[1024];	/* where the runtime objects are: $HGC_BUILD or from argv[0] */
static char tmp[64];		/* this test's scratch directory */

/* The host CPU's name, from the backend's description of its target. */
static const char *host_cpu(void)
{
	static char cpu[64];
	const char *t = strstr(hgc_codegen_llvm_target(), ", cpu ");

	if (!t || sscanf(t + 6, "%63[^,]", cpu) != 1)
		snprintf(cpu, sizeof(cpu), "?");
	return cpu;
}

/* The optimized IR names the exported functions, the runtime and the host CPU, and
   softmax's scaling loop (a local tensor times a scalar) is vectorized for it. */
static void test_dump(void)
{
	static const float w[6] = { 1, 2, 3, 4, 5, 6 };
	struct hgc_tir_module *m = build_softmax(5, 64), *p = build_pfor2(4, 6, w);
	struct hgc_diag d;
	char *t, want[256];

	hgc_diag_init(&d);
	t = llvm_ir_text(m, NULL, &d);
	ok(t != NULL, "the softmax module dumps");
	if (t) {
		ok(strstr(t, "define void @hgc_entry(i8** ") && strstr(t, "define void @hgc_entry_fn("),
		   "with the args entry and the direct entry");
		snprintf(want, sizeof(want), "\"target-cpu\"=\"%s\"", host_cpu());
		ok(strstr(t, want) != NULL, "for the host cpu (%s)", want);
		ok(strstr(t, " x float>") != NULL, "and the loop vectorized (O3 saw the target)");
		ok(strstr(t, ", !alias.scope !") && strstr(t, ", !noalias !") &&
		   strstr(t, "!\"hgc tensors\"}"),
		   "loads and stores carry the tensors' alias scopes (llvm_alias.c)");
	}
	free(t);
	t = llvm_ir_text(p, &(struct hgc_codegen_llvm_opts){ .passes = "default<O0>", .prefix = "x_" }, &d);
	ok(t && strstr(t, "call void @hgc_rt_parallel_for(void (i8*, i64)* @tir.main_1.pfor0") &&
	   strstr(t, "define void @x_init(i8** ") && strstr(t, "@tir.W = internal constant"),
	   "pfor2 at O0: the outlined body, the prefix, the read-only constant");
	if (d.nerr)
		diag("%s", hgc_diag_text(&d));
	free(t);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
	hgc_tir_module_free(p);
}

/* Write path with text; false on failure. */
static bool write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return f && fputs(text, f) >= 0 && !fclose(f);
}

/* A program that runs pfor2 through its header twice and prints the results. */
static const char main_c[] =
	"#include <stdio.h>\n#include <omp.h>\n#include \"pfor2.h\"\n\n"
	"int main(void)\n{\n\tint64_t T[4][6];\n\tfloat O[4][6], scale = 2, sum = 0;\n"
	"\tvoid *args[3] = { T, O, &scale };\n\tint i, j;\n\n"
	"\tomp_set_num_threads(2);\n\tt81_init(args);\n\tt81_entry_fn(&T[0][0], &O[0][0], 3);\n"
	"\tfor (i = 0; i < 4; i++)\n\t\tfor (j = 0; j < 6; j++)\n"
	"\t\t\tprintf(\"%g %lld\\n\", O[i][j], (long long)T[i][j]);\n"
	"\tt81_entry(args);\n\tfor (i = 0; i < 4; i++)\n\t\tfor (j = 0; j < 6; j++)\n"
	"\t\t\tsum += O[i][j];\n\tprintf(\"sum %g\\n\", sum);\n\tt81_fini();\n\treturn 0;\n}\n";

/* What that program must print. */
static void expected_output(char *buf, size_t size, const float *w)
{
	size_t n = 0;
	float v, sum = 0;
	int i, j;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 6; j++) {
			v = 3 * w[j] * w[j] + (float)(i * 6 + j);
			n += (size_t)snprintf(buf + n, size - n, "%g %d\n", i == j ? -v : v,
					      (i * 6 + j) / 12);
		}
	for (i = 0; i < 4; i++)
		for (j = 0; j < 6; j++) {
			v = 2 * w[j] * w[j] + (float)(i * 6 + j);
			sum += i == j ? -v : v;
		}
	snprintf(buf + n, size - n, "sum %g\n", sum);
}

/* cc main.c pfor2.o and the runtime's objects: no LLVM in the program. */
static int link_program(void)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "cc -std=c11 -o %s/prog %s/main.c %s/pfor2.o %s/obj/runtime/*.o -I%s -fopenmp -lm %s"
		 " >%s/cc.log 2>&1", tmp, tmp, tmp, build_dir, tmp,
#ifdef __SANITIZE_ADDRESS__
		 "-fsanitize=address,undefined",
#else
		 "",
#endif
		 tmp);
	return system(cmd);
}

/* An object file and header for pfor2, linked into a C program that has no LLVM. */
static void test_object(void)
{
	static const float w[6] = { 1, -2, 0.5f, 3, 0, 1.25f };
	struct hgc_tir_module *m = build_pfor2(4, 6, w);
	struct hgc_codegen_llvm_opts o = { .prefix = "t81_" };
	struct hgc_diag d;
	char path[256], want[4096], *h, *out;

	hgc_diag_init(&d);
	snprintf(path, sizeof(path), "%s/pfor2.o", tmp);
	is_int(hgc_codegen_llvm_emit_file(m, &o, path, false, &d), 0, "the object file is written");
	snprintf(path, sizeof(path), "%s/pfor2.h", tmp);
	is_int(hgc_codegen_llvm_emit_header(m, &o, path, &d), 0, "and its header");
	h = hgc_read_file(path, NULL, &d);
	ok(h && strstr(h, "void t81_entry(void **args);\n") &&
	   strstr(h, "void t81_entry_fn(int64_t *T, float *O, float scale);\n") &&
	   strstr(h, "void t81_init_fn(void);\n") && strstr(h, " *   args[1]: O f32[4, 6]\n") &&
	   strstr(h, "void t81_fini(void);\n"),
	   "the header declares both forms of entry and init, and fini");
	snprintf(path, sizeof(path), "%s/main.c", tmp);
	ok(write_text(path, main_c), "wrote main.c");
	is_int(link_program(), 0, "cc links main.c with the object and the runtime objects");
	snprintf(path, sizeof(path), "%s/prog > %s/out.txt", tmp, tmp);
	is_int(system(path), 0, "the program runs");
	snprintf(path, sizeof(path), "%s/out.txt", tmp);
	out = hgc_read_file(path, NULL, &d);
	expected_output(want, sizeof(want), w);
	is_str(out, want, "and prints what the module computes, with init's constants");
	if (d.nerr)
		diag("%s", hgc_diag_text(&d));
	free(h);
	free(out);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* Assembly output for the host. */
static void test_assembly(void)
{
	struct hgc_tir_module *m = build_softmax(3, 8);
	struct hgc_codegen_llvm_opts o = { .prefix = "asm_" };
	struct hgc_diag d;
	char path[256], *s;

	hgc_diag_init(&d);
	snprintf(path, sizeof(path), "%s/softmax.s", tmp);
	is_int(hgc_codegen_llvm_emit_file(m, &o, path, true, &d), 0, "assembly is written");
	s = hgc_read_file(path, NULL, &d);
	ok(s && strstr(s, "asm_entry:") && strstr(s, "hgc_rt_parallel_for"),
	   "with the entry and the parallel-for call");
	free(s);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* A module whose entry stores the result of e (built by mk) to Y[0]. */
static struct hgc_tir_module *one_store(struct hgc_tir_type ty,
					struct hgc_tir_expr *(*mk)(struct hgc_tir_module *m))
{
	struct hgc_tir_module *m = hgc_tir_module_new("bad");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "f", TY(VOID));
	struct hgc_tir_tensor *Y = hgc_tir_func_add_tensor(f, "Y", ty, 1, (int64_t[]){ 1 });

	m->entry = f;
	ST1(f->body, Y, I(0), mk(m));
	return m;
}

static struct hgc_tir_expr *mk_float(struct hgc_tir_module *m)
{
	return F32C(1.5);
}

/* llvm.sqrt.f32 called with an index: invalid LLVM IR. */
static struct hgc_tir_expr *mk_bad_intrinsic(struct hgc_tir_module *m)
{
	return hgc_tir_call_extern(m, "llvm.sqrt.f32", TY(INDEX), 1, (struct hgc_tir_expr *[]){ I(4) });
}

static struct hgc_tir_expr *mk_unknown(struct hgc_tir_module *m)
{
	return hgc_tir_call_extern(m, "hgc_test_no_such_symbol", TY(F32), 0, NULL);
}

/* Compile m expecting failure; the diagnostic must contain every one of want[]. */
static void fails_with(struct hgc_tir_module *m, const struct hgc_codegen_llvm_opts *o,
		       const char *const *want, int n, const char *what)
{
	struct hgc_diag d;
	struct hgc_compiled *c;
	int i, found = 1;

	hgc_diag_init(&d);
	c = hgc_codegen_llvm_compile(m, o, &d);
	ok(!c && d.nerr > 0, "%s: compiling fails with a diagnostic", what);
	for (i = 0; i < n; i++)
		found &= strstr(hgc_diag_text(&d), want[i]) != NULL;
	ok(found, "%s: the diagnostic says what went wrong", what);
	if (!found)
		diag("got: %s", hgc_diag_text(&d));
	hgc_codegen_free(c);
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* A return inside a parallel for has no meaning for the outlined body. */
static struct hgc_tir_module *build_return_in_pfor(void)
{
	struct hgc_tir_module *m = hgc_tir_module_new("ret");
	struct hgc_tir_func *f = hgc_tir_func_new(m, "f", TY(VOID));
	struct hgc_tir_var *i = ivar(m, "i");

	m->entry = f;
	hgc_tir_return(m, hgc_tir_body(hgc_tir_pfor(m, f->body, 1, &i,
		(struct hgc_tir_expr *[]){ I(0) }, (struct hgc_tir_expr *[]){ I(4) }, NULL)), NULL);
	return m;
}

/* Every failure is a diagnostic. */
static void test_errors(void)
{
	struct hgc_codegen_llvm_opts o9 = { .passes = "default<O9>" };

	fails_with(one_store(TY(S32), mk_float), NULL,
		   (const char *[]){ "hgc: error: in 'f': store to 'Y' is given f32, not s32\n" }, 1,
		   "malformed TIR");
	fails_with(one_store(TY(INDEX), mk_bad_intrinsic), NULL,
		   (const char *[]){ "llvm backend: internal error: invalid LLVM IR: ",
				     "llvm.sqrt.f32" }, 2, "an intrinsic with the wrong type");
	fails_with(one_store(TY(F32), mk_float), &o9,
		   (const char *[]){ "llvm backend: cannot optimize: ", "O9" }, 2,
		   "an unknown pass pipeline");
	fails_with(one_store(TY(F32), mk_unknown), NULL,
		   (const char *[]){ "llvm backend: cannot compile the module: ",
				     "hgc_test_no_such_symbol" }, 2, "an unresolved symbol");
	fails_with(build_return_in_pfor(), NULL,
		   (const char *[]){ "in 'f': return inside a parallel for\n" }, 1,
		   "a return in a parallel for");
}

/* Files that cannot be written. */
static void test_unwritable(void)
{
	struct hgc_tir_module *m = one_store(TY(F32), mk_float);
	struct hgc_diag d;

	hgc_diag_init(&d);
	is_int(hgc_codegen_llvm_emit_file(m, NULL, "/nonexistent/dir/x.o", false, &d), -1,
	       "an object file in a missing directory fails");
	ok(strstr(hgc_diag_text(&d), "llvm backend: cannot write /nonexistent/dir/x.o: "),
	   "saying which file");
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	is_int(hgc_codegen_llvm_emit_header(m, NULL, "/nonexistent/dir/x.h", &d), -1,
	       "a header in a missing directory fails");
	is_str(hgc_diag_text(&d), "hgc: error: llvm backend: cannot write /nonexistent/dir/x.h\n",
	       "saying which file");
	hgc_diag_release(&d);
	hgc_tir_module_free(m);
}

/* After failures, and after a shutdown, the JIT compiles and runs again. */
static void test_recovery(void)
{
	float x[1] = { 0 };
	void *args[1] = { x };
	struct hgc_tir_module *m = one_store(TY(F32), mk_float);
	struct hgc_compiled *c = jit(m, "a module after the failures");

	if (c)
		hgc_codegen_run(c, args);
	is_near(x[0], 1.5, 0, "and runs");
	hgc_codegen_llvm_shutdown();
	x[0] = 0;
	if (c)
		hgc_codegen_run(c, args);
	is_near(x[0], 1.5, 0, "a shutdown while a module is alive leaves it working");
	hgc_codegen_free(c);
	hgc_codegen_llvm_shutdown();
	x[0] = 0;
	c = jit(m, "a module after a shutdown");
	if (c)
		hgc_codegen_run(c, args);
	is_near(x[0], 1.5, 0, "and runs");
	hgc_codegen_free(c);
	hgc_tir_module_free(m);
}

/* Find the build directory and make a scratch directory. */
static bool setup(const char *argv0)
{
	const char *env = getenv("HGC_BUILD");
	char *copy = strdup(argv0);

	if (env && *env)
		snprintf(build_dir, sizeof(build_dir), "%s", env);
	else
		snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	snprintf(tmp, sizeof(tmp), "/tmp/hgc-081-XXXXXX");
	return mkdtemp(tmp) != NULL;
}

int main(int argc, char **argv)
{
	char cmd[128];

	if (!setup(argv[0])) {
		plan(1);
		ok(0, "cannot make a scratch directory");
		return 1;
	}
	test_dump();
	test_object();
	test_assembly();
	test_errors();
	test_unwritable();
	test_recovery();
	hgc_codegen_llvm_shutdown();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		diag("could not remove %s", tmp);
	return done_testing();
}
