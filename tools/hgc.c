/* hgc.c: the `hgc` command: dispatch to a subcommand, --help, --version. */
#include "tools/tools.h"

#include <string.h>

/* A subcommand and its entry point. */
static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
#define X(n, e, a, s) {#n, hgc_tool_##n},
	HGC_TOOL_CMD_LIST(X)
#undef X
};

#define NCOMMANDS ((int)(sizeof(commands) / sizeof(commands[0])))

/* Report an unknown subcommand, with a suggestion when one is close. */
static int unknown_command(const char *name)
{
	const char *known[NCOMMANDS + 1], *hint;

	for (int i = 0; i < NCOMMANDS; i++)
		known[i] = commands[i].name;
	known[NCOMMANDS] = "help";
	fprintf(stderr, "hgc: unknown command '%s'; see 'hgc --help'\n", name);
	hint = hgc_tool_suggest(name, known, NCOMMANDS + 1);
	if (hint)
		fprintf(stderr, "hgc: did you mean '%s'?\n", hint);
	return HGC_EXIT_USAGE;
}

/* `hgc help [COMMAND]`: the help of the command or of one subcommand. */
static int help(int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "hgc: 'help' takes at most one command; see 'hgc --help'\n");
		return HGC_EXIT_USAGE;
	}
	if (argc == 0) {
		hgc_tool_args_help(stdout, NULL);
		return HGC_EXIT_OK;
	}
	if (!strcmp(argv[0], "help")) {
		hgc_tool_args_help(stdout, NULL);
		return HGC_EXIT_OK;
	}
	for (int i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, argv[0])) {
			hgc_tool_args_help(stdout, argv[0]);
			return HGC_EXIT_OK;
		}
	return unknown_command(argv[0]);
}

/* The top-level options (before any command): --help, --version. */
static int top_option(const char *arg)
{
	static const char *const known[] = {"help", "version"};
	const char *hint;

	if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
		hgc_tool_args_help(stdout, NULL);
		return HGC_EXIT_OK;
	}
	if (!strcmp(arg, "--version") || !strcmp(arg, "-V")) {
		printf("hgc %s\n", HGC_VERSION);
		return HGC_EXIT_OK;
	}
	fprintf(stderr, "hgc: unknown option '%s'; see 'hgc --help'\n", arg);
	hint = arg[0] == '-' && arg[1] == '-' ? hgc_tool_suggest(arg + 2, known, 2) : NULL;
	if (hint)
		fprintf(stderr, "hgc: did you mean '--%s'?\n", hint);
	return HGC_EXIT_USAGE;
}

/* hgc [--help | --version | help [CMD] | CMD ARGS...]: exit 0, 1 on failures, 2 on misuse. */
int main(int argc, char **argv)
{
	if (argc < 2) {
		hgc_tool_args_help(stderr, NULL);
		return HGC_EXIT_USAGE;
	}
	if (argv[1][0] == '-')
		return top_option(argv[1]);
	if (!strcmp(argv[1], "help"))
		return help(argc - 2, argv + 2);
	for (int i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, argv[1]))
			return commands[i].fn(argc - 2, argv + 2);
	return unknown_command(argv[1]);
}
