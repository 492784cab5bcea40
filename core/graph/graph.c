/* graph.c: building graphs: inputs, ops, attributes, outputs; shape helpers for the ops. */
#include "graph_int.h"

#include <stdlib.h>
#include <string.h>

/* An empty graph; everything it will hold lives in its arena. */
struct hgc_graph *hgc_graph_new(void)
{
	struct hgc_graph *g = hgc_xcalloc(1, sizeof(*g));

	hgc_arena_init(&g->arena);
	hgc_vec_init(&g->ops, sizeof(struct hgc_op *));
	hgc_vec_init(&g->tensors, sizeof(struct hgc_tensor *));
	hgc_vec_init(&g->inputs, sizeof(struct hgc_tensor *));
	hgc_vec_init(&g->outputs, sizeof(struct hgc_tensor *));
	return g;
}

/* Free the graph, its arena and every op, tensor and attribute in it. */
void hgc_graph_free(struct hgc_graph *g)
{
	if (!g)
		return;
	hgc_vec_release(&g->ops);
	hgc_vec_release(&g->tensors);
	hgc_vec_release(&g->inputs);
	hgc_vec_release(&g->outputs);
	hgc_arena_release(&g->arena);
	free(g);
}

/* Dense row-major strides for t's dims. */
void hgc_tensor_set_dense(struct hgc_tensor *t)
{
	int64_t s = 1;
	int i;

	memset(&t->layout, 0, sizeof(t->layout));
	t->layout.kind = HGC_LAYOUT_PLAIN;
	for (i = t->ndims - 1; i >= 0; i--) {
		t->layout.strides[i] = s;
		s *= t->dims[i];
	}
}

/* A fresh tensor registered in g, with the next id. */
static struct hgc_tensor *new_tensor(struct hgc_graph *g, enum hgc_dtype dt,
				     const struct hgc_loc *loc)
{
	struct hgc_tensor *t = hgc_arena_calloc(&g->arena, 1, sizeof(*t));

	t->id = g->next_id++;
	t->dtype = dt;
	if (loc)
		t->loc = *loc;
	*(struct hgc_tensor **)hgc_vec_push(&g->tensors) = t;
	return t;
}

/* A graph input (variable or constant) with a dense plain layout. */
struct hgc_tensor *hgc_graph_add_input(struct hgc_graph *g, const char *name, enum hgc_dtype dt,
				       int ndims, const int64_t *dims, enum hgc_property prop,
				       const struct hgc_loc *loc)
{
	struct hgc_tensor *t;
	int i;

	if (ndims < 0 || ndims > HGC_MAX_DIMS)
		hgc_bug("graph input with %d dims", ndims);
	t = new_tensor(g, dt, loc);
	t->name = name ? hgc_arena_strdup(&g->arena, name) : NULL;
	t->ndims = ndims;
	for (i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			hgc_bug("graph input with a negative dim");
		t->dims[i] = dims[i];
	}
	t->prop = prop;
	hgc_tensor_set_dense(t);
	*(struct hgc_tensor **)hgc_vec_push(&g->inputs) = t;
	return t;
}

/* A new op reading in[0..nin) with one output tensor of dtype out_dt (UNDEF: inferred). */
struct hgc_op *hgc_graph_add_op(struct hgc_graph *g, enum hgc_op_kind kind, int nin,
				struct hgc_tensor *const *in, enum hgc_dtype out_dt,
				const struct hgc_loc *loc)
{
	struct hgc_op *op = hgc_arena_calloc(&g->arena, 1, sizeof(*op));
	struct hgc_tensor *t;

	if ((unsigned)kind >= HGC_OP_COUNT || nin < 0)
		hgc_bug("add_op: kind %d with %d inputs", (int)kind, nin);
	op->id = (int)g->ops.len;
	op->kind = kind;
	op->nin = nin;
	op->in = hgc_arena_calloc(&g->arena, (size_t)nin + 1, sizeof(*op->in));
	if (nin)
		memcpy(op->in, in, (size_t)nin * sizeof(*in));
	if (loc)
		op->loc = *loc;
	t = new_tensor(g, out_dt, loc);
	t->producer = op;
	t->port = 0;
	hgc_tensor_set_dense(t);
	op->nout = 1;
	op->out = hgc_arena_calloc(&g->arena, 1, sizeof(*op->out));
	op->out[0] = t;
	*(struct hgc_op **)hgc_vec_push(&g->ops) = op;
	return op;
}

/* Copy a's list or string payload into the arena (graph_int.h). */
void hgc_attr_copy_payload(struct hgc_graph *g, struct hgc_attr *a)
{
	if (a->type == HGC_ATTR_STRING) {
		a->v.s = hgc_arena_strdup(&g->arena, a->v.s ? a->v.s : "");
	} else if (a->type == HGC_ATTR_INTS) {
		int64_t *v = hgc_arena_calloc(&g->arena, (size_t)a->n + 1, sizeof(*v));

		if (a->n)
			memcpy(v, a->v.ints, (size_t)a->n * sizeof(*v));
		a->v.ints = v;
	} else if (a->type == HGC_ATTR_FLOATS) {
		double *v = hgc_arena_calloc(&g->arena, (size_t)a->n + 1, sizeof(*v));

		if (a->n)
			memcpy(v, a->v.floats, (size_t)a->n * sizeof(*v));
		a->v.floats = v;
	}
}

/* Turn an INT or INTS given for a FLOAT or FLOATS schema slot into floats (in the arena). */
static void widen_to_float(struct hgc_graph *g, struct hgc_attr *a, enum hgc_attr_type want)
{
	if (want == HGC_ATTR_FLOAT && a->type == HGC_ATTR_INT) {
		a->type = HGC_ATTR_FLOAT;
		a->v.f = (double)a->v.i;
	} else if (want == HGC_ATTR_FLOATS && a->type == HGC_ATTR_INTS) {
		double *v = hgc_arena_calloc(&g->arena, (size_t)a->n + 1, sizeof(*v));
		int i;

		for (i = 0; i < a->n; i++)
			v[i] = (double)a->v.ints[i];
		a->type = HGC_ATTR_FLOATS;
		a->v.floats = v;
	}
}

/* Add or replace an attribute; ints given for floats the schema wants become floats. */
void hgc_op_set_attr(struct hgc_graph *g, struct hgc_op *op, const struct hgc_attr *a)
{
	const struct hgc_attr_spec *spec = hgc_op_attr_spec(op->kind, a->name);
	struct hgc_attr copy = *a;
	struct hgc_attr *attrs;
	int i;

	copy.name = hgc_arena_strdup(&g->arena, a->name);
	hgc_attr_copy_payload(g, &copy);
	if (spec)
		widen_to_float(g, &copy, spec->type);
	for (i = 0; i < op->nattr; i++) {
		if (!strcmp(op->attrs[i].name, a->name)) {
			op->attrs[i] = copy;
			return;
		}
	}
	attrs = hgc_arena_calloc(&g->arena, (size_t)op->nattr + 1, sizeof(*attrs));
	if (op->nattr)
		memcpy(attrs, op->attrs, (size_t)op->nattr * sizeof(*attrs));
	attrs[op->nattr++] = copy;
	op->attrs = attrs;
}

/* Check the number of inputs against the table. */
static int check_arity(const struct hgc_op *op, struct hgc_diag *d)
{
	const struct hgc_op_info *info = &hgc_op_table[op->kind];
	int i;

	if (op->nin < info->min_in || op->nin > info->max_in) {
		if (info->min_in == info->max_in)
			return hgc_op_error(op, d, "expects %d input%s, got %d", info->min_in,
					    info->min_in == 1 ? "" : "s", op->nin);
		if (info->max_in >= 64)
			return hgc_op_error(op, d, "expects at least %d input%s, got %d",
					    info->min_in, info->min_in == 1 ? "" : "s", op->nin);
		return hgc_op_error(op, d, "expects %d to %d inputs, got %d", info->min_in,
				    info->max_in, op->nin);
	}
	for (i = 0; i < op->nin; i++) {
		if (!op->in[i])
			return hgc_op_error(op, d, "input %d is missing", i);
		if (op->in[i]->dtype == HGC_DT_UNDEF)
			return hgc_op_error(op, d, "input %d has no type (its producer failed)", i);
	}
	return 0;
}

/* Check arity and attributes, then infer the output's dtype and shape. */
int hgc_graph_finish_op(struct hgc_graph *g, struct hgc_op *op, struct hgc_diag *d)
{
	struct hgc_tensor *t = op->out[0];

	(void)g;
	if (check_arity(op, d) || hgc_op_check_attrs(op, d))
		return -1;
	if (hgc_op_table[op->kind].infer(op, d))
		return -1;
	if (t->dtype == HGC_DT_UNDEF)
		hgc_bug("%s: infer left the output type undefined", hgc_op_table[op->kind].name);
	hgc_tensor_set_dense(t);
	return 0;
}

/* Mark t as a graph output (in call order). */
void hgc_graph_add_output(struct hgc_graph *g, struct hgc_tensor *t)
{
	*(struct hgc_tensor **)hgc_vec_push(&g->outputs) = t;
}

/* Number of elements (1 for a scalar). */
int64_t hgc_tensor_nelems(const struct hgc_tensor *t)
{
	return hgc_dims_prod(t->ndims, t->dims);
}

/* Whether t is stored plain, dense and row-major (dims of 1 may have any stride). */
bool hgc_tensor_is_dense(const struct hgc_tensor *t)
{
	int64_t s = 1;
	int i;

	if (t->layout.kind != HGC_LAYOUT_PLAIN)
		return false;
	for (i = t->ndims - 1; i >= 0; s *= t->dims[i--])
		if (t->dims[i] > 1 && t->layout.strides[i] != s)
			return false;
	return true;
}

/* Bytes of a dense buffer holding t. */
size_t hgc_tensor_nbytes(const struct hgc_tensor *t)
{
	return (size_t)hgc_tensor_nelems(t) * hgc_dtype_size(t->dtype);
}

/* The op kind called name[0..len) (oneDNN spelling), HGC_OP_COUNT if none. */
enum hgc_op_kind hgc_op_kind_parse(const char *name, size_t len)
{
	int i;

	for (i = 0; i < HGC_OP_COUNT; i++)
		if (strlen(hgc_op_table[i].name) == len && !memcmp(hgc_op_table[i].name, name, len))
			return (enum hgc_op_kind)i;
	return HGC_OP_COUNT;
}

/* Record "Kind: message" at the op's location; returns -1. */
int hgc_op_error(const struct hgc_op *op, struct hgc_diag *d, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return hgc_error(d, op->loc.file ? &op->loc : NULL, "%s: %s",
			 hgc_op_table[op->kind].name, msg);
}

/*
 * Set the output dtype.  A caller's preset must equal the inferred type, but
 * a float result may be stored as either f32 or bf16.
 */
int hgc_op_set_out_dtype(struct hgc_op *op, enum hgc_dtype inferred, struct hgc_diag *d)
{
	struct hgc_tensor *t = op->out[0];

	if (t->dtype == HGC_DT_UNDEF || t->dtype == inferred) {
		t->dtype = inferred;
		return 0;
	}
	if (hgc_dtype_is_float(t->dtype) && hgc_dtype_is_float(inferred))
		return 0;
	return hgc_op_error(op, d, "the output type cannot be %s (expected %s)",
			    hgc_dtype_name(t->dtype), hgc_dtype_name(inferred));
}

/* Give the output its shape. */
void hgc_op_set_out_shape(struct hgc_op *op, int ndims, const int64_t *dims)
{
	struct hgc_tensor *t = op->out[0];
	int i;

	if (ndims < 0 || ndims > HGC_MAX_DIMS)
		hgc_bug("output with %d dims", ndims);
	t->ndims = ndims;
	for (i = 0; i < ndims; i++)
		t->dims[i] = dims[i];
	for (; i < HGC_MAX_DIMS; i++)
		t->dims[i] = 0;
}

/* "[2,3]" into buf (at least HGC_DIMS_BUF bytes). */
const char *hgc_dims_str(char *buf, int ndims, const int64_t *dims)
{
	size_t n = 0;
	int i;

	buf[n++] = '[';
	for (i = 0; i < ndims; i++)
		n += (size_t)snprintf(buf + n, HGC_DIMS_BUF - n, "%s%lld", i ? "," : "",
				      (long long)dims[i]);
	snprintf(buf + n, HGC_DIMS_BUF - n, "]");
	return buf;
}

/* Product of dims (1 for none), INT64_MAX if it overflows. */
int64_t hgc_dims_prod(int ndims, const int64_t *dims)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < ndims; i++) {
		if (dims[i] > 0 && n > INT64_MAX / dims[i])
			return INT64_MAX;
		n *= dims[i];
	}
	return n;
}

/* Map axis in [-rank, rank) to [0, rank). */
int hgc_norm_axis(int64_t axis, int rank, int *out)
{
	if (axis < -rank || axis >= rank)
		return -1;
	*out = (int)(axis < 0 ? axis + rank : axis);
	return 0;
}

/* Numpy broadcasting: align right; each pair of dims must be equal or contain a 1. */
int hgc_broadcast(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out)
{
	int n = na > nb ? na : nb, i;

	for (i = 0; i < n; i++) {
		int64_t x = i < n - na ? 1 : a[i - (n - na)];
		int64_t y = i < n - nb ? 1 : b[i - (n - nb)];

		if (x != y && x != 1 && y != 1)
			return -1;
		out[i] = x == 1 ? y : x;
	}
	*nout = n;
	return 0;
}

/* Check input i's dtype against a mask of allowed types. */
int hgc_op_want_dtype(const struct hgc_op *op, int i, const char *role, unsigned mask,
		      struct hgc_diag *d)
{
	enum hgc_dtype dt = op->in[i]->dtype;
	char allowed[128] = "";
	size_t n = 0;
	int k;

	if (mask & (1u << dt))
		return 0;
	for (k = 1; k < HGC_DT_COUNT; k++)
		if (mask & (1u << k))
			n += (size_t)snprintf(allowed + n, sizeof(allowed) - n, "%s%s",
					      n ? ", " : "", hgc_dtype_name((enum hgc_dtype)k));
	return hgc_op_error(op, d, "%s has type %s (expected %s)", role, hgc_dtype_name(dt),
			    allowed);
}
