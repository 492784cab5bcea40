/*
 * 147-c-block: tensor_shrink on a brgemm's C.  An int8 MatMul accumulates
 * in an s32 temporary that its Quantize post-ops read back; with the
 * members at post_block the temporary is used one MB x NB block per
 * iteration of the column loop, and the pass shrinks it to that block,
 * the brgemm's ldc with it (before, a slice address kept the tensor's row
 * stride, so it kept whole rows of N).  Checked on the TIR after the
 * passes (the block, its ldc; whole rows with tensor_shrink off; a row
 * reduction after the MatMul keeps its rows) and on the numbers against
 * the interpreter: JIT and C backend, 1 to 3 threads, with the passes on
 * and with tensor_shrink off.
 */
#include "t/driver_check.h"
#include "t/pin_machine.h"

#include <stdlib.h>
#include <string.h>

static const char src[] =
	"spec i8_block {\n"
	"  input xq : u8[64, 96];\n"
	"  const wq : s8[96, 256] = randint(lo = -64, hi = 64);\n"
	"  x = Dequantize(xq, qtype = \"per_tensor\", scales = [0.5], zps = [0]);\n"
	"  w = Dequantize(wq, qtype = \"per_tensor\", scales = [0.25], zps = [0]);\n"
	"  h = MatMul(x, w);\n"
	"  y : u8 = Quantize(h, qtype = \"per_tensor\", scales = [4.0], zps = [10]);\n"
	"  output y; }\n"
	"spec i8_rows {\n"
	"  input xq : u8[32, 64];\n"
	"  const wq : s8[64, 128] = randint(lo = -64, hi = 64);\n"
	"  x = Dequantize(xq, qtype = \"per_tensor\", scales = [0.5], zps = [0]);\n"
	"  w = Dequantize(wq, qtype = \"per_tensor\", scales = [0.25], zps = [0]);\n"
	"  h = MatMul(x, w); p = SoftMax(h, axis = -1); output p; }\n";

static const struct hgc_tmpl_rule shrink_off = { "pass", "tensor_shrink", "off", { NULL, 0, 0 } };

/* At 2 threads i8_block takes MB = 16, NB = 64 with its members at post_block. */
static void test_block(const struct hgc_spec *sp)
{
	char *plan, *s = dc_tir_text(sp->graph, 2, NULL, &plan);

	ok(dc_has(plan, "MB=16 NB=64 KB=96 MPN=2 NPN=1") && dc_has(plan, "post-ops at post_block"),
	   "i8_block: 16 x 64 blocks, the members at post_block");
	ok(dc_has(s, "tensor t6: s32[1024];"), "the s32 C is one 16 x 64 block");
	ok(dc_has(s, "bs, 16, 64, 96, 96, 256, 64, !(ks == 0))"),
	   "its brgemm's ldc is the block's 64");
	free(s);
	free(plan);
	s = dc_tir_text(sp->graph, 2, &shrink_off, NULL);
	ok(dc_has(s, "s32[16384];") && dc_has(s, "96, 96, 256, 256, !(ks == 0))"),
	   "tensor_shrink off: whole rows of 256, ldc 256");
	free(s);
}

/* A row reduction needs the whole row: the temporary keeps its 128 columns. */
static void test_rows(const struct hgc_spec *sp)
{
	char *plan, *s = dc_tir_text(sp->graph, 2, NULL, &plan);

	ok(dc_has(plan, "post-ops at post_row"), "i8_rows: the softmax at post_row");
	ok(dc_has(s, "tensor t11: s32[2048];") && dc_has(s, "64, 64, 256, 128, !(ks == 0))"),
	   "its C keeps rows of 128 (16 x 128, ldc 128)");
	free(s);
	free(plan);
}

int main(void)
{
	static const enum hgc_driver_backend backends[] = { HGC_DRIVER_JIT, HGC_DRIVER_C };
	struct hgc_program p;

	pin_machine();

	dc_load(&p, "c_block.hgc", src);
	is_int((int)p.specs.len, 2, "the specs load");
	test_block(HGC_PROGRAM_SPEC(&p, 0));
	test_rows(HGC_PROGRAM_SPEC(&p, 1));
	for (size_t i = 0; i < p.specs.len; i++)
		for (int b = 0; b < 2; b++)
			for (int threads = 1; threads <= 3; threads++) {
				const struct hgc_spec *sp = HGC_PROGRAM_SPEC(&p, i);

				dc_run_ok(sp, backends[b], threads, NULL);
				dc_run_ok(sp, backends[b], threads, &shrink_off);
			}
	hgc_program_release(&p);
	return done_testing();
}
