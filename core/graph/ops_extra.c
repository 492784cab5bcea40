/*
 * ops_extra.c: basic ops that oneDNN Graph has no kind for but that the
 * decomposition of complex ops needs (core/graph/passes/decompose.c):
 * Erf, for GELU in its exact form.
 */
#include "graph_int.h"

#include <math.h>

const struct hgc_attr_spec hgc_op_erf_op_attrs[] = {HGC_ATTR_END};

/* Erf: a float src, the same type and shape out. */
int hgc_op_erf_op_infer(struct hgc_op *op, struct hgc_diag *d)
{
	if (hgc_op_want_dtype(op, 0, "src", HGC_DTM_FLOAT, d))
		return -1;
	hgc_op_set_out_shape(op, op->in[0]->ndims, op->in[0]->dims);
	return hgc_op_set_out_dtype(op, op->in[0]->dtype, d);
}

/* Erf reference: the error function in double, rounded once. */
void hgc_op_erf_op_ref(const struct hgc_op *op, const void *const *in, void *const *out)
{
	const struct hgc_tensor *s = op->in[0];
	int64_t i, n = hgc_tensor_nelems(s);

	for (i = 0; i < n; i++)
		hgc_store_f64(op->out[0]->dtype, out[0], i, erf(hgc_load_f64(s->dtype, in[0], i)));
}
