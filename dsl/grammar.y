/*
 * grammar.y: the Lemon grammar of the hgc language: one grammar for the
 * three kinds of top-level block (spec, config, template) and include.
 * Actions only build AST nodes in the arena (dsl_int.h says what each
 * node's children mean); every check happens later, in check.c.  The parser
 * stops at the first syntax error (YYNOERRORRECOVERY).
 */

%include {
#include <assert.h>
#include <stdlib.h>

#include "dsl/dsl_int.h"

#define YYNOERRORRECOVERY 1
/* Deep enough for any sane nesting; deeper input is reported, not a crash. */
#define YYSTACKDEPTH 200

#define NODE(k, t) hgc_dsl_node(ps, HGC_AST_##k, &(t))
#define NODE2(k, t, a, b) hgc_dsl_node2(ps, HGC_AST_##k, &(t), (a), (b))
/* Place node A at token K (the construct starts before its name). */
#define AT(A, K) ((A)->loc.line = (K).line, (A)->loc.col = (K).col)
}

%name hgc_dsl_parser
%token_prefix HGC_TK_
%token_type {struct hgc_tok}
%default_type {struct hgc_ast *}
%extra_context {struct hgc_parse *ps}

%syntax_error { hgc_dsl_syntax_error(ps, yymajor, &yyminor); }
%stack_overflow { hgc_dsl_stack_overflow(ps); }

/* Punctuation and literals first, then keywords (dsl_int.h lists them all). */
%token ID INT FLOAT STRING LBRACE RBRACE LP RP LB RB COMMA SEMI COLON ASSIGN DOT
       DOTDOT ARROW PLUS MINUS STAR SLASH PERCENT EQ NE LT LE GT GE ANDAND OROR NOT.
%token INCLUDE SPEC CONFIG TEMPLATE INPUT CONST OUTPUT EXPECT ERROR BENCH GRAPH TRUE
       FALSE USE PIN PASS FOR PARAM LET LAYOUT TENSOR PARALLEL ANCHOR COST STEP IN
       PACKED IF ELSE ONE_OF RANGE DIVIDES MULTIPLE_OF DIVISOR_OF GRID.

/* A keyword that cannot stand where it is is read as an identifier. */
%fallback ID INCLUDE SPEC CONFIG TEMPLATE INPUT CONST OUTPUT EXPECT ERROR BENCH GRAPH
       USE PIN PASS FOR PARAM LET LAYOUT TENSOR PARALLEL ANCHOR COST STEP IN PACKED
       IF ELSE ONE_OF RANGE DIVIDES MULTIPLE_OF DIVISOR_OF GRID.

%left OROR.
%left ANDAND.
%nonassoc EQ NE.
%nonassoc LT LE GT GE.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right NOT.

%type stmts {struct hgc_ast_list}
%type cstmts {struct hgc_ast_list}
%type tstmts {struct hgc_ast_list}
%type kvs {struct hgc_ast_list}
%type tkvs {struct hgc_ast_list}
%type names {struct hgc_ast_list}
%type dims {struct hgc_ast_list}
%type args {struct hgc_ast_list}
%type values {struct hgc_ast_list}
%type operands {struct hgc_ast_list}
%type exprs {struct hgc_ast_list}
%type targs {struct hgc_ast_list}
%type constraints {struct hgc_ast_list}
%type lets {struct hgc_ast_list}
%type iters {struct hgc_ast_list}
%type slices {struct hgc_ast_list}
%type ckw {struct hgc_tok}

/* ---- files ---- */

file ::= items.
items ::= .
items ::= items item(B).			{ if (B) hgc_dsl_list_add(&ps->items, B); }

item(A) ::= SEMI.				{ A = NULL; }
item(A) ::= INCLUDE STRING(P) SEMI.		{ A = NODE(INCLUDE, P); }
item(A) ::= SPEC ID(N) LBRACE stmts(S) RBRACE.	{ A = NODE2(SPEC, N, S.head, NULL); }
item(A) ::= CONFIG ID(N) LBRACE cstmts(S) RBRACE. { A = NODE2(CONFIG, N, S.head, NULL); }
item(A) ::= TEMPLATE(T) ID(N) FOR ID(O) LP operands(I) RP ARROW operands(R)
	LBRACE tstmts(B) RBRACE. {
	A = NODE2(TEMPLATE, N, NODE(NAME, O), I.head);
	AT(A, T);
	A->c = R.head, A->d = B.head;
}

/* ---- specs ---- */

stmts(A) ::= .					{ A.head = A.tail = NULL; }
stmts(A) ::= stmts(L) stmt(S).			{ A = L; if (S) hgc_dsl_list_add(&A, S); }

stmt(A) ::= SEMI.				{ A = NULL; }
stmt(A) ::= INPUT ID(N) COLON type(T) init(G) SEMI. { A = NODE2(INPUT, N, T, G); }
stmt(A) ::= CONST ID(N) COLON type(T) init(G) SEMI. { A = NODE2(CONST, N, T, G); }
stmt(A) ::= ID(N) ASSIGN call(C) SEMI.		{ A = NODE2(OP, N, NULL, C); }
stmt(A) ::= ID(N) COLON ID(T) ASSIGN call(C) SEMI. { A = NODE2(OP, N, NODE(NAME, T), C); }
stmt(A) ::= OUTPUT(K) names(L) SEMI.		{ A = NODE2(OUTPUT, K, L.head, NULL); }
stmt(A) ::= CONFIG ID(N) SEMI.			{ A = NODE(USE_CONFIG, N); }
stmt(A) ::= EXPECT(K) LBRACE kvs(L) RBRACE.	{ A = NODE2(EXPECT, K, L.head, NULL); }
stmt(A) ::= EXPECT ID(N) ASSIGN gen(G) SEMI.	{ A = NODE2(GOLDEN, N, G, NULL); }
stmt(A) ::= EXPECT ERROR STRING(S) SEMI.	{ A = NODE(EXPECT_ERROR, S); }
stmt(A) ::= BENCH(K) LBRACE kvs(L) RBRACE.	{ A = NODE2(BENCH, K, L.head, NULL); }
stmt(A) ::= GRAPH(K) LBRACE stmts(L) RBRACE.	{ A = NODE2(GRAPH, K, L.head, NULL); }

type(A) ::= ID(T) LB RB.			{ A = NODE(TYPE, T); }
type(A) ::= ID(T) LB dims(D) RB.		{ A = NODE2(TYPE, T, D.head, NULL); }
dims(A) ::= dim(D).				{ A = hgc_dsl_list1(D); }
dims(A) ::= dims(L) COMMA dim(D).		{ A = L; hgc_dsl_list_add(&A, D); }
dim(A) ::= INT(I).				{ A = NODE(INT, I); }
dim(A) ::= MINUS(M) INT(I).			{ A = NODE(INT, I); A->neg = true; AT(A, M); }

init(A) ::= .					{ A = NULL; }
init(A) ::= ASSIGN gen(G).			{ A = G; }
gen(A) ::= call(C).				{ A = C; }
gen(A) ::= list(L).				{ A = L; }

call(A) ::= ID(F) LP RP.			{ A = NODE(CALL, F); }
call(A) ::= ID(F) LP args(L) RP.		{ A = NODE2(CALL, F, L.head, NULL); }
args(A) ::= arg(X).				{ A = hgc_dsl_list1(X); }
args(A) ::= args(L) COMMA arg(X).		{ A = L; hgc_dsl_list_add(&A, X); }
arg(A) ::= value(V).				{ A = V; }
arg(A) ::= ID(N) ASSIGN value(V).		{ A = NODE2(NAMED, N, V, NULL); }

value(A) ::= INT(T).				{ A = NODE(INT, T); }
value(A) ::= FLOAT(T).				{ A = NODE(FLOAT, T); }
value(A) ::= MINUS(M) INT(T).			{ A = NODE(INT, T); A->neg = true; AT(A, M); }
value(A) ::= MINUS(M) FLOAT(T).			{ A = NODE(FLOAT, T); A->neg = true; AT(A, M); }
value(A) ::= TRUE(T).				{ A = NODE(BOOL, T); }
value(A) ::= FALSE(T).				{ A = NODE(BOOL, T); }
value(A) ::= STRING(T).				{ A = NODE(STRING, T); }
value(A) ::= ID(T).				{ A = NODE(NAME, T); }
value(A) ::= list(L).				{ A = L; }
list(A) ::= LB(T) RB.				{ A = NODE(LIST, T); }
list(A) ::= LB(T) values(L) RB.			{ A = NODE2(LIST, T, L.head, NULL); }
values(A) ::= value(V).				{ A = hgc_dsl_list1(V); }
values(A) ::= values(L) COMMA value(V).		{ A = L; hgc_dsl_list_add(&A, V); }

names(A) ::= ID(N).				{ A = hgc_dsl_list1(NODE(NAME, N)); }
names(A) ::= names(L) COMMA ID(N).		{ A = L; hgc_dsl_list_add(&A, NODE(NAME, N)); }

kvs(A) ::= .					{ A.head = A.tail = NULL; }
kvs(A) ::= kvs(L) ID(N) ASSIGN value(V) SEMI. {
	A = L;
	hgc_dsl_list_add(&A, NODE2(NAMED, N, V, NULL));
}

/* ---- configs ---- */

cstmts(A) ::= .					{ A.head = A.tail = NULL; }
cstmts(A) ::= cstmts(L) cstmt(S).		{ A = L; if (S) hgc_dsl_list_add(&A, S); }
cstmt(A) ::= SEMI.				{ A = NULL; }
cstmt(A) ::= ID(K) ASSIGN value(V) SEMI.	{ A = NODE2(SETTING, K, V, NULL); }
cstmt(A) ::= USE ID(T) FOR ID(O) SEMI.		{ A = NODE2(USE, T, NODE(NAME, O), NULL); }
cstmt(A) ::= PIN ID(T) DOT ID(P) ASSIGN value(V) SEMI. { A = NODE2(PIN, T, NODE(NAME, P), V); }
cstmt(A) ::= PASS ID(P) ASSIGN value(V) SEMI.	{ A = NODE2(PASS, P, V, NULL); }

/* ---- templates (checked by dsl/template*.c, compiled by dsl/tmplc/) ---- */

operands(A) ::= operand(X).			{ A = hgc_dsl_list1(X); }
operands(A) ::= operands(L) COMMA operand(X).	{ A = L; hgc_dsl_list_add(&A, X); }
operand(A) ::= ID(N) COLON LB exprs(D) RB.	{ A = NODE2(OPERAND, N, NULL, D.head); }
operand(A) ::= ID(N) COLON ID(T) LB exprs(D) RB. { A = NODE2(OPERAND, N, NODE(NAME, T), D.head); }

tstmts(A) ::= .					{ A.head = A.tail = NULL; }
tstmts(A) ::= tstmts(L) tstmt(S).		{ A = L; if (S) hgc_dsl_list_add(&A, S); }

tstmt(A) ::= SEMI.				{ A = NULL; }
tstmt(A) ::= PARAM(K) names(L) COLON constraints(C) SEMI. { A = NODE2(PARAM, K, L.head, C.head); }
tstmt(A) ::= LET(K) lets(L) SEMI.		{ A = NODE2(LET, K, L.head, NULL); }
tstmt(A) ::= LAYOUT ID(N) COLON LB exprs(D) RB packing(P) SEMI. { A = NODE2(LAYOUT, N, D.head, P); }
tstmt(A) ::= TENSOR ID(N) COLON ID(T) LB exprs(D) RB SEMI. {
	A = NODE2(TENSOR, N, NODE2(TYPE, T, D.head, NULL), NULL);
}
tstmt(A) ::= PARALLEL(K) iters(L) LBRACE tstmts(B) RBRACE. {
	A = NODE2(PARALLEL, K, L.head, B.head);
}
tstmt(A) ::= FOR(K) iter(I) LBRACE tstmts(B) RBRACE. { A = NODE2(FOR, K, I, B.head); }
tstmt(A) ::= ANCHOR ID(N) COLON expr(S) SEMI.	{ A = NODE2(ANCHOR, N, S, NULL); }
tstmt(A) ::= ANCHOR ID(N) COLON expr(S) ARROW expr(T) SEMI. { A = NODE2(ANCHOR, N, S, T); }
tstmt(A) ::= COST ID(N) LBRACE tkvs(L) RBRACE.	{ A = NODE2(COST, N, L.head, NULL); }
tstmt(A) ::= IF(K) expr(C) LBRACE tstmts(T) RBRACE. { A = NODE2(IF, K, C, T.head); }
tstmt(A) ::= IF(K) expr(C) LBRACE tstmts(T) RBRACE ELSE LBRACE tstmts(E) RBRACE. {
	A = NODE2(IF, K, C, T.head);
	A->c = E.head;
}
tstmt(A) ::= ID(F) LP targs(L) RP SEMI.		{ A = NODE2(EVAL, F, NODE2(CALL, F, L.head, NULL), NULL); }
tstmt(A) ::= ID(F) LP RP SEMI.			{ A = NODE2(EVAL, F, NODE(CALL, F), NULL); }
tstmt(A) ::= ID(N) ASSIGN(K) expr(E) SEMI. {
	A = NODE2(ASSIGN, K, NODE(NAME, N), E);
	A->loc = A->a->loc;
}
tstmt(A) ::= ID(N) LB slices(S) RB ASSIGN(K) expr(E) SEMI. {
	A = NODE2(ASSIGN, K, NODE2(INDEX, N, S.head, NULL), E);
	A->loc = A->a->loc;
}

constraints(A) ::= constraint(X).		{ A = hgc_dsl_list1(X); }
constraints(A) ::= constraints(L) COMMA constraint(X). { A = L; hgc_dsl_list_add(&A, X); }
constraint(A) ::= ckw(K) LP exprs(L) RP. {
	A = NODE2(CONSTRAINT, K, L.head, NULL);
	A->op = hgc_dsl_keyword(K.z, (size_t)K.n);
}
constraint(A) ::= expr(E).			{ A = E; }
ckw(A) ::= ONE_OF(K).				{ A = K; }
ckw(A) ::= RANGE(K).				{ A = K; }
ckw(A) ::= DIVIDES(K).				{ A = K; }
ckw(A) ::= MULTIPLE_OF(K).			{ A = K; }
ckw(A) ::= DIVISOR_OF(K).			{ A = K; }
ckw(A) ::= GRID(K).				{ A = K; }

lets(A) ::= let(X).				{ A = hgc_dsl_list1(X); }
lets(A) ::= lets(L) COMMA let(X).		{ A = L; hgc_dsl_list_add(&A, X); }
let(A) ::= ID(N) ASSIGN expr(E).		{ A = NODE2(NAMED, N, E, NULL); }
tkvs(A) ::= .					{ A.head = A.tail = NULL; }
tkvs(A) ::= tkvs(L) ID(N) ASSIGN expr(E) SEMI. {
	A = L;
	hgc_dsl_list_add(&A, NODE2(NAMED, N, E, NULL));
}

packing(A) ::= .				{ A = NULL; }
packing(A) ::= PACKED(K).			{ A = NODE(PACKED, K); }
packing(A) ::= PACKED(K) LP exprs(L) RP.	{ A = NODE2(PACKED, K, L.head, NULL); }

iters(A) ::= iter(X).				{ A = hgc_dsl_list1(X); }
iters(A) ::= iters(L) COMMA iter(X).		{ A = L; hgc_dsl_list_add(&A, X); }
iter(A) ::= ID(V) IN expr(L) DOTDOT expr(H).	{ A = NODE2(ITER, V, L, H); }
iter(A) ::= ID(V) IN expr(L) DOTDOT expr(H) STEP expr(S). { A = NODE2(ITER, V, L, H); A->c = S; }

targs(A) ::= targ(X).				{ A = hgc_dsl_list1(X); }
targs(A) ::= targs(L) COMMA targ(X).		{ A = L; hgc_dsl_list_add(&A, X); }
targ(A) ::= expr(E).				{ A = E; }
targ(A) ::= ID(N) ASSIGN expr(E).		{ A = NODE2(NAMED, N, E, NULL); }
targ(A) ::= ID(V) IN expr(L) DOTDOT expr(H).	{ A = NODE2(ITER, V, L, H); }

exprs(A) ::= expr(X).				{ A = hgc_dsl_list1(X); }
exprs(A) ::= exprs(L) COMMA expr(X).		{ A = L; hgc_dsl_list_add(&A, X); }

expr(A) ::= INT(T).				{ A = NODE(INT, T); }
expr(A) ::= FLOAT(T).				{ A = NODE(FLOAT, T); }
expr(A) ::= TRUE(T).				{ A = NODE(BOOL, T); }
expr(A) ::= FALSE(T).				{ A = NODE(BOOL, T); }
expr(A) ::= ID(T).				{ A = NODE(NAME, T); }
expr(A) ::= ID(F) LP RP.			{ A = NODE(CALL, F); }
expr(A) ::= ID(F) LP targs(L) RP.		{ A = NODE2(CALL, F, L.head, NULL); }
expr(A) ::= ID(T) LB slices(S) RB.		{ A = NODE2(INDEX, T, S.head, NULL); }
expr(A) ::= LP expr(E) RP.			{ A = E; }
expr(A) ::= MINUS(K) expr(E). [NOT]		{ A = NODE2(UNARY, K, E, NULL); A->op = HGC_TK_MINUS; }
expr(A) ::= NOT(K) expr(E).			{ A = NODE2(UNARY, K, E, NULL); A->op = HGC_TK_NOT; }
expr(A) ::= expr(X) PLUS(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_PLUS; }
expr(A) ::= expr(X) MINUS(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_MINUS; }
expr(A) ::= expr(X) STAR(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_STAR; }
expr(A) ::= expr(X) SLASH(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_SLASH; }
expr(A) ::= expr(X) PERCENT(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_PERCENT; }
expr(A) ::= expr(X) EQ(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_EQ; }
expr(A) ::= expr(X) NE(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_NE; }
expr(A) ::= expr(X) LT(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_LT; }
expr(A) ::= expr(X) LE(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_LE; }
expr(A) ::= expr(X) GT(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_GT; }
expr(A) ::= expr(X) GE(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_GE; }
expr(A) ::= expr(X) ANDAND(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_ANDAND; }
expr(A) ::= expr(X) OROR(K) expr(Y).		{ A = NODE2(BINARY, K, X, Y); A->op = HGC_TK_OROR; }

slices(A) ::= slice(X).				{ A = hgc_dsl_list1(X); }
slices(A) ::= slices(L) COMMA slice(X).		{ A = L; hgc_dsl_list_add(&A, X); }
slice(A) ::= expr(E).				{ A = NODE2(SLICE, E->tok, E, NULL); A->loc = E->loc; }
slice(A) ::= expr(E) COLON expr(L).		{ A = NODE2(SLICE, E->tok, E, L); A->loc = E->loc; A->op = 1; }
slice(A) ::= expr(E) COLON expr(L) COLON expr(S). {
	A = NODE2(SLICE, E->tok, E, L);
	A->c = S, A->loc = E->loc, A->op = 1;
}
slice(A) ::= COLON(K).				{ A = NODE(SLICE, K); A->op = 1; }
