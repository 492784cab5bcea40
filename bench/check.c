/*
 * check.c: the buffers of a workload and the check of every peer's result.
 * Inputs are filled from a hash of the element index (deterministic, and
 * parallel so that a gigabyte fills quickly); a few sampled outputs are
 * computed naively in double precision and every peer's dst must match them.
 * A benchmark that computes garbage fast is worthless.
 */
#include "bench/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sampled outputs checked per run. */
#define NSAMPLE 64

/* splitmix64: a cheap, good hash of an index. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A page-aligned buffer that aborts on out-of-memory. */
static void *big_alloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n ? n : 1))
		hgc_bug("out of memory allocating %zu bytes", n);
	return p;
}

/* f32 values uniform in [-1, 1). */
static void fill_f32(float *p, int64_t n, uint64_t seed)
{
	int64_t i;

#pragma omp parallel for schedule(static)
	for (i = 0; i < n; i++)
		p[i] = (float)((double)(mix(seed ^ (uint64_t)i) >> 40) * 0x1p-23 - 1.0);
}

/* u8 values over the whole range [0, 255], as a quantized activation uses it. */
static void fill_u8(uint8_t *p, int64_t n, uint64_t seed)
{
	int64_t i;

#pragma omp parallel for schedule(static)
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(mix(seed ^ (uint64_t)i) >> 56);
}

/* s8 weights in 7 bits, [-64, 63]: what int8 models are quantized to for
   hardware without VNNI (oneDNN's "Nuances of int8 computations", OpenVINO's
   saturation workaround), since a u8 x s8 pair summed in s16 by vpmaddubsw
   saturates on full-range weights: oneDNN's AVX2 kernels then give wrong
   results (the bench reports them WRONG).  hgc's AVX2 kernel checks the
   bound per call and is exact either way (docs/runtime.md). */
static void fill_s8(int8_t *p, int64_t n, uint64_t seed)
{
	int64_t i;

#pragma omp parallel for schedule(static)
	for (i = 0; i < n; i++)
		p[i] = (int8_t)((int)((mix(seed ^ (uint64_t)i) >> 32) % 128) - 64);
}

/* Element counts of src, weights and dst. */
static void counts(const struct hgc_bench_work *w, int64_t n[3])
{
	const struct hgc_bench_matmul *m = &w->shape.mm;
	const struct hgc_bench_conv *c = &w->shape.conv;
	int i;

	if (w->shape.kind == HGC_BENCH_CONV) {
		n[0] = c->mb * c->ih * c->iw * c->ic;
		n[1] = c->kh * c->kw * (c->ic / c->g) * c->oc;
		n[2] = c->mb * c->oh * c->ow * c->oc;
		return;
	}
	n[0] = n[1] = n[2] = 1;
	for (i = 0; i < m->ndims; i++) {
		n[0] *= m->src[i];
		n[1] *= m->wei[i];
		n[2] *= m->dst[i];
	}
}

/* One sampled output of an f32 matmul: value and error bound. */
static void ref_mm_f32(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
		       int64_t e, double *ref, double *tol)
{
	const struct hgc_bench_matmul *m = &w->shape.mm;
	int64_t M = m->dst[m->ndims - 2], N = m->dst[m->ndims - 1], K = m->src[m->ndims - 1];
	int64_t b = e / (M * N), i = e / N % M, j = e % N, sb, wb, k;
	const float *A, *B;
	double acc = 0, mag = 0;

	hgc_bench_mm_operands(m, b, &sb, &wb);
	A = (const float *)io->src + (sb * M + i) * K;
	B = (const float *)io->wei + wb * K * N + j;
	for (k = 0; k < K; k++) {
		acc += (double)A[k] * B[k * N];
		mag += fabs((double)A[k] * B[k * N]);
	}
	*ref = acc;
	*tol = 1e-5 * mag + 1e-6;
}

/* One sampled output of an int8 matmul: u8 = saturate(round(acc * scale)). */
static void ref_mm_int8(const struct hgc_bench_work *w, const struct hgc_bench_io *io,
			int64_t e, double *ref, double *tol)
{
	const struct hgc_bench_matmul *m = &w->shape.mm;
	int64_t M = m->dst[m->ndims - 2], N = m->dst[m->ndims - 1], K = m->src[m->ndims - 1];
	int64_t b = e / (M * N), i = e / N % M, j = e % N, sb, wb, k, acc = 0;
	const uint8_t *A;
	const int8_t *B;
	float v;

	hgc_bench_mm_operands(m, b, &sb, &wb);
	A = (const uint8_t *)io->src + (sb * M + i) * K;
	B = (const int8_t *)io->wei + wb * K * N + j;
	for (k = 0; k < K; k++)
		acc += (int64_t)A[k] * B[k * N];
	v = nearbyintf((float)acc * io->scales[j]);
	*ref = v < 0 ? 0 : v > 255 ? 255 : v;
	*tol = 1;
}

/* One sampled output of an NHWC convolution (weights HWIGO, HWIO when g = 1). */
static void ref_conv(const struct hgc_bench_work *w, const struct hgc_bench_io *io, int64_t e,
		     double *ref, double *tol)
{
	const struct hgc_bench_conv *c = &w->shape.conv;
	int64_t icg = c->ic / c->g, ocg = c->oc / c->g, oc = e % c->oc;
	int64_t ox = e / c->oc % c->ow, oy = e / (c->oc * c->ow) % c->oh;
	int64_t n = e / (c->oc * c->ow * c->oh), g = oc / ocg, kh, kw, ci, y, x;
	const float *src = io->src, *wei = io->wei;
	double acc = 0, mag = 0, p;

	for (kh = 0; kh < c->kh; kh++)
		for (kw = 0; kw < c->kw; kw++) {
			y = oy * c->sh - c->ph + kh * (c->dh + 1);
			x = ox * c->sw - c->pw + kw * (c->dw + 1);
			if (y < 0 || y >= c->ih || x < 0 || x >= c->iw)
				continue;
			for (ci = 0; ci < icg; ci++) {
				p = (double)src[((n * c->ih + y) * c->iw + x) * c->ic + g * icg + ci] *
				    wei[((kh * c->kw + kw) * icg + ci) * c->oc + g * ocg + oc % ocg];
				acc += p;
				mag += fabs(p);
			}
		}
	*ref = acc;
	*tol = 1e-5 * mag + 1e-6;
}

/* Choose the sampled outputs (first, last, then hashed) and compute them. */
static void samples(struct hgc_bench_io *io, const struct hgc_bench_work *w, int64_t ndst)
{
	int s;

	io->nsample = NSAMPLE;
	io->sample_at = hgc_xcalloc(NSAMPLE, sizeof(int64_t));
	io->sample_ref = hgc_xcalloc(NSAMPLE, sizeof(double));
	io->sample_tol = hgc_xcalloc(NSAMPLE, sizeof(double));
	for (s = 0; s < NSAMPLE; s++) {
		io->sample_at[s] = s == 0 ? 0 : s == 1 ? ndst - 1 : (int64_t)(mix(s) % (uint64_t)ndst);
		if (w->shape.kind == HGC_BENCH_CONV)
			ref_conv(w, io, io->sample_at[s], &io->sample_ref[s], &io->sample_tol[s]);
		else if (w->dt == HGC_BENCH_INT8)
			ref_mm_int8(w, io, io->sample_at[s], &io->sample_ref[s], &io->sample_tol[s]);
		else
			ref_mm_f32(w, io, io->sample_at[s], &io->sample_ref[s], &io->sample_tol[s]);
	}
}

/* int8 output scales: spread a K-term dot product of the fill values over u8.
   A term's root mean square is sqrt(E[a^2] E[b^2]) for a uniform on [0, 255]
   and b uniform on [-64, 63]: E[a^2] = 255 * 511 / 6, E[b^2] = 174784 / 128. */
static float *int8_scales(const struct hgc_bench_matmul *m)
{
	int64_t n, N = m->wei[m->ndims - 1], K = m->src[m->ndims - 1];
	float *s = hgc_xcalloc((size_t)N, sizeof(float));
	double term = sqrt(255.0 * 511.0 / 6.0 * (174784.0 / 128.0));

	for (n = 0; n < N; n++)
		s[n] = (float)(40.0 / (term * sqrt((double)K)) * (1.0 + 0.1 * (double)(n % 5)));
	return s;
}

/* The buffers of a graph workload: every input made by its spec's generator,
   every output allocated; output 0 is dst.  Samples are placed, not computed. */
static void graph_io_init(struct hgc_bench_io *io, const struct hgc_bench_work *w)
{
	const struct hgc_graph *g = w->spec->graph;
	struct hgc_diag d;
	int i;

	io->nin = (int)g->inputs.len;
	io->nout = (int)g->outputs.len;
	io->in = hgc_xcalloc((size_t)io->nin, sizeof(void *));
	io->out = hgc_xcalloc((size_t)io->nout, sizeof(void *));
	hgc_diag_init(&d);
	for (i = 0; i < io->nin; i++) {
		io->in[i] = big_alloc(hgc_tensor_nbytes(HGC_GRAPH_INPUT(g, i)));
		if (hgc_gen_fill(&w->spec->gens[i], HGC_GRAPH_INPUT(g, i), io->in[i], &d) < 0)
			hgc_bug("%s: %s", w->name, hgc_diag_text(&d));
	}
	hgc_diag_release(&d);
	for (i = 0; i < io->nout; i++)
		io->out[i] = big_alloc(hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, i)));
	io->dst = io->out[0];
	io->dst_bytes = hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, 0));
	io->nsample = NSAMPLE;
	io->sample_at = hgc_xcalloc(NSAMPLE, sizeof(int64_t));
	io->sample_ref = hgc_xcalloc(NSAMPLE, sizeof(double));
	io->sample_tol = hgc_xcalloc(NSAMPLE, sizeof(double));
	for (i = 0; i < NSAMPLE; i++) {
		int64_t n = hgc_tensor_nelems(HGC_GRAPH_OUTPUT(g, 0));

		io->sample_at[i] = i == 0 ? 0 : i == 1 ? n - 1 : (int64_t)(mix((uint64_t)i) % (uint64_t)n);
	}
}

/* Take the samples of output 0 from buf (f32) as the reference, with the
   spec's tolerance scaled by slack. */
void hgc_bench_io_take_samples(struct hgc_bench_io *io, const struct hgc_bench_work *w,
			       const float *buf, double slack)
{
	double rtol = w->spec->has_tol ? w->spec->rtol : 1e-5;
	double atol = w->spec->has_tol ? w->spec->atol : 1e-6;
	int s;

	for (s = 0; s < io->nsample; s++) {
		io->sample_ref[s] = buf[io->sample_at[s]];
		io->sample_tol[s] = slack * (atol + rtol * fabs(io->sample_ref[s]));
	}
}

/* The reference from the interpreter (double precision inside). */
static int interp_ref(struct hgc_bench_io *io, const struct hgc_bench_work *w,
		      struct hgc_diag *d)
{
	const struct hgc_graph *g = w->spec->graph;
	void **out = hgc_xcalloc((size_t)io->nout, sizeof(void *));
	int i, r;

	for (i = 0; i < io->nout; i++)
		out[i] = big_alloc(hgc_tensor_nbytes(HGC_GRAPH_OUTPUT(g, i)));
	r = hgc_interp_run(g, (const void *const *)io->in, out, d);
	if (!r)
		hgc_bench_io_take_samples(io, w, out[0], 1);
	for (i = 0; i < io->nout; i++)
		free(out[i]);
	free(out);
	io->ref_from = "interpreter";
	return r;
}

/*
 * The reference samples of a graph workload from the interpreter, up to
 * HGC_BENCH_INTERP_MAX_FLOPS: 0, or 1 when the graph is larger (the caller
 * takes another reference: hgc_bench_io_take_samples).  Only f32 outputs
 * are checked.  -1 with d set.
 */
int hgc_bench_io_graph_ref(struct hgc_bench_io *io, const struct hgc_bench_work *w,
			   struct hgc_diag *d)
{
	if (HGC_GRAPH_OUTPUT(w->spec->graph, 0)->dtype != HGC_DT_F32)
		return hgc_error(d, NULL, "%s: only f32 outputs are checked", w->name);
	if (w->flops > HGC_BENCH_INTERP_MAX_FLOPS)
		return 1;
	return interp_ref(io, w, d);
}

/* Allocate and fill the buffers of a workload and compute the reference samples
   (for a graph: hgc_bench_io_graph_ref computes them). */
void hgc_bench_io_init(struct hgc_bench_io *io, const struct hgc_bench_work *w)
{
	int64_t n[3];
	size_t esz = w->dt == HGC_BENCH_INT8 ? 1 : 4;

	memset(io, 0, sizeof(*io));
	if (w->shape.kind == HGC_BENCH_GRAPH) {
		graph_io_init(io, w);
		return;
	}
	counts(w, n);
	io->src_bytes = (size_t)n[0] * esz;
	io->wei_bytes = (size_t)n[1] * esz;
	io->dst_bytes = (size_t)n[2] * esz;
	io->src = big_alloc(io->src_bytes);
	io->wei = big_alloc(io->wei_bytes);
	io->dst = big_alloc(io->dst_bytes);
	if (w->dt == HGC_BENCH_INT8) {
		fill_u8(io->src, n[0], 1);
		fill_s8(io->wei, n[1], 2);
		io->scales = int8_scales(&w->shape.mm);
	} else {
		fill_f32(io->src, n[0], 1);
		fill_f32(io->wei, n[1], 2);
	}
	samples(io, w, n[2]);
}

/* Free what hgc_bench_io_init allocated. */
void hgc_bench_io_release(struct hgc_bench_io *io)
{
	int i;

	for (i = 0; i < io->nin; i++)
		free(io->in[i]);
	for (i = 0; i < io->nout; i++)
		free(io->out[i]);
	free(io->in);
	free(io->out);
	if (io->nout)
		io->dst = NULL;
	free(io->src);
	free(io->wei);
	free(io->dst);
	free(io->scales);
	free(io->sample_at);
	free(io->sample_ref);
	free(io->sample_tol);
	memset(io, 0, sizeof(*io));
}

/* Fill dst with garbage (NaN for f32) so a peer that writes nothing fails its check. */
void hgc_bench_io_poison(const struct hgc_bench_io *io)
{
	memset(io->dst, 0xff, io->dst_bytes);
}

/* Compare dst with the reference samples; -1 with the diag set on a mismatch. */
int hgc_bench_io_check(const struct hgc_bench_io *io, const struct hgc_bench_work *w,
		       struct hgc_diag *d)
{
	double got;
	int s, bad = 0;

	for (s = 0; s < io->nsample; s++) {
		got = w->dt == HGC_BENCH_INT8 ? ((const uint8_t *)io->dst)[io->sample_at[s]]
					      : ((const float *)io->dst)[io->sample_at[s]];
		if (fabs(got - io->sample_ref[s]) <= io->sample_tol[s])
			continue;
		if (!bad++)
			hgc_error(d, NULL, "%s: dst element %lld is %.7g, the reference says %.7g",
				  w->name, (long long)io->sample_at[s], got, io->sample_ref[s]);
	}
	if (bad > 1)
		hgc_error(d, NULL, "%s: %d of %d sampled outputs are wrong", w->name, bad,
			  io->nsample);
	return bad ? -1 : 0;
}
