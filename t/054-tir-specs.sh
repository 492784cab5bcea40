#!/bin/sh
# 054-tir-specs: the TIR passes on every spec.  Every spec under spec/
# matches the interpreter (`hgc check`, JIT) with every TIR pass off, and
# the model specs with each one off in turn (every spec with
# HGC_TEST_LONG=1; t/112 runs every spec with all on, on both backends); `--dump=tir` prints the buffer plan and the TIR after the
# passes; on the MLP and MHA specs peak scratch with reuse is at most half
# of the plan without; `hgc run --explain` and `hgc explain` show the plan;
# an unknown pass name is an error with its location.
cd "$(dirname "$0")/.." || exit 1
HGC=${HGC:-$PWD/build/hgc}
T=$(mktemp -d "${TMPDIR:-/tmp}/hgc-tir-specs.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export HGC_CACHE=off
. t/tap.sh



cat >"$T/cfg.hgc" <<'EOF'
config all_on { }
config all_off { pass copy_forward = off; pass parallel_merge = off; pass tensor_shrink = off;
                 pass buffer_reuse = off; pass index_flatten = off; pass loop_fuse = off;
                 pass copy_loops = off; pass fold_post = off; pass fold_quant = off; }
config no_copy_forward { pass copy_forward = off; }
config no_parallel_merge { pass parallel_merge = off; }
config no_tensor_shrink { pass tensor_shrink = off; }
config no_buffer_reuse { pass buffer_reuse = off; }
config no_index_flatten { pass index_flatten = off; }
config no_loop_fuse { pass loop_fuse = off; }
config no_copy_loops { pass copy_loops = off; }
config no_fold_post { pass fold_post = off; }
config no_fold_quant { pass fold_quant = off; }
EOF
cat >"$T/bad.hgc" <<'EOF'
config bad { pass tensor_shrinkk = off; }
EOF

# --- the specs under the switches ---------------------------------------------
# Every spec with every TIR pass off (t/112 runs every spec with all on, on
# both backends); the model specs, where the passes do the most, with each
# pass off in turn (all of spec/ too when HGC_TEST_LONG=1: a few minutes).
run_specs() {
	hgc check --config=$1 "$T/cfg.hgc" $2
	total=$(grep -c '^ok ' "$T/out")
	bad=$(grep -c '^not ok ' "$T/out")
	[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$total" -gt "$3" ]
	ok $? "config $1 on $2: $total specs match the interpreter, $bad do not"
}
run_specs all_off spec 100
dirs="spec/models spec/demo"
[ -n "$HGC_TEST_LONG" ] && dirs=spec
for c in no_copy_forward no_parallel_merge no_tensor_shrink no_buffer_reuse no_index_flatten \
	no_loop_fuse no_copy_loops no_fold_post no_fold_quant; do
	run_specs $c "$dirs" 10
done
# the int8 MatMuls fold_quant folds on AMX machines, with it off
run_specs no_fold_quant spec/ops/int8_requant.hgc 2

# --- the dump and the plan --------------------------------------------------
# (one thread: at two the MLP's layers are one parallel loop, and their
# intermediates share buffers per thread instead)
hgc compile --threads=1 --dump=tir spec/demo/mlp.hgc
grep -q '^# buffer plan: peak scratch .* with reuse, .* without' "$T/out"
ok $? "--dump=tir prints the buffer plan"
# (the DLRM top MLP: the demo's last layer writes its output in place, and
# its other two intermediates are live at once)
hgc compile --threads=1 --dump=tir spec/models/dlrm.hgc
grep -q '^    tensor scratch: f32\[' "$T/out"
ok $? "--dump=tir prints the TIR after the passes (a shared scratch buffer)"
hgc compile --dump=tir --config=all_off "$T/cfg.hgc" spec/demo/mlp.hgc
grep -q '^# buffer plan: off' "$T/out" && grep -q '^    tensor r0: f32\[128, 512\];' "$T/out"
ok $? "--dump=tir with the passes off: the TIR as lowered"

# Peak scratch with reuse at most half of without, on every MLP and MHA spec
# (the bench's too: DLRM top at two threads merges three layers into one
# parallel loop, whose intermediates only per-thread reuse can share).  The
# plans are the Zen 3 core's (t/pin_machine.h): with a 2 MiB L2, DLRM bottom
# at batch 512 keeps h0 (1 MiB) and h1 (512 KiB) whole, with reuse half of
# without plus the 16 bytes of two brgemm address arrays both plans hold.
export HGC_ISA=avx2 HGC_MACHINE=amd,32K,512K
for file in spec/models/mlp.hgc spec/models/mha.hgc bench/specs/mlp_large.hgc \
	bench/specs/mha_large.hgc; do
    for threads in 1 2; do
	hgc compile --threads=$threads --dump=tir "$file"
	sed -n 's/^# spec \([^ ]*\) .*/\1/p; s/^# buffer plan: peak scratch .*(\([0-9]*\) against \([0-9]*\) bytes.*/\1 \2/p' "$T/out" |
		paste - - >"$T/plans"
	[ -s "$T/plans" ]
	ok $? "$file, $threads thread(s): a buffer plan per spec"
	while read -r spec with without; do
		[ $((2 * with)) -le "$without" ]
		st=$?
		desc="$spec, $threads thread(s): peak scratch $with bytes with reuse, $without without"
		ok $st "$desc"
	done <"$T/plans"
    done
done

hgc run --explain spec/demo/mlp.hgc
grep -q 'buffer plan: peak scratch' "$T/out"
ok $? "hgc run --explain shows the buffer plan"
hgc explain spec/demo/mlp.hgc
grep -q 'buffer plan: peak scratch' "$T/out"
ok $? "hgc explain shows the buffer plan"

hgc check --config=bad "$T/bad.hgc" spec/demo/mlp.hgc
grep -q "bad.hgc:1:.*unknown pass 'tensor_shrinkk'" "$T/out" "$T/err"
ok $? "an unknown pass name is an error at the config"

done_testing
