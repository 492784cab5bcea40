/* bcast.c: walking an output shape with the offsets of numpy-broadcast sources. */
#include "graph_int.h"

#include <string.h>

/* Start at index 0 of out; source k is aligned right and gets stride 0 where it broadcasts. */
void hgc_bcast_init(struct hgc_bcast *b, const struct hgc_tensor *out, int nsrc,
		    const struct hgc_tensor *const *src)
{
	int k, i;

	if (nsrc > HGC_BCAST_MAX)
		hgc_bug("bcast of %d sources", nsrc);
	memset(b, 0, sizeof(*b));
	b->nd = out->ndims;
	memcpy(b->dims, out->dims, sizeof(b->dims));
	b->nsrc = nsrc;
	for (k = 0; k < nsrc; k++) {
		const struct hgc_tensor *s = src[k];
		int lead = b->nd - s->ndims;
		int64_t stride = 1;

		for (i = s->ndims - 1; i >= 0; i--) {
			b->strides[k][lead + i] = s->dims[i] == 1 ? 0 : stride;
			stride *= s->dims[i];
		}
	}
}

/* Step to the next output index (row-major), updating the source offsets. */
void hgc_bcast_next(struct hgc_bcast *b)
{
	int i, k;

	for (i = b->nd - 1; i >= 0; i--) {
		if (++b->idx[i] < b->dims[i]) {
			for (k = 0; k < b->nsrc; k++)
				b->off[k] += b->strides[k][i];
			return;
		}
		for (k = 0; k < b->nsrc; k++)
			b->off[k] -= b->strides[k][i] * (b->dims[i] - 1);
		b->idx[i] = 0;
	}
}

/* Elements before and after axis: element (o, a, i) is at (o * dims[axis] + a) * inner + i. */
void hgc_axis_split(const struct hgc_tensor *t, int axis, int64_t *outer, int64_t *inner)
{
	*outer = hgc_dims_prod(axis, t->dims);
	*inner = hgc_dims_prod(t->ndims - axis - 1, t->dims + axis + 1);
}
