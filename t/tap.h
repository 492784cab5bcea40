/*
 * tap.h: a tiny TAP producer for the tests run by prove.  Failures print
 * the file and line of the check.
 */
#ifndef HGC_TAP_H
#define HGC_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_planned = -1;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
}

static inline void diag(const char *fmt, ...)
{
	va_list ap;
	char buf[4096];
	char *line, *save;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
	fflush(stdout);
}

static inline int tap_ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                            \
	do {                                                                              \
		long long g_ = (long long)(got), w_ = (long long)(want);                  \
		if (!tap_ok_at(g_ == w_, __FILE__, __LINE__, __VA_ARGS__))                \
			diag("     got: %lld\n  wanted: %lld", g_, w_);                       \
	} while (0)

#define is_str(got, want, ...)                                                            \
	do {                                                                              \
		const char *g_ = (got), *w_ = (want);                                     \
		int same_ = g_ && w_ && !strcmp(g_, w_);                                  \
		if (!tap_ok_at(same_, __FILE__, __LINE__, __VA_ARGS__))                   \
			diag("     got: '%s'\n  wanted: '%s'", g_ ? g_ : "(null)",         \
			     w_ ? w_ : "(null)");                                         \
	} while (0)

#define is_near(got, want, tol, ...)                                                      \
	do {                                                                              \
		double g_ = (got), w_ = (want);                                           \
		if (!tap_ok_at(fabs(g_ - w_) <= (tol), __FILE__, __LINE__, __VA_ARGS__))  \
			diag("     got: %.9g\n  wanted: %.9g", g_, w_);                       \
	} while (0)

/* Print the plan if none was given and return the exit status. */
static inline int done_testing(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_n);
	else if (tap_planned != tap_n)
		diag("planned %d tests but ran %d", tap_planned, tap_n);
	return tap_failed || (tap_planned >= 0 && tap_planned != tap_n);
}

#endif
