/* load.c: turn the command line's files and directories into loaded programs. */
#include "tools/tools.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Directories nest at most this deep (a guard against symlink loops). */
#define MAX_DEPTH 32

/* An empty session. */
void hgc_tool_session_init(struct hgc_tool_session *s)
{
	memset(s, 0, sizeof(*s));
	hgc_vec_init(&s->files, sizeof(struct hgc_tool_file *));
}

/* Free every file of the session: programs, diagnostics, paths. */
void hgc_tool_session_release(struct hgc_tool_session *s)
{
	for (size_t i = 0; i < s->files.len; i++) {
		struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);

		hgc_program_release(&f->prog);
		hgc_diag_release(&f->diag);
		free((char *)f->path);
		free(f);
	}
	hgc_vec_release(&s->files);
}

/* A new file entry for path (copied), not loaded yet. */
static struct hgc_tool_file *add_file(struct hgc_tool_session *s, const char *path)
{
	struct hgc_tool_file *f = hgc_xcalloc(1, sizeof(*f));
	size_t n = strlen(path) + 1;

	f->path = memcpy(hgc_xmalloc(n), path, n);
	hgc_program_init(&f->prog);
	hgc_diag_init(&f->diag);
	*(struct hgc_tool_file **)hgc_vec_push(&s->files) = f;
	return f;
}

/* Does name end in ".hgc"? */
static bool is_spec_file(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".hgc");
}

/* qsort comparator for an array of malloc'ed strings. */
static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of directory dir, sorted, without hidden ones; NULL on error. */
static char **list_dir(const char *dir, size_t *n)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (!dp)
		return NULL;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			names = hgc_xrealloc(names, cap * sizeof(*names));
		}
		names[(*n)++] = strdup(e->d_name);
	}
	closedir(dp);
	if (*n)
		qsort(names, *n, sizeof(*names), by_name);
	return names ? names : hgc_xcalloc(1, sizeof(*names));
}

/* Add every *.hgc file below dir, sorted by path, recursing into subdirectories. */
static void walk(struct hgc_tool_session *s, const char *dir, int depth)
{
	size_t n;
	char **names = list_dir(dir, &n);
	int err = errno;
	struct stat st;

	if (!names || depth > MAX_DEPTH) {
		struct hgc_tool_file *f = add_file(s, dir);

		f->failed = true;
		hgc_error(&f->diag, NULL, "cannot read directory %s: %s", dir,
			  names ? "nested too deep" : strerror(err));
	}
	for (size_t i = 0; names && i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = hgc_xmalloc(len);

		snprintf(path, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
			 names[i]);
		if (depth <= MAX_DEPTH && !stat(path, &st)) {
			if (S_ISDIR(st.st_mode))
				walk(s, path, depth + 1);
			else if (is_spec_file(names[i]))
				add_file(s, path);
		}
		free(path);
		free(names[i]);
	}
	free(names);
}

/* Add the files named by one command-line path (a file, or a directory walked). */
static void collect(struct hgc_tool_session *s, const char *path)
{
	struct stat st;
	size_t before = s->files.len;
	struct hgc_tool_file *f;

	if (stat(path, &st)) {
		int err = errno;

		f = add_file(s, path);
		f->failed = true;
		hgc_error(&f->diag, NULL, "cannot open %s: %s", path, strerror(err));
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		add_file(s, path);
		return;
	}
	walk(s, path, 0);
	if (s->files.len == before) {
		f = add_file(s, path);
		f->failed = true;
		hgc_error(&f->diag, NULL, "no *.hgc file in directory %s", path);
	}
}

/* Collect every file named by paths, then load each into its own program. */
void hgc_tool_session_load(struct hgc_tool_session *s, const struct hgc_vec *paths)
{
	for (size_t i = 0; i < paths->len; i++)
		collect(s, HGC_VEC_AT(paths, const char *, i));
	for (size_t i = 0; i < s->files.len; i++) {
		struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);

		if (!f->failed && hgc_program_load(&f->prog, f->path, &f->diag) < 0)
			f->failed = true;
		if (!f->failed && f->diag.nerr)
			f->failed = true;
		s->nfailed += f->failed;
		if (f->failed)
			continue;
		s->nspecs += (int)f->prog.specs.len;
		for (size_t j = 0; j < f->prog.specs.len; j++) {
			int w = (int)strlen(HGC_PROGRAM_SPEC(&f->prog, j)->name);

			if (w > s->name_width)
				s->name_width = w;
		}
	}
}

/* The config called name in any loaded file, or NULL. */
const struct hgc_config *hgc_tool_session_config(const struct hgc_tool_session *s,
						 const char *name)
{
	for (size_t i = 0; i < s->files.len; i++) {
		const struct hgc_tool_file *f = HGC_SESSION_FILE(s, i);
		const struct hgc_config *c;

		if (!f->failed && (c = hgc_program_find_config(&f->prog, name)))
			return c;
	}
	return NULL;
}

/* Print diagnostic text line by line, each line after prefix ("" or "# "). */
void hgc_tool_print_diag(FILE *f, const char *prefix, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		fprintf(f, "%s%.*s\n", prefix, (int)n, text);
		text += n + (text[n] == '\n');
	}
}
