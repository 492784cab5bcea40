/*
 * dsl.h: the hgc language front end.  Files hold spec, config and template
 * blocks; loading a file parses it (re2c lexer, Lemon grammar), checks it and
 * builds, for every spec, a shape-checked Graph IR with data generators.
 */
#ifndef HGC_DSL_H
#define HGC_DSL_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/graph/graph.h"
#include "../core/util/util.h"

enum hgc_gen_kind {
	HGC_GEN_UNIFORM,	/* a = lo, b = hi */
	HGC_GEN_NORMAL,		/* a = mean, b = std */
	HGC_GEN_RANDINT,	/* a = lo, b = hi, inclusive */
	HGC_GEN_ARANGE,		/* a = start, b = step */
	HGC_GEN_ZEROS,
	HGC_GEN_ONES,
	HGC_GEN_LITERAL,	/* values[0..n) */
	HGC_GEN_NPY,		/* path, resolved relative to the declaring file */
};

/* How the data of an input, a constant or a golden output is made. */
struct hgc_gen {
	enum hgc_gen_kind kind;
	uint64_t seed;
	double a, b;
	int n;
	const double *values;
	const char *path;
	struct hgc_loc loc;
};

enum hgc_backend {
	HGC_BACKEND_DEFAULT,	/* whatever is best built in */
	HGC_BACKEND_INTERP,
	HGC_BACKEND_C,
	HGC_BACKEND_JIT,
};

enum {
	HGC_DUMP_GRAPH = 1 << 0,
	HGC_DUMP_FUSED = 1 << 1,
	HGC_DUMP_TIR = 1 << 2,
	HGC_DUMP_LLVM = 1 << 3,
};

/* A config entry kept for later stages: use/pin/pass (not yet interpreted). */
struct hgc_config_entry {
	const char *kind;	/* "use", "pin" or "pass" */
	const char *key;	/* e.g. "matmul_core.MB" */
	const char *value;	/* text of the value */
	struct hgc_loc loc;
};

struct hgc_config {
	const char *name;
	struct hgc_loc loc;
	int threads;		/* 0: the machine's cores */
	enum hgc_backend backend;
	unsigned dumps;		/* HGC_DUMP_* */
	bool cache_off;		/* `cache = off;`: no disk cache of compiled graphs */
	int nentries;
	struct hgc_config_entry *entries;
};

/* Golden values for one graph output. */
struct hgc_golden {
	struct hgc_tensor *tensor;
	struct hgc_gen gen;
};

struct hgc_spec {
	const char *name;
	struct hgc_loc loc;
	const char *file;		/* the file that declared it */
	struct hgc_graph *graph;	/* owned by the spec; NULL for a negative spec */
	struct hgc_gen *gens;		/* one per graph input, in graph->inputs order */
	const char *config_name;	/* NULL if none */
	const struct hgc_config *config;	/* resolved, or NULL */
	double rtol, atol;
	bool has_tol;			/* the spec set rtol/atol itself */
	bool quantized;			/* a MatMul or Convolution beside a Dequantize:
					   integer outputs may be one step off */
	int ngolden;
	struct hgc_golden *golden;
	const char *expect_error;	/* negative spec: build must fail with this text */
	const char *build_error;	/* negative spec: the error building produced */
	int iters, warmup;		/* bench settings; 0 when absent */
};

/* Everything loaded from one or more files. */
struct hgc_program {
	struct hgc_arena arena;	/* owns the AST, names and source buffers */
	struct hgc_vec specs;	/* struct hgc_spec * */
	struct hgc_vec configs;	/* struct hgc_config * */
	struct hgc_vec files;	/* const char *: every file read, for include cycles */
};

#define HGC_PROGRAM_SPEC(p, i) HGC_VEC_AT(&(p)->specs, struct hgc_spec *, i)
#define HGC_PROGRAM_CONFIG(p, i) HGC_VEC_AT(&(p)->configs, struct hgc_config *, i)

void hgc_program_init(struct hgc_program *p);
void hgc_program_release(struct hgc_program *p);
/* Parse and check path (and what it includes); -1 with every error in d. */
int hgc_program_load(struct hgc_program *p, const char *path, struct hgc_diag *d);
/* The same, from a string (for tests); file names the source in messages. */
int hgc_program_load_string(struct hgc_program *p, const char *file, const char *src,
			    struct hgc_diag *d);
const struct hgc_config *hgc_program_find_config(const struct hgc_program *p, const char *name);
/* Fill buf (dense, t's dtype and shape) from gen; -1 with d set (npy mismatch). */
int hgc_gen_fill(const struct hgc_gen *gen, const struct hgc_tensor *t, void *buf,
		 struct hgc_diag *d);

#endif
