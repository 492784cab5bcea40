/*
 * tools.h: the `hgc` command.  hgc.c dispatches to one file per subcommand
 * (run.c, check.c, compile.c); they share the option parser (args.c), the
 * loading of files and directories (load.c), the backend table (backend.c)
 * and the spec runner (exec.c, compare.c, npyio.c, explain.c).
 */
#ifndef HGC_TOOLS_H
#define HGC_TOOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/driver/driver.h"
#include "core/graph/graph.h"
#include "core/util/util.h"
#include "dsl/dsl.h"

#define HGC_VERSION "0.1.0"

/* Exit statuses: usage errors are 2, failed specs or files 1. */
enum {
	HGC_EXIT_OK = 0,
	HGC_EXIT_FAIL = 1,
	HGC_EXIT_USAGE = 2,
};

/* The subcommands an option may belong to (a bit set). */
enum {
	HGC_CMD_RUN = 1 << 0,
	HGC_CMD_CHECK = 1 << 1,
	HGC_CMD_COMPILE = 1 << 2,
	HGC_CMD_TEMPLATES = 1 << 3,
	HGC_CMD_EXPLAIN = 1 << 4,
};

/*
 * The subcommands: X(name, HGC_CMD_ suffix, arguments, one-line summary).
 * Each name has its function hgc_tool_<name>(argc, argv) in tools/<name>.c.
 */
#define HGC_TOOL_CMD_LIST(X)                                                          \
	X(run, RUN, "FILE|DIR...", "run specs and check them against the reference interpreter") \
	X(check, CHECK, "FILE|DIR...", "the same, as one TAP stream for prove")             \
	X(compile, COMPILE, "FILE...", "print the Graph IR (and later stages) of each spec") \
	X(templates, TEMPLATES, "[NAME...]", "list the compiled templates: op, parameters, anchors") \
	X(explain, EXPLAIN, "FILE|DIR...", "show the template and parameters chosen for each MatMul and Convolution")

/* What `hgc compile --emit` writes. */
enum {
	HGC_EMIT_C = 1 << 0,	/* the C source of the compiled graph */
	HGC_EMIT_OBJ = 1 << 1,	/* a host object file and its C header */
};

/* What the command line asked for; see args.c for the option table. */
struct hgc_tool_opts {
	const char *cmd;		/* "run", "check" or "compile" */
	unsigned cmd_bit;		/* HGC_CMD_* of cmd */
	const char *backend;		/* --backend, or NULL: the config's or the default */
	int threads;			/* --threads, or 0: the config's or the machine's */
	const char *config;		/* --config NAME, or NULL */
	const char *io_dir;		/* --io DIR: write inputs and outputs as .npy */
	const char *inputs_dir;		/* --inputs DIR: read inputs from .npy */
	bool explain;			/* --explain */
	bool fastest;			/* --fastest: the fastest timed run, not the median */
	bool help;			/* --help */
	unsigned dumps;			/* --dump: HGC_DUMP_* (0: not given) */
	unsigned emits;			/* --emit: HGC_EMIT_* (0: not given) */
	const char *output;		/* --output / -o PATH, or NULL */
	struct hgc_vec paths;		/* const char *: files and directories */
};

/* One loaded file: its own program, so a broken file spoils nothing else. */
struct hgc_tool_file {
	const char *path;
	struct hgc_program prog;
	struct hgc_diag diag;		/* load errors, printed by the subcommand */
	bool failed;			/* missing, unreadable or with errors */
};

/* Every file a subcommand loaded. */
struct hgc_tool_session {
	struct hgc_vec files;		/* struct hgc_tool_file * (malloc'ed) */
	int nspecs;			/* specs over every loaded file */
	int nfailed;			/* files that failed to load */
	int name_width;			/* longest spec name, for aligned output */
};

#define HGC_SESSION_FILE(s, i) HGC_VEC_AT(&(s)->files, struct hgc_tool_file *, i)

/* A backend: compiles a spec's graph once, then runs it many times. */
struct hgc_tool_backend {
	const char *name;		/* as --backend and `backend =` spell it */
	enum hgc_backend kind;
	const char *what;		/* one line for --explain */
	/* Compile g under cfg (may be NULL); returns a handle, NULL with d set. */
	void *(*compile)(const struct hgc_graph *g, const struct hgc_config *cfg,
			 struct hgc_diag *d);
	/* Run a compiled handle on dense inputs and outputs in graph order. */
	int (*run)(void *h, const struct hgc_graph *g, const void *const *in, void *const *out,
		   struct hgc_diag *d);
	void (*release)(void *h);
	/* Describe the compiled form (fusion plan ...) for --explain. */
	void (*explain)(FILE *f, const void *h, const struct hgc_graph *g);
};

/* Timings of one spec, in seconds. */
struct hgc_tool_times {
	double build, inputs, run, ref, check;
	int iters, warmup;		/* how run was measured (median of iters) */
	bool fastest;			/* run is the fastest of iters instead */
};

/* The result of running one spec. */
struct hgc_tool_result {
	bool ok;
	bool negative;			/* an `expect error` spec */
	double max_err;			/* largest |got - want| over outputs and goldens */
	struct hgc_tool_times t;
	const struct hgc_tool_backend *backend;
	const struct hgc_config *config;
	int threads;			/* OpenMP threads the run used */
	struct hgc_diag why;		/* what failed, for the report */
};

/* One output compared against what it should be. */
struct hgc_tool_cmp {
	double max_err;			/* largest |got - want| (NaN mismatch: +inf) */
	int64_t nbad;			/* elements out of tolerance */
	int64_t first_bad;		/* flat index of the first, or -1 */
	double got, want;		/* values at first_bad */
};

/* args.c */
int hgc_tool_args_parse(struct hgc_tool_opts *o, const char *cmd, int argc, char **argv);
void hgc_tool_opts_release(struct hgc_tool_opts *o);
void hgc_tool_args_help(FILE *f, const char *cmd);
const char *hgc_tool_suggest(const char *word, const char *const *known, int n);

/* load.c */
void hgc_tool_session_init(struct hgc_tool_session *s);
void hgc_tool_session_release(struct hgc_tool_session *s);
void hgc_tool_session_load(struct hgc_tool_session *s, const struct hgc_vec *paths);
const struct hgc_config *hgc_tool_session_config(const struct hgc_tool_session *s,
						 const char *name);
void hgc_tool_print_diag(FILE *f, const char *prefix, const char *text);

/* backend.c */
const struct hgc_tool_backend *hgc_tool_backend_find(const char *name);
const struct hgc_tool_backend *hgc_tool_backend_of(enum hgc_backend kind);
int hgc_tool_backend_names(const char **names, int cap);
void hgc_tool_driver_opts(const struct hgc_config *cfg, enum hgc_driver_backend b,
			  struct hgc_driver_opts *o, struct hgc_tmpl_rule **rules);

/* exec.c */
int hgc_tool_exec_setup(const struct hgc_tool_opts *o, const struct hgc_tool_session *s,
			const struct hgc_config **cfg);
void hgc_tool_exec_spec(const struct hgc_tool_opts *o, const struct hgc_spec *sp,
			const struct hgc_config *cfg, struct hgc_tool_result *r);
void hgc_tool_result_release(struct hgc_tool_result *r);

/* compare.c */
void hgc_tool_compare(const struct hgc_tensor *t, const void *got, const void *want,
		      double rtol, double atol, struct hgc_tool_cmp *c);
void hgc_tool_tolerance(const struct hgc_spec *sp, enum hgc_dtype dt, double *rtol,
			double *atol);
void hgc_tool_index_str(const struct hgc_tensor *t, int64_t flat, char *buf, size_t n);

/* npyio.c */
int hgc_tool_npy_save(const char *dir, const struct hgc_spec *sp, const struct hgc_tensor *t,
		      const void *buf, struct hgc_diag *d);
int hgc_tool_npy_load(const char *dir, const struct hgc_spec *sp, const struct hgc_tensor *t,
		      void *buf, struct hgc_diag *d);
int hgc_tool_mkdirs(const char *dir, struct hgc_diag *d);

/* explain.c */
void hgc_tool_explain_graph(FILE *f, const struct hgc_spec *sp,
			    const struct hgc_tool_result *r);
void hgc_tool_explain_result(FILE *f, const struct hgc_spec *sp,
			     const struct hgc_tool_result *r);
double hgc_tool_graph_flops(const struct hgc_graph *g);

/* run.c, check.c, compile.c, templates.c: the subcommands, with argv after the command name. */
int hgc_tool_run(int argc, char **argv);
int hgc_tool_check(int argc, char **argv);
int hgc_tool_compile(int argc, char **argv);
int hgc_tool_templates(int argc, char **argv);
int hgc_tool_explain(int argc, char **argv);

#endif
