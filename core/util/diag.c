/* diag.c: collected diagnostics, fatal internal errors, checked allocation. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>

void hgc_diag_init(struct hgc_diag *d)
{
	memset(d, 0, sizeof(*d));
}

void hgc_diag_release(struct hgc_diag *d)
{
	free(d->text);
	memset(d, 0, sizeof(*d));
}

void hgc_diag_set_source(struct hgc_diag *d, const char *file, const char *src)
{
	d->src_file = file;
	d->src = src;
}

static void append(struct hgc_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void vappend(struct hgc_diag *d, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return;
	if (d->len + (size_t)n + 1 > d->cap) {
		d->cap = (d->len + (size_t)n + 1) * 2;
		d->text = hgc_xrealloc(d->text, d->cap);
	}
	vsnprintf(d->text + d->len, (size_t)n + 1, fmt, ap);
	d->len += (size_t)n;
}

static void append(struct hgc_diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(d, fmt, ap);
	va_end(ap);
}

/* Print the source line of loc and a caret under its column, chibicc style. */
static void caret(struct hgc_diag *d, const struct hgc_loc *loc)
{
	const char *p = d->src, *end;
	int line = 1;

	if (!p || !d->src_file || !loc->file || strcmp(loc->file, d->src_file))
		return;
	while (*p && line < loc->line)
		if (*p++ == '\n')
			line++;
	if (line != loc->line)
		return;
	for (end = p; *end && *end != '\n'; end++)
		;
	append(d, "  %.*s\n  %*s^\n", (int)(end - p), p, loc->col > 0 ? loc->col - 1 : 0, "");
}

static void message(struct hgc_diag *d, const struct hgc_loc *loc, const char *kind,
		    const char *fmt, va_list ap)
{
	if (loc && loc->file)
		append(d, "%s:%d:%d: %s", loc->file, loc->line, loc->col, kind);
	else
		append(d, "hgc: %s", kind);
	vappend(d, fmt, ap);
	append(d, "\n");
	if (loc && loc->file)
		caret(d, loc);
}

int hgc_verror(struct hgc_diag *d, const struct hgc_loc *loc, const char *fmt, va_list ap)
{
	int cap = d->max_err ? d->max_err : HGC_DIAG_CAP;

	d->nerr++;
	if (d->nerr <= cap)
		message(d, loc, "error: ", fmt, ap);
	else if (d->nerr == cap + 1)
		append(d, "hgc: error: too many errors, stopping\n");
	return -1;
}

int hgc_error(struct hgc_diag *d, const struct hgc_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hgc_verror(d, loc, fmt, ap);
	va_end(ap);
	return -1;
}

void hgc_note(struct hgc_diag *d, const struct hgc_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message(d, loc, "note: ", fmt, ap);
	va_end(ap);
}

const char *hgc_diag_text(const struct hgc_diag *d)
{
	return d->text ? d->text : "";
}

_Noreturn void hgc_bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hgc: internal error at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *hgc_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		hgc_bug("out of memory allocating %zu bytes", n);
	return p;
}

void *hgc_xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);

	if (!p)
		hgc_bug("out of memory allocating %zu x %zu bytes", count, size);
	return p;
}

void *hgc_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		hgc_bug("out of memory reallocating %zu bytes", n);
	return p;
}

char *hgc_read_file(const char *path, size_t *len, struct hgc_diag *d)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f) {
		hgc_error(d, NULL, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (cap - n < 4096) {
			cap = cap ? 2 * cap : 65536;
			buf = hgc_xrealloc(buf, cap + 1);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		hgc_error(d, NULL, "cannot read %s", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

double hgc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
