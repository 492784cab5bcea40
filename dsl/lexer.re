/*
 * lexer.re: the re2c lexer of the hgc language.  It runs over a whole file
 * held in a NUL-terminated buffer (re2c's eof rule: the NUL at the limit ends
 * the input, a NUL before it is a stray character).  Conditions: init (code),
 * comment (inside slash-star comments) and str (inside a string literal).
 * Line and column are tracked in the state struct: `line` and `bol`.
 */
#include <stdio.h>
#include <string.h>

#include "dsl/dsl_int.h"
#include "grammar.h"

/*!conditions:re2c*/

/* Keyword spellings and codes (HGC_DSL_KEYWORDS). */
static const struct {
	const char *s;
	int code;
} keywords[] = {
#define X(t, s) {s, HGC_TK_##t},
	HGC_DSL_KEYWORDS(X)
#undef X
};

/* The keyword's token code, or 0 when s[0..n) is an identifier. */
int hgc_dsl_keyword(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (strlen(keywords[i].s) == n && !memcmp(keywords[i].s, s, n))
			return keywords[i].code;
	return 0;
}

/* Start lexing src[0..len); src[len] must be NUL. */
void hgc_dsl_lex_init(struct hgc_lexer *lx, const char *file, const char *src, size_t len,
		      struct hgc_diag *d)
{
	memset(lx, 0, sizeof(*lx));
	lx->cur = lx->tok = lx->bol = (const unsigned char *)src;
	lx->lim = lx->cur + len;
	lx->line = 1;
	lx->cond = yycinit;
	lx->file = file;
	lx->d = d;
}

/* Fill t with the bytes from start to the cursor, on the current line. */
static int token(struct hgc_lexer *lx, struct hgc_tok *t, const unsigned char *start, int code)
{
	t->z = (const char *)start;
	t->n = (int)(lx->cur - start);
	t->line = lx->line;
	t->col = (int)(start - lx->bol) + 1;
	return code;
}

/* A printable spelling of byte c for messages: x, \' or \x01. */
static const char *show(char buf[8], unsigned char c)
{
	if (c == '\'' || c == '\\')
		snprintf(buf, 8, "\\%c", c);
	else if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 8, "%c", c);
	else
		snprintf(buf, 8, "\\x%02x", c);
	return buf;
}

/* Report a lexical error at p (on the current line) and return -1. */
static int lexerr(struct hgc_lexer *lx, const unsigned char *p, const char *msg)
{
	struct hgc_loc loc = {lx->file, lx->line, (int)(p - lx->bol) + 1};

	return hgc_error(lx->d, &loc, "%s", msg);
}

/* Report a bad byte: "unexpected character '@'" or a bad escape. */
static int badchar(struct hgc_lexer *lx, const unsigned char *p, const char *what,
		   const char *prefix)
{
	struct hgc_loc loc = {lx->file, lx->line, (int)(p - lx->bol) + 1};
	char buf[8];

	return hgc_error(lx->d, &loc, "%s '%s%s'", what, prefix, show(buf, p[*prefix != 0]));
}

/* Count a newline just consumed. */
static void newline(struct hgc_lexer *lx)
{
	lx->line++;
	lx->bol = lx->cur;
}

/* An identifier or a keyword. */
static int word(struct hgc_lexer *lx, struct hgc_tok *t)
{
	int kw = hgc_dsl_keyword((const char *)lx->tok, (size_t)(lx->cur - lx->tok));

	return token(lx, t, lx->tok, kw ? kw : HGC_TK_ID);
}

/*
 * The next token into t: its code, 0 at the end of input, -1 after a
 * lexical error (reported into lx->d; the caller stops).
 */
int hgc_dsl_lex(struct hgc_lexer *lx, struct hgc_tok *t)
{
	const unsigned char *start = lx->tok;	/* of a comment or a string */
	int start_line = lx->line;
	const unsigned char *start_bol = lx->bol;

	for (;;) {
		lx->tok = lx->cur;
	/*!re2c
		re2c:api:style = free-form;
		re2c:define:YYCTYPE = "unsigned char";
		re2c:define:YYCURSOR = "lx->cur";
		re2c:define:YYMARKER = "lx->mar";
		re2c:define:YYLIMIT = "lx->lim";
		re2c:define:YYGETCONDITION = "lx->cond";
		re2c:define:YYSETCONDITION = "lx->cond = @@;";
		re2c:yyfill:enable = 0;
		re2c:eof = 0;

		digit = [0-9];
		exp = [eE] [+-]? digit+;

		<init> $ { return token(lx, t, lx->cur, 0); }
		<init> [ \t\r\f\v]+ { continue; }
		<init> "\n" { newline(lx); continue; }
		<init> "#" [^\n]* { continue; }
		<init> "/*" => comment {
			start = lx->tok, start_line = lx->line, start_bol = lx->bol;
			continue;
		}
		<init> ["] => str { start = lx->tok; continue; }

		<init> [a-zA-Z_] [a-zA-Z0-9_]* { return word(lx, t); }
		<init> digit+ { return token(lx, t, lx->tok, HGC_TK_INT); }
		<init> digit+ "." digit+ exp? | digit+ exp { return token(lx, t, lx->tok, HGC_TK_FLOAT); }

		<init> "{" { return token(lx, t, lx->tok, HGC_TK_LBRACE); }
		<init> "}" { return token(lx, t, lx->tok, HGC_TK_RBRACE); }
		<init> "(" { return token(lx, t, lx->tok, HGC_TK_LP); }
		<init> ")" { return token(lx, t, lx->tok, HGC_TK_RP); }
		<init> "[" { return token(lx, t, lx->tok, HGC_TK_LB); }
		<init> "]" { return token(lx, t, lx->tok, HGC_TK_RB); }
		<init> "," { return token(lx, t, lx->tok, HGC_TK_COMMA); }
		<init> ";" { return token(lx, t, lx->tok, HGC_TK_SEMI); }
		<init> ":" { return token(lx, t, lx->tok, HGC_TK_COLON); }
		<init> "=" { return token(lx, t, lx->tok, HGC_TK_ASSIGN); }
		<init> "." { return token(lx, t, lx->tok, HGC_TK_DOT); }
		<init> ".." { return token(lx, t, lx->tok, HGC_TK_DOTDOT); }
		<init> "->" { return token(lx, t, lx->tok, HGC_TK_ARROW); }
		<init> "+" { return token(lx, t, lx->tok, HGC_TK_PLUS); }
		<init> "-" { return token(lx, t, lx->tok, HGC_TK_MINUS); }
		<init> "*" { return token(lx, t, lx->tok, HGC_TK_STAR); }
		<init> "/" { return token(lx, t, lx->tok, HGC_TK_SLASH); }
		<init> "%" { return token(lx, t, lx->tok, HGC_TK_PERCENT); }
		<init> "==" { return token(lx, t, lx->tok, HGC_TK_EQ); }
		<init> "!=" { return token(lx, t, lx->tok, HGC_TK_NE); }
		<init> "<" { return token(lx, t, lx->tok, HGC_TK_LT); }
		<init> "<=" { return token(lx, t, lx->tok, HGC_TK_LE); }
		<init> ">" { return token(lx, t, lx->tok, HGC_TK_GT); }
		<init> ">=" { return token(lx, t, lx->tok, HGC_TK_GE); }
		<init> "&&" { return token(lx, t, lx->tok, HGC_TK_ANDAND); }
		<init> "||" { return token(lx, t, lx->tok, HGC_TK_OROR); }
		<init> "!" { return token(lx, t, lx->tok, HGC_TK_NOT); }
		<init> * { return badchar(lx, lx->tok, "unexpected character", ""); }

		<comment> "*/" => init { continue; }
		<comment> "\n" { newline(lx); continue; }
		<comment> [^] { continue; }
		<comment> $ {
			lx->line = start_line, lx->bol = start_bol;
			return lexerr(lx, start, "unterminated comment");
		}

		<str> ["] => init { return token(lx, t, start, HGC_TK_STRING); }
		<str> "\\" [^] {
			if (lx->tok[1] == '\n')
				return lexerr(lx, start, "unterminated string");
			if (!strchr("\"\\nt", lx->tok[1]) || !lx->tok[1])
				return badchar(lx, lx->tok, "unknown escape sequence", "\\");
			continue;
		}
		<str> "\n" { return lexerr(lx, start, "unterminated string"); }
		<str> [^] { continue; }
		<str> $ { return lexerr(lx, start, "unterminated string"); }
	*/
	}
}
