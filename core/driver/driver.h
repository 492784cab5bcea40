/*
 * driver.h: the pipeline from a graph to running code, and the
 * compiled-graph cache.  driver.c reads as the pipeline:
 *
 *     graph -> lowering (MatMul and Convolution through the templates,
 *     core/lower/tmpl.h) -> TIR verification -> backend (C: cc + dlopen;
 *     JIT: LLVM O3 + ORC)
 *
 * and hgc_driver_compile puts the cache around it (cache.c): a key hashes
 * the printed graph, the settings that change code, the compiler build and
 * the CPU; a process-wide table shares one compiled graph between every
 * compile of the same key (refcounted); the JIT backend also keeps object
 * code on disk under $XDG_CACHE_HOME/hgc (default ~/.cache/hgc), so another
 * process loads it instead of compiling.  See docs/architecture.md,
 * section "Pipeline".
 */
#ifndef HGC_DRIVER_H
#define HGC_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../codegen/codegen.h"
#include "../graph/graph.h"
#include "../lower/tmpl.h"
#include "../tir/tir.h"
#include "../util/util.h"

/* The backends the driver compiles for (the interpreter needs no compiling). */
enum hgc_driver_backend {
	HGC_DRIVER_JIT,		/* LLVM O3 into the process's ORC JIT */
	HGC_DRIVER_C,		/* C source, cc -O2, dlopen */
};

/* Where hgc_driver_compile found a compiled graph. */
enum hgc_driver_source {
	HGC_DRIVER_MISS,	/* compiled now */
	HGC_DRIVER_MEMORY,	/* this process compiled or loaded it before */
	HGC_DRIVER_DISK,	/* object code from the disk cache, loaded into the JIT */
};

/* What changes the code (everything but cache and cache_dir is in the key). */
struct hgc_driver_opts {
	enum hgc_driver_backend backend;
	int threads;			/* threads templates plan for; 0: omp_get_max_threads() */
	int nrules;			/* a config's `use` and `pin` entries, for templates */
	const struct hgc_tmpl_rule *rules;
	bool serial;			/* lowering: no parallel loops */
	int64_t parallel_min;		/* lowering: work from which loops go parallel; 0: its default */
	bool disk_cache;		/* keep JIT object code on disk (off: also HGC_CACHE=off) */
	const char *cache_dir;		/* NULL: $XDG_CACHE_HOME/hgc, else ~/.cache/hgc */
};

/* A compiled graph, shared by every compile of the same key. */
struct hgc_driver_graph {
	struct hgc_compiled *code;	/* the backend's module */
	enum hgc_driver_backend backend;
	int nin, nout;			/* graph inputs and outputs: the args */
	char key[33];			/* the cache key, in hex */
	double compile_time;		/* seconds the compilation (or disk load) took */
	char *plan;			/* what the templates did: a line per tunable op, or "" */
	int refs;			/* the cache's reference and every caller's */
	bool *is_const;			/* per input: a constant, packed by init (malloc'ed) */
	const void **init_in;		/* the constant inputs init last packed, or NULL */
};

/* What one hgc_driver_compile call did, for --explain. */
struct hgc_driver_info {
	enum hgc_driver_source source;
	double seconds;			/* this call, key included */
	char note[512];			/* why the disk cache was skipped or rewritten, or "" */
	char path[4096];		/* the disk cache file used or written, or "" */
};

/* driver.c */
/* Defaults: the JIT backend, the disk cache on unless HGC_CACHE=off. */
void hgc_driver_opts_init(struct hgc_driver_opts *o);
/* The name of a backend: "jit" or "c". */
const char *hgc_driver_backend_name(enum hgc_driver_backend b);
struct hgc_pass_switches;
struct hgc_tir_passes;
/* The config's `pass` rules: graph pass names into sw, TIR pass names into tp
   (either may be NULL: those rules are only checked); an unknown name is an
   error listing both sets.  -1 with d set. */
int hgc_driver_pass_rules(const struct hgc_tmpl_rule *rules, int n, struct hgc_pass_switches *sw,
			  struct hgc_tir_passes *tp, struct hgc_diag *d);
/* The graph passes on a copy of g, switched by o's `pass` rules (the caller
   frees it; g stays as written for the reference interpreter); NULL with d set. */
struct hgc_graph *hgc_driver_graph_passes(const struct hgc_graph *g,
					  const struct hgc_driver_opts *o, struct hgc_diag *d);
/* g lowered to a verified Tensor IR module (the caller frees it), and when plan is
   not NULL what the templates did (malloc'ed lines); NULL with d set. */
struct hgc_tir_module *hgc_driver_lower(const struct hgc_graph *g,
					const struct hgc_driver_opts *o, char **plan,
					struct hgc_diag *d);
/* Print the graph after the graph passes and its fusion plan (`--dump=fused`). */
int hgc_driver_dump_fused(FILE *out, const struct hgc_graph *g,
			  const struct hgc_driver_opts *o, struct hgc_diag *d);
/* Lower g and compile it for o->backend, without the cache; NULL with d set. */
struct hgc_compiled *hgc_driver_build(const struct hgc_graph *g, const struct hgc_driver_opts *o,
				      char **plan, struct hgc_diag *d);
/*
 * The compiled form of g for o->backend: from the process's cache, the disk
 * cache (JIT) or compiled now.  info (may be NULL) says which.  The caller
 * owns one reference: hgc_driver_release it.  NULL with d set.
 */
struct hgc_driver_graph *hgc_driver_compile(const struct hgc_graph *g,
					    const struct hgc_driver_opts *o,
					    struct hgc_driver_info *info, struct hgc_diag *d);
/* Run h on dense inputs and outputs in graph order; -1 with d set on a count mismatch. */
int hgc_driver_run(struct hgc_driver_graph *h, const void *const *in, void *const *out,
		   struct hgc_diag *d);

/* cache.c */
/* Take one more reference to h. */
struct hgc_driver_graph *hgc_driver_retain(struct hgc_driver_graph *h);
/* Drop a reference; the last one frees the compiled code (NULL is fine). */
void hgc_driver_release(struct hgc_driver_graph *h);
/* Drop the cache's references: later compiles miss in memory (a graph some
   caller still holds stays shared until released). */
void hgc_driver_cache_clear(void);
/* The disk cache directory for o (no trailing slash) into buf; "" when there is none. */
const char *hgc_driver_cache_dir(const struct hgc_driver_opts *o, char *buf, size_t size);
/* The cache key of g under o as 32 hex digits; -1 with d set (LLVM cannot target
   the host). */
int hgc_driver_key(const struct hgc_graph *g, const struct hgc_driver_opts *o, char hex[33],
		   struct hgc_diag *d);
/* "miss", "memory" or "disk". */
const char *hgc_driver_source_name(enum hgc_driver_source s);

#endif
