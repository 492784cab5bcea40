/*
 * shapes.c: benchdnn shape files (oneDNN's tests/benchdnn/inputs), read at
 * run time from the shared anchors directory.
 *
 * matmul lines: "12x128x64:12x64x128_n"encoder:QK_matmul:12"" (batch dims,
 * then M x K for src and K x N for weights, an optional dst, a name), or an
 * inner product "mb512ic845oc1024n"..."" read as a 2-D matmul.
 * conv lines: tag-value pairs "g1mb50ic3ih224oc64oh112kh7sh2ph3n"..."",
 * with benchdnn's defaults for what is left out.  '#' starts a comment.
 */
#include "bench/bench.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tags of a benchdnn descriptor: name and spelling.  ORDER: enum tag. */
#define TAG_LIST(X) \
	X(G, "g") X(MB, "mb") X(IC, "ic") X(OC, "oc") \
	X(ID, "id") X(IH, "ih") X(IW, "iw") X(OD, "od") X(OH, "oh") X(OW, "ow") \
	X(KD, "kd") X(KH, "kh") X(KW, "kw") X(SD, "sd") X(SH, "sh") X(SW, "sw") \
	X(PD, "pd") X(PH, "ph") X(PW, "pw") X(DD, "dd") X(DH, "dh") X(DW, "dw")

enum tag {
#define X(id, s) T_##id,
	TAG_LIST(X)
#undef X
	NTAGS
};

static const char *const tag_names[NTAGS] = {
#define X(id, s) s,
	TAG_LIST(X)
#undef X
};

/* Largest value a dimension may take: keeps every product in int64_t. */
#define MAX_DIM ((int64_t)1 << 31)

/* A cursor over one line, with what is needed to report errors in it. */
struct cur {
	const char *p;			/* next byte */
	const char *line;		/* first byte of the line */
	const struct hgc_loc *loc;	/* file and line number */
	struct hgc_arena *a;		/* where names are copied */
	struct hgc_diag *d;
};

/* Values of the tags of one descriptor. */
struct tags {
	int64_t v[NTAGS];
	unsigned char given[NTAGS];
};

/* Report an error at byte at of the line; returns -1. */
static int fail(struct cur *c, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct cur *c, const char *at, const char *fmt, ...)
{
	struct hgc_loc l = *c->loc;
	va_list ap;

	l.col = c->loc->col + (int)(at - c->line);
	va_start(ap, fmt);
	hgc_verror(c->d, &l, fmt, ap);
	va_end(ap);
	return -1;
}

/* True at the end of the problem text: end of line, blank or comment. */
static int at_end(const char *p)
{
	return *p == 0 || *p == '\n' || *p == '\r' || *p == ' ' || *p == '\t' || *p == '#';
}

/* A non-negative decimal number, at most MAX_DIM. */
static int number(struct cur *c, int64_t *v)
{
	const char *start = c->p;
	int64_t n = 0;

	if (*c->p < '0' || *c->p > '9')
		return fail(c, c->p, "expected a number");
	while (*c->p >= '0' && *c->p <= '9') {
		n = n * 10 + (*c->p++ - '0');
		if (n > MAX_DIM)
			return fail(c, start, "number too large");
	}
	*v = n;
	return 0;
}

/* The optional name: '_'? 'n' '"' text '"'. */
static int name(struct cur *c, const char **out)
{
	const char *start, *q;

	*out = NULL;
	if (c->p[0] == '_' && c->p[1] == 'n' && c->p[2] == '"')
		c->p++;
	if (c->p[0] != 'n' || c->p[1] != '"')
		return 0;
	start = c->p + 2;
	for (q = start; *q && *q != '"' && *q != '\n'; q++)
		;
	if (*q != '"')
		return fail(c, c->p, "unterminated name");
	*out = hgc_arena_strndup(c->a, start, (size_t)(q - start));
	c->p = q + 1;
	return 0;
}

/* After the problem: only blanks and a comment may follow. */
static int trailer(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')
		c->p++;
	if (*c->p && *c->p != '\n' && *c->p != '#')
		return fail(c, c->p, "unexpected '%c'", *c->p);
	return 0;
}

/* One group of dims: INT ('x' INT)*. */
static int dims(struct cur *c, int64_t *v, int *nd)
{
	const char *start = c->p;

	*nd = 0;
	for (;;) {
		if (*nd == HGC_BENCH_MAX_DIMS)
			return fail(c, start, "more than %d dims", HGC_BENCH_MAX_DIMS);
		if (number(c, &v[*nd]) < 0)
			return -1;
		if (v[*nd] == 0)
			return fail(c, c->p - 1, "a dim must be positive");
		++*nd;
		if (*c->p != 'x')
			return 0;
		c->p++;
	}
}

/* The expected dst dims of a matmul, from src and weights. */
static int mm_dst(struct cur *c, const char *at, struct hgc_bench_matmul *mm)
{
	int i, n = mm->ndims;

	for (i = 0; i < n - 2; i++) {
		if (mm->src[i] != mm->wei[i] && mm->src[i] != 1 && mm->wei[i] != 1)
			return fail(c, at, "batch dim %d differs: %lld in src, %lld in weights", i,
				    (long long)mm->src[i], (long long)mm->wei[i]);
		mm->dst[i] = mm->src[i] > mm->wei[i] ? mm->src[i] : mm->wei[i];
	}
	if (mm->src[n - 1] != mm->wei[n - 2])
		return fail(c, at, "src K (%lld) differs from weights K (%lld)",
			    (long long)mm->src[n - 1], (long long)mm->wei[n - 2]);
	mm->dst[n - 2] = mm->src[n - 2];
	mm->dst[n - 1] = mm->wei[n - 1];
	return 0;
}

/* An optional ':dst' group: it must match what src and weights give. */
static int mm_given_dst(struct cur *c, const struct hgc_bench_matmul *mm)
{
	int64_t v[HGC_BENCH_MAX_DIMS];
	const char *at;
	int nd, i;

	if (*c->p != ':')
		return 0;
	at = ++c->p;
	if (dims(c, v, &nd) < 0)
		return -1;
	if (nd != mm->ndims)
		return fail(c, at, "dst has %d dims, src %d", nd, mm->ndims);
	for (i = 0; i < nd; i++)
		if (v[i] != mm->dst[i])
			return fail(c, at, "dst dim %d is %lld, src and weights give %lld", i,
				    (long long)v[i], (long long)mm->dst[i]);
	return 0;
}

/* "d0x..xMxK:d0x..xKxN[:dst]": a (batched) matmul. */
static int matmul_dims(struct cur *c, struct hgc_bench_matmul *mm)
{
	const char *at = c->p, *wat;
	int nw;

	if (dims(c, mm->src, &mm->ndims) < 0)
		return -1;
	if (mm->ndims < 2)
		return fail(c, at, "src needs at least 2 dims (M x K)");
	if (*c->p != ':')
		return fail(c, c->p, "expected ':' before the weights dims");
	wat = ++c->p;
	if (dims(c, mm->wei, &nw) < 0)
		return -1;
	if (nw != mm->ndims)
		return fail(c, wat, "weights have %d dims, src %d", nw, mm->ndims);
	if (mm_dst(c, at, mm) < 0)
		return -1;
	return mm_given_dst(c, mm);
}

/* Tag-value pairs up to the name or the end: "mb50ic64ih56...". */
static int tag_values(struct cur *c, struct tags *t)
{
	const char *at;
	int i;

	memset(t, 0, sizeof(*t));
	for (;;) {
		if (*c->p == '_')
			c->p++;
		if ((c->p[0] == 'n' && c->p[1] == '"') || at_end(c->p))
			return 0;
		at = c->p;
		while (*c->p >= 'a' && *c->p <= 'z')
			c->p++;
		for (i = 0; i < NTAGS; i++)
			if (strlen(tag_names[i]) == (size_t)(c->p - at) &&
			    !strncmp(tag_names[i], at, (size_t)(c->p - at)))
				break;
		if (c->p == at)
			return fail(c, at, "unexpected '%c'", *at);
		if (i == NTAGS)
			return fail(c, at, "unknown tag '%.*s'", (int)(c->p - at), at);
		if (t->given[i])
			return fail(c, at, "'%s' given twice", tag_names[i]);
		if (number(c, &t->v[i]) < 0)
			return -1;
		t->given[i] = 1;
	}
}

/* Fill a missing height value from the width one and the other way round;
 * when both are missing take dflt.  Both count as given afterwards. */
static void pair(struct tags *t, enum tag h, enum tag w, int64_t dflt)
{
	if (!t->given[h] && t->given[w])
		t->v[h] = t->v[w], t->given[h] = 1;
	if (!t->given[w] && t->given[h])
		t->v[w] = t->v[h], t->given[w] = 1;
	if (!t->given[h]) {
		t->v[h] = t->v[w] = dflt;
		t->given[h] = t->given[w] = 1;
	}
}

/* Check that a tag is present and positive. */
static int need(struct cur *c, const char *at, const struct tags *t, enum tag k)
{
	if (!t->given[k])
		return fail(c, at, "missing '%s'", tag_names[k]);
	if (t->v[k] <= 0)
		return fail(c, at, "'%s' must be positive", tag_names[k]);
	return 0;
}

/* "mb..ic..oc.." inner product, read as src mb x K, weights K x oc. */
static int inner_product(struct cur *c, struct hgc_bench_matmul *mm)
{
	static const enum tag bad[] = {T_G, T_OD, T_OH, T_OW, T_KD, T_KH, T_KW, T_SD, T_SH,
				       T_SW, T_PD, T_PH, T_PW, T_DD, T_DH, T_DW};
	const char *at = c->p;
	struct tags t;
	size_t i;

	if (tag_values(c, &t) < 0)
		return -1;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (t.given[bad[i]])
			return fail(c, at, "'%s' has no meaning in an inner product",
				    tag_names[bad[i]]);
	if (need(c, at, &t, T_IC) < 0 || need(c, at, &t, T_OC) < 0)
		return -1;
	pair(&t, T_IH, T_IW, 1);
	if (!t.given[T_ID])
		t.v[T_ID] = 1;
	if (!t.given[T_MB])
		t.v[T_MB] = 2;
	if (t.v[T_MB] <= 0 || t.v[T_ID] <= 0 || t.v[T_IH] <= 0 || t.v[T_IW] <= 0)
		return fail(c, at, "inner product sizes must be positive");
	mm->ndims = 2;
	mm->src[0] = mm->dst[0] = t.v[T_MB];
	mm->src[1] = mm->wei[0] = t.v[T_IC] * t.v[T_ID] * t.v[T_IH] * t.v[T_IW];
	mm->wei[1] = mm->dst[1] = t.v[T_OC];
	return 0;
}

/* One spatial axis: output size and the far-side padding, benchdnn's way. */
static int axis(struct cur *c, const char *at, const struct tags *t, enum tag i, enum tag o,
		enum tag k, enum tag s, enum tag p, enum tag dl, int64_t out[3])
{
	int64_t ek = (t->v[k] - 1) * (t->v[dl] + 1) + 1, pad = t->v[p], osz = t->v[o];

	if (!t->given[p])
		pad = t->given[o] ? ((osz - 1) * t->v[s] - t->v[i] + ek) / 2 : 0;
	if (pad < 0)
		return fail(c, at, "cannot deduce '%s' from '%s' %lld", tag_names[p], tag_names[o],
			    (long long)osz);
	if (!t->given[o])
		osz = (t->v[i] + 2 * pad - ek) / t->v[s] + 1;
	if (osz <= 0 || t->v[i] + 2 * pad < ek)
		return fail(c, at, "kernel '%s' %lld does not fit the padded input",
			    tag_names[k], (long long)t->v[k]);
	out[0] = osz;
	out[1] = pad;
	out[2] = (osz - 1) * t->v[s] + ek - t->v[i] - pad;
	return 0;
}

/* Fill a conv descriptor's defaults and check what it must have. */
static int conv_defaults(struct cur *c, const char *at, struct tags *t)
{
	static const enum tag pos[] = {T_G, T_MB, T_IH, T_IW, T_KH, T_KW, T_SH, T_SW};
	size_t i;

	if (t->given[T_ID] || t->given[T_OD] || t->given[T_KD] || t->given[T_SD] ||
	    t->given[T_PD] || t->given[T_DD])
		return fail(c, at, "3-d convolutions are not supported");
	if (need(c, at, t, T_IC) < 0 || need(c, at, t, T_OC) < 0)
		return -1;
	if (!t->given[T_IH] && !t->given[T_IW])
		return fail(c, at, "missing 'ih'");
	if (!t->given[T_KH] && !t->given[T_KW])
		return fail(c, at, "missing 'kh'");
	if (!t->given[T_G])
		t->v[T_G] = 1, t->given[T_G] = 1;
	if (!t->given[T_MB])
		t->v[T_MB] = 2, t->given[T_MB] = 1;
	pair(t, T_IH, T_IW, 0);
	pair(t, T_KH, T_KW, 0);
	pair(t, T_SH, T_SW, 1);
	pair(t, T_DH, T_DW, 0);
	for (i = 0; i < sizeof(pos) / sizeof(pos[0]); i++)
		if (need(c, at, t, pos[i]) < 0)
			return -1;
	if (t->v[T_IC] % t->v[T_G] || t->v[T_OC] % t->v[T_G])
		return fail(c, at, "'g' %lld does not divide 'ic' %lld and 'oc' %lld",
			    (long long)t->v[T_G], (long long)t->v[T_IC], (long long)t->v[T_OC]);
	return 0;
}

/* Defaults, checks and the derived sizes of a conv descriptor. */
static int conv_resolve(struct cur *c, const char *at, struct tags *t, struct hgc_bench_conv *cv)
{
	int64_t h[3], w[3];

	if (conv_defaults(c, at, t) < 0)
		return -1;
	if (t->given[T_PH] != t->given[T_PW])
		pair(t, T_PH, T_PW, 0);
	if (t->given[T_OH] != t->given[T_OW])
		pair(t, T_OH, T_OW, 0);
	if (axis(c, at, t, T_IH, T_OH, T_KH, T_SH, T_PH, T_DH, h) < 0 ||
	    axis(c, at, t, T_IW, T_OW, T_KW, T_SW, T_PW, T_DW, w) < 0)
		return -1;
	*cv = (struct hgc_bench_conv){
		.g = t->v[T_G], .mb = t->v[T_MB], .ic = t->v[T_IC], .oc = t->v[T_OC],
		.ih = t->v[T_IH], .iw = t->v[T_IW], .oh = h[0], .ow = w[0],
		.kh = t->v[T_KH], .kw = t->v[T_KW], .sh = t->v[T_SH], .sw = t->v[T_SW],
		.ph = h[1], .pw = w[1], .pr_h = h[2], .pr_w = w[2],
		.dh = t->v[T_DH], .dw = t->v[T_DW],
	};
	return 0;
}

/* A conv descriptor line. */
static int conv_line(struct cur *c, struct hgc_bench_conv *cv)
{
	const char *at = c->p;
	struct tags t;

	if (tag_values(c, &t) < 0)
		return -1;
	return conv_resolve(c, at, &t, cv);
}

/* The problem itself, by kind; leaves the cursor at the name. */
static int problem(struct cur *c, enum hgc_bench_kind kind, struct hgc_bench_shape *out)
{
	if (kind == HGC_BENCH_CONV)
		return conv_line(c, &out->conv);
	if (*c->p >= '0' && *c->p <= '9')
		return matmul_dims(c, &out->mm);
	return inner_product(c, &out->mm);
}

/*
 * Parse one line of a shape file (it ends at '\n' or NUL).  Returns 1 with
 * *out filled, 0 for a blank or comment line, -1 with the diag set.
 */
int hgc_bench_parse_line(enum hgc_bench_kind kind, const char *line, const struct hgc_loc *loc,
			 struct hgc_arena *a, struct hgc_bench_shape *out, struct hgc_diag *d)
{
	struct cur c = {line, line, loc, a, d};

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	out->loc = *loc;
	while (*c.p == ' ' || *c.p == '\t')
		c.p++;
	if (*c.p == 0 || *c.p == '\n' || *c.p == '\r' || *c.p == '#')
		return 0;
	if (c.p[0] == '-' && c.p[1] == '-')
		return fail(&c, c.p, "benchdnn options are not supported in a shape list");
	out->loc.col = loc->col + (int)(c.p - line);
	if (problem(&c, kind, out) < 0 || name(&c, &out->name) < 0 || trailer(&c) < 0)
		return -1;
	return 1;
}

/*
 * Parse a whole file's text, appending each problem to out (a vector of
 * struct hgc_bench_shape).  Every line is tried, so all bad lines are
 * reported.  Returns the number of problems, or -1 with the diag set.
 */
int hgc_bench_parse_text(enum hgc_bench_kind kind, const char *file, const char *text,
			 struct hgc_arena *a, struct hgc_vec *out, struct hgc_diag *d)
{
	struct hgc_bench_shape s;
	struct hgc_loc loc = {file, 1, 1};
	const char *p = text;
	int n = 0, bad = 0, r;

	while (*p) {
		r = hgc_bench_parse_line(kind, p, &loc, a, &s, d);
		if (r < 0)
			bad = 1;
		else if (r > 0)
			*(struct hgc_bench_shape *)hgc_vec_push(out) = s, n++;
		while (*p && *p != '\n')
			p++;
		if (*p)
			p++;
		loc.line++;
	}
	return bad ? -1 : n;
}

/* Read and parse one shape file. */
int hgc_bench_load_file(enum hgc_bench_kind kind, const char *path, struct hgc_arena *a,
			struct hgc_vec *out, struct hgc_diag *d)
{
	char *text = hgc_read_file(path, NULL, d);
	int n;

	if (!text)
		return -1;
	n = hgc_bench_parse_text(kind, hgc_arena_strdup(a, path), text, a, out, d);
	free(text);
	return n;
}

/* Dims joined by 'x' into buf. */
static char *join_dims(struct hgc_arena *a, const int64_t *v, int n)
{
	char buf[HGC_BENCH_MAX_DIMS * 24], *p = buf;
	int i;

	for (i = 0; i < n; i++)
		p += sprintf(p, "%s%lld", i ? "x" : "", (long long)v[i]);
	return hgc_arena_strdup(a, buf);
}

/* The problem in canonical benchdnn syntax (every value written, no name). */
char *hgc_bench_shape_text(const struct hgc_bench_shape *s, struct hgc_arena *a)
{
	const struct hgc_bench_conv *c = &s->conv;
	const struct hgc_bench_matmul *m = &s->mm;

	if (s->kind == HGC_BENCH_GRAPH)
		return hgc_arena_strdup(a, s->name ? s->name : "");
	if (s->kind == HGC_BENCH_MATMUL)
		return hgc_arena_printf(a, "%s:%s", join_dims(a, m->src, m->ndims),
					join_dims(a, m->wei, m->ndims));
	return hgc_arena_printf(a,
		"g%lldmb%lldic%lldih%lldiw%lldoc%lldoh%lldow%lldkh%lldkw%lldsh%lldsw%lldph%lldpw%lld%s",
		(long long)c->g, (long long)c->mb, (long long)c->ic, (long long)c->ih,
		(long long)c->iw, (long long)c->oc, (long long)c->oh, (long long)c->ow,
		(long long)c->kh, (long long)c->kw, (long long)c->sh, (long long)c->sw,
		(long long)c->ph, (long long)c->pw,
		c->dh || c->dw ? hgc_arena_printf(a, "dh%llddw%lld", (long long)c->dh,
						  (long long)c->dw) : "");
}

/* True when dir/../shared/anchors/benchdnn-shapes is a directory. */
static const char *anchors_beside(struct hgc_arena *a, const char *dir)
{
	char *cand = hgc_arena_printf(a, "%s/../shared/anchors", dir), real[PATH_MAX];
	struct stat st;

	if (stat(hgc_arena_printf(a, "%s/benchdnn-shapes", cand), &st) || !S_ISDIR(st.st_mode))
		return NULL;
	return realpath(cand, real) ? hgc_arena_strdup(a, real) : cand;
}

/*
 * The directory a local clone at repo was made from: the url of its
 * [remote "origin"] in repo/.git/config when that is an absolute path,
 * else NULL.  A clone in /tmp (`git clone . /tmp/x`) then finds the
 * anchors beside the repository it came from.
 */
static const char *origin_dir(struct hgc_arena *a, const char *repo)
{
	FILE *f = fopen(hgc_arena_printf(a, "%s/.git/config", repo), "r");
	char line[PATH_MAX + 64], *v, *end;
	const char *found = NULL;
	int in_origin = 0;

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		for (v = line; *v == ' ' || *v == '\t'; v++)
			;
		if (*v == '[') {
			in_origin = !strncmp(v, "[remote \"origin\"]", 17);
			continue;
		}
		if (!in_origin || strncmp(v, "url", 3))
			continue;
		for (v += 3; *v == ' ' || *v == '\t' || *v == '='; v++)
			;
		end = v + strcspn(v, "\r\n");
		while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '/'))
			end--;
		*end = 0;
		if (*v == '/')
			found = hgc_arena_strdup(a, v);
	}
	fclose(f);
	return found;
}

/* Walk up from dir looking for the anchors beside a repository (or beside
   the repository a local clone came from). */
static const char *anchors_above(struct hgc_arena *a, const char *dir)
{
	char *p = hgc_arena_strdup(a, dir), *slash;
	const char *found, *origin;
	int level;

	for (level = 0; level < 6 && *p; level++) {
		if ((found = anchors_beside(a, p)))
			return found;
		if ((origin = origin_dir(a, p)) && (found = anchors_beside(a, origin)))
			return found;
		slash = strrchr(p, '/');
		if (!slash)
			break;
		*slash = 0;
	}
	return NULL;
}

/*
 * The shared anchors directory: $HGC_ANCHORS, else ../shared/anchors beside
 * the repository (or beside the one a local clone came from), looked for
 * above the working directory and above the executable.  NULL when not
 * found.
 */
const char *hgc_bench_find_anchors(struct hgc_arena *a)
{
	const char *env = getenv("HGC_ANCHORS"), *found;
	char buf[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	if (getcwd(buf, sizeof(buf)) && (found = anchors_above(a, buf)))
		return found;
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return anchors_above(a, buf);
}
