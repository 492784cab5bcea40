/* args.c: the options of the subcommands, their parsing and their help. */
#include "tools/tools.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/*
 * The option table: X(enum suffix, name, takes a value, metavar, subcommands,
 * help).  ORDER: the help lists options in this order.
 */
#define OPT_LIST(X)                                                                       \
	X(BACKEND, "backend", 1, "NAME", HGC_CMD_RUN | HGC_CMD_CHECK,                    \
	  "run on backend NAME: interp (the reference interpreter), c or jit")            \
	X(THREADS, "threads", 1, "N",                                                    \
	  HGC_CMD_RUN | HGC_CMD_CHECK | HGC_CMD_COMPILE | HGC_CMD_EXPLAIN,                \
	  "use N OpenMP threads (default: the config's, else every core)")                \
	X(CONFIG, "config", 1, "NAME",                                                   \
	  HGC_CMD_RUN | HGC_CMD_CHECK | HGC_CMD_COMPILE | HGC_CMD_EXPLAIN,                \
	  "compile every spec under config NAME instead of its own")                      \
	X(IO, "io", 1, "DIR", HGC_CMD_RUN,                                               \
	  "write every graph input and output as DIR/<spec>.<tensor>.npy")                \
	X(INPUTS, "inputs", 1, "DIR", HGC_CMD_RUN,                                       \
	  "read the inputs from DIR/<spec>.<tensor>.npy instead of the generators")       \
	X(EXPLAIN, "explain", 0, "", HGC_CMD_RUN,                                        \
	  "say what was done for each spec: graph, config, backend, plan, timings")       \
	X(FASTEST, "fastest", 0, "", HGC_CMD_RUN,                                        \
	  "report the fastest of the spec's timed runs instead of their median")          \
	X(DUMP, "dump", 1, "LIST", HGC_CMD_COMPILE,                                      \
	  "stages to print, comma-separated: graph, fused, tir, llvm (default: graph)")   \
	X(EMIT, "emit", 1, "LIST", HGC_CMD_COMPILE,                                      \
	  "write c (the C source) and/or obj (an object file and its C header)")          \
	X(OUTPUT, "output", 1, "PATH", HGC_CMD_COMPILE,                                  \
	  "where --emit writes (also -o PATH); default: stdout, SPEC.o and SPEC.h")       \
	X(HELP, "help", 0, "",                                                           \
	  HGC_CMD_RUN | HGC_CMD_CHECK | HGC_CMD_COMPILE | HGC_CMD_TEMPLATES | HGC_CMD_EXPLAIN, \
	  "print this help and exit")

enum opt_id {
#define X(e, n, v, m, c, h) OPT_##e,
	OPT_LIST(X)
#undef X
	OPT_COUNT
};

/* One row of the option table. */
static const struct opt {
	const char *name;
	int takes_value;
	const char *metavar;
	unsigned cmds;		/* HGC_CMD_* bits of the subcommands that accept it */
	const char *help;
} opts[OPT_COUNT] = {
#define X(e, n, v, m, c, h) {n, v, m, c, h},
	OPT_LIST(X)
#undef X
};

/* The subcommands' names, bits, argument synopses and summaries. */
static const struct cmd {
	const char *name;
	unsigned bit;
	const char *args, *summary;
} cmds[] = {
#define X(n, e, a, s) {#n, HGC_CMD_##e, a, s},
	HGC_TOOL_CMD_LIST(X)
#undef X
};

#define NCMDS ((int)(sizeof(cmds) / sizeof(cmds[0])))

/* The dump stages --dump knows, in HGC_DUMP_* bit order. */
static const char *const dump_names[] = {"graph", "fused", "tir", "llvm"};

/* The table row of a subcommand, or NULL. */
static const struct cmd *find_cmd(const char *name)
{
	for (int i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

/* Levenshtein distance of a and b, capped: enough to suggest a spelling. */
static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[64], prev, tmp;

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			tmp = row[j];
			row[j] = a[i - 1] == b[j - 1] ? prev : 1 + prev;
			if (row[j] > tmp + 1)
				row[j] = tmp + 1;
			if (row[j] > row[j - 1] + 1)
				row[j] = row[j - 1] + 1;
			prev = tmp;
		}
	}
	return row[lb];
}

/* The known word closest to word (at most 2 edits, or a prefix of it), or NULL. */
const char *hgc_tool_suggest(const char *word, const char *const *known, int n)
{
	const char *best = NULL;
	int best_d = 3;

	for (int i = 0; i < n; i++) {
		int dist = distance(word, known[i]);

		if (*word && !strncmp(known[i], word, strlen(word)))
			dist = dist < 1 ? dist : 1;
		if (dist < best_d) {
			best_d = dist;
			best = known[i];
		}
	}
	return best;
}

/* Print an unknown-option error with a hint; returns the usage exit status. */
static int unknown_option(const char *cmd, unsigned bit, const char *arg, const char *name)
{
	const char *known[OPT_COUNT], *hint;
	int n = 0;

	for (int i = 0; i < OPT_COUNT; i++)
		if (opts[i].cmds & bit)
			known[n++] = opts[i].name;
	fprintf(stderr, "hgc: unknown option '%s'; see 'hgc %s --help'\n", arg, cmd);
	hint = name ? hgc_tool_suggest(name, known, n) : NULL;
	if (hint)
		fprintf(stderr, "hgc: did you mean '--%s'?\n", hint);
	return HGC_EXIT_USAGE;
}

/* Parse the --threads value: a positive integer of sensible size. */
static int parse_threads(struct hgc_tool_opts *o, const char *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > 4096) {
		fprintf(stderr, "hgc: --threads wants an integer from 1 to 4096, not '%s'\n", v);
		return HGC_EXIT_USAGE;
	}
	o->threads = (int)n;
	return 0;
}

/* The bits of option opt's comma-separated list of names (bit i for names[i]);
   0 after printing the error for an unknown name (a `what`) or an empty list. */
static unsigned parse_list(const char *opt, const char *what, const char *v,
			   const char *const *names, int n)
{
	char known[128] = "";
	unsigned bits = 0;

	for (int i = 0; i < n; i++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 i ? ", " : "", names[i]);
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");
		unsigned bit = 0;

		for (int i = 0; i < n; i++)
			if (strlen(names[i]) == len && !strncmp(names[i], p, len))
				bit = 1u << i;
		if (!bit) {
			fprintf(stderr, "hgc: unknown %s '%.*s' (known: %s)\n", what, (int)len,
				p, known);
			return 0;
		}
		bits |= bit;
		p += len + (p[len] == ',');
	}
	if (!bits)
		fprintf(stderr, "hgc: --%s wants a list: %s\n", opt, known);
	return bits;
}

/* Parse the --dump list into HGC_DUMP_* bits. */
static int parse_dump(struct hgc_tool_opts *o, const char *v)
{
	o->dumps = parse_list("dump", "dump stage", v, dump_names,
			      (int)(sizeof(dump_names) / sizeof(dump_names[0])));
	return o->dumps ? 0 : HGC_EXIT_USAGE;
}

/* Parse the --emit list into HGC_EMIT_* bits. */
static int parse_emit(struct hgc_tool_opts *o, const char *v)
{
	static const char *const names[] = {"c", "obj"};	/* ORDER: HGC_EMIT_* bits */

	o->emits = parse_list("emit", "--emit kind", v, names, (int)(sizeof(names) / sizeof(names[0])));
	return o->emits ? 0 : HGC_EXIT_USAGE;
}

/* Check a --backend name against the table (availability is checked later). */
static int parse_backend(struct hgc_tool_opts *o, const char *v)
{
	const char *names[16];
	int n;

	if (hgc_tool_backend_find(v)) {
		o->backend = v;
		return 0;
	}
	fprintf(stderr, "hgc: unknown backend '%s' (known:", v);
	n = hgc_tool_backend_names(names, 16);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", names[i]);
	fprintf(stderr, ")\n");
	return HGC_EXIT_USAGE;
}

/* Store the value of option id in o; a usage status on a bad value. */
static int set_opt(struct hgc_tool_opts *o, enum opt_id id, const char *v)
{
	switch (id) {
	case OPT_BACKEND: return parse_backend(o, v);
	case OPT_THREADS: return parse_threads(o, v);
	case OPT_CONFIG: o->config = v; return 0;
	case OPT_IO: o->io_dir = v; return 0;
	case OPT_INPUTS: o->inputs_dir = v; return 0;
	case OPT_EXPLAIN: o->explain = true; return 0;
	case OPT_FASTEST: o->fastest = true; return 0;
	case OPT_DUMP: return parse_dump(o, v);
	case OPT_EMIT: return parse_emit(o, v);
	case OPT_OUTPUT: o->output = v; return 0;
	case OPT_HELP: o->help = true; return 0;
	case OPT_COUNT: break;
	}
	hgc_bug("option %d has no handler", (int)id);
}

/* Parse the long option argv[*i] ("--name" or "--name=value"), taking its value. */
static int long_opt(struct hgc_tool_opts *o, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *eq = strchr(arg, '='), *v = NULL;
	size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	char name[64];

	snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), arg + 2);
	for (int id = 0; id < OPT_COUNT; id++) {
		if (strlen(opts[id].name) != len || strncmp(opts[id].name, arg + 2, len) ||
		    !(opts[id].cmds & o->cmd_bit))
			continue;
		if (!opts[id].takes_value) {
			if (eq) {
				fprintf(stderr, "hgc: option '--%s' takes no value\n", name);
				return HGC_EXIT_USAGE;
			}
			return set_opt(o, id, "");
		}
		v = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
		if (!v || !*v) {
			fprintf(stderr, "hgc: option '--%s' needs a value (%s); see 'hgc %s "
				"--help'\n", name, opts[id].metavar, o->cmd);
			return HGC_EXIT_USAGE;
		}
		return set_opt(o, id, v);
	}
	return unknown_option(o->cmd, o->cmd_bit, arg, name);
}

/* Parse argv (after the subcommand name) into o; 0, or the usage exit status. */
int hgc_tool_args_parse(struct hgc_tool_opts *o, const char *cmd, int argc, char **argv)
{
	const struct cmd *c = find_cmd(cmd);
	bool only_paths = false;
	int rc;

	memset(o, 0, sizeof(*o));
	hgc_vec_init(&o->paths, sizeof(const char *));
	if (!c)
		hgc_bug("no subcommand '%s'", cmd);
	o->cmd = c->name;
	o->cmd_bit = c->bit;
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (only_paths || arg[0] != '-' || !arg[1]) {
			*(const char **)hgc_vec_push(&o->paths) = arg;
		} else if (!strcmp(arg, "--")) {
			only_paths = true;
		} else if (!strcmp(arg, "-h")) {
			o->help = true;
		} else if (!strcmp(arg, "-o") && (c->bit & opts[OPT_OUTPUT].cmds)) {
			if (i + 1 >= argc || !*argv[i + 1]) {
				fprintf(stderr, "hgc: option '-o' needs a value (PATH); see 'hgc "
					"%s --help'\n", cmd);
				return HGC_EXIT_USAGE;
			}
			o->output = argv[++i];
		} else if (arg[1] == '-' && arg[2]) {
			if ((rc = long_opt(o, argc, argv, &i)))
				return rc;
		} else {
			return unknown_option(cmd, c->bit, arg, NULL);
		}
	}
	if (!o->help && !o->paths.len) {
		fprintf(stderr, "hgc %s: no file or directory given; see 'hgc %s --help'\n",
			cmd, cmd);
		return HGC_EXIT_USAGE;
	}
	return 0;
}

/* Free what parsing allocated (the path list; the strings are argv's). */
void hgc_tool_opts_release(struct hgc_tool_opts *o)
{
	hgc_vec_release(&o->paths);
}

/* The help of one subcommand: synopsis, what it does, its options. */
static void cmd_help(FILE *f, const struct cmd *c)
{
	char left[64];

	fprintf(f, "usage: hgc %s [OPTION...] %s\n\n%c%s.\n\noptions:\n", c->name, c->args,
		toupper((unsigned char)c->summary[0]), c->summary + 1);
	for (int i = 0; i < OPT_COUNT; i++) {
		if (!(opts[i].cmds & c->bit))
			continue;
		snprintf(left, sizeof(left), "--%s%s%s", opts[i].name,
			 opts[i].takes_value ? "=" : "", opts[i].metavar);
		fprintf(f, "  %-18s %s\n", left, opts[i].help);
	}
}

/* Print the help of cmd, or of the whole command when cmd is NULL. */
void hgc_tool_args_help(FILE *f, const char *cmd)
{
	const struct cmd *c = cmd ? find_cmd(cmd) : NULL;

	if (c) {
		cmd_help(f, c);
		fprintf(f, "\nSee docs/cli.md for details.\n");
		return;
	}
	fprintf(f, "usage: hgc COMMAND [OPTION...] ARGS...\n"
		   "       hgc --help | --version | help COMMAND\n\n"
		   "hgc is a deep-learning graph compiler for CPUs.  Commands:\n");
	for (int i = 0; i < NCMDS; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "  %-9s %s\n", "help", "print the help of a command");
	fprintf(f, "\nExit status: 0 success, 1 a failing spec or file, 2 a usage error.\n"
		   "See 'hgc COMMAND --help' and docs/cli.md.\n");
}
