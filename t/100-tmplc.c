/*
 * 100-tmplc: the template checks and the template compiler.  Every
 * t/tmpl/NAME.tmpl is a malformed template that must fail with exactly the
 * diagnostics of t/tmpl/NAME.err (HGC_UPDATE_GOLDEN=1 rewrites them; review
 * them by eye).  The templates of templates/ check clean.  Then the
 * hgc-tmplc program itself (next to the test's build directory): exit
 * statuses, generated C, errors only the compiler sees (a template defined
 * twice across files, a spec in a template file), and a fuzzer: truncated
 * and mutated templates never crash the checks.
 */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsl/template.h"
#include "t/tap.h"
#include "t/tmpl_check.h"

#define DIR_ "t/tmpl"

/* Sorted names of the files in dir ending in ext; count in *n. */
static char **list(const char *dir, const char *ext, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, *t;
	size_t len, el = strlen(ext);
	int i, j;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len <= el || strcmp(e->d_name + len - el, ext))
			continue;
		names = realloc(names, (size_t)(*n + 1) * sizeof(*names));
		names[(*n)++] = strdup(e->d_name);
	}
	closedir(d);
	for (i = 0; i < *n; i++)
		for (j = i + 1; j < *n; j++)
			if (strcmp(names[i], names[j]) > 0)
				t = names[i], names[i] = names[j], names[j] = t;
	return names;
}

/* The shipped templates check clean. */
static void test_shipped(void)
{
	struct hgc_diag d;
	char **names, path[512];
	int n, i, total = 0;

	names = list("templates", ".tmpl", &n);
	ok(n >= 2, "templates/ holds %d template files", n);
	for (i = 0; i < n; i++) {
		hgc_diag_init(&d);
		snprintf(path, sizeof(path), "templates/%s", names[i]);
		total += tc_load(path, &d);
		is_str(hgc_diag_text(&d), "", "%s checks clean", path);
		hgc_diag_release(&d);
		free(names[i]);
	}
	free(names);
	ok(total >= 4, "%d templates in templates/", total);
}

/* Run a command line; its exit status and its stderr in err (malloc'ed). */
static int run(const char *cmd, char **err)
{
	char buf[2048];
	struct hgc_diag d;
	int st;

	snprintf(buf, sizeof(buf), "%s 2>/tmp/hgc-100-err.%d", cmd, (int)getpid());
	st = system(buf);
	snprintf(buf, sizeof(buf), "/tmp/hgc-100-err.%d", (int)getpid());
	hgc_diag_init(&d);
	*err = hgc_read_file(buf, NULL, &d);
	hgc_diag_release(&d);
	remove(buf);
	if (!*err)
		*err = strdup("");
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Write text to path. */
static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The compiler program: statuses, output, errors across files. */
static void test_program(const char *tmplc)
{
	char cmd[4096], *err, dir[] = "/tmp/hgc-100-XXXXXX", a[64], b[64], out[64];
	static const char *const ok_tmpl =
		"template dup for MatMul(A:[M, K], B:[K, N]) -> C:[M, N] {\n"
		"  brgemm(A[:, :], B[:, :], C[:, :], first = true);\n"
		"  anchor post : C[:, :];\n"
		"  cost post { working_set = M * N; calls = 1; }\n}\n";
	struct hgc_diag d;
	char *c;

	if (!mkdtemp(dir) || access(tmplc, X_OK)) {
		ok(0, "hgc-tmplc at %s", tmplc);
		return;
	}
	snprintf(a, sizeof(a), "%s/a.tmpl", dir);
	snprintf(b, sizeof(b), "%s/b.tmpl", dir);
	snprintf(out, sizeof(out), "%s/out.c", dir);
	write_file(a, ok_tmpl);
	write_file(b, ok_tmpl);
	snprintf(cmd, sizeof(cmd), "%s -o %s %s", tmplc, out, a);
	is_int(run(cmd, &err), 0, "hgc-tmplc compiles a good template");
	free(err);
	hgc_diag_init(&d);
	c = hgc_read_file(out, NULL, &d);
	ok(c && strstr(c, "const struct hgc_tmpl hgc_tmpl_dup = {") && strstr(c, "t_dup_build"),
	   "the generated C defines hgc_tmpl_dup and its build function");
	free(c);
	write_file(a, "template fwd for MatMul(A:[M, K], B:[K, N]) -> C:[M, N] {\n"
		   "  param MB : one_of(8, 16), divides(M), MB <= NB;\n"
		   "  param NB : one_of(16, 32);\n"
		   "  brgemm(A[:, :], B[:, :], C[:, :], first = true);\n}\n");
	snprintf(cmd, sizeof(cmd), "%s -o %s %s", tmplc, out, a);
	is_int(run(cmd, &err), 0, "hgc-tmplc compiles a constraint naming a later parameter");
	free(err);
	c = hgc_read_file(out, NULL, &d);
	{
		const char *f = c ? strstr(c, "t_fwd_check_step(struct") : NULL;
		const char *c0 = f ? strstr(f, "case 0:") : NULL, *c1 = f ? strstr(f, "case 1:") : NULL;
		const char *r0 = f ? strstr(f, "return 0;") : NULL, *r1 = f ? strstr(f, "return 1;") : NULL;

		if (!ok(c0 && c1 && r0 && r1 && c0 < r0 && r0 < c1 && c1 < r1,
			"check_step tests divides(M) once MB is bound, MB <= NB once NB is"))
			diag("%s", f ? f : "(no check_step)");
	}
	free(c);
	write_file(a, ok_tmpl);
	snprintf(cmd, sizeof(cmd), "%s --registry -o %s %s %s", tmplc, out, a, b);
	is_int(run(cmd, &err), 1, "a template defined in two files is an error");
	if (!ok(strstr(err, "b.tmpl:1:1: error: redefinition of template 'dup'") &&
			strstr(err, "a.tmpl:1:1: note: previous definition"), "at both places"))
		diag("%s", err);
	free(err);
	write_file(b, "spec s { input x : f32[2]; y = ReLU(x); output y; }\n");
	snprintf(cmd, sizeof(cmd), "%s --check %s", tmplc, b);
	is_int(run(cmd, &err), 1, "a spec in a template file is an error");
	if (!ok(strstr(err, "b.tmpl:1:6: error: a template file holds templates only, not spec "
			"'s'"), "which says so"))
		diag("%s", err);
	free(err);
	snprintf(cmd, sizeof(cmd), "%s --check " DIR_ "/unsatisfiable.tmpl", tmplc);
	is_int(run(cmd, &err), 1, "a malformed template fails with status 1");
	if (!ok(strstr(err, "unsatisfiable.tmpl:3:34: error: no value of 'MB'"),
		"and the diagnostic of its .err file"))
		diag("%s", err);
	free(err);
	snprintf(cmd, sizeof(cmd), "%s --frobnicate %s", tmplc, a);
	is_int(run(cmd, &err), 2, "an unknown option is a usage error");
	free(err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	hgc_diag_release(&d);
}

/* Load src under a fake name: the result must agree with the diagnostics. */
static int fuzz_one(const char *src)
{
	struct hgc_program p;
	struct hgc_diag d;
	int rc, good;

	hgc_program_init(&p);
	hgc_diag_init(&d);
	rc = hgc_program_load_string(&p, DIR_ "/fuzz.tmpl", src, &d);
	good = (rc == -1) == (d.nerr > 0);
	hgc_program_release(&p);
	hgc_diag_release(&d);
	return good;
}

/* Truncations and mutations of the shipped templates never misbehave. */
static void test_fuzz(void)
{
	static const char junk[] = "{}()[];,:=.-+*/%<>!&|#@\n0123456789abcdeMNK";
	char **names, path[512], *text, *buf;
	struct hgc_diag d;
	unsigned seed = 4242;
	int n, i, k, bad = 0, runs = 0;
	size_t len, cut;

	names = list("templates", ".tmpl", &n);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "templates/%s", names[i]);
		hgc_diag_init(&d);
		text = hgc_read_file(path, &len, &d);
		hgc_diag_release(&d);
		free(names[i]);
		if (!text)
			continue;
		buf = malloc(len + 1);
		for (cut = 0; cut <= len; cut += len / 60 + 1, runs++) {
			memcpy(buf, text, cut);
			buf[cut] = 0;
			bad += !fuzz_one(buf);
		}
		for (k = 0; k < 150; k++, runs++) {
			memcpy(buf, text, len + 1);
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] = junk[(seed >> 16) % (sizeof(junk) - 1)];
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] = junk[(seed >> 16) % (sizeof(junk) - 1)];
			bad += !fuzz_one(buf);
		}
		free(buf);
		free(text);
	}
	free(names);
	is_int(bad, 0, "fuzz: %d truncated and mutated templates never misbehave", runs);
}

/* Whether a template called name is refused because the name is taken. */
static bool taken(const char *name)
{
	struct hgc_program prog;
	struct hgc_diag d;
	char src[256];
	bool r;

	snprintf(src, sizeof(src), "template %s for MatMul(A:[M, K], B:[K, N]) -> C:[M, N] { }\n",
		 name);
	hgc_program_init(&prog);
	hgc_diag_init(&d);
	hgc_program_load_string(&prog, "r.tmpl", src, &d);
	r = strstr(hgc_diag_text(&d), "is taken: hgc_tmpl_") != NULL;
	hgc_program_release(&prog);
	hgc_diag_release(&d);
	return r;
}

/* Every hgc_tmpl_X that core/lower/tmpl.h declares is a name no template may take. */
static void test_reserved(void)
{
	struct hgc_diag d;
	char *h, *p, name[64];
	int n = 0, bad = 0, k;

	hgc_diag_init(&d);
	h = hgc_read_file("core/lower/tmpl.h", NULL, &d);
	for (p = h; p && (p = strstr(p, "hgc_tmpl_")); p += 9) {
		for (k = 0; k < 63 && (p[9 + k] == '_' || (p[9 + k] >= 'a' && p[9 + k] <= 'z') ||
				       (p[9 + k] >= '0' && p[9 + k] <= '9')); k++)
			name[k] = p[9 + k];
		name[k] = 0;
		if (!k || (p[9 + k] != '(' && p[9 + k] != '[' && strcmp(name, "visit_fn")))
			continue;
		n++;
		if (!taken(name)) {
			diag("template name '%s' is not reserved", name);
			bad++;
		}
	}
	ok(n > 40 && !bad, "the %d names core/lower/tmpl.h declares are reserved", n);
	ok(!taken("matmul_fast"), "other names are free");
	free(h);
	hgc_diag_release(&d);
}

int main(int argc, char **argv)
{
	char tmplc[1024], *dir = strdup(argv[0]);
	char **names;
	int n, i;

	if (getenv("HGC_BUILD"))
		snprintf(tmplc, sizeof(tmplc), "%s/hgc-tmplc", getenv("HGC_BUILD"));
	else
		snprintf(tmplc, sizeof(tmplc), "%s/../hgc-tmplc", dirname(dir));
	free(dir);
	names = list(DIR_, ".tmpl", &n);
	ok(n >= 20, "at least 20 malformed templates in " DIR_ " (%d)", n);
	for (i = 0; i < n; i++) {
		tc_bad_case(DIR_, names[i]);
		free(names[i]);
	}
	free(names);
	test_shipped();
	test_reserved();
	test_program(tmplc);
	test_fuzz();
	return done_testing();
}
