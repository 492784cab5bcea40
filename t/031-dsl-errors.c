/*
 * 031-dsl-errors: every t/dsl/NAME.hgc must fail to load with exactly the
 * diagnostics in t/dsl/NAME.err (file:line:col, message, source line and
 * caret).  HGC_UPDATE_GOLDEN=1 rewrites the .err files (review them by eye).
 * Then a small fuzzer: truncated and mutated copies of every case and of
 * the spec files, and random bytes, must never crash, hang or leak, and the
 * result must agree with the diagnostics.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl.h"
#include "t/tap.h"

#define DIR_ "t/dsl"

/* Sorted names of the *.hgc files directly in dir; count in *n. */
static char **list_cases(const char *dir, int *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, *t;
	size_t len;
	int i, j;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".hgc"))
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

/* Write text to path (golden update). */
static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

/* Load one case and compare its diagnostics with the .err file. */
static void run_case(const char *name)
{
	char hgc[512], err[512];
	struct hgc_program p;
	struct hgc_diag d, scratch;
	char *want;
	int rc;

	snprintf(hgc, sizeof(hgc), DIR_ "/%s", name);
	snprintf(err, sizeof(err), DIR_ "/%.*s.err", (int)strlen(name) - 4, name);
	hgc_program_init(&p);
	hgc_diag_init(&d);
	rc = hgc_program_load(&p, hgc, &d);
	if (getenv("HGC_UPDATE_GOLDEN"))
		write_text(err, hgc_diag_text(&d));
	hgc_diag_init(&scratch);
	want = hgc_read_file(err, NULL, &scratch);
	hgc_diag_release(&scratch);
	ok(rc == -1 && d.nerr > 0, "%s: load fails", name);
	is_str(hgc_diag_text(&d), want ? want : "(no .err file)", "%s: diagnostics", name);
	free(want);
	hgc_program_release(&p);
	hgc_diag_release(&d);
}

/* Load src under a fake name; the result must agree with the diagnostics. */
static int fuzz_one(const char *src)
{
	struct hgc_program p;
	struct hgc_diag d;
	int rc, good;

	hgc_program_init(&p);
	hgc_diag_init(&d);
	rc = hgc_program_load_string(&p, DIR_ "/fuzz.hgc", src, &d);
	good = (rc == -1) == (d.nerr > 0) && (rc == 0 || strstr(hgc_diag_text(&d), "error: "));
	hgc_program_release(&p);
	hgc_diag_release(&d);
	return good;
}

/* A tiny deterministic PRNG for the fuzzer. */
static unsigned fuzz_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Truncations and byte mutations of text; returns the number of bad results. */
static int fuzz_text(const char *text, unsigned *seed)
{
	static const char junk[] = "{}()[];,:=.-\"#/*@\n\0xA9";
	size_t len = strlen(text), cut, step = len / 40 + 1;
	char *buf = malloc(len + 1);
	int bad = 0, k;

	for (cut = 0; cut <= len; cut += step) {
		memcpy(buf, text, cut);
		buf[cut] = 0;
		bad += !fuzz_one(buf);
	}
	for (k = 0; k < 30 && len; k++) {
		memcpy(buf, text, len + 1);
		buf[fuzz_rand(seed) % len] = junk[fuzz_rand(seed) % (sizeof(junk) - 1)];
		buf[fuzz_rand(seed) % len] = (char)(fuzz_rand(seed) % 255 + 1);
		bad += !fuzz_one(buf);
	}
	free(buf);
	return bad;
}

/* Fuzz every case file, a few spec files and random bytes. */
static void fuzz(char **names, int n)
{
	static const char *extra[] = {"spec/ops/matmul.hgc", "spec/demo/mlp.hgc",
				      "spec/models/dlrm.hgc", "docs/language.md"};
	struct hgc_diag scratch;
	char path[512], *text, rnd[257];
	unsigned seed = 12345;
	int i, j, bad = 0, files = 0;

	for (i = 0; i < n + 4; i++) {
		if (i < n)
			snprintf(path, sizeof(path), DIR_ "/%s", names[i]);
		else
			snprintf(path, sizeof(path), "%s", extra[i - n]);
		hgc_diag_init(&scratch);
		text = hgc_read_file(path, NULL, &scratch);
		hgc_diag_release(&scratch);
		if (!text)
			continue;
		files++;
		bad += fuzz_text(text, &seed);
		free(text);
	}
	for (i = 0; i < 200; i++) {
		for (j = 0; j < 256; j++)
			rnd[j] = (char)(fuzz_rand(&seed) % 255 + 1);
		rnd[fuzz_rand(&seed) % 257] = 0;
		rnd[256] = 0;
		bad += !fuzz_one(rnd);
	}
	ok(files >= n, "fuzz: read %d files", files);
	is_int(bad, 0, "fuzz: truncated, mutated and random input never misbehaves");
}

/*
 * A left-assoc chain keeps the parser's stack flat however long it is, so
 * only the tree's height stops it: 100000 terms (which overflowed the stack
 * of the checker's recursion) must be one clean error.
 */
static void deep_chain(void)
{
	static const char head[] = "template t for MatMul(A:[M, K], B:[K, N]) -> C:[M, N] {\n"
				   "  let Z = 1", tail[] = ";\n}\n";
	size_t terms = 100000, len = sizeof(head) + terms * 4 + sizeof(tail), n;
	char *src = malloc(len);
	struct hgc_program p;
	struct hgc_diag d;
	int rc;

	n = (size_t)sprintf(src, "%s", head);
	while (terms--)
		n += (size_t)sprintf(src + n, " + 1");
	sprintf(src + n, "%s", tail);
	hgc_program_init(&p);
	hgc_diag_init(&d);
	rc = hgc_program_load_string(&p, DIR_ "/chain.hgc", src, &d);
	ok(rc == -1 && d.nerr == 1, "a chain of 100000 additions fails to load");
	ok(strstr(hgc_diag_text(&d), "chain.hgc:2:809: error: expression too deep") != NULL,
	   "with one diagnostic at the operator past 200 levels");
	hgc_program_release(&p);
	hgc_diag_release(&d);
	free(src);
}

int main(void)
{
	int n, i;
	char **names = list_cases(DIR_, &n);

	ok(n >= 25, "at least 25 error cases in " DIR_ " (%d)", n);
	for (i = 0; i < n; i++)
		run_case(names[i]);
	fuzz(names, n);
	deep_chain();
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return done_testing();
}
