/*
 * templates.c: `hgc templates [NAME...]`: every template compiled into this
 * hgc (the .tmpl files of templates/ through hgc-tmplc, listed by the
 * generated registry), or the named ones: the op each serves, its operands,
 * its parameters with their domains and constraints, its derived values, and
 * its anchors with the slices they expose and their cost formulas.
 */
#include "tools/tools.h"

#include <string.h>

#include "core/lower/tmpl.h"

/* The usage of the subcommand. */
static void usage(FILE *f)
{
	fputs("usage: hgc templates [NAME...]\n\n"
	      "List the templates compiled into hgc (templates/NAME.tmpl): the op each serves,\n"
	      "its parameters with their domains, its anchors with their slices and cost\n"
	      "formulas.  With names, only those.  See docs/templates.md.\n", f);
}

/* Report an unknown template name, with a suggestion when one is close. */
static int unknown(const char *name)
{
	const char *names[256], *hint;
	int n;

	for (n = 0; n < 256 && hgc_tmpl_registry[n]; n++)
		names[n] = hgc_tmpl_registry[n]->name;
	fprintf(stderr, "hgc: unknown template '%s'; see 'hgc templates'\n", name);
	hint = hgc_tool_suggest(name, names, n);
	if (hint)
		fprintf(stderr, "hgc: did you mean '%s'?\n", hint);
	return HGC_EXIT_FAIL;
}

/* `hgc templates [NAME...]` */
int hgc_tool_templates(int argc, char **argv)
{
	const struct hgc_tmpl *t;
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return HGC_EXIT_OK;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr, "hgc: unknown option '%s' for templates\n", argv[i]);
			usage(stderr);
			return HGC_EXIT_USAGE;
		}
		if (!hgc_tmpl_find(argv[i]))
			return unknown(argv[i]);
	}
	for (i = 0; (t = hgc_tmpl_registry[i]); i++) {
		int j;

		for (j = 0; j < argc && strcmp(argv[j], t->name); j++)
			;
		if (argc && j == argc)
			continue;
		if (n++)
			fputc('\n', stdout);
		hgc_tmpl_print(stdout, t);
	}
	return HGC_EXIT_OK;
}
