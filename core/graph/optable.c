/* optable.c: the op table, one row per HGC_OP_LIST entry. */
#include "graph_int.h"

/* ORDER: indexed by enum hgc_op_kind, both built from HGC_OP_LIST. */
const struct hgc_op_info hgc_op_table[HGC_OP_COUNT] = {
#define X(e, n, c, lo, hi, f)                                                              \
	[HGC_OP_##e] = {n, HGC_CAT_##c, lo, hi, hgc_op_##f##_attrs, hgc_op_##f##_infer,    \
			hgc_op_##f##_ref},
	HGC_OP_LIST(X)
#undef X
};
