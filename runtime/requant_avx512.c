/*
 * requant_avx512.c: the zmm rows of requant.c (requant_avx512.inc), for a
 * requantized call that ran a kernel other than AMX's blocks on an
 * AVX-512 machine (HGC_AMX=off, or a shape brgemm_amx.c's blocks do not
 * take).
 */
#include "runtime/runtime_int.h"
#include "runtime/requant_avx512.inc"

void hgc_rt_requant_rows_avx512(const struct hgc_rt_requant *q, const int32_t *src,
				int64_t lds, int64_t m0, int64_t rows, int64_t n0, int64_t cols)
{
	requant_rows_zmm(q, src, lds, m0, rows, n0, cols);
}
