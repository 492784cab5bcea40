/*
 * 141-attention-merge: attention as one parallel loop.  Q K^T with its
 * softmax chain and P V are two fused ops over the same (batch x head,
 * row block) ranges; the TIR passes forward the copies that read the
 * folded-batch operands (Q, the probabilities) into place, move the
 * packing of V before the first loop, merge the two loops and shrink the
 * scores to the iteration's rows.  Checked on the TIR after the passes (one
 * merged parallel for, Q and the scores read in place, the results written
 * in place (no write-back copies), the scores tensor a
 * per-iteration slice defined inside the loop, at most 128 KiB: rows of 512
 * scores take 64-row blocks, which P x V takes too; K^T read in place, as
 * matmul_batch_inb is taken first for the scores) at batch 1 and at batch
 * 2 (a batch index split with / and %), and on the numbers against the
 * interpreter: JIT and C backend, with the passes on and with
 * copy_forward, parallel_merge or fusion off.  The fusion plan's cost
 * check: the log gives the members' cost unfused beside each anchor's, and
 * members that cost more at every anchor (512 batches of 4 x 8) follow the
 * nest.
 */
#include "t/driver_check.h"

#include <stdlib.h>
#include <string.h>

static const char src[] =
	"spec att_b1 {\n"
	"  input q : f32[1, 4, 64, 32] = uniform(lo = -1, hi = 1, seed = 1);\n"
	"  input kt : f32[1, 4, 32, 64] = uniform(lo = -1, hi = 1, seed = 2);\n"
	"  input v : f32[1, 4, 64, 32] = uniform(lo = -1, hi = 1, seed = 3);\n"
	"  input mask : f32[1, 1, 1, 64] = uniform(lo = -4, hi = 0, seed = 4);\n"
	"  const scale : f32[] = [0.125];\n"
	"  s = MatMul(q, kt); ss = Multiply(s, scale); sm = Add(ss, mask);\n"
	"  p = SoftMax(sm, axis = -1); y = MatMul(p, v); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec att_b2 {\n"
	"  input q : f32[2, 3, 64, 16] = uniform(lo = -1, hi = 1, seed = 5);\n"
	"  input kt : f32[2, 3, 16, 64] = uniform(lo = -1, hi = 1, seed = 6);\n"
	"  input v : f32[2, 3, 64, 16] = uniform(lo = -1, hi = 1, seed = 7);\n"
	"  input mask : f32[2, 1, 1, 64] = uniform(lo = -4, hi = 0, seed = 8);\n"
	"  const scale : f32[] = [0.25];\n"
	"  s = MatMul(q, kt); ss = Multiply(s, scale); sm = Add(ss, mask);\n"
	"  p = SoftMax(sm, axis = -1); y = MatMul(p, v); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec att_long {\n"
	"  input q : f32[1, 2, 512, 16] = uniform(lo = -1, hi = 1, seed = 9);\n"
	"  input kt : f32[1, 2, 16, 512] = uniform(lo = -1, hi = 1, seed = 10);\n"
	"  input v : f32[1, 2, 512, 16] = uniform(lo = -1, hi = 1, seed = 11);\n"
	"  input mask : f32[1, 1, 1, 512] = uniform(lo = -4, hi = 0, seed = 12);\n"
	"  const scale : f32[] = [0.25];\n"
	"  s = MatMul(q, kt); ss = Multiply(s, scale); sm = Add(ss, mask);\n"
	"  p = SoftMax(sm, axis = -1); y = MatMul(p, v); output y;\n"
	"  expect { rtol = 1e-4; atol = 1e-5; } }\n"
	"spec tiny {\n"
	"  input a : f32[512, 4, 8] = uniform(lo = -1, hi = 1, seed = 13);\n"
	"  input b : f32[512, 8, 8] = uniform(lo = -1, hi = 1, seed = 14);\n"
	"  h = MatMul(a, b); y = ReLU(h); output y; }\n";

/* The TIR of sp after the passes (2 threads) under one switch (NULL: none), as text. */
static char *tir_of(const struct hgc_spec *sp, const struct hgc_tmpl_rule *rule)
{
	return dc_tir_text(sp->graph, 2, rule, NULL);
}

/* Whether the template log of lowering sp (2 threads) has the text. */
static bool log_has(const struct hgc_spec *sp, const char *text)
{
	struct hgc_driver_opts o;
	struct hgc_diag d;
	char *plan = NULL;
	bool has;

	hgc_driver_opts_init(&o);
	o.threads = 2;
	hgc_diag_init(&d);
	hgc_tir_module_free(hgc_driver_lower(sp->graph, &o, &plan, &d));
	has = plan && strstr(plan, text);
	if (!has)
		diag("%s%s", plan ? plan : "", hgc_diag_text(&d));
	free(plan);
	hgc_diag_release(&d);
	return has;
}

/* The elements of the first `tensor NAME: f32[E];` after the text at, or -1. */
static long tensor_size(const char *at, const char *name)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "tensor %s: f32[", name);
	p = at ? strstr(at, pat) : NULL;
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

/* The merge: one loop of group 1, the scores in it as a slice, Q in place. */
static void test_tir(const struct hgc_spec *sp, long scores)
{
	static const struct hgc_tmpl_rule fwd_off = { "pass", "copy_forward", "off", { NULL, 0, 0 } };
	char *s = tir_of(sp, NULL);
	const char *loop = strstr(s, "merge 1 {");
	long n = tensor_size(loop, "s");

	is_int(dc_count(s, "merge 1 {"), 1, "%s: the two MatMuls' loops are one parallel for", sp->name);
	is_int(dc_count(s, "parallel for"), 1,
	       "%s: no other (K^T and V are read in place: nothing is packed)", sp->name);
	ok(n > 0 && n < scores && n * 4 <= 128 << 10 && tensor_size(s, "s") == n,
	   "%s: the scores are a slice of the iteration's rows, defined in the loop (%ld of %ld)",
	   sp->name, n, scores);
	ok(strstr(s, "= &q[") && !strstr(s, "= q[") && !strstr(s, "], &q["),
	   "%s: Q is read in place, not copied", sp->name);
	ok(strstr(s, "= &kt[") && !strstr(s, "= kt[") && !strstr(s, "], &kt["),
	   "%s: K^T is read in place (matmul_batch_inb first: no packing of it)", sp->name);
	ok(strstr(s, "= &v[") && !strstr(s, "= v[") && !strstr(s, "], &v["),
	   "%s: V is read in place (P x V takes NB = N: its packing is V's order)", sp->name);
	ok(strstr(s, "= &s[") != NULL, "%s: P x V reads the scores in place", sp->name);
	ok(strstr(s, "], &s[") && strstr(s, "], &y[") && !strstr(s, "tensor C"),
	   "%s: both brgemms write their results in place (no write-back copy)", sp->name);
	free(s);
	s = tir_of(sp, &fwd_off);
	is_int(dc_count(s, "merge 1 {"), 2, "%s: with copy_forward off the copies keep the loops apart",
	       sp->name);
	ok(strstr(s, "= q[") || strstr(s, "], &q["), "%s: and Q is copied (a loop or a copy call)",
	   sp->name);
	free(s);
}

int main(void)
{
	static const struct hgc_tmpl_rule off[] = {
		{ "pass", "copy_forward", "off", { NULL, 0, 0 } },
		{ "pass", "parallel_merge", "off", { NULL, 0, 0 } },
		{ "pass", "fuse", "off", { NULL, 0, 0 } },
	};
	struct hgc_program p;

	dc_load(&p, "att.hgc", src);
	is_int((int)p.specs.len, 4, "the specs load");
	ok(log_has(HGC_PROGRAM_SPEC(&p, 0), " cost=16640) unfused(cost=129024); post-ops at post_"),
	   "the log gives the members' cost unfused beside the anchors'");
	ok(log_has(HGC_PROGRAM_SPEC(&p, 3), "post_row(ws=32 calls=512 cost=32768) "
		   "unfused(cost=18432: cheaper than every anchor); post-ops at the end: ReLU"),
	   "512 batches of 4 x 8: a ReLU per anchor call costs more than a pass after the nest");
	dc_run_ok(HGC_PROGRAM_SPEC(&p, 3), HGC_DRIVER_JIT, 2, NULL);
	for (size_t i = 0; i < 3; i++) {
		const struct hgc_spec *sp = HGC_PROGRAM_SPEC(&p, i);
		static const long scores[] = { 4L * 64 * 64, 6L * 64 * 64, 2L * 512 * 512 };

		test_tir(sp, scores[i]);
		ok(log_has(sp, "y: MB = 64 as s's rows (coarse-grained merge), NB = N"),
		   "%s: P x V takes the scores' row blocks", sp->name);
		dc_run_ok(sp, HGC_DRIVER_JIT, 2, NULL);
		dc_run_ok(sp, HGC_DRIVER_C, 2, NULL);
		for (int k = 0; k < 3; k++)
			dc_run_ok(sp, HGC_DRIVER_JIT, 2, &off[k]);
	}
	hgc_driver_cache_clear();
	hgc_program_release(&p);
	done_testing();
}
