/*
 * 030-dsl: the hgc language front end: tokens with positions, every
 * construct of docs/language.md parsed into checked graphs, configs,
 * includes, generators (seeded, ranged, literal, arange, npy), golden and
 * negative specs, and the template head.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsl/dsl_int.h"
#include "grammar.h"
#include "t/tap.h"

static char tmpdir[64];

/* Write text to tmpdir/rel, creating its directories; returns the full path. */
static const char *put(const char *rel, const char *text)
{
	static char path[8][512];
	static int k;
	char *p = path[k++ % 8], *s;
	FILE *f;

	snprintf(p, 512, "%s/%s", tmpdir, rel);
	for (s = strchr(p + strlen(tmpdir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(p, 0700);
		*s = '/';
	}
	f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
	return p;
}

/* Lex src fully; return the codes, 0-terminated, and the tokens in toks. */
static int lex_all(const char *src, int *codes, struct hgc_tok *toks, int max,
		   struct hgc_diag *d)
{
	struct hgc_lexer lx;
	int n = 0, c;

	hgc_dsl_lex_init(&lx, "lex.hgc", src, strlen(src), d);
	do {
		c = hgc_dsl_lex(&lx, &toks[n]);
		codes[n++] = c;
	} while (c > 0 && n < max);
	return n;
}

static void test_lexer(void)
{
	const char *src = "spec s1 { # comment\n"
			  "  x = f(1, 2.5, -3e-2, \"a\\\"b\"); /* multi\nline */ y\n"
			  "} 0..N -> == != <= >= && || ! % range step\n";
	int want[] = {HGC_TK_SPEC, HGC_TK_ID, HGC_TK_LBRACE, HGC_TK_ID, HGC_TK_ASSIGN, HGC_TK_ID,
		      HGC_TK_LP, HGC_TK_INT, HGC_TK_COMMA, HGC_TK_FLOAT, HGC_TK_COMMA,
		      HGC_TK_MINUS, HGC_TK_FLOAT, HGC_TK_COMMA, HGC_TK_STRING, HGC_TK_RP,
		      HGC_TK_SEMI, HGC_TK_ID, HGC_TK_RBRACE, HGC_TK_INT, HGC_TK_DOTDOT, HGC_TK_ID,
		      HGC_TK_ARROW, HGC_TK_EQ, HGC_TK_NE, HGC_TK_LE, HGC_TK_GE, HGC_TK_ANDAND,
		      HGC_TK_OROR, HGC_TK_NOT, HGC_TK_PERCENT, HGC_TK_RANGE, HGC_TK_STEP, 0};
	int codes[64], n, i, same = 1;
	struct hgc_tok t[64];
	struct hgc_diag d;

	hgc_diag_init(&d);
	n = lex_all(src, codes, t, 64, &d);
	is_int(n, (int)(sizeof(want) / sizeof(want[0])), "lexer: token count");
	for (i = 0; i < n && same; i++)
		if (codes[i] != want[i]) {
			same = 0;
			diag("token %d: got %s, wanted %s", i, hgc_dsl_token_name(codes[i]),
			     hgc_dsl_token_name(want[i]));
		}
	ok(same, "lexer: token kinds in order, keywords recognized");
	ok(t[0].line == 1 && t[0].col == 1 && t[1].col == 6, "lexer: 'spec s1' at 1:1 and 1:6");
	ok(t[3].line == 2 && t[3].col == 3, "lexer: 'x' at 2:3 after a comment line");
	ok(t[9].n == 3 && !memcmp(t[9].z, "2.5", 3) && t[9].col == 12,
	   "lexer: float token points into the source");
	is_int(t[14].n, 6, "lexer: string token spans its quotes and escapes");
	ok(t[17].line == 3 && t[17].col == 9, "lexer: a block comment counts its newlines");
	ok(t[19].line == 4 && t[19].col == 3 && t[19].n == 1, "lexer: '0..N' is INT DOTDOT ID");
	is_int(t[n - 1].line, 5, "lexer: end of input on the last line");
	is_int(d.nerr, 0, "lexer: no errors on good input");
	is_str(hgc_dsl_token_name(HGC_TK_ARROW), "->", "token names: punctuation");
	is_str(hgc_dsl_token_name(HGC_TK_MULTIPLE_OF), "multiple_of", "token names: keywords");

	n = lex_all("a @", codes, t, 64, &d);
	ok(codes[n - 1] == -1 && strstr(hgc_diag_text(&d), "lex.hgc:1:3: error: unexpected character '@'"),
	   "lexer: stray character reported with its place");
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	n = lex_all("x \"abc\n", codes, t, 64, &d);
	ok(codes[n - 1] == -1 && strstr(hgc_diag_text(&d), "1:3: error: unterminated string"),
	   "lexer: unterminated string at its quote");
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	n = lex_all("x\n  /* abc\n\n", codes, t, 64, &d);
	ok(codes[n - 1] == -1 && strstr(hgc_diag_text(&d), "2:3: error: unterminated comment"),
	   "lexer: unterminated comment at its start");
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	n = lex_all("x\0y", codes, t, 64, &d);
	ok(codes[n - 1] == 0 && n == 2, "lexer: the NUL terminator ends the input");
	hgc_diag_release(&d);
}

/* The example of docs/language.md, with the files it names. */
static char *doc_example(void)
{
	char *doc = hgc_read_file("docs/language.md", NULL, NULL), *a, *b;

	if (!doc)
		return NULL;
	a = strstr(doc, "```\n");
	b = a ? strstr(a + 4, "```\n") : NULL;
	if (!b) {
		free(doc);
		return NULL;
	}
	*b = 0;
	memmove(doc, a + 4, strlen(a + 4) + 1);
	return doc;
}

/* The op producing the tensor called name in g, or NULL. */
static const struct hgc_op *op_named(const struct hgc_graph *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->ops.len; i++)
		if (HGC_GRAPH_OP(g, i)->out[0]->name &&
		    !strcmp(HGC_GRAPH_OP(g, i)->out[0]->name, name))
			return HGC_GRAPH_OP(g, i);
	return NULL;
}

static void test_doc_example(void)
{
	static const int64_t n_dims[2] = {2, 3}, y_dims[2] = {32, 512};
	static float zeros[32 * 512];
	float n_data[6] = {1, 2, 3, 4, 5, 6};
	struct hgc_program p;
	struct hgc_diag d;
	const struct hgc_spec *s;
	const struct hgc_op *o;
	const struct hgc_attr *a;
	char *src = doc_example();
	const char *path;

	ok(src != NULL, "docs/language.md has an example");
	if (!src)
		return;
	put("doc/common.hgc", "config common { threads = 1; }\n");
	hgc_diag_init(&d);
	hgc_npy_write(put("doc/data/n.npy", ""), HGC_DT_F32, 2, n_dims, n_data, &d);
	hgc_npy_write(put("doc/golden/y.npy", ""), HGC_DT_F32, 2, y_dims, zeros, &d);
	path = put("doc/example.hgc", src);
	free(src);
	hgc_program_init(&p);
	is_int(hgc_program_load(&p, path, &d), 0, "the docs example loads");
	is_str(hgc_diag_text(&d), "", "the docs example has no errors");
	is_int(p.specs.len, 1, "one spec");
	is_int(p.configs.len, 2, "two configs (one included)");
	if (p.specs.len != 1) {
		hgc_program_release(&p);
		hgc_diag_release(&d);
		return;
	}
	s = HGC_PROGRAM_SPEC(&p, 0);
	is_str(s->name, "dlrm_bottom_b32", "spec name");
	is_int(s->graph->inputs.len, 10, "10 inputs and constants");
	is_int(s->graph->ops.len, 5, "5 ops");
	is_int(s->graph->outputs.len, 3, "3 outputs");
	is_str(HGC_GRAPH_INPUT(s->graph, 3)->name, "w0", "inputs in declaration order");
	is_int(HGC_GRAPH_INPUT(s->graph, 3)->prop, HGC_PROP_CONSTANT, "const is a constant input");
	is_int(HGC_GRAPH_INPUT(s->graph, 0)->prop, HGC_PROP_VARIABLE, "input is variable");
	is_int(HGC_GRAPH_INPUT(s->graph, 1)->ndims, 4, "input rank");
	is_int(HGC_GRAPH_INPUT(s->graph, 1)->dims[3], 128, "input dims");
	is_int(HGC_GRAPH_INPUT(s->graph, 6)->dtype, HGC_DT_S8, "s8 dtype");
	o = op_named(s->graph, "h0");
	ok(o && o->kind == HGC_OP_MATMUL && o->out[0]->dims[0] == 32 && o->out[0]->dims[1] == 512,
	   "h0 = MatMul: f32[32,512]");
	ok(o && o->loc.line == 21 && o->loc.col == 8, "op loc is the kind's position");
	o = op_named(s->graph, "z");
	ok(o && o->kind == HGC_OP_QUANTIZE && o->out[0]->dtype == HGC_DT_U8, "z : u8 = Quantize");
	a = o ? hgc_op_attr(o, "scales") : NULL;
	ok(a && a->type == HGC_ATTR_FLOATS && a->n == 1 && a->v.floats[0] == 0.1,
	   "float list attribute");
	a = o ? hgc_op_attr(o, "zps") : NULL;
	ok(a && a->type == HGC_ATTR_INTS && a->n == 1 && a->v.ints[0] == 3, "int list attribute");
	is_str(o ? hgc_op_string(o, "qtype") : "", "per_tensor", "string attribute");
	o = op_named(s->graph, "c");
	ok(o && o->kind == HGC_OP_CONVOLUTION && o->out[0]->ndims == 4 && o->out[0]->dims[1] == 4 &&
		   o->out[0]->dims[2] == 6,
	   "Convolution NCX/OIX: f32[1,4,6,6]");
	is_int(o ? hgc_op_int(o, "groups") : 0, 1, "int attribute");
	is_str(HGC_GRAPH_OUTPUT(s->graph, 2)->name, "c", "outputs in order");
	is_str(s->config_name, "fast", "config named");
	ok(s->config && s->config == hgc_program_find_config(&p, "fast"), "config resolved");
	ok(s->config && s->config->threads == 2 && s->config->backend == HGC_BACKEND_INTERP &&
		   s->config->dumps == HGC_DUMP_GRAPH,
	   "config values");
	ok(s->has_tol && s->rtol == 1e-4 && s->atol == 1e-5, "expect tolerances");
	ok(s->iters == 100 && s->warmup == 10, "bench settings");
	is_int(s->ngolden, 1, "one golden output");
	ok(s->ngolden == 1 && s->golden[0].gen.kind == HGC_GEN_NPY &&
		   s->golden[0].tensor == HGC_GRAPH_OUTPUT(s->graph, 0),
	   "golden npy for y");
	ok(s->gens[9].kind == HGC_GEN_NPY && strstr(s->gens[9].path, "doc/data/n.npy"),
	   "npy path relative to the declaring file");
	ok(s->gens[5].kind == HGC_GEN_UNIFORM && s->gens[5].a == -0.5 && s->gens[5].b == 0.5,
	   "positional generator arguments");
	ok(s->gens[1].seed == 7 && s->gens[0].seed == hgc_dsl_seed("dlrm_bottom_b32", "x"),
	   "explicit and default seeds");
	hgc_program_release(&p);
	hgc_diag_release(&d);
}

/* Load src as file name into a fresh program; returns the load's result. */
static int load(struct hgc_program *p, struct hgc_diag *d, const char *src)
{
	hgc_program_init(p);
	hgc_diag_init(d);
	return hgc_program_load_string(p, "test.hgc", src, d);
}

static void done(struct hgc_program *p, struct hgc_diag *d)
{
	hgc_program_release(p);
	hgc_diag_release(d);
}

static void test_configs(void)
{
	struct hgc_program p;
	struct hgc_diag d;
	const struct hgc_config *c;
	int rc;

	rc = load(&p, &d,
		  "spec s { input x : f32[2]; y = ReLU(x); output y; config later; }\n"
		  "config later { threads = 0; backend = \"jit\"; dump = [graph, tir, llvm];\n"
		  "  use matmul_core for MatMul; pin matmul_core.MB = 32; pin t.x = -1.5;\n"
		  "  pass fuse = off; };\n");
	is_int(rc, 0, "config declared after the spec that names it");
	c = hgc_program_find_config(&p, "later");
	ok(c && c->threads == 0 && c->backend == HGC_BACKEND_JIT &&
		   c->dumps == (HGC_DUMP_GRAPH | HGC_DUMP_TIR | HGC_DUMP_LLVM),
	   "config: threads 0, string backend, dump list");
	ok(c && c->nentries == 4 && !strcmp(c->entries[0].kind, "use") &&
		   !strcmp(c->entries[0].key, "MatMul") && !strcmp(c->entries[0].value, "matmul_core"),
	   "config: use entry");
	ok(c && c->nentries == 4 && !strcmp(c->entries[1].key, "matmul_core.MB") &&
		   !strcmp(c->entries[1].value, "32") && !strcmp(c->entries[2].value, "-1.5"),
	   "config: pin entries");
	ok(c && c->nentries == 4 && !strcmp(c->entries[3].kind, "pass") &&
		   !strcmp(c->entries[3].value, "off") && c->entries[3].loc.line == 4,
	   "config: pass entry with its place");
	ok(HGC_PROGRAM_SPEC(&p, 0)->config == c, "spec resolves a later config");
	ok(hgc_program_find_config(&p, "nope") == NULL, "find_config: unknown name");
	done(&p, &d);

	rc = load(&p, &d, "spec s { input x : f32[2]; y = ReLU(x); output y; config nope; }\n");
	ok(rc == -1 && strstr(hgc_diag_text(&d), "test.hgc:1:58: error: unknown config 'nope'"),
	   "unknown config in a spec");
	is_int(p.specs.len, 0, "a spec with an unknown config is dropped");
	done(&p, &d);
}

static void test_includes(void)
{
	struct hgc_program p;
	struct hgc_diag d;
	const char *main_path;

	put("inc/shared.hgc", "config shared { threads = 3; }\n");
	put("inc/sub/common.hgc", "include \"../shared.hgc\";\nconfig common { threads = 1; }\n"
				  "spec from_sub { input a : f32[1]; b = Exp(a); output b; config shared; }\n");
	put("inc/other.hgc", "include \"shared.hgc\";\n");
	main_path = put("inc/main.hgc", "include \"sub/common.hgc\";\ninclude \"other.hgc\";\n"
					"spec m { input x : f32[3]; y = Tanh(x); output y; config common; }\n");
	hgc_program_init(&p);
	hgc_diag_init(&d);
	is_int(hgc_program_load(&p, main_path, &d), 0, "includes relative to the including file");
	is_str(hgc_diag_text(&d), "", "a file included twice is read once");
	is_int(p.files.len, 4, "four files read");
	is_int(p.specs.len, 2, "specs from the included file come first");
	ok(p.specs.len == 2 && !strcmp(HGC_PROGRAM_SPEC(&p, 0)->name, "from_sub") &&
		   strstr(HGC_PROGRAM_SPEC(&p, 0)->file, "inc/sub/common.hgc"),
	   "spec records its file");
	ok(hgc_program_find_config(&p, "shared") && hgc_program_find_config(&p, "shared")->threads == 3,
	   "config from a nested include");
	is_int(hgc_program_load(&p, main_path, &d), 0, "loading the same file again does nothing");
	is_int(p.specs.len, 2, "and adds no spec");
	done(&p, &d);
}

/* Fill input i of spec s into a fresh buffer. */
static void *fill(const struct hgc_spec *s, int i, struct hgc_diag *d, int *rc)
{
	const struct hgc_tensor *t = HGC_GRAPH_INPUT(s->graph, i);
	void *buf = calloc((size_t)hgc_tensor_nelems(t), hgc_dtype_size(t->dtype));

	*rc = hgc_gen_fill(&s->gens[i], t, buf, d);
	return buf;
}

/* Min and max of a float buffer. */
static void range_f32(const float *v, int n, float *lo, float *hi)
{
	int i;

	*lo = *hi = v[0];
	for (i = 1; i < n; i++) {
		*lo = v[i] < *lo ? v[i] : *lo;
		*hi = v[i] > *hi ? v[i] : *hi;
	}
}

static void test_generators_random(const struct hgc_spec *s, struct hgc_diag *d)
{
	float *a = NULL, *b = NULL, *c = NULL, lo, hi;
	double mean = 0, var = 0;
	int rc, i, n = 4096, seen[256] = {0}, all = 1;
	int8_t *q;
	uint8_t *u;

	a = fill(s, 0, d, &rc);
	b = fill(s, 1, d, &rc);
	c = fill(s, 2, d, &rc);
	ok(!memcmp(a, b, n * sizeof(float)), "gen: same seed, same data");
	ok(memcmp(a, c, n * sizeof(float)), "gen: another seed, other data");
	range_f32(a, n, &lo, &hi);
	ok(lo >= -2 && hi < 3 && lo < -1.9 && hi > 2.9, "gen: uniform(-2, 3) fills its range");
	free(a), free(b), free(c);
	a = fill(s, 3, d, &rc);
	for (i = 0; i < n; i++)
		mean += a[i];
	mean /= n;
	for (i = 0; i < n; i++)
		var += (a[i] - mean) * (a[i] - mean);
	var /= n;
	ok(mean > 4.9 && mean < 5.1 && var > 3.6 && var < 4.4, "gen: normal(5, 2): mean %.3f var %.3f",
	   mean, var);
	free(a);
	q = fill(s, 4, d, &rc);
	for (i = 0; i < n; i++)
		seen[q[i] + 128]++;
	for (i = 0; i < 256; i++)
		all &= seen[i] > 0;
	ok(all, "gen: randint on s8 defaults to -128..127 and hits every value");
	free(q);
	u = fill(s, 5, d, &rc);
	for (i = 0, all = 1; i < 64; i++)
		all &= u[i] >= 3 && u[i] <= 5;
	ok(all, "gen: randint(3, 5) stays inclusive in range");
	free(u);
	a = fill(s, 6, d, &rc);
	range_f32(a, 64, &lo, &hi);
	ok(lo >= -10 && hi <= 10 && a[0] == (int)a[0] && a[1] == (int)a[1],
	   "gen: randint on f32 gives whole numbers");
	free(a);
}

static void test_generators_fixed(const struct hgc_spec *s, struct hgc_diag *d)
{
	float *a;
	int32_t *l;
	uint16_t *bf;
	int8_t *q;
	uint8_t *bo;
	int rc;

	a = fill(s, 7, d, &rc);
	ok(a[0] == 1 && a[1] == 1.25 && a[5] == 2.25, "gen: arange(1, 0.25)");
	free(a);
	l = fill(s, 8, d, &rc);
	ok(l[0] == -1 && l[1] == 2 && l[2] == 3 && l[3] == 4, "gen: literal list (2.5 rounds to 2)");
	free(l);
	a = fill(s, 9, d, &rc);
	ok(a[0] == 0 && a[5] == 0, "gen: zeros");
	free(a);
	bf = fill(s, 10, d, &rc);
	ok(bf[0] == 0x3f80 && bf[2] == 0x3f80, "gen: ones in bf16");
	free(bf);
	q = fill(s, 11, d, &rc);
	ok(q[0] == -128 && q[1] == 127 && q[2] == 2 && q[3] == 4, "gen: saturate and round half even");
	free(q);
	bo = fill(s, 12, d, &rc);
	ok(bo[0] == 1 && bo[1] == 0 && bo[2] == 1, "gen: boolean literal");
	free(bo);
	q = fill(s, 13, d, &rc);
	ok(q[0] >= -128 && s->gens[13].kind == HGC_GEN_RANDINT, "gen: integer inputs default to randint");
	free(q);
	a = fill(s, 14, d, &rc);
	ok(s->gens[14].kind == HGC_GEN_UNIFORM && a[0] >= -1 && a[0] < 1 && a[1] != a[0],
	   "gen: float inputs default to uniform(-1, 1)");
	free(a);
}

static void test_generators(void)
{
	struct hgc_program p;
	struct hgc_diag d;
	int rc;

	rc = load(&p, &d,
		  "spec g {\n"
		  "  input a : f32[64, 64] = uniform(lo = -2, hi = 3, seed = 5);\n"
		  "  input b : f32[64, 64] = uniform(-2, 3, 5);\n"
		  "  input c : f32[64, 64] = uniform(-2, 3, seed = 6);\n"
		  "  input n : f32[4096] = normal(std = 2, mean = 5);\n"
		  "  input q : s8[4096] = randint();\n"
		  "  input r : u8[64] = randint(3, 5);\n"
		  "  input rf : f32[64] = randint();\n"
		  "  input ar : f32[6] = arange(start = 1, step = 0.25);\n"
		  "  input l : s32[2, 2] = [-1, 2.5, 3, 4];\n"
		  "  input z : f32[2, 3] = zeros();\n"
		  "  input o : bf16[3] = ones();\n"
		  "  input sat : s8[4] = [-1000, 1000, 2.5, 3.5];\n"
		  "  input bo : boolean[3] = [true, false, 7];\n"
		  "  input di : s8[8];\n"
		  "  input df : f32[8];\n"
		  "  y = ReLU(a); output y;\n}\n");
	is_int(rc, 0, "generator spec loads");
	if (rc == 0) {
		test_generators_random(HGC_PROGRAM_SPEC(&p, 0), &d);
		test_generators_fixed(HGC_PROGRAM_SPEC(&p, 0), &d);
	}
	is_str(hgc_diag_text(&d), "", "filling reports nothing");
	done(&p, &d);
}

static void test_npy(void)
{
	static const int64_t dims23[2] = {2, 3}, dims32[2] = {3, 2};
	float data[6] = {1, 2, 3, 4, 5, 6}, buf[6];
	int32_t idata[6] = {0};
	struct hgc_program p;
	struct hgc_diag d;
	const struct hgc_spec *s;
	const char *path;
	int rc;

	hgc_diag_init(&d);
	hgc_npy_write(put("npy/d/good.npy", ""), HGC_DT_F32, 2, dims23, data, &d);
	hgc_npy_write(put("npy/d/shape.npy", ""), HGC_DT_F32, 2, dims32, data, &d);
	hgc_npy_write(put("npy/d/dtype.npy", ""), HGC_DT_S32, 2, dims23, idata, &d);
	hgc_diag_release(&d);
	path = put("npy/s.hgc", "spec n {\n"
				"  input a : f32[2, 3] = npy(\"d/good.npy\");\n"
				"  input b : f32[2, 3] = npy(\"d/shape.npy\");\n"
				"  input c : f32[2, 3] = npy(path = \"d/dtype.npy\");\n"
				"  input e : f32[2, 3] = npy(\"d/missing.npy\");\n"
				"  y = Add(a, b); output y;\n}\n");
	hgc_program_init(&p);
	hgc_diag_init(&d);
	rc = hgc_program_load(&p, path, &d);
	is_int(rc, 0, "npy spec loads (files are read when filling)");
	if (rc == 0) {
		s = HGC_PROGRAM_SPEC(&p, 0);
		rc = hgc_gen_fill(&s->gens[0], HGC_GRAPH_INPUT(s->graph, 0), buf, &d);
		ok(rc == 0 && buf[0] == 1 && buf[5] == 6, "npy: matching file fills the tensor");
		rc = hgc_gen_fill(&s->gens[1], HGC_GRAPH_INPUT(s->graph, 1), buf, &d);
		ok(rc == -1 && strstr(hgc_diag_text(&d), "s.hgc:3:25: error: '") &&
			   strstr(hgc_diag_text(&d), "shape.npy' has shape [3,2] but 'b' has shape [2,3]"),
		   "npy: wrong shape");
		rc = hgc_gen_fill(&s->gens[2], HGC_GRAPH_INPUT(s->graph, 2), buf, &d);
		ok(rc == -1 && strstr(hgc_diag_text(&d), "dtype.npy' holds s32 data but 'c' is f32"),
		   "npy: wrong dtype");
		rc = hgc_gen_fill(&s->gens[3], HGC_GRAPH_INPUT(s->graph, 3), buf, &d);
		ok(rc == -1 && strstr(hgc_diag_text(&d), "s.hgc:5:25: error: ") &&
			   strstr(hgc_diag_text(&d), "missing.npy"),
		   "npy: missing file");
		is_int(d.nerr, 3, "npy: three errors");
	}
	done(&p, &d);
}

static void test_golden_negative(void)
{
	struct hgc_program p;
	struct hgc_diag d;
	const struct hgc_spec *s;
	int32_t out[4];
	int rc;

	rc = load(&p, &d,
		  "spec gold { input a : s32[2, 2] = [1, 2, 3, 4]; b = Abs(a); output b;\n"
		  "  expect b = [1, 2, 3, 4]; }\n"
		  "spec neg { input a : f32[2, 3]; input b : f32[4, 5]; c = MatMul(a, b);\n"
		  "  d = ReLU(c); e = Frob(d); output e; expect error \"inner dimensions\"; }\n"
		  "spec builds { input a : f32[2]; b = ReLU(a); output b; expect error \"x\"; }\n"
		  "spec bf { input a : f32[2]; b : bf16 = TypeCast(a); c : f32 = TypeCast(b); output c; }\n");
	is_int(rc, 0, "golden and negative specs load");
	is_int(p.specs.len, 4, "four specs");
	if (rc == 0 && p.specs.len == 4) {
		s = HGC_PROGRAM_SPEC(&p, 0);
		ok(s->ngolden == 1 && s->golden[0].gen.kind == HGC_GEN_LITERAL, "golden literal list");
		rc = hgc_gen_fill(&s->golden[0].gen, s->golden[0].tensor, out, &d);
		ok(rc == 0 && out[3] == 4, "golden values fill like inputs");
		ok(!s->has_tol && s->rtol == 0 && s->atol == 0, "integer outputs: zero tolerances");
		s = HGC_PROGRAM_SPEC(&p, 1);
		is_str(s->expect_error, "inner dimensions", "negative spec: expected text");
		ok(s->graph == NULL && s->build_error &&
			   strstr(s->build_error, "MatMul: inner dimensions differ"),
		   "negative spec: build error kept, no graph");
		ok(s->build_error && strstr(s->build_error, "unknown op 'Frob'") &&
			   !strstr(s->build_error, "'d'"),
		   "negative spec: every build error kept, no cascade");
		s = HGC_PROGRAM_SPEC(&p, 2);
		ok(s->build_error == NULL && s->graph == NULL, "negative spec that builds: no build_error");
		s = HGC_PROGRAM_SPEC(&p, 3);
		ok(s->rtol == 1e-2 && s->atol == 1e-2, "bf16 inside the graph: tolerance 1e-2");
		s = HGC_PROGRAM_SPEC(&p, 1);
	}
	is_str(hgc_diag_text(&d), "", "negative specs are not errors of the program");
	done(&p, &d);
}

static void test_fallback_and_graph_block(void)
{
	struct hgc_program p;
	struct hgc_diag d;
	const struct hgc_spec *s;
	int rc;

	rc = load(&p, &d,
		  "spec kw { graph { input range : f32[2, 1, 3]; const step : f32[];\n"
		  "  for = Multiply(range, step); error = Exp(for); output error; };\n"
		  "  ; bench { iters = 1; } }\n");
	is_int(rc, 0, "keywords as names where no keyword fits; graph { } grouping");
	is_str(hgc_diag_text(&d), "", "no errors");
	if (rc == 0) {
		s = HGC_PROGRAM_SPEC(&p, 0);
		ok(s->graph->ops.len == 2 && HGC_GRAPH_INPUT(s->graph, 1)->ndims == 0,
		   "scalar input and two ops");
		ok(s->rtol == 1e-5 && s->atol == 1e-6, "f32 default tolerances");
	}
	done(&p, &d);
}

static const char *sketch =
	"template matmul_core for matmul(A:[M,K], B: u8[K,N]) -> C:[M,N] {\n"
	"  param MPN, NPN : grid(threads);\n"
	"  param MB : one_of(16, 32, 48, 64), divides(M);\n"
	"  param NB : one_of(16, 32, 64), divides(N), multiple_of(vlen);\n"
	"  param BS : divisor_of(K / KB), range(1, 8);\n"
	"  let MSN = M / MB / MPN, NSN = N / NB / NPN, KSN = K / KB;\n"
	"  layout B : [N/NB, K/KB, KB, NB] packed(4);\n"
	"  tensor acc : f32[NSN, MB, NB];\n"
	"  parallel mpi in 0..MPN, npi in 0..NPN {\n"
	"    for msi in 0..MSN {\n"
	"      let mps = mpi * MSN + msi;\n"
	"      for ks in 0..KSN step BS {\n"
	"        anchor pre_a : A[mps, ks:BS, :, :];\n"
	"        brgemm(A[mps, ks:BS], B[npi*NSN + nsi, ks:BS], acc[nsi], batch = BS, first = ks == 0);\n"
	"      }\n"
	"      anchor post : acc -> C[mps, npi*NSN : NSN, :, :];\n"
	"      if msi % 2 == 0 && !(mps < 1) { acc[0, 0] = -1; } else { fill(acc); }\n"
	"    }\n"
	"  }\n"
	"  cost post { working_set = NSN*MB*NB; calls = MPN*NPN*MSN; }\n"
	"}\n";

/* The kinds of a statement list, as a string of first letters for a compact check. */
static void kinds(const struct hgc_ast *n, char *out)
{
	static const char *names[] = {
#define X(k) #k,
		HGC_AST_LIST(X)
#undef X
	};

	for (*out = 0; n; n = n->next) {
		strcat(out, names[n->kind]);
		strcat(out, n->next ? " " : "");
	}
}

static void test_template(void)
{
	struct hgc_arena arena;
	struct hgc_diag d;
	struct hgc_ast *items = NULL, *t, *n;
	struct hgc_program p;
	char buf[512];

	hgc_arena_init(&arena);
	hgc_diag_init(&d);
	is_int(hgc_dsl_parse(&arena, "t.hgc", sketch, strlen(sketch), &d, &items), 0,
	       "template: the DESIGN.md sketch parses");
	t = items;
	ok(t && t->kind == HGC_AST_TEMPLATE && hgc_dsl_tok_is(&t->tok, "matmul_core") &&
		   hgc_dsl_tok_is(&t->a->tok, "matmul"),
	   "template: name and op");
	ok(t && t->b && hgc_dsl_tok_is(&t->b->tok, "A") && t->b->b->kind == HGC_AST_NAME &&
		   t->b->next && t->b->next->a && hgc_dsl_tok_is(&t->b->next->a->tok, "u8") &&
		   t->c && hgc_dsl_tok_is(&t->c->tok, "C") && t->c->b->next,
	   "template: operands, dtype and result with dims");
	kinds(t ? t->d : NULL, buf);
	is_str(buf, "PARAM PARAM PARAM PARAM LET LAYOUT TENSOR PARALLEL COST", "template: body statements");
	n = t ? t->d->next->next->next : NULL;	/* param BS */
	ok(n && n->b->kind == HGC_AST_CONSTRAINT && n->b->op == HGC_TK_DIVISOR_OF &&
		   n->b->a->kind == HGC_AST_BINARY && n->b->a->op == HGC_TK_SLASH &&
		   n->b->next->op == HGC_TK_RANGE,
	   "template: constraints with expressions");
	n = t ? t->d->next->next->next->next->next : NULL;	/* layout */
	ok(n && n->b && n->b->kind == HGC_AST_PACKED && n->b->a && n->b->a->kind == HGC_AST_INT,
	   "template: packed layout");
	n = t ? t->d->next->next->next->next->next->next->next : NULL;	/* parallel */
	ok(n && n->a->next && hgc_dsl_tok_is(&n->a->next->tok, "npi") && n->b->kind == HGC_AST_FOR,
	   "template: parallel over two indices");
	n = n ? n->b->b : NULL;	/* body of for msi */
	kinds(n, buf);
	is_str(buf, "LET FOR ANCHOR IF", "template: nested statements");
	ok(n && n->next->a->c && hgc_dsl_tok_is(&n->next->a->c->tok, "BS"), "template: for with step");
	ok(n && n->next->next->b && n->next->next->b->kind == HGC_AST_INDEX,
	   "template: anchor with a target slice");
	ok(n && n->next->next->next->c && n->next->next->next->c->kind == HGC_AST_EVAL,
	   "template: if with else");
	n = n ? n->next->b->next : NULL;	/* brgemm call */
	ok(n && n->kind == HGC_AST_EVAL && n->a->a->kind == HGC_AST_INDEX &&
		   n->a->a->a->next->op == 1 && n->a->a->next->next->next->kind == HGC_AST_NAMED,
	   "template: call with slices and named arguments");
	hgc_arena_release(&arena);
	hgc_diag_release(&d);

	load(&p, &d, sketch);
	ok(strstr(hgc_diag_text(&d), "test.hgc:5:34: error: parameter 'BS' has two domains: "
					"divisor_of(K / KB) and range(1, 8)") &&
		   !strstr(hgc_diag_text(&d), "template blocks are not supported"),
	   "template: the sketch is checked (dsl/template.c), its errors reported");
	done(&p, &d);
}

static void test_load_errors(void)
{
	struct hgc_program p;
	struct hgc_diag d;
	int rc;

	rc = load(&p, &d,
		  "spec ok1 { input a : f32[2]; b = ReLU(a); output b; }\n"
		  "spec bad { input a : f32[2]; b = ReLU(q); output b; }\n");
	ok(rc == -1 && p.specs.len == 1 && !strcmp(HGC_PROGRAM_SPEC(&p, 0)->name, "ok1"),
	   "a spec with errors is left out, the good one stays");
	rc = hgc_program_load_string(&p, "more.hgc",
				     "spec ok2 { input a : f32[2]; b = ReLU(a); output b; }\n", &d);
	ok(rc == 0 && p.specs.len == 2, "a later load succeeds on its own");
	rc = hgc_program_load_string(&p, "again.hgc",
				     "spec ok1 { input a : f32[2]; b = ReLU(a); output b; }\n", &d);
	ok(rc == -1 && strstr(hgc_diag_text(&d), "again.hgc:1:6: error: redefinition of spec 'ok1'") &&
		   strstr(hgc_diag_text(&d), "test.hgc:1:6: note: previous definition"),
	   "duplicate spec across loads, with a note in the other file");
	done(&p, &d);
	hgc_program_init(&p);
	hgc_diag_init(&d);
	rc = hgc_program_load(&p, "t/dsl/no-such-file.hgc", &d);
	ok(rc == -1 && strstr(hgc_diag_text(&d), "cannot open 't/dsl/no-such-file.hgc'"),
	   "missing top-level file");
	done(&p, &d);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/hgc-030-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_lexer();
	test_doc_example();
	test_configs();
	test_includes();
	test_generators();
	test_npy();
	test_golden_negative();
	test_fallback_and_graph_block();
	test_template();
	test_load_errors();
	if (!getenv("HGC_KEEP_TMP")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			diag("could not remove %s", tmpdir);
	}
	return done_testing();
}
