/*
 * 146-mlp-merge: the layers of an MLP as one parallel loop.  At 2 threads a
 * chain of MatMuls (each reading the one before, with its bias and ReLU)
 * is split by rows jointly (MPN = 2, NPN = 1) when the estimates say so,
 * so that a thread's rows of one layer need only its rows of the layer
 * before; the TIR pass merges the parallel loops (the brgemm batch loop
 * k in ks..ks + BS counts as ks plus a bounded rest in the legality check),
 * and the packing of a layer's A (matmul_packa, K a multiple of 1024) joins
 * the merged loop, a thread packing its own rows.  Checked: the log (the
 * comparison of the estimates; a chain whose weights do not stay in L2 is
 * not split; one whose own splits read A the other thread wrote is; row
 * chunks when an intermediate leaves L2), the TIR (one parallel loop in the entry, the packing in it),
 * a config that pins MPN (no chain planned), one thread (nothing merged),
 * the elementwise members of a short-row block (GELU on 64 x 16 blocks of
 * a 3072-column result) as one loop per row, the bias as the members'
 * first (one loop with the ReLU), the result written into the graph output
 * the members end in (not when another op reads it, nor with buffer_reuse
 * off), the block anchor for a result larger than L2,
 * and the numbers against the interpreter on the JIT and the C backend,
 * with parallel_merge, fuse or tensor_shrink off.
 */
#include "t/driver_check.h"
#include "t/pin_machine.h"

#include <stdlib.h>
#include <string.h>

static const char src[] =
	"spec mlp3 {\n"
	"  input x : f32[32, 13] = uniform(lo = -1, hi = 1, seed = 1);\n"
	"  const w0 : f32[13, 64] = normal(mean = 0, std = 0.3, seed = 2);\n"
	"  const b0 : f32[64] = uniform(lo = -0.1, hi = 0.1, seed = 3);\n"
	"  const w1 : f32[64, 48] = normal(mean = 0, std = 0.1, seed = 4);\n"
	"  const b1 : f32[48] = uniform(lo = -0.1, hi = 0.1, seed = 5);\n"
	"  const w2 : f32[48, 32] = normal(mean = 0, std = 0.1, seed = 6);\n"
	"  h0 = MatMul(x, w0, b0); r0 = ReLU(h0);\n"
	"  h1 = MatMul(r0, w1, b1); r1 = ReLU(h1);\n"
	"  y = MatMul(r1, w2); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec mlp_packa {\n"
	"  input x : f32[32, 64] = uniform(lo = -1, hi = 1, seed = 7);\n"
	"  const w0 : f32[64, 1024] = normal(mean = 0, std = 0.1, seed = 8);\n"
	"  const b0 : f32[1024] = uniform(lo = -0.1, hi = 0.1, seed = 9);\n"
	"  const w1 : f32[1024, 32] = normal(mean = 0, std = 0.03, seed = 10);\n"
	"  h0 = MatMul(x, w0, b0); r0 = ReLU(h0);\n"
	"  h1 = MatMul(r0, w1); y = Sigmoid(h1); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec mlp_wide {\n"
	"  input x : f32[32, 512] = uniform(lo = -1, hi = 1, seed = 11);\n"
	"  const w0 : f32[512, 256] = normal(mean = 0, std = 0.06, seed = 12);\n"
	"  const w1 : f32[256, 512] = normal(mean = 0, std = 0.06, seed = 13);\n"
	"  const w2 : f32[512, 256] = normal(mean = 0, std = 0.04, seed = 14);\n"
	"  const w3 : f32[256, 512] = normal(mean = 0, std = 0.06, seed = 15);\n"
	"  h0 = MatMul(x, w0); r0 = ReLU(h0); h1 = MatMul(r0, w1); r1 = ReLU(h1);\n"
	"  h2 = MatMul(r1, w2); r2 = ReLU(h2); y = MatMul(r2, w3); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec ffn_gelu {\n"
	"  input x : f32[64, 256] = uniform(lo = -1, hi = 1, seed = 14);\n"
	"  const w1 : f32[256, 3072] = normal(mean = 0, std = 0.06, seed = 15);\n"
	"  const b1 : f32[3072] = uniform(lo = -0.1, hi = 0.1, seed = 16);\n"
	"  const w2 : f32[3072, 16] = normal(mean = 0, std = 0.02, seed = 17);\n"
	"  h = MatMul(x, w1, b1); g = GELU(h);\n"
	"  y = MatMul(g, w2); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec k13_out {\n"
	"  input x : f32[512, 13] = uniform(lo = -1, hi = 1, seed = 18);\n"
	"  const w : f32[13, 512] = normal(mean = 0, std = 0.3, seed = 19);\n"
	"  const b : f32[512] = uniform(lo = -0.1, hi = 0.1, seed = 20);\n"
	"  h = MatMul(x, w, b); y = ReLU(h); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec out_and_reader {\n"
	"  input x : f32[64, 13] = uniform(lo = -1, hi = 1, seed = 21);\n"
	"  const w : f32[13, 64] = normal(mean = 0, std = 0.3, seed = 22);\n"
	"  const b : f32[64] = uniform(lo = -0.1, hi = 0.1, seed = 23);\n"
	"  const w2 : f32[64, 32] = normal(mean = 0, std = 0.1, seed = 24);\n"
	"  h = MatMul(x, w, b); y = ReLU(h); z = MatMul(h, w2); output y, z;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec gelu_out {\n"
	"  input x : f32[64, 32] = uniform(lo = -1, hi = 1, seed = 25);\n"
	"  const w : f32[32, 128] = normal(mean = 0, std = 0.2, seed = 26);\n"
	"  const b : f32[128] = uniform(lo = -0.1, hi = 0.1, seed = 27);\n"
	"  h = MatMul(x, w, b); y = GELU(h); output y, h;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n";

/* DLRM's bottom MLP at batch 512, whose layers each split by columns on
   their own (NPN = 2), so that every thread would read all of h0 and h1,
   half of them written by the other thread; and whose h0 (1 MiB) leaves
   L2 between the layers: the chain runs in row chunks.  Run at fewer
   settings than the small specs (87M multiply-adds for the interpreter). */
static const char src_plan[] =
	"spec bottom512 {\n"
	"  input x : f32[512, 13] = uniform(lo = -1, hi = 1, seed = 1);\n"
	"  const w0 : f32[13, 512] = normal(mean = 0, std = 0.3, seed = 2);\n"
	"  const b0 : f32[512] = uniform(lo = -0.1, hi = 0.1, seed = 3);\n"
	"  const w1 : f32[512, 256] = normal(mean = 0, std = 0.06, seed = 4);\n"
	"  const b1 : f32[256] = uniform(lo = -0.1, hi = 0.1, seed = 5);\n"
	"  const w2 : f32[256, 128] = normal(mean = 0, std = 0.09, seed = 6);\n"
	"  const b2 : f32[128] = uniform(lo = -0.1, hi = 0.1, seed = 7);\n"
	"  h0 = MatMul(x, w0, b0); r0 = ReLU(h0);\n"
	"  h1 = MatMul(r0, w1, b1); r1 = ReLU(h1);\n"
	"  h2 = MatMul(r1, w2, b2); y = ReLU(h2); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec bottom128 {\n"
	"  input x : f32[128, 13] = uniform(lo = -1, hi = 1, seed = 1);\n"
	"  const w0 : f32[13, 512] = normal(mean = 0, std = 0.3, seed = 2);\n"
	"  const w1 : f32[512, 256] = normal(mean = 0, std = 0.06, seed = 4);\n"
	"  const w2 : f32[256, 128] = normal(mean = 0, std = 0.09, seed = 6);\n"
	"  h0 = MatMul(x, w0); r0 = ReLU(h0); h1 = MatMul(r0, w1); r1 = ReLU(h1);\n"
	"  y = MatMul(r1, w2); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n";

/* Lower sp (threads, one rule or none): the TIR after the passes as text
   (only its entry function) and the template log into *plan. */
static char *lower(const struct hgc_spec *sp, int threads, const struct hgc_tmpl_rule *rule,
		   char **plan)
{
	char *s = dc_tir_text(sp->graph, threads, rule, plan), *init;

	if ((init = strstr(s, "init func")))
		*init = 0;
	return s;
}

/* The chain of mlp3 split by rows and merged into one loop. */
static void test_split(const struct hgc_spec *sp)
{
	static const struct hgc_tmpl_rule pin = { "pin", "matmul_plain.MPN", "2", { NULL, 0, 0 } };
	char *plan, *s = lower(sp, 2, NULL, &plan);

	ok(dc_has(plan, "coarse-grained: MatMuls h0 h1 y split by rows jointly (MPN = 2, NPN = 1): "
		        "estimate "), "mlp3: the three layers are split by rows jointly");
	ok(dc_has(plan, "MatMul y: template matmul_plain, fused (") && dc_has(plan, "MPN=2 NPN=1"),
	   "mlp3: the last layer (no post-ops) takes the split too");
	is_int(dc_count(s, "parallel for"), 1, "mlp3: one parallel loop in the entry");
	is_int(dc_count(s, "merge 1 {"), 1, "mlp3: the merged one");
	free(s);
	free(plan);
	s = lower(sp, 1, NULL, &plan);
	ok(!strstr(plan, "by rows jointly") && !strstr(s, "merge 1"),
	   "mlp3 at 1 thread: no chain, no merge marks (one iteration)");
	free(s);
	free(plan);
	s = lower(sp, 2, &pin, &plan);
	ok(!strstr(plan, "by rows jointly") && dc_has(plan, "MPN=2 NPN=1"),
	   "mlp3 with MPN pinned: the config decides, no chain planned");
	free(s);
	free(plan);
}

/* The layers' own splits read A written by the other thread: that counts
   against them (h1 reads all of h0's 1 MiB, half of it foreign, h2 all of
   h1's 512 KiB: 768 KiB at 12 bytes per ns), and the chain is split.  A
   thread's 256 rows of h0 (512 KiB) would leave L2: two row chunks per
   thread (MPN = 4), and at one thread two chunks too (MPN = 2); each
   chunk's h0 and h1 live inside the merged loop. */
static void test_foreign(void)
{
	static const struct hgc_tmpl_rule off[] = {
		{ "pass", "parallel_merge", "off", { NULL, 0, 0 } },
		{ "pass", "tensor_shrink", "off", { NULL, 0, 0 } },
	};
	struct hgc_program p;
	char *plan, *s;

	dc_load(&p, "plan.hgc", src_plan);
	s = lower(HGC_PROGRAM_SPEC(&p, 0), 2, NULL, &plan);
	ok(dc_has(plan, "coarse-grained: MatMuls h0 h1 h2 split by rows jointly") &&
	   dc_has(plan, "each with its own split (65.5 us of A written by another thread)"),
	   "bottom512: the own splits' foreign reads of h0 and h1 count, the chain is split");
	ok(dc_has(plan, "coarse-grained: MatMuls h0 h1 h2 in 2 row chunks per thread (MPN = 4, "
		        "NPN = 1)"), "bottom512, 2 threads: two row chunks per thread");
	is_int(dc_count(s, "parallel for"), 1, "bottom512: one parallel loop");
	ok(dc_has(s, "parallel for (mpi in [0, 4), npi in [0, 1)) merge 1"),
	   "bottom512: over the 4 chunks");
	free(s);
	free(plan);
	s = lower(HGC_PROGRAM_SPEC(&p, 0), 1, NULL, &plan);
	ok(dc_has(plan, "in 2 row chunks per thread (MPN = 2, NPN = 1)") &&
	   !strstr(plan, "by rows jointly"), "bottom512, 1 thread: two row chunks, no split compared");
	is_int(dc_count(s, "parallel for"), 1, "bottom512, 1 thread: one loop over the chunks");
	ok(dc_has(plan, "buffer plan: peak scratch 768.0 KiB with reuse, 3.00 MiB without"),
	   "bottom512, 1 thread: a chunk of h0 and h1 at a time");
	free(s);
	free(plan);
	s = lower(HGC_PROGRAM_SPEC(&p, 1), 1, NULL, &plan);
	ok(!strstr(plan, "row chunks"), "bottom128: h0 (256 KiB) stays in L2, no chunks");
	free(s);
	free(plan);
	dc_run_ok(HGC_PROGRAM_SPEC(&p, 0), HGC_DRIVER_JIT, 2, NULL);
	dc_run_ok(HGC_PROGRAM_SPEC(&p, 0), HGC_DRIVER_JIT, 1, NULL);
	dc_run_ok(HGC_PROGRAM_SPEC(&p, 0), HGC_DRIVER_C, 2, NULL);
	for (int k = 0; k < 2; k++)
		dc_run_ok(HGC_PROGRAM_SPEC(&p, 0), HGC_DRIVER_JIT, 2, &off[k]);
	hgc_program_release(&p);
}

/* The packing of the second layer's A inside the merged loop. */
static void test_packa(const struct hgc_spec *sp)
{
	static const struct hgc_tmpl_rule off = { "pass", "parallel_merge", "off", { NULL, 0, 0 } };
	char *plan, *s = lower(sp, 2, NULL, &plan);

	ok(dc_has(plan, "h0 h1 split by rows jointly") &&
	   dc_has(plan, "MatMul h1: template matmul_packa"),
	   "mlp_packa: split by rows, the second layer packs A");
	is_int(dc_count(s, "parallel for"), 1, "mlp_packa: one parallel loop, the packing in it");
	ok(dc_has(s, "], &h0[") && strstr(s, "tensor h0") > strstr(s, "parallel for"),
	   "mlp_packa: a thread packs its own row blocks (of its own h0)");
	free(s);
	free(plan);
	s = lower(sp, 2, &off, &plan);
	is_int(dc_count(s, "parallel for"), 3, "mlp_packa, parallel_merge off: three loops");
	free(s);
	free(plan);
}

/* The bias joins the members' row loop, the result goes straight into the
   graph output the members end in, and the members of a result larger than
   L2 go to the block anchor (k13_out: 512 x 512, 1 MiB). */
static void test_output(const struct hgc_spec *sp, const struct hgc_spec *reader,
			const struct hgc_spec *both)
{
	static const struct hgc_tmpl_rule reuse_off = { "pass", "buffer_reuse", "off",
							{ NULL, 0, 0 } };
	static const struct hgc_tmpl_rule fold_off = { "pass", "fold_post", "off",
						       { NULL, 0, 0 } };
	char *plan, *s = lower(sp, 1, NULL, &plan);

	ok(dc_has(plan, "post-ops at post_block: bias ReLU") &&
	   dc_has(plan, "post_block(ws=8192 calls=32 into the call cost=0)"),
	   "k13_out: bias and ReLU at the block anchor, rated as folded into the call");
	ok(dc_has(s, "brgemm_post(&a_addr[0], &b_addr[0], &y[") && !strstr(s, "tensor h:"),
	   "k13_out: the MatMul writes the output y, no buffer for h");
	ok(dc_has(s, "&b[nb * 64 + 0 : 64], true);") && !strstr(s, "for (row"),
	   "k13_out: bias and ReLU fold into the call (its bias row, relu true), no loop left");
	ok(dc_has(plan, "fold_post: 1 brgemm call(s) apply their bias (and ReLU)"),
	   "k13_out: the plan says the call took its post-ops");
	free(s);
	free(plan);
	s = lower(sp, 1, &fold_off, &plan);
	ok(dc_has(plan, "post-ops at post_block: bias ReLU") &&
	   !dc_has(plan, "into the call") && !dc_has(plan, "fold_post:"),
	   "k13_out, fold_post off: bias and ReLU at the block anchor (the thread's 1 MiB leaves L2)");
	ok(dc_has(s, "brgemm(&a_addr[0], &b_addr[0], &y[") && !strstr(s, "tensor h:"),
	   "k13_out, fold_post off: the MatMul writes the output y, no buffer for h");
	is_int(dc_count(s, "for (row"), 1,
	       "k13_out, fold_post off: bias and ReLU are one loop over the block's rows");
	is_int(dc_count(s, "b[nb * 64 + j]"), 1, "k13_out, fold_post off: the bias is read in that loop only");
	free(s);
	free(plan);
	s = lower(sp, 1, &reuse_off, &plan);
	ok(dc_has(s, "tensor h:"), "k13_out, buffer_reuse off: h has its own buffer");
	free(s);
	free(plan);
	s = lower(reader, 1, NULL, &plan);
	ok(dc_has(s, "tensor h:"), "out_and_reader: another MatMul reads h, so h keeps its buffer");
	free(s);
	free(plan);
	s = lower(both, 1, NULL, &plan);
	ok(dc_has(plan, "post-ops at ") && dc_has(plan, ": bias Multiply Erf"),
	   "gelu_out: the bias is the first member");
	free(s);
	free(plan);
}

int main(void)
{
	static const struct hgc_tmpl_rule off[] = {
		{ "pass", "parallel_merge", "off", { NULL, 0, 0 } },
		{ "pass", "fuse", "off", { NULL, 0, 0 } },
		{ "pass", "tensor_shrink", "off", { NULL, 0, 0 } },
	};
	struct hgc_program p;
	char *plan, *s;

	pin_machine();

	dc_load(&p, "mlp.hgc", src);
	is_int((int)p.specs.len, 7, "the specs load");
	test_split(HGC_PROGRAM_SPEC(&p, 0));
	test_packa(HGC_PROGRAM_SPEC(&p, 1));
	test_foreign();
	s = lower(HGC_PROGRAM_SPEC(&p, 2), 2, NULL, &plan);
	ok(dc_has(plan, "coarse-grained: MatMuls h0 h1 h2 y not split by rows jointly") &&
	   !strstr(plan, "B read again from L3) against 0"),
	   "mlp_wide: 2 MB of weights, half per thread, would be read whole by each: not split");
	free(s);
	free(plan);
	s = lower(HGC_PROGRAM_SPEC(&p, 3), 2, NULL, &plan);
	ok(dc_has(plan, "h: members row by row at post_block, 64 rows of 16"),
	   "ffn_gelu: GELU's members on 64 x 16 blocks go row by row");
	is_int(dc_count(s, "erf("), 1, "ffn_gelu: the row's members are one loop");
	free(s);
	free(plan);
	test_output(HGC_PROGRAM_SPEC(&p, 4), HGC_PROGRAM_SPEC(&p, 5), HGC_PROGRAM_SPEC(&p, 6));
	for (size_t i = 0; i < p.specs.len; i++) {
		const struct hgc_spec *sp = HGC_PROGRAM_SPEC(&p, i);

		dc_run_ok(sp, HGC_DRIVER_JIT, 2, NULL);
		dc_run_ok(sp, HGC_DRIVER_C, 2, NULL);
		dc_run_ok(sp, HGC_DRIVER_JIT, 1, NULL);
		for (int k = 0; k < 3; k++)
			dc_run_ok(sp, HGC_DRIVER_JIT, 2, &off[k]);
	}
	hgc_driver_cache_clear();
	hgc_program_release(&p);
	done_testing();
}
