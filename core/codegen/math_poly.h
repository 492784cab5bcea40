/*
 * math_poly.h: the polynomial coefficients of the math functions both
 * backends compute inline rather than through libm (so that the loops
 * around them vectorize), in one place so that the LLVM IR (llvm_intrin.c)
 * and the C backend's prelude (c_emit.c) evaluate the very same sequence
 * and agree bit for bit.  Highest degree first, for Horner's rule in fma
 * steps; each coefficient is rounded to f32 where it is used.
 *
 * erf: for |x| < 1, erf(x) = x * P(x^2) with ERF_SMALL; for 1 <= |x| < 4,
 * erf(x) = sign(x) (1 - exp(Q(|x|))) with Q ~ log(erfc) from ERF_LARGE;
 * beyond, sign(x).  Least-squares fits on Chebyshev nodes against Python's
 * math.erf / math.erfc (weighted to relative error); evaluated in f32 they
 * stay within 2 ulp of the correctly rounded erf (t/080 checks the result
 * against glibc's erff).
 */
#ifndef HGC_CODEGEN_MATH_POLY_H
#define HGC_CODEGEN_MATH_POLY_H

/*
 * exp: e^r for |r| <= ln2 / 2 (after x = n ln2 + r) as 1 + r + r^2 q(r),
 * q of degree 4 fitted by least squares on Chebyshev nodes against
 * expm1 (weighted to relative error); with the coefficients rounded to f32
 * its relative error is below 3.8e-9 (Taylor's degree 7 that it replaced:
 * 7.3e-9), and the whole exp stays within 1 ulp of glibc's expf (t/080).
 */
#define HGC_EXP_POLY_N 7
static const double hgc_exp_poly[HGC_EXP_POLY_N] = {
	0.001375127858408308, 0.008368951776076754, 0.04166953869994841,
	0.16666518165339853, 0.49999988561461267, 1.0, 1.0,
};

#define HGC_ERF_SMALL_N 7
static const double hgc_erf_small[HGC_ERF_SMALL_N] = {
	7.898210140353297e-05, -0.000802435410442004, 0.005190053574419373,
	-0.026854808534877164, 0.11283612428165402, -0.3761262884331351, 1.1283791665100467,
};

#define HGC_ERF_LARGE_N 11
static const double hgc_erf_large[HGC_ERF_LARGE_N] = {
	-5.8056755078308354e-08, 1.380026961008164e-06, -1.278232332127741e-05,
	4.104879999013798e-05, 0.000260269150779891, -0.003891493376811932,
	0.024907951111729398, -0.1083206267129794, -0.6331322280721852,
	-1.1296741204948193, 0.00021515064377989707,
};

#endif
