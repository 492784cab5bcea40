/* value.c: literal values of the AST (numbers, names, strings) and lookups by name. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_int.h"

/* Parse an INT token; false when it does not fit in int64. */
static bool parse_int(const struct hgc_tok *t, bool neg, int64_t *out)
{
	char buf[32];
	unsigned long long u;

	if (t->n >= (int)sizeof(buf))
		return false;
	memcpy(buf, t->z, (size_t)t->n);
	buf[t->n] = 0;
	errno = 0;
	u = strtoull(buf, NULL, 10);
	if (errno || u > (unsigned long long)INT64_MAX + neg)
		return false;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

/* An integer literal's value; reports a non-integer or an overflow. */
int hgc_dsl_int(struct hgc_load *ld, const struct hgc_ast *v, const char *what, int64_t *out)
{
	if (v->kind != HGC_AST_INT)
		return hgc_dsl_error(ld, &v->loc, "%s must be an integer", what);
	if (!parse_int(&v->tok, v->neg, out))
		return hgc_dsl_error(ld, &v->loc, "integer %s%.*s is out of range",
				     v->neg ? "-" : "", v->tok.n, v->tok.z);
	return 0;
}

/* A number literal's value (integers too); reports anything else or an overflow. */
int hgc_dsl_num(struct hgc_load *ld, const struct hgc_ast *v, const char *what, double *out)
{
	char buf[64];
	int64_t i;

	if (v->kind == HGC_AST_INT && parse_int(&v->tok, v->neg, &i)) {
		*out = (double)i;
		return 0;
	}
	if (v->kind != HGC_AST_INT && v->kind != HGC_AST_FLOAT)
		return hgc_dsl_error(ld, &v->loc, "%s must be a number", what);
	if (v->tok.n >= (int)sizeof(buf))
		return hgc_dsl_error(ld, &v->loc, "number %.*s is too long", v->tok.n, v->tok.z);
	memcpy(buf, v->tok.z, (size_t)v->tok.n);
	buf[v->tok.n] = 0;
	*out = strtod(buf, NULL);
	if (!isfinite(*out))
		return hgc_dsl_error(ld, &v->loc, "number %s%s is out of range", v->neg ? "-" : "",
				     buf);
	if (v->neg)
		*out = -*out;
	return 0;
}

/* The text of a bare name or a string, in the program's arena; NULL otherwise. */
const char *hgc_dsl_word(struct hgc_load *ld, const struct hgc_ast *v)
{
	if (v->kind == HGC_AST_NAME)
		return hgc_dsl_tok_str(&ld->p->arena, &v->tok);
	if (v->kind == HGC_AST_STRING)
		return hgc_dsl_unquote(&ld->p->arena, &v->tok);
	return NULL;
}

/* "unknown WHAT 'x'", with a suggestion when a known name is close. */
int hgc_dsl_unknown(struct hgc_load *ld, const struct hgc_loc *loc, const char *what,
		    const char *s, size_t len, const char *const *names, int n)
{
	const char *near = hgc_dsl_suggest(s, len, names, n);

	if (near)
		return hgc_dsl_error(ld, loc, "unknown %s '%.*s'; did you mean '%s'?", what,
				     (int)len, s, near);
	return hgc_dsl_error(ld, loc, "unknown %s '%.*s'", what, (int)len, s);
}
