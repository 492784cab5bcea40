/*
 * 022-interp-quant: quantization against NumPy: Quantize and Dequantize per
 * tensor and per channel, rounding ties and saturation, int8 MatMul and
 * Convolution with zero points through Dequantize/Quantize, bf16 through
 * TypeCast; and .npy files written by NumPy itself read back by hgc.
 */
#include "t/refcheck.h"

/* A Quantize or Dequantize op with per-tensor parameters (zp < -999: none given). */
static struct hgc_op *qop(enum hgc_op_kind k, struct hgc_tensor *src, enum hgc_dtype out,
			  double scale, int zp)
{
	struct hgc_op *o = rc_op(k, out, 1, src);

	rc_floats(o, "scales", 1, &scale);
	if (zp > -999)
		RC_INTS(o, "zps", zp);
	return o;
}

/* Per-channel parameters along axis: n scales from lo growing by step, zps alternating. */
static void per_channel(struct hgc_op *o, int axis, int n, double lo, double step, int zp0,
			int zp1)
{
	double s[64];
	int64_t z[64];
	int i;

	for (i = 0; i < n; i++) {
		s[i] = lo + step * i;
		z[i] = i % 2 ? zp1 : zp0;
	}
	rc_str(o, "qtype", "per_channel");
	rc_int_attr(o, "axis", axis);
	rc_floats(o, "scales", n, s);
	if (zp0 || zp1)
		rc_ints(o, "zps", n, z);
}

/* Quantize and Dequantize, per tensor and per channel, ties, saturation, defaults. */
static void test_quant_ops(void)
{
	struct hgc_op *o;

	rc_graph();
	rc_check(qop(HGC_OP_QUANTIZE, rc_in(HGC_DT_F32, -8, 8, 2, 13, 97), HGC_DT_U8, 0.05, 128),
		 "Quantize u8 scale 0.05 zp 128 (saturates both ends)");
	rc_graph();
	rc_check(qop(HGC_OP_QUANTIZE, rc_in(HGC_DT_F32, -3, 3, 1, 479), HGC_DT_S8, 0.03, -3),
		 "Quantize s8 zp -3");
	rc_graph();
	rc_check(qop(HGC_OP_QUANTIZE, rc_halves(HGC_DT_F32, -140, 140, 2, 3, 97), HGC_DT_S8, 1, -999),
		 "Quantize s8 of exact halves: ties to even, no zps given");
	rc_graph();
	rc_check(qop(HGC_OP_QUANTIZE, rc_halves(HGC_DT_F32, -20, 280, 1, 97), HGC_DT_U8, 1, 7),
		 "Quantize u8 of exact halves with zp 7");
	rc_graph();
	rc_check(qop(HGC_OP_QUANTIZE, rc_in(HGC_DT_BF16, -2, 2, 2, 13, 5), HGC_DT_U8, 0.01, 100),
		 "Quantize from bf16");
	rc_graph();
	o = rc_op(HGC_OP_QUANTIZE, HGC_DT_S8, 1, rc_in(HGC_DT_F32, -4, 4, 3, 2, 5, 13));
	per_channel(o, 1, 5, 0.01, 0.02, -5, 3);
	rc_check(o, "Quantize s8 per channel along axis 1");
	rc_graph();
	o = rc_op(HGC_OP_QUANTIZE, HGC_DT_U8, 1, rc_in(HGC_DT_F32, -4, 4, 3, 2, 5, 13));
	per_channel(o, -1, 13, 0.02, 0.005, 120, 130);
	rc_check(o, "Quantize u8 per channel along axis -1");
	rc_graph();
	o = rc_op(HGC_OP_QUANTIZE, HGC_DT_S8, 1, rc_in(HGC_DT_F32, -4, 4, 2, 3, 97));
	per_channel(o, 0, 3, 0.05, 0.05, 0, 0);
	rc_check(o, "Quantize s8 per channel along axis 0 without zps");
	rc_graph();
	rc_check(qop(HGC_OP_DEQUANTIZE, rc_in(HGC_DT_U8, 0, 255, 2, 13, 97), HGC_DT_UNDEF, 0.05, 128),
		 "Dequantize u8 zp 128");
	rc_graph();
	rc_check(qop(HGC_OP_DEQUANTIZE, rc_in(HGC_DT_S8, -128, 127, 1, 479), HGC_DT_UNDEF, 0.7, -999),
		 "Dequantize s8 without zps");
	rc_graph();
	rc_check(qop(HGC_OP_DEQUANTIZE, rc_in(HGC_DT_S32, -100000, 100000, 1, 97), HGC_DT_UNDEF,
		     1e-4, 12345),
		 "Dequantize s32 with a large zp");
	rc_graph();
	o = rc_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 3, 3, 13, 7));
	per_channel(o, 1, 13, 0.001, 0.003, 2, -2);
	rc_check(o, "Dequantize s8 per channel along axis 1");
	rc_graph();
	o = rc_op(HGC_OP_DEQUANTIZE, HGC_DT_BF16, 1, rc_in(HGC_DT_U8, 0, 255, 2, 5, 7));
	per_channel(o, -1, 7, 0.01, 0.01, 128, 120);
	rc_check(o, "Dequantize u8 per channel into a preset bf16");
	rc_graph();
	o = qop(HGC_OP_QUANTIZE, rc_in(HGC_DT_F32, -1, 1, 2, 13, 13), HGC_DT_S8, 0.01, 0);
	rc_check(qop(HGC_OP_DEQUANTIZE, rc_done(o), HGC_DT_UNDEF, 0.01, 0),
		 "fake quantization: Quantize then Dequantize");
}

/* oneDNN's int8 MatMul pattern: dequantize both, MatMul, bias, ReLU, quantize. */
static void test_int8_matmul(void)
{
	struct hgc_tensor *x, *w, *y;
	struct hgc_op *o;

	rc_graph();
	x = rc_done(qop(HGC_OP_DEQUANTIZE, rc_in(HGC_DT_U8, 0, 255, 2, 13, 97), HGC_DT_UNDEF, 0.02,
			128));
	o = rc_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 2, 97, 5));
	per_channel(o, 1, 5, 0.002, 0.001, 0, 0);
	w = rc_done(o);
	y = rc_done(rc_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 3, x, w, rc_f32(1, 5)));
	y = rc_done(rc_op(HGC_OP_RELU, HGC_DT_UNDEF, 1, y));
	rc_check(qop(HGC_OP_QUANTIZE, y, HGC_DT_U8, 0.05, 3),
		 "int8 MatMul: u8 zp 128 x s8 per-channel, bias, ReLU, u8 zp 3");
	rc_graph();
	x = rc_done(qop(HGC_OP_DEQUANTIZE, rc_in(HGC_DT_S8, -128, 127, 3, 2, 3, 479), HGC_DT_UNDEF,
			0.01, -7));
	o = rc_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 2, 13, 479));
	per_channel(o, 0, 13, 0.003, 0.0005, 5, -5);
	w = rc_done(o);
	o = rc_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, x, w);
	rc_bool(o, "transpose_b", true);
	rc_check(qop(HGC_OP_QUANTIZE, rc_done(o), HGC_DT_S8, 0.1, -2),
		 "int8 batched MatMul, transposed s8 weights with zero points, s8 out");
	rc_graph();
	y = rc_done(rc_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, rc_in(HGC_DT_U8, 0, 255, 2, 13, 97),
			  rc_in(HGC_DT_S8, -128, 127, 2, 97, 5)));
	rc_check(qop(HGC_OP_DEQUANTIZE, y, HGC_DT_UNDEF, 1e-4, 0),
		 "direct u8 x s8 to s32, then Dequantize");
}

/* oneDNN's int8 Convolution pattern, with zero points on data and weights. */
static void test_int8_conv(void)
{
	struct hgc_tensor *x, *w, *y;
	struct hgc_op *o;

	rc_graph();
	x = rc_done(qop(HGC_OP_DEQUANTIZE, rc_in(HGC_DT_U8, 0, 255, 4, 1, 9, 7, 8), HGC_DT_UNDEF, 0.1,
			100));
	o = rc_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 4, 3, 3, 8, 6));
	per_channel(o, 3, 6, 0.001, 0.0005, 0, 0);
	w = rc_done(o);
	o = rc_op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 3, x, w, rc_f32(1, 6));
	RC_INTS(o, "strides", 2, 1);
	RC_INTS(o, "pads_begin", 1, 1);
	RC_INTS(o, "pads_end", 1, 1);
	RC_INTS(o, "dilations", 1, 1);
	y = rc_done(o);
	rc_check(qop(HGC_OP_QUANTIZE, y, HGC_DT_S8, 0.05, -5),
		 "int8 Convolution NXC/XIO: u8 zp 100, s8 per-channel weights, s8 zp -5");
	rc_graph();
	x = rc_done(qop(HGC_OP_DEQUANTIZE, rc_in(HGC_DT_S8, -128, 127, 4, 1, 4, 6, 6), HGC_DT_UNDEF,
			0.05, 3));
	o = rc_op(HGC_OP_DEQUANTIZE, HGC_DT_UNDEF, 1, rc_in(HGC_DT_S8, -128, 127, 4, 8, 1, 3, 3));
	per_channel(o, 0, 8, 0.01, 0.001, 1, -1);
	w = rc_done(o);
	o = rc_op(HGC_OP_CONVOLUTION, HGC_DT_UNDEF, 2, x, w);
	rc_str(o, "data_format", "NCX");
	rc_str(o, "weights_format", "OIX");
	rc_int_attr(o, "groups", 4);
	RC_INTS(o, "strides", 1, 1);
	RC_INTS(o, "pads_begin", 0, 0);
	RC_INTS(o, "pads_end", 0, 0);
	RC_INTS(o, "dilations", 1, 1);
	y = rc_done(rc_op(HGC_OP_RELU, HGC_DT_UNDEF, 1, rc_done(o)));
	rc_check(qop(HGC_OP_QUANTIZE, y, HGC_DT_U8, 0.02, 0),
		 "int8 grouped Convolution NCX/OIX with weight zero points, ReLU, u8");
}

/* bf16 through TypeCast: f32 to bf16, bf16 MatMul, back to f32. */
static void test_bf16_chain(void)
{
	struct hgc_tensor *a, *b, *y;

	rc_graph();
	a = rc_done(rc_op(HGC_OP_TYPE_CAST, HGC_DT_BF16, 1, rc_f32(2, 13, 97)));
	b = rc_done(rc_op(HGC_OP_TYPE_CAST, HGC_DT_BF16, 1, rc_f32(2, 97, 5)));
	y = rc_done(rc_op(HGC_OP_MATMUL, HGC_DT_UNDEF, 2, a, b));
	rc_check(rc_op(HGC_OP_TYPE_CAST, HGC_DT_F32, 1, y), "bf16: TypeCast, MatMul, TypeCast back");
}

/* Write .npy files with NumPy (v1, v2, every dtype, Fortran order) and read them here. */
static void test_numpy_files(void)
{
	static const char *script =
		"import numpy as np, sys\n"
		"d = sys.argv[1]\n"
		"a = np.arange(6).reshape(2, 3)\n"
		"for n, t in [('f4', np.float32), ('i4', np.int32), ('i1', np.int8), ('u1', np.uint8),"
		" ('u2', np.uint16)]:\n"
		"    np.save(d + '/np_' + n + '.npy', (a * 7 - 3 if t != np.uint8 else a * 40).astype(t))\n"
		"np.save(d + '/np_b1.npy', a % 2 == 1)\n"
		"np.save(d + '/np_0d.npy', np.float32(2.5))\n"
		"with open(d + '/np_v2.npy', 'wb') as f:\n"
		"    np.lib.format.write_array(f, np.float32([[1.5, -2], [3, 4]]), version=(2, 0))\n"
		"np.save(d + '/np_fortran.npy', np.asfortranarray(np.float32([[1, 2], [3, 4]])))\n"
		"np.save(d + '/np_f8.npy', np.float64([1, 2]))\n";
	const char *py = getenv("PYTHON") ? getenv("PYTHON") : "/usr/bin/python3";
	static const char *names[] = {"f4", "i4", "i1", "u1", "u2", "b1"};
	static const enum hgc_dtype dts[] = {HGC_DT_F32, HGC_DT_S32, HGC_DT_S8, HGC_DT_U8,
					     HGC_DT_BF16, HGC_DT_BOOL};
	char path[256], cmd[512];
	enum hgc_dtype dt;
	int64_t dims[HGC_MAX_DIMS];
	struct hgc_diag d;
	FILE *f;
	int nd, i, k;

	snprintf(path, sizeof(path), "%s/gen.py", rc.dir);
	f = fopen(path, "w");
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s'", py, path, rc.dir);
	is_int(system(cmd), 0, "numpy writes the files");
	hgc_diag_init(&d);
	for (k = 0; k < 6; k++) {
		float *fv;
		void *p;
		bool good;

		snprintf(path, sizeof(path), "%s/np_%s.npy", rc.dir, names[k]);
		p = hgc_npy_read(path, &dt, &nd, dims, &d);
		good = p && dt == dts[k] && nd == 2 && dims[0] == 2 && dims[1] == 3;
		fv = hgc_xmalloc(6 * sizeof(float));
		for (i = 0; good && i < 6; i++) {
			double want = k == 5 ? i % 2 : k == 3 ? i * 40 : i * 7 - 3;

			fv[i] = dts[k] == HGC_DT_BF16 ? (float)((uint16_t *)p)[i]
						       : hgc_load_f32(dt, p, i);
			good = fv[i] == (float)(k == 4 ? (double)(uint16_t)(i * 7 - 3) : want);
		}
		ok(good, "numpy's '%s' file reads as %s[2,3] with its values", names[k],
		   hgc_dtype_name(dts[k]));
		free(fv);
		free(p);
	}
	snprintf(path, sizeof(path), "%s/np_0d.npy", rc.dir);
	{
		float *p = hgc_npy_read(path, &dt, &nd, dims, &d);

		ok(p && nd == 0 && p[0] == 2.5f, "numpy's 0-d array reads as a scalar");
		free(p);
	}
	snprintf(path, sizeof(path), "%s/np_v2.npy", rc.dir);
	{
		float *p = hgc_npy_read(path, &dt, &nd, dims, &d);

		ok(p && nd == 2 && p[0] == 1.5f && p[1] == -2 && p[3] == 4, "numpy's version 2.0 file");
		free(p);
	}
	is_int(d.nerr, 0, "no errors reading numpy's files");
	snprintf(path, sizeof(path), "%s/np_fortran.npy", rc.dir);
	ok(!hgc_npy_read(path, &dt, &nd, dims, &d) && strstr(hgc_diag_text(&d), "fortran_order"),
	   "numpy's Fortran-order file is refused");
	snprintf(path, sizeof(path), "%s/np_f8.npy", rc.dir);
	ok(!hgc_npy_read(path, &dt, &nd, dims, &d) &&
		   strstr(hgc_diag_text(&d), "unsupported dtype '<f8'"),
	   "numpy's float64 file is refused");
	hgc_diag_release(&d);
}

int main(int argc, char **argv)
{
	(void)argc;
	rc_init(argv[0], 0x2024022);
	test_numpy_files();
	test_quant_ops();
	test_int8_matmul();
	test_int8_conv();
	test_bf16_chain();
	rc_finish();
	return done_testing();
}
