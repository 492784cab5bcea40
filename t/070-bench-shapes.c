/* 070-bench-shapes: the benchdnn shape-file parser of the benchmark harness. */
#include "bench/bench.h"
#include "t/tap.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct hgc_arena arena;

/* Parse one line; returns what hgc_bench_parse_line returns, text of errors in err. */
static int parse(enum hgc_bench_kind kind, const char *line, struct hgc_bench_shape *s,
		 char *err, size_t n)
{
	struct hgc_loc loc = {"f", 1, 1};
	struct hgc_diag d;
	int r;

	hgc_diag_init(&d);
	r = hgc_bench_parse_line(kind, line, &loc, &arena, s, &d);
	snprintf(err, n, "%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return r;
}

/* The error text of a line that must fail. */
static const char *error_of(enum hgc_bench_kind kind, const char *line)
{
	static char err[512];
	struct hgc_bench_shape s;

	if (parse(kind, line, &s, err, sizeof(err)) != -1)
		return "(parsed)";
	return err;
}

/* Same conv problem, field by field. */
static int same_conv(const struct hgc_bench_conv *a, const struct hgc_bench_conv *b)
{
	return a->g == b->g && a->mb == b->mb && a->ic == b->ic && a->oc == b->oc &&
	       a->ih == b->ih && a->iw == b->iw && a->oh == b->oh && a->ow == b->ow &&
	       a->kh == b->kh && a->kw == b->kw && a->sh == b->sh && a->sw == b->sw &&
	       a->ph == b->ph && a->pw == b->pw && a->pr_h == b->pr_h && a->pr_w == b->pr_w &&
	       a->dh == b->dh && a->dw == b->dw;
}

/* Same matmul problem. */
static int same_mm(const struct hgc_bench_matmul *a, const struct hgc_bench_matmul *b)
{
	int i;

	if (a->ndims != b->ndims)
		return 0;
	for (i = 0; i < a->ndims; i++)
		if (a->src[i] != b->src[i] || a->wei[i] != b->wei[i] || a->dst[i] != b->dst[i])
			return 0;
	return 1;
}

/* The canonical text of s parses back into the same problem. */
static int round_trips(const struct hgc_bench_shape *s)
{
	struct hgc_bench_shape t;
	char err[256];

	if (parse(s->kind, hgc_bench_shape_text(s, &arena), &t, err, sizeof(err)) != 1)
		return 0;
	return s->kind == HGC_BENCH_CONV ? same_conv(&s->conv, &t.conv) : same_mm(&s->mm, &t.mm);
}

/* Every file of one anchors subdirectory parses, each problem round-trips; returns problems. */
static int parse_dir(const char *anchors, const char *sub, enum hgc_bench_kind kind)
{
	char *dir = hgc_arena_printf(&arena, "%s/benchdnn-shapes/%s", anchors, sub), *path;
	struct dirent *e;
	struct hgc_vec v;
	struct hgc_diag d;
	DIR *dp = opendir(dir);
	int total = 0, n;
	size_t i, trip;

	ok(dp != NULL, "%s exists", dir);
	while (dp && (e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		path = hgc_arena_printf(&arena, "%s/%s", dir, e->d_name);
		hgc_vec_init(&v, sizeof(struct hgc_bench_shape));
		hgc_diag_init(&d);
		n = hgc_bench_load_file(kind, path, &arena, &v, &d);
		ok(n > 0 && d.nerr == 0, "every line of %s/%s parses (%d problems)", sub, e->d_name, n);
		if (d.nerr)
			diag("%s", hgc_diag_text(&d));
		for (i = trip = 0; i < v.len; i++)
			trip += round_trips(&HGC_VEC_AT(&v, struct hgc_bench_shape, i));
		is_int(trip, v.len, "every problem of %s round-trips through its text", e->d_name);
		total += n > 0 ? n : 0;
		hgc_vec_release(&v);
		hgc_diag_release(&d);
	}
	if (dp)
		closedir(dp);
	return total;
}

/* The anchor files, as they are in the shared directory. */
static void test_anchor_files(void)
{
	const char *anchors = hgc_bench_find_anchors(&arena);
	struct hgc_vec v;
	struct hgc_diag d;

	ok(anchors != NULL, "the shared anchors directory is found (else set HGC_ANCHORS)");
	if (!anchors)
		return;
	is_int(parse_dir(anchors, "matmul", HGC_BENCH_MATMUL), 4 + 4 + 4 + 3,
	       "the matmul files hold 15 problems");
	is_int(parse_dir(anchors, "conv", HGC_BENCH_CONV), 20 + 9, "the conv files hold 29 problems");
	hgc_vec_init(&v, sizeof(struct hgc_bench_shape));
	hgc_diag_init(&d);
	hgc_bench_load_file(HGC_BENCH_CONV,
			    hgc_arena_printf(&arena, "%s/benchdnn-shapes/conv/shapes_resnet_50",
					     anchors), &arena, &v, &d);
	ok(v.len == 20 && HGC_VEC_AT(&v, struct hgc_bench_shape, 1).loc.line == 4,
	   "resnet_50's second problem is on line 4 (comments and blanks skipped)");
	hgc_vec_release(&v);
	hgc_diag_release(&d);
}

/* Matmul lines, batched, 2-D, unnamed, with dst, inner-product style. */
static void test_matmul(void)
{
	struct hgc_bench_shape s;
	char err[256];

	ok(parse(HGC_BENCH_MATMUL, "12x128x64:12x64x128_n\"encoder:QK_matmul:12\"", &s, err,
		 sizeof(err)) == 1, "bert line parses");
	ok(s.mm.ndims == 3 && s.mm.src[0] == 12 && s.mm.src[1] == 128 && s.mm.src[2] == 64 &&
	   s.mm.wei[1] == 64 && s.mm.wei[2] == 128, "batch 12, M 128, K 64, N 128");
	ok(s.mm.dst[0] == 12 && s.mm.dst[1] == 128 && s.mm.dst[2] == 128, "dst is 12x128x128");
	is_str(s.name, "encoder:QK_matmul:12", "the name keeps its colons");
	is_str(hgc_bench_shape_text(&s, &arena), "12x128x64:12x64x128", "canonical text");
	ok(parse(HGC_BENCH_MATMUL, "512x845:845x1024n\"WnD-512:0*1\"", &s, err, sizeof(err)) == 1 &&
	   s.mm.ndims == 2 && s.mm.dst[0] == 512 && s.mm.dst[1] == 1024, "2-D wd line");
	is_str(s.name, "WnD-512:0*1", "a '*' in the name is part of it");
	ok(parse(HGC_BENCH_MATMUL, "16x40x64:16x64x40", &s, err, sizeof(err)) == 1 && !s.name,
	   "a line without a name has none");
	ok(parse(HGC_BENCH_MATMUL, "1x128x64:12x64x128", &s, err, sizeof(err)) == 1 &&
	   s.mm.dst[0] == 12, "a batch dim of 1 broadcasts");
	ok(parse(HGC_BENCH_MATMUL, "2x3:3x4:2x4 # with dst", &s, err, sizeof(err)) == 1,
	   "a matching dst and a trailing comment are accepted");
	ok(parse(HGC_BENCH_MATMUL, "mb512ic845oc1024n\"ip\"", &s, err, sizeof(err)) == 1 &&
	   s.mm.src[0] == 512 && s.mm.src[1] == 845 && s.mm.wei[1] == 1024,
	   "inner product mb512ic845oc1024 is 512x845 times 845x1024");
	ok(parse(HGC_BENCH_MATMUL, "mb2ic3ih4oc5", &s, err, sizeof(err)) == 1 && s.mm.src[1] == 48,
	   "inner product K counts the spatial input");
	is_int(parse(HGC_BENCH_MATMUL, "   # comment", &s, err, sizeof(err)), 0, "comment line");
	is_int(parse(HGC_BENCH_MATMUL, "", &s, err, sizeof(err)), 0, "blank line");
}

/* Conv lines: full, defaulted, underscore-separated, deduced, dilated, grouped. */
static void test_conv(void)
{
	struct hgc_bench_shape s;
	char err[256];

	ok(parse(HGC_BENCH_CONV,
		 "g1mb50ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3n\"resnet_50:conv1\"", &s, err,
		 sizeof(err)) == 1, "resnet conv1 parses");
	ok(s.conv.mb == 50 && s.conv.ic == 3 && s.conv.oh == 112 && s.conv.ph == 3 &&
	   s.conv.pr_h == 2 && s.conv.pr_w == 2, "conv1 pads 3 before and 2 after");
	ok(parse(HGC_BENCH_CONV, "mb50ic64ih56oc64oh56kh3ph1n\"resnet_50:res2a_branch2b*3\"", &s,
		 err, sizeof(err)) == 1, "short resnet line parses");
	ok(s.conv.g == 1 && s.conv.iw == 56 && s.conv.ow == 56 && s.conv.kw == 3 &&
	   s.conv.sw == 1 && s.conv.pw == 1 && s.conv.pr_h == 1 && s.conv.dh == 0,
	   "width copies height, g 1, stride 1");
	is_str(s.name, "resnet_50:res2a_branch2b*3", "conv name");
	ok(parse(HGC_BENCH_CONV, "g1mb50ic256ih56iw56oc512oh28ow28kh1kw1sh2sw2ph0pw0", &s, err,
		 sizeof(err)) == 1 && s.conv.pr_h == -1, "1x1 stride 2 has padding -1 after");
	ok(parse(HGC_BENCH_CONV,
		 "mb32_g1ic3oc32_ih224oh112kh3sh2dh0ph1_iw224ow112kw3sw2dw0pw1_n\"x\"", &s, err,
		 sizeof(err)) == 1 && s.conv.mb == 32 && s.conv.pr_w == 0, "'_' separators");
	ok(parse(HGC_BENCH_CONV, "ic3ih10oc4kh3", &s, err, sizeof(err)) == 1 && s.conv.mb == 2 &&
	   s.conv.oh == 8 && s.conv.ph == 0, "mb defaults to 2, oh is computed");
	ok(parse(HGC_BENCH_CONV, "ic3ih10oc4oh10kh3", &s, err, sizeof(err)) == 1 &&
	   s.conv.ph == 1 && s.conv.pw == 1 && s.conv.pr_h == 1, "ph is deduced from oh");
	ok(parse(HGC_BENCH_CONV, "ic1ih10oc1kh3dh1", &s, err, sizeof(err)) == 1 &&
	   s.conv.oh == 6 && s.conv.dw == 1, "dilation 1 spreads a 3-tap kernel over 5");
	ok(parse(HGC_BENCH_CONV, "g32mb1ic32ih112iw112oc32oh112ow112kh3kw3sh1sw1ph1pw1", &s, err,
		 sizeof(err)) == 1 && s.conv.g == 32, "depthwise");
	ok(parse(HGC_BENCH_CONV, "ic3iw10oc4kw3 # only widths", &s, err, sizeof(err)) == 1 &&
	   s.conv.ih == 10 && s.conv.kh == 3, "height copies width too");
	is_str(hgc_bench_shape_text(&s, &arena), "g1mb2ic3ih10iw10oc4oh8ow8kh3kw3sh1sw1ph0pw0",
	       "canonical conv text");
}

/* Malformed lines: exact diagnostics. */
static void test_errors(void)
{
	is_str(error_of(HGC_BENCH_MATMUL, "12x128x64:12x65x128"),
	       "f:1:1: error: src K (64) differs from weights K (65)\n", "K mismatch");
	is_str(error_of(HGC_BENCH_MATMUL, "12x128x64"),
	       "f:1:10: error: expected ':' before the weights dims\n", "no weights");
	is_str(error_of(HGC_BENCH_MATMUL, "  12x128x64:12x64x128_n\"abc"),
	       "f:1:23: error: unterminated name\n", "unterminated name");
	is_str(error_of(HGC_BENCH_MATMUL, "2x3x4:3x4x5"),
	       "f:1:1: error: batch dim 0 differs: 2 in src, 3 in weights\n", "batch mismatch");
	is_str(error_of(HGC_BENCH_MATMUL, "2x3:3x4:2x5"),
	       "f:1:9: error: dst dim 1 is 5, src and weights give 4\n", "wrong dst");
	is_str(error_of(HGC_BENCH_MATMUL, "0x3:3x4"), "f:1:1: error: a dim must be positive\n",
	       "zero dim");
	is_str(error_of(HGC_BENCH_MATMUL, "2x3:3x4 junk"), "f:1:9: error: unexpected 'j'\n",
	       "trailing junk");
	is_str(error_of(HGC_BENCH_MATMUL, "2x:3x4"), "f:1:3: error: expected a number\n",
	       "missing number");
	is_str(error_of(HGC_BENCH_MATMUL, "mb2ic3oc4kh3"),
	       "f:1:1: error: 'kh' has no meaning in an inner product\n", "ip with a kernel");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih10kh3"), "f:1:1: error: missing 'oc'\n", "no oc");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih10oc4kh3zz5"), "f:1:14: error: unknown tag 'zz'\n",
	       "unknown tag");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih10ih10oc4kh3"), "f:1:8: error: 'ih' given twice\n",
	       "duplicate tag");
	is_str(error_of(HGC_BENCH_CONV, "g3ic4ih10oc6kh3"),
	       "f:1:1: error: 'g' 3 does not divide 'ic' 4 and 'oc' 6\n", "bad groups");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih10oc4kh3 foo"), "f:1:15: error: unexpected 'f'\n",
	       "junk after the problem");
	is_str(error_of(HGC_BENCH_CONV, "ic3id4ih10oc4kh3"),
	       "f:1:1: error: 3-d convolutions are not supported\n", "3-d");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih2oc4kh5"),
	       "f:1:1: error: kernel 'kh' 5 does not fit the padded input\n", "kernel too big");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih10oc4oh2kh3"),
	       "f:1:1: error: cannot deduce 'ph' from 'oh' 2\n", "oh too small to deduce ph");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih99999999999oc4kh3"),
	       "f:1:6: error: number too large\n", "overflow");
	is_str(error_of(HGC_BENCH_CONV, "mb2ic3ih10oc4kh3sh"), "f:1:19: error: expected a number\n",
	       "tag without a value");
	is_str(error_of(HGC_BENCH_CONV, "ic3ih10oc4"), "f:1:1: error: missing 'kh'\n", "no kernel");
	is_str(error_of(HGC_BENCH_CONV, "--batch=other"),
	       "f:1:1: error: benchdnn options are not supported in a shape list\n", "options");
}

/* A whole text: good lines kept, every bad line reported with its line number. */
static void test_text(void)
{
	static const char text[] = "# head\n2x3:3x4\n2x3:4x4\n\n5x6:6x7n\"ok\"\nbad\n";
	struct hgc_vec v;
	struct hgc_diag d;

	hgc_vec_init(&v, sizeof(struct hgc_bench_shape));
	hgc_diag_init(&d);
	is_int(hgc_bench_parse_text(HGC_BENCH_MATMUL, "t.txt", text, &arena, &v, &d), -1,
	       "a text with bad lines fails");
	is_int(v.len, 2, "its good lines are kept");
	is_str(hgc_diag_text(&d),
	       "t.txt:3:1: error: src K (3) differs from weights K (4)\n"
	       "t.txt:6:1: error: unknown tag 'bad'\n",
	       "every bad line is reported at its line");
	ok(v.len == 2 && HGC_VEC_AT(&v, struct hgc_bench_shape, 1).loc.line == 5,
	   "problems remember their line");
	hgc_vec_release(&v);
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	hgc_vec_init(&v, sizeof(struct hgc_bench_shape));
	is_int(hgc_bench_load_file(HGC_BENCH_CONV, "/nonexistent/shapes", &arena, &v, &d), -1,
	       "a missing file fails");
	ok(strstr(hgc_diag_text(&d), "cannot open /nonexistent/shapes") != NULL,
	   "and says which file");
	hgc_vec_release(&v);
	hgc_diag_release(&d);
}

/* Run sh command line cmd; whether it exited 0. */
static int sh(const char *cmd)
{
	return system(cmd) == 0;
}

/* A local clone away from ../shared finds the anchors beside its origin
   (.git/config's url), and a remote url that is not a path leads nowhere. */
static void test_anchors_of_origin(void)
{
	char tmpl[] = "/tmp/hgc-t070-XXXXXX", cwd[PATH_MAX];
	const char *root = mkdtemp(tmpl), *env = getenv("HGC_ANCHORS"), *found;
	char *saved = env ? strdup(env) : NULL;

	if (!root || !getcwd(cwd, sizeof(cwd))) {
		ok(0, "cannot make a scratch directory");
		free(saved);
		return;
	}
	sh(hgc_arena_printf(&arena, "mkdir -p %s/a/clone/.git %s/b/orig %s/b/shared/anchors/"
				    "benchdnn-shapes && printf '[core]\\n\\tbare = false\\n"
				    "[remote \"origin\"]\\n\\turl = %s/b/orig/\\n' > "
				    "%s/a/clone/.git/config", root, root, root, root, root));
	unsetenv("HGC_ANCHORS");
	found = chdir(hgc_arena_printf(&arena, "%s/a/clone", root)) ? NULL
								   : hgc_bench_find_anchors(&arena);
	is_str(found ? found : "(none)", hgc_arena_printf(&arena, "%s/b/shared/anchors", root),
	       "a local clone finds the anchors beside the repository it came from");
	sh(hgc_arena_printf(&arena, "printf '[remote \"origin\"]\\n\\turl = "
				    "https://example.org/b/orig\\n' > %s/a/clone/.git/config", root));
	found = hgc_bench_find_anchors(&arena);
	ok(!found || !strstr(found, root), "an origin that is not a local path is not followed");
	if (chdir(cwd))
		diag("cannot return to %s", cwd);
	sh(hgc_arena_printf(&arena, "rm -rf %s", root));
	if (saved)
		setenv("HGC_ANCHORS", saved, 1);
	free(saved);
}

int main(void)
{
	hgc_arena_init(&arena);
	test_anchor_files();
	test_anchors_of_origin();
	test_matmul();
	test_conv();
	test_errors();
	test_text();
	hgc_arena_release(&arena);
	return done_testing();
}
