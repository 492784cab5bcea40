/* util.h: arena, growable vectors, source locations and diagnostics. */
#ifndef HGC_UTIL_H
#define HGC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* An arena: every IR lives in one and dies with it; nodes are never freed one by one. */
struct hgc_arena {
	struct hgc_arena_chunk *head;	/* newest chunk first */
	size_t chunk_size;		/* default size of a fresh chunk */
};

void hgc_arena_init(struct hgc_arena *a);
void *hgc_arena_alloc(struct hgc_arena *a, size_t n);	/* 16-byte aligned */
void *hgc_arena_calloc(struct hgc_arena *a, size_t count, size_t size);
char *hgc_arena_strdup(struct hgc_arena *a, const char *s);
char *hgc_arena_strndup(struct hgc_arena *a, const char *s, size_t n);
char *hgc_arena_printf(struct hgc_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void hgc_arena_release(struct hgc_arena *a);

/* A growable array of fixed-size elements (malloc'ed; owner calls hgc_vec_release). */
struct hgc_vec {
	void *data;
	size_t len, cap, elem;
};

void hgc_vec_init(struct hgc_vec *v, size_t elem);
void *hgc_vec_push(struct hgc_vec *v);	/* returns a zeroed new slot */
void hgc_vec_release(struct hgc_vec *v);
#define HGC_VEC_AT(v, type, i) (((type *)(v)->data)[i])

/* A location in a source file: 1-based line and byte column. */
struct hgc_loc {
	const char *file;
	int line, col;
};

/*
 * Diagnostics collect in a caller-owned struct, never printed deep inside, so
 * tests can compare the exact text.  Each message is "file:line:col: error: msg"
 * followed, when the source is known, by the source line and a caret.
 */
#define HGC_DIAG_CAP 20

struct hgc_diag {
	char *text;		/* all messages so far, malloc'ed, NUL-terminated */
	size_t len, cap;
	int nerr;		/* errors recorded (may exceed those kept in text) */
	int max_err;		/* stop keeping text after this many (0: HGC_DIAG_CAP) */
	const char *src;	/* optional: source text of loc->file, for the caret */
	const char *src_file;
};

void hgc_diag_init(struct hgc_diag *d);
void hgc_diag_release(struct hgc_diag *d);
void hgc_diag_set_source(struct hgc_diag *d, const char *file, const char *src);
/* Record an error at loc (NULL: no location) and return -1. */
int hgc_error(struct hgc_diag *d, const struct hgc_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int hgc_verror(struct hgc_diag *d, const struct hgc_loc *loc, const char *fmt, va_list ap);
/* Record a note (no "error:"); does not count as an error. */
void hgc_note(struct hgc_diag *d, const struct hgc_loc *loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *hgc_diag_text(const struct hgc_diag *d);

/* Internal bugs abort with the place they were found. */
#define hgc_bug(...) hgc_bug_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void hgc_bug_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Checked allocation for long-lived objects: aborts on out-of-memory. */
void *hgc_xmalloc(size_t n);
void *hgc_xcalloc(size_t count, size_t size);
void *hgc_xrealloc(void *p, size_t n);

/* Read a whole file, NUL-terminated; NULL with the diag set on failure. */
char *hgc_read_file(const char *path, size_t *len, struct hgc_diag *d);

/* Monotonic wall clock in seconds. */
double hgc_now(void);

#endif
