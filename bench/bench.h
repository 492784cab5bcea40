/*
 * bench.h: the benchmark harness that measures hgc against its peers
 * (oneDNN primitives, OpenBLAS sgemm) in one process, as ratios.
 *
 * A workload is a matmul or a convolution in one data type, or a subgraph
 * (an MLP, an attention core, a LayerNorm) loaded from a spec file.  Every peer
 * sees the same inputs in plain layouts (struct hgc_bench_io) and turns a
 * workload into a kernel: a closure the harness warms up, times (median of
 * repeated runs) and checks against a naive reference on sampled outputs.
 * A peer is a table of prepare functions, one per workload kind; adding a
 * backend (the hgc JIT) is one function per kind in that table.
 */
#ifndef HGC_BENCH_H
#define HGC_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/util/util.h"
#include "dsl/dsl.h"

/* Workload kinds; ORDER: the prepare tables of every peer are indexed by it. */
enum hgc_bench_kind {
	HGC_BENCH_MATMUL,
	HGC_BENCH_CONV,
	HGC_BENCH_GRAPH,	/* a spec's graph (struct hgc_bench_work.spec) */
	HGC_BENCH_NKINDS
};

/* Data types of a workload. */
enum hgc_bench_dtype {
	HGC_BENCH_F32,		/* f32 x f32 -> f32 */
	HGC_BENCH_INT8,		/* u8 x s8 -> u8, s32 accumulation, per-column scales */
};

#define HGC_BENCH_MAX_DIMS 6

/*
 * A matmul: src is [batch..., M, K], weights [batch..., K, N], dst
 * [batch..., M, N], all row-major.  A batch dim of 1 on one side
 * broadcasts against the other.
 */
struct hgc_bench_matmul {
	int ndims;				/* 2 .. HGC_BENCH_MAX_DIMS */
	int64_t src[HGC_BENCH_MAX_DIMS];	/* batch dims, M, K */
	int64_t wei[HGC_BENCH_MAX_DIMS];	/* batch dims, K, N */
	int64_t dst[HGC_BENCH_MAX_DIMS];	/* batch dims, M, N */
};

/* A 2-D convolution in benchdnn terms (dilation 0 means a dense kernel). */
struct hgc_bench_conv {
	int64_t g, mb, ic, oc;		/* groups, batch, total channels */
	int64_t ih, iw, oh, ow;		/* input and output sizes */
	int64_t kh, kw, sh, sw;		/* kernel and strides */
	int64_t ph, pw;			/* top and left padding */
	int64_t pr_h, pr_w;		/* bottom and right padding: may be negative */
	int64_t dh, dw;			/* dilation, 0-based as in oneDNN */
};

/* One problem of a benchdnn shape file. */
struct hgc_bench_shape {
	enum hgc_bench_kind kind;
	const char *name;		/* the n"..." name, or NULL when the line has none */
	struct hgc_loc loc;		/* where the line starts */
	union {
		struct hgc_bench_matmul mm;
		struct hgc_bench_conv conv;
	};
};

/* What the harness measures: one problem in one data type. */
struct hgc_bench_work {
	const char *name;		/* row name: "matmul_1024x1024x1024", "conv_res2a_branch2b" */
	const char *shape_text;		/* the problem as run, in benchdnn syntax */
	enum hgc_bench_dtype dt;
	struct hgc_bench_shape shape;	/* as run (conv batch possibly reduced) */
	int64_t file_mb;		/* conv: mb in the shape file */
	double flops;			/* 2 x multiply-adds */
	int quick;			/* part of the --quick subset */
	const char *set;		/* summary set: "matmul_bert", "matmul_int8_dlrm", "conv", "mlp" ... */
	const char *spec_file;		/* graph: the spec file, relative to the repository */
	const struct hgc_spec *spec;	/* graph: the loaded spec (its graph and generators) */
	int large;			/* graph: outside spec/, too large for the routine check */
};

/*
 * The buffers of one workload, in the plain layouts every peer receives:
 *   matmul: row-major as in struct hgc_bench_matmul; f32, or u8 src, s8
 *           weights, u8 dst = saturate(round(acc * scales[n]));
 *   conv:   src NHWC, dst NHWC, weights HWIO ([kh][kw][ic][oc]) for g = 1,
 *           HWIGO ([kh][kw][ic/g][g][oc/g]) otherwise; f32.
 */
struct hgc_bench_io {
	void *src, *wei, *dst;
	size_t src_bytes, wei_bytes, dst_bytes;
	float *scales;			/* int8: one per output column (N) */
	int nsample;			/* sampled outputs checked after each run */
	int64_t *sample_at;		/* element index into dst of each sample */
	double *sample_ref;		/* reference value of each sample */
	double *sample_tol;		/* allowed absolute error of each sample */
	/* graph: dense buffers of every graph input and output, in graph order;
	   dst and dst_bytes alias output 0, the one that is checked */
	int nin, nout;
	void **in, **out;
	const char *ref_from;		/* graph: where the samples come from ("interpreter" ...) */
};

/*
 * A prepared measurement: the harness times run(ctx), then calls
 * fetch(ctx, io) (when set) to bring the result into io->dst's plain
 * layout before checking it, and release(ctx) at the end.
 */
struct hgc_bench_kernel {
	void (*run)(void *ctx);
	int (*fetch)(void *ctx, const struct hgc_bench_io *io, struct hgc_diag *d);
	void (*release)(void *ctx);
	void *ctx;
	double compile_ms;		/* hgc: graph compile time; peers: primitive creation */
	const char *impl;		/* implementation picked, for the table ("brg:avx512_core") */
};

/* prepare returns 0 with *k filled, HGC_BENCH_NA when the peer cannot run
 * the workload (diag says why), or -1 on a real error (diag set). */
#define HGC_BENCH_NA 1

typedef int (*hgc_bench_prepare_fn)(const struct hgc_bench_work *w,
				    const struct hgc_bench_io *io, struct hgc_bench_kernel *k,
				    struct hgc_diag *d);

/* A column of the table: one implementation of every workload kind it can run. */
struct hgc_bench_peer {
	const char *name;				/* "hgc", "onednn", ... */
	hgc_bench_prepare_fn prepare[HGC_BENCH_NKINDS];	/* NULL: not available */
	void (*begin)(int threads);			/* before a thread-count set */
	void (*end)(void);				/* after it (may be NULL) */
	int apart;	/* threads of its own, not OpenMP's: timed alone, not in the rounds */
};

/* Harness options (main.c). */
struct hgc_bench_opts {
	const char *filter;		/* substring of the row name, or NULL */
	int threads[4], nthreads;	/* thread counts to run */
	int quick;			/* the small subset, shorter timing */
	const char *json;		/* where to write the rows, or NULL */
	const char *anchors;		/* the shared anchors directory */
	const char *root;		/* the repository (spec/, bench/specs/), or NULL */
	int64_t conv_mb;		/* convolution batch as run */
	double budget;			/* seconds of timed runs per measurement */
	int min_iters, max_iters;	/* bounds on timed runs per measurement */
	int fastest;			/* report the fastest run, not the median */
	double (*clock)(void);		/* seconds; NULL: the wall clock (tests set their own) */
};

/*
 * One column of a row in the interleaved rounds (measure.c): the kernel,
 * what to call around each slice of its runs (the peer's begin and end),
 * and what the warm-up and the rounds find.
 */
struct hgc_bench_timing {
	const struct hgc_bench_kernel *k;
	void (*enter)(int threads);	/* before each slice, or NULL */
	void (*leave)(void);		/* after each slice, or NULL */
	int threads;
	double run_s;			/* warm-up: the mean run after the first, s */
	int target;			/* warm-up: timed runs planned */
	int n;				/* timed runs done */
	double *t;			/* their times, s */
	double ms;			/* the figure: median (or fastest) run, ms */
};

/* Peak compute of the machine (peak.c). */
struct hgc_bench_peak {
	double f32_core;		/* GFLOP/s of one core from an FMA loop */
	double i8_core;			/* GOP/s of one core from u8 x s8 dot products */
	double f32_all, i8_all;		/* with the most threads asked for */
	int all_threads;		/* that thread count */
	const char *f32_how;		/* instruction used: "vfmadd231ps zmm" */
	const char *i8_how;		/* "vpdpbusd zmm", or the AVX2 sequence */
};

/* Where a graph's reference samples come from: the interpreter up to this many
   flops, oneDNN's op-by-op result beyond (the interpreter takes minutes there). */
#define HGC_BENCH_INTERP_MAX_FLOPS 4e9

/* shapes.c: benchdnn shape files */
int hgc_bench_parse_line(enum hgc_bench_kind kind, const char *line, const struct hgc_loc *loc,
			 struct hgc_arena *a, struct hgc_bench_shape *out, struct hgc_diag *d);
int hgc_bench_parse_text(enum hgc_bench_kind kind, const char *file, const char *text,
			 struct hgc_arena *a, struct hgc_vec *out, struct hgc_diag *d);
int hgc_bench_load_file(enum hgc_bench_kind kind, const char *path, struct hgc_arena *a,
			struct hgc_vec *out, struct hgc_diag *d);
char *hgc_bench_shape_text(const struct hgc_bench_shape *s, struct hgc_arena *a);
const char *hgc_bench_find_anchors(struct hgc_arena *a);

/* workloads.c: the measured set, its names and sizes */
const char *hgc_bench_find_root(struct hgc_arena *a);
int hgc_bench_workloads(const struct hgc_bench_opts *o, struct hgc_arena *a,
			struct hgc_vec *out, struct hgc_diag *d);
int64_t hgc_bench_mm_batch(const struct hgc_bench_matmul *mm);
void hgc_bench_mm_operands(const struct hgc_bench_matmul *mm, int64_t b, int64_t *src_b,
			   int64_t *wei_b);
double hgc_bench_flops(const struct hgc_bench_shape *s);
double hgc_bench_graph_flops(const struct hgc_graph *g);
void hgc_bench_specs_release(void);
/* The spec called name in path (loaded once), NULL with d set. */
const struct hgc_spec *hgc_bench_find_spec(const char *path, const char *name, struct hgc_diag *d);

/* check.c: buffers, reference samples, checks */
void hgc_bench_io_init(struct hgc_bench_io *io, const struct hgc_bench_work *w);
int hgc_bench_io_graph_ref(struct hgc_bench_io *io, const struct hgc_bench_work *w,
			   struct hgc_diag *d);
void hgc_bench_io_take_samples(struct hgc_bench_io *io, const struct hgc_bench_work *w,
			       const float *buf, double slack);
void hgc_bench_io_release(struct hgc_bench_io *io);
void hgc_bench_io_poison(const struct hgc_bench_io *io);
int hgc_bench_io_check(const struct hgc_bench_io *io, const struct hgc_bench_work *w,
		       struct hgc_diag *d);

/* Rounds per row (measure.c): the budget split in slices of 30 ms at the
   default 0.3 s, short against the seconds a burst of load lasts, long
   against the cost of a switch. */
#define HGC_BENCH_ROUNDS 10

/* measure.c: timing.  A row's columns: hgc_bench_warm_up each, then
   hgc_bench_rounds over all of them, then for each hgc_bench_final_run (its
   result is the one to check) and hgc_bench_timing_release. */
void hgc_bench_warm_up(struct hgc_bench_timing *tm, const struct hgc_bench_opts *o);
void hgc_bench_rounds(struct hgc_bench_timing *tm, int n, const struct hgc_bench_opts *o);
void hgc_bench_final_run(struct hgc_bench_timing *tm, const struct hgc_bench_opts *o);
void hgc_bench_timing_release(struct hgc_bench_timing *tm);

/* peak.c */
void hgc_bench_peak_measure(struct hgc_bench_peak *p, int max_threads, double seconds);

/* hgc.c: ms to compile g cold, from a fresh disk cache and from memory (ms[0..2]);
   -1 with d set. */
int hgc_bench_hgc_create_ms(const struct hgc_graph *g, int threads, double ms[3],
			    struct hgc_diag *d);

/* The peers: hgc.c, onednn.c, openblas.c */
extern const struct hgc_bench_peer hgc_bench_peer_hgc;
extern const struct hgc_bench_peer hgc_bench_peer_hgc_nofusion;
extern const struct hgc_bench_peer hgc_bench_peer_onednn;
extern const struct hgc_bench_peer hgc_bench_peer_onednn_packed;
extern const struct hgc_bench_peer hgc_bench_peer_onednn_blocked;
extern const struct hgc_bench_peer hgc_bench_peer_openblas;
void hgc_bench_omp_threads(int threads);
int hgc_bench_onednn_mlp_create_ms(double *cold_ms, double *cached_ms, struct hgc_diag *d);
const char *hgc_bench_onednn_version(struct hgc_arena *a);
void hgc_bench_onednn_shutdown(void);
/* onednn_graph.c: a spec's graph run op by op with oneDNN primitives, as a framework does */
int hgc_bench_onednn_graph(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			   int packed, struct hgc_bench_kernel *k, struct hgc_diag *d);
const char *hgc_bench_openblas_config(void);
void hgc_bench_openblas_keep_pinned(int on);

#endif
