/*
 * tir_passes.h: the Tensor IR passes that run between lowering and the
 * backends, one file each, and the pipeline (pipeline.c) that runs them in
 * order:
 *
 *     copy_forward -> parallel_merge -> (tensor_shrink of small slices) -> buffer_reuse
 *       -> tensor_shrink -> index_flatten -> loop_fuse -> copy_loops -> fold_post
 *       -> fold_quant
 *
 * Each pass can be switched off by name (a config's `pass NAME = off;`),
 * and the module is verified after each (always after the last).  The
 * buffer-reuse pass leaves its plan (peak scratch with and without reuse,
 * which temporaries share a buffer) in struct hgc_tir_plan.  Vectorization
 * is left to LLVM's O3 (docs/tir.md says why).  See docs/passes.md.
 */
#ifndef HGC_TIR_PASSES_H
#define HGC_TIR_PASSES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../tir.h"

/* The passes in pipeline order: X(enum suffix, name, function, what it does). */
#define HGC_TIR_PASS_LIST(X)                                                              \
	X(COPY_FORWARD, "copy_forward", hgc_tir_pass_copy_forward,                        \
	  "a temporary that is a reshaped copy of a tensor reads that tensor instead")     \
	X(PARALLEL_MERGE, "parallel_merge", hgc_tir_pass_parallel_merge,                  \
	  "adjacent parallel loops of one merge group with disjoint iterations into one") \
	X(BUFFER_REUSE, "buffer_reuse", hgc_tir_pass_buffer_reuse,                        \
	  "temporaries of the entry function share scratch buffers by lifetime")          \
	X(TENSOR_SHRINK, "tensor_shrink", hgc_tir_pass_tensor_shrink,                     \
	  "a temporary used inside one loop on that loop's slice shrinks to the slice")    \
	X(INDEX_FLATTEN, "index_flatten", hgc_tir_pass_index_flatten,                     \
	  "local and constant tensors become one-dimensional, indexed linearly")            \
	X(LOOP_FUSE, "loop_fuse", hgc_tir_pass_loop_fuse,                                 \
	  "neighbouring loop nests over the same ranges, elementwise, into one")            \
	X(COPY_LOOPS, "copy_loops", hgc_tir_pass_copy_loops,                              \
	  "a loop that copies a tensor's elements one by one becomes one copy call")       \
	X(FOLD_POST, "fold_post", hgc_tir_pass_fold_post,                                 \
	  "a brgemm and the bias (and ReLU) nest on its C block after it into brgemm_post") \
	X(FOLD_QUANT, "fold_quant", hgc_tir_pass_fold_quant,                              \
	  "a u8 brgemm and the requantization nest after it into brgemm_q (with AMX)")

enum hgc_tir_pass {
#define X(e, n, f, what) HGC_TIR_PASS_##e,
	HGC_TIR_PASS_LIST(X)
#undef X
	HGC_TIR_PASS_COUNT
};

/* One temporary of the buffer plan. */
struct hgc_tir_plan_temp {
	const char *name;	/* the temporary as lowering named it (module arena) */
	int64_t bytes;
	int buffer;		/* index of the shared buffer it lives in */
	int start, end;		/* lifetime: statement positions in the entry function */
	bool inplace;		/* took the buffer of an input still live (elementwise) */
	bool moved;		/* a shared one that tensor_shrink then moved into a
				   parallel loop: listed again with the per-thread ones */
};

/* What buffer_reuse decided (malloc'ed arrays; hgc_tir_plan_release). */
struct hgc_tir_plan {
	bool done;			/* the pass ran */
	int64_t bytes_noreuse;		/* every planned temporary in its own buffer */
	int64_t bytes_reuse;		/* the shared buffers */
	/* The entry's scratch, temporaries inside parallel loops counted once per
	   thread: as lowered (no pass: no reuse) and after the passes. */
	int64_t bytes_lowered, bytes_final;
	int threads;
	int ntemps, nbuffers;
	/* Temporaries private to a thread (defined in a parallel loop's body),
	   planned after tensor_shrink; their bytes count once (per thread). */
	int thread_ntemps, thread_nbuffers;
	int64_t thread_bytes_noreuse, thread_bytes_reuse;
	/* The shared temporaries first, then the per-thread ones; buffers alike. */
	struct hgc_tir_plan_temp *temps;
	int64_t *buffer_bytes;		/* per buffer */
	const char **buffer_names;	/* per buffer: the tensor that replaced its members */
};

/* Which passes run, and what they report. */
struct hgc_tir_passes {
	bool on[HGC_TIR_PASS_COUNT];
	bool verify_each;		/* verify after every pass (default: unless NDEBUG) */
	int threads;			/* for the plan's per-thread temporaries; 0: 1 */
	bool amx;			/* int8 calls run on AMX (fold_quant folds only then) */
	int changes[HGC_TIR_PASS_COUNT];	/* rewrites each pass made */
	struct hgc_tir_plan plan;	/* buffer_reuse's plan */
};

/* pipeline.c */
/* Every pass on; verify after each unless built with NDEBUG. */
void hgc_tir_passes_init(struct hgc_tir_passes *p);
void hgc_tir_passes_release(struct hgc_tir_passes *p);
const char *hgc_tir_pass_name(enum hgc_tir_pass p);
const char *hgc_tir_pass_what(enum hgc_tir_pass p);
enum hgc_tir_pass hgc_tir_pass_find(const char *name);	/* HGC_TIR_PASS_COUNT if none */
/* `pass NAME = on|off;`: -1 with d set (at loc) for an unknown pass or value. */
int hgc_tir_passes_set(struct hgc_tir_passes *p, const char *name, const char *value,
		       const struct hgc_loc *loc, struct hgc_diag *d);
/* Run the switched-on passes on m in order; -1 with d set if one fails or leaves
   the module malformed. */
int hgc_tir_passes_run(struct hgc_tir_module *m, struct hgc_tir_passes *p,
		       struct hgc_diag *d);
/* The plan as text: "buffer plan: ..." then a line per buffer (malloc'ed). */
char *hgc_tir_plan_text(const struct hgc_tir_plan *plan);

/* Each pass returns the number of rewrites it made, or -1 with d set. */

/* forward.c */
int hgc_tir_pass_copy_forward(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			      struct hgc_diag *d);
/* pmerge.c */
int hgc_tir_pass_parallel_merge(struct hgc_tir_module *m, struct hgc_tir_passes *p,
				struct hgc_diag *d);
/* shrink.c */
int hgc_tir_pass_tensor_shrink(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			       struct hgc_diag *d);
/* The same pass limited to slices of a few KiB: the pipeline runs it before
   buffer_reuse, under tensor_shrink's switch. */
int hgc_tir_pass_tensor_shrink_small(struct hgc_tir_module *m, struct hgc_tir_passes *p,
				     struct hgc_diag *d);
/* flatten.c */
int hgc_tir_pass_index_flatten(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			       struct hgc_diag *d);
/* lfuse.c */
int hgc_tir_pass_loop_fuse(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			   struct hgc_diag *d);
/* copyloop.c */
int hgc_tir_pass_copy_loops(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			    struct hgc_diag *d);
/* postfold.c */
int hgc_tir_pass_fold_post(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			   struct hgc_diag *d);
int hgc_tir_pass_fold_quant(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			    struct hgc_diag *d);
/* When s is an f32 brgemm call, or a loop of one trip ending in one (where
   fold_post folds a bias and ReLU nest that follows it): the tensor of the
   block it writes; else NULL. */
const struct hgc_tir_tensor *hgc_tir_post_site(const struct hgc_tir_stmt *s);
/* reuse.c */
int hgc_tir_pass_buffer_reuse(struct hgc_tir_module *m, struct hgc_tir_passes *p,
			      struct hgc_diag *d);
/* The same for the temporaries of parallel loop bodies (one copy per thread): the
   pipeline runs it after tensor_shrink, under buffer_reuse's switch. */
int hgc_tir_pass_buffer_reuse_per_thread(struct hgc_tir_module *m, struct hgc_tir_passes *p,
					 struct hgc_diag *d);

#endif
