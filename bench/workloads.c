/*
 * workloads.c: what `make bench` measures.  Square matmuls, the benchdnn
 * matmul shape files, the DLRM MLP layers of WORKLOADS.md, in f32 and int8;
 * the benchdnn ResNet-50 convolutions in f32 with a reduced batch; the MLP,
 * attention and LayerNorm subgraphs of issue 5, loaded from the spec files
 * the test suite also runs (one definition for both).
 */
#include "bench/bench.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Square matmul sizes. */
static const int64_t squares[] = {256, 512, 1024, 2048};

/* benchdnn matmul shape files under the anchors, with the set name used in rows. */
static const struct {
	const char *set, *file;
} mm_files[] = {
	{"bert", "benchdnn-shapes/matmul/shapes_bert"},
	{"bert_large", "benchdnn-shapes/matmul/shapes_bert_large"},
	{"transformer", "benchdnn-shapes/matmul/shapes_transformer"},
	{"wd", "benchdnn-shapes/matmul/shapes_converted_ip_inf_lb_wd"},
};

static const char conv_file[] = "benchdnn-shapes/conv/shapes_resnet_50";

/* DLRM MLPs (GC tests): layer widths, run at the training and inference batch. */
static const int64_t dlrm_bottom[] = {13, 512, 256, 128};
static const int64_t dlrm_top[] = {479, 1024, 1024, 512, 256, 1};
static const int64_t dlrm_batch[] = {128, 1};

/*
 * The subgraph rows: row name, spec file (relative to the repository) and
 * spec name (NULL: the row name).  Files under bench/specs/ hold the specs
 * too large for the routine check (docs/language.md), each the graph of a
 * smaller spec under spec/ that the suite checks against the interpreter
 * (t/071 checks that); the rows from spec/ are checked there themselves.
 */
static const struct {
	const char *row, *file, *spec;
} graph_rows[] = {
	{"mlp_dlrm_bottom_b32", "spec/models/dlrm.hgc", "dlrm_bottom_mlp_b32"},
	{"mlp_dlrm_bottom_b128", "spec/demo/mlp.hgc", "dlrm_bottom_mlp_b128"},
	{"mlp_dlrm_bottom_b512", "bench/specs/mlp_large.hgc", NULL},
	{"mlp_dlrm_top_b32", "bench/specs/mlp_large.hgc", NULL},
	{"mlp_dlrm_top_b128", "bench/specs/mlp_large.hgc", NULL},
	{"mlp_dlrm_top_b512", "bench/specs/mlp_large.hgc", NULL},
	{"mlp_bert_ffn_s128", "spec/models/mlp.hgc", NULL},
	{"mlp_bert_ffn_s512", "bench/specs/mlp_large.hgc", NULL},
	{"mha_bert_base_b1_s128", "spec/models/mha.hgc", NULL},
	{"mha_bert_base_b32_s128", "bench/specs/mha_large.hgc", NULL},
	{"mha_bert_large_b1_s384", "bench/specs/mha_large.hgc", NULL},
	{"mha_bert_large_b32_s384", "bench/specs/mha_large.hgc", NULL},
	{"layernorm_bert_base_b1_s128", "spec/models/layernorm.hgc", NULL},
	{"layernorm_bert_base_b32_s128", "bench/specs/layernorm_large.hgc", NULL},
	{"layernorm_bert_large_b32_s384", "bench/specs/layernorm_large.hgc", NULL},
};

/* The spec files loaded so far (each once), released by hgc_bench_specs_release. */
static struct hgc_vec programs;		/* struct hgc_program * */

/* The --quick subset, by row name. */
static const char *const quick_rows[] = {
	"matmul_256x256x256", "matmul_1024x1024x1024", "matmul_bert_b12_128x64x128",
	"matmul_wd_512x845x1024", "matmul_dlrm_128x479x1024", "matmul_int8_1024x1024x1024",
	"matmul_int8_dlrm_128x479x1024", "conv_conv1", "conv_res2a_branch2b",
	"conv_res3a_branch1", "mlp_dlrm_top_b128", "mha_bert_base_b1_s128",
};

/* Where the workloads go while the list is built. */
struct list {
	const struct hgc_bench_opts *o;
	struct hgc_arena *a;
	struct hgc_vec *out;		/* of struct hgc_bench_work */
};

/* Number of dst matrices of a matmul (product of the batch dims). */
int64_t hgc_bench_mm_batch(const struct hgc_bench_matmul *mm)
{
	int64_t b = 1;
	int i;

	for (i = 0; i < mm->ndims - 2; i++)
		b *= mm->dst[i];
	return b;
}

/* For dst matrix b, the src and weights matrices it reads (broadcast dims of 1). */
void hgc_bench_mm_operands(const struct hgc_bench_matmul *mm, int64_t b, int64_t *src_b,
			   int64_t *wei_b)
{
	int64_t s = 0, w = 0, rest = b, idx, inner = hgc_bench_mm_batch(mm);
	int i;

	for (i = 0; i < mm->ndims - 2; i++) {
		inner /= mm->dst[i];
		idx = rest / inner;
		rest %= inner;
		s = s * mm->src[i] + (mm->src[i] == 1 ? 0 : idx);
		w = w * mm->wei[i] + (mm->wei[i] == 1 ? 0 : idx);
	}
	*src_b = s;
	*wei_b = w;
}

/* 2 x multiply-adds of a problem. */
double hgc_bench_flops(const struct hgc_bench_shape *s)
{
	const struct hgc_bench_matmul *m = &s->mm;
	const struct hgc_bench_conv *c = &s->conv;

	if (s->kind == HGC_BENCH_GRAPH)
		return 0;	/* hgc_bench_graph_flops counts a graph's */
	if (s->kind == HGC_BENCH_MATMUL)
		return 2.0 * (double)hgc_bench_mm_batch(m) * (double)m->src[m->ndims - 2] *
		       (double)m->src[m->ndims - 1] * (double)m->wei[m->ndims - 1];
	return 2.0 * (double)c->mb * (double)c->oc * (double)c->oh * (double)c->ow *
	       (double)(c->ic / c->g) * (double)c->kh * (double)c->kw;
}

/* True when name is in the quick subset. */
static int is_quick(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(quick_rows) / sizeof(quick_rows[0]); i++)
		if (!strcmp(quick_rows[i], name))
			return 1;
	return 0;
}

/* Append a workload unless filtered out or already there. */
static void add(struct list *l, const char *name, const char *set, enum hgc_bench_dtype dt,
		const struct hgc_bench_shape *s, int64_t file_mb)
{
	struct hgc_bench_work *w;
	size_t i;

	if (l->o->filter && !strstr(name, l->o->filter))
		return;
	if (l->o->quick && !is_quick(name))
		return;
	for (i = 0; i < l->out->len; i++)
		if (!strcmp(HGC_VEC_AT(l->out, struct hgc_bench_work, i).name, name))
			return;
	w = hgc_vec_push(l->out);
	w->name = name;
	w->dt = dt;
	w->shape = *s;
	w->shape_text = hgc_bench_shape_text(s, l->a);
	w->file_mb = file_mb;
	w->flops = hgc_bench_flops(s);
	w->quick = is_quick(name);
	w->set = set;
}

/* Add a matmul in one data type: "matmul[_int8][_set]_[b<batch>_]MxKxN". */
static void add_mm(struct list *l, const char *set, enum hgc_bench_dtype dt,
		   const struct hgc_bench_shape *s)
{
	const struct hgc_bench_matmul *m = &s->mm;
	const char *batch = "";
	int i, n = m->ndims;

	for (i = 0; i < n - 2; i++)
		batch = hgc_arena_printf(l->a, "%s%s%lld", batch, i ? "x" : "b",
					 (long long)m->dst[i]);
	add(l, hgc_arena_printf(l->a, "matmul%s%s%s%s%s_%lldx%lldx%lld",
				dt == HGC_BENCH_INT8 ? "_int8" : "", *set ? "_" : "", set,
				*batch ? "_" : "", batch, (long long)m->src[n - 2],
				(long long)m->src[n - 1], (long long)m->wei[n - 1]),
	    hgc_arena_printf(l->a, "matmul%s_%s", dt == HGC_BENCH_INT8 ? "_int8" : "",
			     *set ? set : "square"),
	    dt, s, 0);
}

/* A 2-D matmul problem M x K x N. */
static struct hgc_bench_shape mm2(int64_t m, int64_t k, int64_t n)
{
	struct hgc_bench_shape s = {.kind = HGC_BENCH_MATMUL};

	s.mm.ndims = 2;
	s.mm.src[0] = s.mm.dst[0] = m;
	s.mm.src[1] = s.mm.wei[0] = k;
	s.mm.wei[1] = s.mm.dst[1] = n;
	return s;
}

/* The layers of one DLRM MLP at one batch. */
static void add_mlp(struct list *l, enum hgc_bench_dtype dt, const int64_t *w, size_t n)
{
	struct hgc_bench_shape s;
	size_t b, i;

	for (b = 0; b < sizeof(dlrm_batch) / sizeof(dlrm_batch[0]); b++)
		for (i = 0; i + 1 < n; i++) {
			s = mm2(dlrm_batch[b], w[i], w[i + 1]);
			add_mm(l, "dlrm", dt, &s);
		}
}

/* Every matmul in one data type; files[i] holds the problems of mm_files[i]. */
static void add_matmuls(struct list *l, enum hgc_bench_dtype dt, const struct hgc_vec *files)
{
	struct hgc_bench_shape s;
	size_t i, j;

	for (i = 0; i < sizeof(squares) / sizeof(squares[0]); i++) {
		s = mm2(squares[i], squares[i], squares[i]);
		add_mm(l, "", dt, &s);
	}
	for (i = 0; i < sizeof(mm_files) / sizeof(mm_files[0]); i++)
		for (j = 0; j < files[i].len; j++)
			add_mm(l, mm_files[i].set, dt,
			       &HGC_VEC_AT(&files[i], struct hgc_bench_shape, j));
	add_mlp(l, dt, dlrm_bottom, sizeof(dlrm_bottom) / sizeof(dlrm_bottom[0]));
	add_mlp(l, dt, dlrm_top, sizeof(dlrm_top) / sizeof(dlrm_top[0]));
}

/* "resnet_50:res2a_branch2b*3" -> "conv_res2a_branch2b" (the *N count dropped). */
static const char *conv_name(struct hgc_arena *a, const struct hgc_bench_shape *s)
{
	const char *n = s->name, *colon, *star;

	if (!n)
		return hgc_arena_printf(a, "conv_line%d", s->loc.line);
	colon = strrchr(n, ':');
	if (colon)
		n = colon + 1;
	star = strchr(n, '*');
	return hgc_arena_printf(a, "conv_%.*s", (int)(star ? star - n : (long)strlen(n)), n);
}

/* The ResNet-50 convolutions, batch cut to o->conv_mb. */
static int add_convs(struct list *l, struct hgc_diag *d)
{
	struct hgc_bench_shape s;
	struct hgc_vec v;
	size_t j;
	int r;

	hgc_vec_init(&v, sizeof(struct hgc_bench_shape));
	r = hgc_bench_load_file(HGC_BENCH_CONV,
				hgc_arena_printf(l->a, "%s/%s", l->o->anchors, conv_file), l->a, &v, d);
	for (j = 0; j < v.len; j++) {
		s = HGC_VEC_AT(&v, struct hgc_bench_shape, j);
		if (s.conv.mb > l->o->conv_mb)
			s.conv.mb = l->o->conv_mb;
		add(l, conv_name(l->a, &s), "conv", HGC_BENCH_F32, &s,
		    HGC_VEC_AT(&v, struct hgc_bench_shape, j).conv.mb);
	}
	hgc_vec_release(&v);
	return r < 0 ? -1 : 0;
}

/* 2 x multiply-adds of the MatMul ops of g (the other ops count as nothing). */
double hgc_bench_graph_flops(const struct hgc_graph *g)
{
	double f = 0;
	size_t i;

	for (i = 0; i < g->ops.len; i++) {
		const struct hgc_op *op = HGC_GRAPH_OP(g, i);
		const struct hgc_tensor *o = op->out[0], *a = op->in[0];

		if (op->kind == HGC_OP_MATMUL)
			f += 2.0 * (double)hgc_tensor_nelems(o) *
			     (double)a->dims[a->ndims - 1 - hgc_op_bool(op, "transpose_a")];
	}
	return f;
}

/* True when dir/spec/models and dir/bench/specs are directories. */
static int is_root(struct hgc_arena *a, const char *dir)
{
	struct stat st;

	return !stat(hgc_arena_printf(a, "%s/spec/models", dir), &st) && S_ISDIR(st.st_mode) &&
	       !stat(hgc_arena_printf(a, "%s/bench/specs", dir), &st) && S_ISDIR(st.st_mode);
}

/* Walk up from dir looking for the repository. */
static const char *root_above(struct hgc_arena *a, const char *dir)
{
	char *p = hgc_arena_strdup(a, dir), *slash;
	int level;

	for (level = 0; level < 6 && *p; level++) {
		if (is_root(a, p))
			return p;
		slash = strrchr(p, '/');
		if (!slash)
			break;
		*slash = 0;
	}
	return NULL;
}

/* The repository holding spec/ and bench/specs/: $HGC_ROOT, else looked for
   above the working directory and above the executable.  NULL when not found. */
const char *hgc_bench_find_root(struct hgc_arena *a)
{
	const char *env = getenv("HGC_ROOT"), *found;
	char buf[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	if (getcwd(buf, sizeof(buf)) && (found = root_above(a, buf)))
		return found;
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return root_above(a, buf);
}

/* The program of path, loaded on first use; NULL with d set. */
static const struct hgc_program *program(const char *path, struct hgc_diag *d)
{
	struct hgc_program *p;
	char real[PATH_MAX];
	size_t i;

	if (!programs.elem)
		hgc_vec_init(&programs, sizeof(struct hgc_program *));
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (i = 0; i < programs.len; i++) {
		p = HGC_VEC_AT(&programs, struct hgc_program *, i);
		if (!strcmp(HGC_VEC_AT(&p->files, const char *, 0), real))
			return p;	/* files[0]: the canonical path of the file loaded */
	}
	p = hgc_xcalloc(1, sizeof(*p));
	hgc_program_init(p);
	if (hgc_program_load(p, path, d) < 0) {
		hgc_program_release(p);
		free(p);
		return NULL;
	}
	*(struct hgc_program **)hgc_vec_push(&programs) = p;
	return p;
}

/* Free every program loaded for the graph rows. */
void hgc_bench_specs_release(void)
{
	size_t i;

	for (i = 0; i < programs.len; i++) {
		hgc_program_release(HGC_VEC_AT(&programs, struct hgc_program *, i));
		free(HGC_VEC_AT(&programs, struct hgc_program *, i));
	}
	if (programs.elem)
		hgc_vec_release(&programs);
	memset(&programs, 0, sizeof(programs));
}

/* The spec called name in path; NULL with d set. */
const struct hgc_spec *hgc_bench_find_spec(const char *path, const char *name, struct hgc_diag *d)
{
	const struct hgc_program *p = program(path, d);
	size_t i;

	for (i = 0; p && i < p->specs.len; i++)
		if (!strcmp(HGC_PROGRAM_SPEC(p, i)->name, name) && HGC_PROGRAM_SPEC(p, i)->graph)
			return HGC_PROGRAM_SPEC(p, i);
	if (p)
		hgc_error(d, NULL, "%s: no spec called %s", path, name);
	return NULL;
}

/* One subgraph row from its spec. */
static int add_graph(struct list *l, size_t i, struct hgc_diag *d)
{
	const char *name = graph_rows[i].row, *file = graph_rows[i].file;
	const struct hgc_spec *sp;
	struct hgc_bench_shape s = {.kind = HGC_BENCH_GRAPH, .name = name};
	struct hgc_bench_work *w;
	size_t before = l->out->len;

	if ((l->o->filter && !strstr(name, l->o->filter)) || (l->o->quick && !is_quick(name)))
		return 0;
	if (!l->o->root)
		return hgc_error(d, NULL, "cannot find the repository (spec/ and bench/specs/): "
				 "set HGC_ROOT");
	sp = hgc_bench_find_spec(hgc_arena_printf(l->a, "%s/%s", l->o->root, file),
		       graph_rows[i].spec ? graph_rows[i].spec : name, d);
	if (!sp)
		return -1;
	add(l, name, hgc_arena_strndup(l->a, name, strcspn(name, "_")), HGC_BENCH_F32, &s, 0);
	if (l->out->len == before)
		return 0;
	w = &HGC_VEC_AT(l->out, struct hgc_bench_work, l->out->len - 1);
	w->spec_file = file;
	w->spec = sp;
	w->large = !strncmp(file, "bench/", 6);
	w->flops = hgc_bench_graph_flops(sp->graph);
	w->shape_text = hgc_arena_printf(l->a, "%s:%s", file, sp->name);
	return 0;
}

/*
 * Build the list of workloads (struct hgc_bench_work) that pass the
 * options' filter and quick flag.  -1 with the diag set when a shape file
 * is missing or bad.
 */
int hgc_bench_workloads(const struct hgc_bench_opts *o, struct hgc_arena *a,
			struct hgc_vec *out, struct hgc_diag *d)
{
	enum { NFILES = sizeof(mm_files) / sizeof(mm_files[0]) };
	struct list l = {o, a, out};
	struct hgc_vec files[NFILES];
	int bad = 0, i;

	for (i = 0; i < NFILES; i++) {
		hgc_vec_init(&files[i], sizeof(struct hgc_bench_shape));
		bad |= hgc_bench_load_file(HGC_BENCH_MATMUL,
					   hgc_arena_printf(a, "%s/%s", o->anchors, mm_files[i].file),
					   a, &files[i], d) < 0;
	}
	add_matmuls(&l, HGC_BENCH_F32, files);
	add_matmuls(&l, HGC_BENCH_INT8, files);
	for (i = 0; i < NFILES; i++)
		hgc_vec_release(&files[i]);
	bad |= add_convs(&l, d) < 0;
	for (i = 0; i < (int)(sizeof(graph_rows) / sizeof(graph_rows[0])); i++)
		bad |= add_graph(&l, (size_t)i, d) < 0;
	return bad ? -1 : 0;
}
