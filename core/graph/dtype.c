/* dtype.c: element types, bf16 conversion and element access with rounding and saturation. */
#include "graph_int.h"

#include <math.h>
#include <string.h>

static const char *const names[HGC_DT_COUNT] = {
#define X(e, n, s) n,
	HGC_DTYPE_LIST(X)
#undef X
};

static const size_t sizes[HGC_DT_COUNT] = {
#define X(e, n, s) s,
	HGC_DTYPE_LIST(X)
#undef X
};

/* Bytes per element; 0 for UNDEF. */
size_t hgc_dtype_size(enum hgc_dtype dt)
{
	return (unsigned)dt < HGC_DT_COUNT ? sizes[dt] : 0;
}

/* The oneDNN name ("f32", "boolean" ...). */
const char *hgc_dtype_name(enum hgc_dtype dt)
{
	return (unsigned)dt < HGC_DT_COUNT ? names[dt] : "?";
}

/* The dtype called name[0..len), UNDEF if none is. */
enum hgc_dtype hgc_dtype_parse(const char *name, size_t len)
{
	int i;

	for (i = 1; i < HGC_DT_COUNT; i++)
		if (strlen(names[i]) == len && !memcmp(names[i], name, len))
			return (enum hgc_dtype)i;
	return HGC_DT_UNDEF;
}

/* Integer types (s32, s8, u8); boolean is not one. */
bool hgc_dtype_is_int(enum hgc_dtype dt)
{
	return dt == HGC_DT_S32 || dt == HGC_DT_S8 || dt == HGC_DT_U8;
}

/* Floating-point types (f32, bf16). */
bool hgc_dtype_is_float(enum hgc_dtype dt)
{
	return dt == HGC_DT_F32 || dt == HGC_DT_BF16;
}

/* Round an f32 to bf16, to nearest even; NaN stays a (quiet) NaN. */
uint16_t hgc_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

/* Widen a bf16 to f32 (exact). */
float hgc_bf16_to_f32(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Round to the nearest integer, ties to even, whatever the FPU rounding mode. */
double hgc_round_half_even(double v)
{
	double r = floor(v), frac = v - r;

	if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0.0))
		r += 1.0;
	return r;
}

/* Round and clamp v into [lo, hi]; NaN becomes 0. */
static double saturate(double v, double lo, double hi)
{
	if (isnan(v))
		return 0;
	v = hgc_round_half_even(v);
	return v < lo ? lo : v > hi ? hi : v;
}

/* Element i of a dense buffer of type dt, exactly, as a double. */
double hgc_load_f64(enum hgc_dtype dt, const void *p, int64_t i)
{
	switch (dt) {
	case HGC_DT_F32: return ((const float *)p)[i];
	case HGC_DT_BF16: return hgc_bf16_to_f32(((const uint16_t *)p)[i]);
	case HGC_DT_S32: return ((const int32_t *)p)[i];
	case HGC_DT_S8: return ((const int8_t *)p)[i];
	case HGC_DT_U8: return ((const uint8_t *)p)[i];
	case HGC_DT_BOOL: return ((const uint8_t *)p)[i] != 0;
	default: hgc_bug("load of dtype %d", (int)dt);
	}
}

/* Store v as element i of a dense buffer of type dt, rounding and saturating. */
void hgc_store_f64(enum hgc_dtype dt, void *p, int64_t i, double v)
{
	switch (dt) {
	case HGC_DT_F32: ((float *)p)[i] = (float)v; break;
	case HGC_DT_BF16: ((uint16_t *)p)[i] = hgc_f32_to_bf16((float)v); break;
	case HGC_DT_S32: ((int32_t *)p)[i] = (int32_t)saturate(v, INT32_MIN, INT32_MAX); break;
	case HGC_DT_S8: ((int8_t *)p)[i] = (int8_t)saturate(v, INT8_MIN, INT8_MAX); break;
	case HGC_DT_U8: ((uint8_t *)p)[i] = (uint8_t)saturate(v, 0, UINT8_MAX); break;
	case HGC_DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	default: hgc_bug("store of dtype %d", (int)dt);
	}
}

/* Element i as f32 (s32 values beyond 2^24 round to nearest). */
float hgc_load_f32(enum hgc_dtype dt, const void *p, int64_t i)
{
	return (float)hgc_load_f64(dt, p, i);
}

/* Store an f32 as dt (see hgc_store_f64). */
void hgc_store_f32(enum hgc_dtype dt, void *p, int64_t i, float v)
{
	hgc_store_f64(dt, p, i, v);
}

/* All n elements of p as a malloc'ed double array, so loops run without a type switch. */
double *hgc_load_all(enum hgc_dtype dt, const void *p, int64_t n)
{
	double *v = hgc_xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double));
	int64_t i;

	for (i = 0; i < n; i++)
		v[i] = hgc_load_f64(dt, p, i);
	return v;
}
