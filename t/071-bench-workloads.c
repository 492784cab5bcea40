/*
 * 071-bench-workloads: the subgraph rows of the benchmark harness without
 * timing anything: the workload list (names, sets, the --quick subset, the
 * spec each row loads, flops), the repository lookup and its errors, and a
 * graph row's buffers, reference samples and check.
 */
#include "bench/bench.h"
#include "t/tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct hgc_arena arena;

/* The workloads for filter (quick or not) under root; -1 and diag text in err. */
static int list(const char *root, const char *filter, int quick, struct hgc_vec *out, char *err,
		size_t n)
{
	struct hgc_bench_opts o = {.filter = filter, .quick = quick, .conv_mb = 4};
	struct hgc_diag d;
	int r;

	o.anchors = hgc_bench_find_anchors(&arena);
	o.root = root;
	hgc_vec_init(out, sizeof(struct hgc_bench_work));
	hgc_diag_init(&d);
	r = hgc_bench_workloads(&o, &arena, out, &d);
	snprintf(err, n, "%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return r;
}

/* The row called name in v, or NULL. */
static const struct hgc_bench_work *row(const struct hgc_vec *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->len; i++)
		if (!strcmp(HGC_VEC_AT(v, struct hgc_bench_work, i).name, name))
			return &HGC_VEC_AT(v, struct hgc_bench_work, i);
	return NULL;
}

/* Rows whose name starts with prefix. */
static int count_prefix(const struct hgc_vec *v, const char *prefix)
{
	size_t i;
	int n = 0;

	for (i = 0; i < v->len; i++)
		n += !strncmp(HGC_VEC_AT(v, struct hgc_bench_work, i).name, prefix, strlen(prefix));
	return n;
}

/* The subgraph rows: names, sets, specs, flops, large flags. */
static void test_list(const char *root)
{
	struct hgc_vec v;
	const struct hgc_bench_work *w;
	char err[1024];
	double top = 2.0 * 128 * (479 * 1024 + 1024 * 1024 + 1024 * 512 + 512 * 256 + 256 * 1);

	is_int(list(root, "mlp_", 0, &v, err, sizeof(err)), 0, "the mlp rows load");
	is_int((int)v.len, 8, "8 mlp rows");
	w = row(&v, "mlp_dlrm_top_b128");
	ok(w && w->shape.kind == HGC_BENCH_GRAPH && !strcmp(w->set, "mlp"),
	   "mlp_dlrm_top_b128: a graph in set mlp");
	ok(w && w->large && !strcmp(w->spec_file, "bench/specs/mlp_large.hgc"),
	   "it comes from bench/specs/ (too large for the routine check)");
	ok(w && w->spec && w->spec->graph && w->spec->graph->ops.len == 10,
	   "its spec: 5 MatMul, 4 ReLU, 1 Sigmoid");
	is_near(w ? w->flops : 0, top, 0.5, "flops: 2 x the multiply-adds of its 5 layers");
	w = row(&v, "mlp_dlrm_bottom_b32");
	ok(w && !w->large && w->spec && !strcmp(w->spec->name, "dlrm_bottom_mlp_b32"),
	   "mlp_dlrm_bottom_b32 runs the existing spec dlrm_bottom_mlp_b32");
	ok(w && !strcmp(w->shape_text, "spec/models/dlrm.hgc:dlrm_bottom_mlp_b32"),
	   "its shape text names file and spec");
	ok(row(&v, "mlp_dlrm_top_b32") && row(&v, "mlp_bert_ffn_s512") &&
	   row(&v, "mlp_dlrm_top_b32")->spec->file == row(&v, "mlp_bert_ffn_s512")->spec->file,
	   "two rows of one file share one loaded program");
	hgc_vec_release(&v);

	is_int(list(root, "mha_", 0, &v, err, sizeof(err)), 0, "the mha rows load");
	is_int((int)v.len, 4, "4 mha rows");
	w = row(&v, "mha_bert_large_b32_s384");
	is_near(w ? w->flops : 0, 2.0 * 2 * 32 * 16 * 384 * 384 * 64, 0.5,
		"batch 32, seq 384: about 19.3 GFLOP");
	ok(w && w->large && w->flops > HGC_BENCH_INTERP_MAX_FLOPS, "large, and checked against oneDNN");
	hgc_vec_release(&v);

	is_int(list(root, "layernorm_", 0, &v, err, sizeof(err)), 0, "the layernorm rows load");
	is_int((int)v.len, 3, "3 layernorm rows");
	ok(v.len && HGC_VEC_AT(&v, struct hgc_bench_work, 0).flops == 0,
	   "a LayerNorm has no MatMul flops");
	hgc_vec_release(&v);

	is_int(list(root, NULL, 1, &v, err, sizeof(err)), 0, "the --quick list loads");
	is_int(count_prefix(&v, "mlp_"), 1, "--quick: one mlp row");
	is_int(count_prefix(&v, "mha_"), 1, "--quick: one mha row");
	w = row(&v, "matmul_int8_1024x1024x1024");
	ok(w && !strcmp(w->set, "matmul_int8_square"), "matmul sets: matmul_int8_square");
	ok(row(&v, "conv_conv1") && !strcmp(row(&v, "conv_conv1")->set, "conv"), "conv rows: set conv");
	hgc_vec_release(&v);
}

/* Same op kinds in the same order, same input ranks and dtypes. */
static int same_graph(const struct hgc_graph *a, const struct hgc_graph *b)
{
	size_t i;

	if (a->ops.len != b->ops.len || a->inputs.len != b->inputs.len)
		return 0;
	for (i = 0; i < a->ops.len; i++)
		if (HGC_GRAPH_OP(a, i)->kind != HGC_GRAPH_OP(b, i)->kind)
			return 0;
	for (i = 0; i < a->inputs.len; i++)
		if (HGC_GRAPH_INPUT(a, i)->ndims != HGC_GRAPH_INPUT(b, i)->ndims ||
		    HGC_GRAPH_INPUT(a, i)->dtype != HGC_GRAPH_INPUT(b, i)->dtype ||
		    HGC_GRAPH_INPUT(a, i)->prop != HGC_GRAPH_INPUT(b, i)->prop)
			return 0;
	return 1;
}

/* The spec name in file (relative to root), loaded into p; NULL if absent. */
static const struct hgc_spec *suite_spec(struct hgc_program *p, const char *root,
					 const char *file, const char *name)
{
	struct hgc_diag d;
	size_t i;

	hgc_diag_init(&d);
	hgc_program_init(p);
	hgc_program_load(p, hgc_arena_printf(&arena, "%s/%s", root, file), &d);
	hgc_diag_release(&d);
	for (i = 0; i < p->specs.len; i++)
		if (!strcmp(HGC_PROGRAM_SPEC(p, i)->name, name))
			return HGC_PROGRAM_SPEC(p, i);
	return NULL;
}

/* Every spec under bench/specs/ is the graph of a smaller one the suite checks. */
static void test_large(const char *root)
{
	static const char *const pairs[][3] = {
		{"mlp_dlrm_top_b32", "spec/models/dlrm.hgc", "dlrm_top_mlp_b16"},
		{"mlp_dlrm_top_b128", "spec/models/dlrm.hgc", "dlrm_top_mlp_b16"},
		{"mlp_dlrm_top_b512", "spec/models/dlrm.hgc", "dlrm_top_mlp_b16"},
		{"mlp_dlrm_bottom_b512", "spec/demo/mlp.hgc", "dlrm_bottom_mlp_b128"},
		{"mlp_bert_ffn_s512", "spec/models/mlp.hgc", "mlp_bert_ffn_s128"},
		{"mha_bert_large_b1_s384", "spec/models/mha.hgc", "mha_bert_base_b1_s128"},
		{"mha_bert_base_b32_s128", "spec/models/mha.hgc", "mha_bert_base_b1_s128"},
		{"mha_bert_large_b32_s384", "spec/models/mha.hgc", "mha_bert_base_b1_s128"},
		{"layernorm_bert_base_b32_s128", "spec/models/layernorm.hgc",
		 "layernorm_bert_base_b1_s128"},
		{"layernorm_bert_large_b32_s384", "spec/models/layernorm.hgc",
		 "layernorm_bert_base_b1_s128"},
	};
	enum { NPAIRS = sizeof(pairs) / sizeof(pairs[0]) };
	const struct hgc_bench_work *big;
	const struct hgc_spec *small;
	struct hgc_program p;
	struct hgc_vec v;
	char err[1024];
	size_t i;
	int nlarge = 0;

	is_int(list(root, "_", 0, &v, err, sizeof(err)), 0, "every row loads");
	for (i = 0; i < v.len; i++)
		nlarge += HGC_VEC_AT(&v, struct hgc_bench_work, i).large;
	is_int(nlarge, NPAIRS, "%d rows from bench/specs/", NPAIRS);
	for (i = 0; i < NPAIRS; i++) {
		big = row(&v, pairs[i][0]);
		small = suite_spec(&p, root, pairs[i][1], pairs[i][2]);
		ok(big && small && big->large && small->graph &&
		   same_graph(big->spec->graph, small->graph),
		   "%s: the graph of %s, which the suite checks", pairs[i][0], pairs[i][2]);
		hgc_program_release(&p);
	}
	big = row(&v, "mlp_dlrm_top_b128");
	ok(big && row(&v, "mlp_dlrm_bottom_b128") &&
	   !same_graph(big->spec->graph, row(&v, "mlp_dlrm_bottom_b128")->spec->graph),
	   "the comparison tells the top MLP from the bottom one");
	hgc_vec_release(&v);
}

/* Without the repository, or in the wrong one: errors, not a crash. */
static void test_errors(void)
{
	struct hgc_vec v;
	char err[1024];

	is_int(list(NULL, "mlp_dlrm_top_b32", 0, &v, err, sizeof(err)), -1, "no repository: an error");
	ok(strstr(err, "cannot find the repository") && strstr(err, "HGC_ROOT"),
	   "says to set HGC_ROOT");
	hgc_vec_release(&v);
	is_int(list("/nonexistent", "mha_bert_base_b1", 0, &v, err, sizeof(err)), -1,
	       "a wrong root: an error");
	ok(strstr(err, "/nonexistent/spec/models/mha.hgc"), "names the spec file");
	is_int((int)v.len, 0, "and no row");
	hgc_vec_release(&v);
	is_int(list(NULL, "matmul_256x256x256", 0, &v, err, sizeof(err)), 0,
	       "no repository is fine when no graph row is asked for");
	hgc_vec_release(&v);
}

/* A graph row's buffers, interpreter reference and check. */
static void test_io(const char *root)
{
	struct hgc_vec v;
	struct hgc_bench_io io;
	struct hgc_diag d;
	const struct hgc_bench_work *w;
	char err[1024];
	float *y;

	list(root, "mha_bert_base_b1_s128", 0, &v, err, sizeof(err));
	w = row(&v, "mha_bert_base_b1_s128");
	ok(w != NULL, "mha_bert_base_b1_s128 is a row");
	if (!w)
		return;
	hgc_bench_io_init(&io, w);
	is_int(io.nin, 5, "5 graph inputs: q, kt, v, mask, scale");
	is_int(io.nout, 1, "one output");
	ok(io.dst == io.out[0] && io.dst_bytes == 12 * 128 * 64 * 4, "dst is output 0");
	is_near(((float *)io.in[4])[0], 0.125, 0, "the scale constant made by its generator");
	hgc_diag_init(&d);
	is_int(hgc_bench_io_graph_ref(&io, w, &d), 0, "the interpreter gives the reference");
	is_str(io.ref_from, "interpreter", "and says so");
	ok(hgc_interp_run(w->spec->graph, (const void *const *)io.in, io.out, &d) == 0,
	   "the interpreter's output as dst");
	is_int(hgc_bench_io_check(&io, w, &d), 0, "passes the check");
	y = io.dst;
	y[io.sample_at[5]] += 1e-2f;
	is_int(hgc_bench_io_check(&io, w, &d), -1, "one sampled output off by 1e-2 fails");
	ok(strstr(hgc_diag_text(&d), "mha_bert_base_b1_s128: dst element"), "says which element");
	hgc_diag_release(&d);
	hgc_diag_init(&d);
	hgc_bench_io_poison(&io);
	is_int(hgc_bench_io_check(&io, w, &d), -1, "a poisoned dst fails");
	ok(strstr(hgc_diag_text(&d), "64 of 64 sampled outputs are wrong"), "every sample is wrong");
	hgc_diag_release(&d);
	hgc_bench_io_release(&io);
	hgc_vec_release(&v);
}

int main(void)
{
	const char *root;

	hgc_arena_init(&arena);
	root = hgc_bench_find_root(&arena);
	ok(root != NULL, "the repository is found (else set HGC_ROOT)");
	if (root) {
		test_list(root);
		test_large(root);
		test_io(root);
	}
	test_errors();
	hgc_bench_specs_release();
	hgc_arena_release(&arena);
	return done_testing();
}
