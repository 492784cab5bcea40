/* compare.c: element-wise comparison of an output with what it should be. */
#include "tools/tools.h"

#include <math.h>
#include <string.h>

/* The error of got against want, and whether it is out of tolerance. */
static double elem_err(double got, double want, double rtol, double atol, bool *bad)
{
	double err;

	if (isnan(got) || isnan(want)) {
		*bad = !(isnan(got) && isnan(want));
		return *bad ? INFINITY : 0;
	}
	if (got == want) {
		*bad = false;
		return 0;
	}
	err = fabs(got - want);
	*bad = !(err <= atol + rtol * fabs(want));
	return isnan(err) ? INFINITY : err;
}

/*
 * Compare got with want, both dense buffers of t's dtype and shape:
 * |got - want| <= atol + rtol * |want| (hgc_tool_tolerance gives integers
 * 0 and 0, or 0 and one step), NaN only matches NaN.
 */
void hgc_tool_compare(const struct hgc_tensor *t, const void *got, const void *want,
		      double rtol, double atol, struct hgc_tool_cmp *c)
{
	int64_t n = hgc_tensor_nelems(t);
	bool bad;

	memset(c, 0, sizeof(*c));
	c->first_bad = -1;
	for (int64_t i = 0; i < n; i++) {
		double g = hgc_load_f64(t->dtype, got, i), w = hgc_load_f64(t->dtype, want, i);
		double err = elem_err(g, w, rtol, atol, &bad);

		if (err > c->max_err)
			c->max_err = err;
		if (bad && !c->nbad++) {
			c->first_bad = i;
			c->got = g;
			c->want = w;
		}
	}
}

/* The tolerances for an output of type dt: the spec's, else the dtype's
   defaults.  Integer outputs compare exactly, but for one step in a
   quantized graph (dsl/spec.c quantized). */
void hgc_tool_tolerance(const struct hgc_spec *sp, enum hgc_dtype dt, double *rtol,
			double *atol)
{
	if (hgc_dtype_is_int(dt) || dt == HGC_DT_BOOL) {
		*rtol = 0;
		*atol = sp->quantized && dt != HGC_DT_BOOL ? 1 : 0;
	} else if (sp->has_tol) {
		*rtol = sp->rtol;
		*atol = sp->atol;
	} else if (dt == HGC_DT_BF16) {
		*rtol = *atol = 1e-2;
	} else {
		*rtol = 1e-5;
		*atol = 1e-6;
	}
}

/* Format the multi-index of flat element flat of t as "[i, j, k]". */
void hgc_tool_index_str(const struct hgc_tensor *t, int64_t flat, char *buf, size_t n)
{
	int64_t idx[HGC_MAX_DIMS];
	size_t len;

	for (int d = t->ndims - 1; d >= 0; d--) {
		int64_t dim = t->dims[d] > 0 ? t->dims[d] : 1;

		idx[d] = flat % dim;
		flat /= dim;
	}
	len = (size_t)snprintf(buf, n, "[");
	for (int d = 0; d < t->ndims && len < n; d++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld", d ? ", " : "",
					(long long)idx[d]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
}
