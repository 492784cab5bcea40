#!/bin/sh
# 132-core-cost: matmul_core's post-op anchors count their calls exactly when
# the threads do not divide the blocks (post_block and post_row sit inside
# mb < MBLK and nb < NBLK), so a fused MatMul keeps its post-ops at an anchor
# there, and the results stay right on every backend and pass setting.
# HGC names the binary (default build/hgc).
set -u
HGC=${HGC:-$PWD/build/hgc}
tmp=$(mktemp -d /tmp/hgc-132-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0

# ok STATUS DESCRIPTION
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; sed 's/^/#   /' "$tmp/out" | head -20; fi
}

echo "1..15"
cat > "$tmp/core.hgc" <<'SPEC'
config m0 { threads = 2; use matmul_core for MatMul; pin matmul_core.MB = 16; pin matmul_core.NB = 16;
            pin matmul_core.MPN = 2; pin matmul_core.NPN = 1; pin matmul_core.ORDER = 0; }
config m1 { threads = 2; use matmul_core for MatMul; pin matmul_core.MB = 16; pin matmul_core.NB = 16;
            pin matmul_core.MPN = 2; pin matmul_core.NPN = 1; pin matmul_core.ORDER = 1; }
config n1 { threads = 2; use matmul_core for MatMul; pin matmul_core.MB = 16; pin matmul_core.NB = 16;
            pin matmul_core.MPN = 1; pin matmul_core.NPN = 2; pin matmul_core.ORDER = 1; }
spec om0 { input a : f32[48, 64]; const b : f32[64, 32]; const c : f32[32];
           h = MatMul(a, b, c); y = ReLU(h); output y; config m0; }
spec om1 { input a : f32[48, 64]; const b : f32[64, 32]; const c : f32[32];
           h = MatMul(a, b, c); y = ReLU(h); output y, h; config m1; }
spec on1 { input a : f32[32, 64]; const b : f32[64, 48];
           h = MatMul(a, b); y = Tanh(h); output y; config n1; }
SPEC
"$HGC" run --explain "$tmp/core.hgc" > "$tmp/out" 2>&1
ok $? "the three specs pass"
# 3 block rows over MPN = 2 (MSN = 2): post_row runs 3 times, not 4
grep -q 'ORDER=0), write-back at post_row; candidates: post_row(ws=512 calls=3 cost=[0-9]*) ' "$tmp/out"
ok $? "MPN = 2 over 3 block rows: post_row counts 3 calls and is a box"
grep -q 'post_thread(ws=1024 calls=2: not a box inside the result)' "$tmp/out"
ok $? "post_thread still overhangs the last block row: not a box"
grep -q 'ORDER=0).*post-ops at post_row: bias ReLU' "$tmp/out"
ok $? "ORDER 0: the ReLU is fused at post_row"
# ORDER 1: 3 x 2 blocks, post_block runs 6 times, not 8
grep -q 'MPN=2 NPN=1 BS=1 ORDER=1), write-back at post_block; candidates: post_block(ws=256 calls=6 cost=[0-9]*) post_row(ws=512 calls=3 cost=' "$tmp/out"
ok $? "ORDER 1: post_block counts 6 calls, post_row 3; both are boxes"
grep -q 'MPN=2 NPN=1 BS=1 ORDER=1).*post-ops at post_row: bias ReLU' "$tmp/out"
ok $? "ORDER 1: the cheaper post_row takes the ReLU"
# NPN = 2 over 3 block columns: post_row's slice runs past the last one
grep -q 'MPN=1 NPN=2 BS=1 ORDER=1), write-back at post_block; candidates: post_block(ws=256 calls=6 cost=[0-9]*) post_row(ws=512 calls=4: not a box inside the result)' "$tmp/out"
ok $? "NPN = 2 over 3 block columns: post_block is a box, post_row is not"
grep -q 'MPN=1 NPN=2 BS=1 ORDER=1).*post-ops at post_block: Tanh' "$tmp/out"
ok $? "the Tanh is fused at post_block"
[ "$(grep -c '^o[mn][01]  *ok ' "$tmp/out")" -eq 3 ]
ok $? "each spec matches the interpreter"
for b in c jit; do
	"$HGC" run --backend=$b "$tmp/core.hgc" > "$tmp/out" 2>&1
	ok $? "backend $b: the specs match the interpreter"
done
cat > "$tmp/off.hgc" <<'SPEC'
config m1off { threads = 2; use matmul_core for MatMul; pin matmul_core.MB = 16; pin matmul_core.NB = 16;
               pin matmul_core.MPN = 2; pin matmul_core.NPN = 1; pin matmul_core.ORDER = 1;
               pass tensor_shrink = off; pass copy_forward = off; }
spec om1off { input a : f32[48, 64]; const b : f32[64, 32]; const c : f32[32];
              h = MatMul(a, b, c); y = ReLU(h); output y, h; config m1off; }
SPEC
"$HGC" run --explain "$tmp/off.hgc" > "$tmp/out" 2>&1
ok $? "with TIR passes off the fused spec matches too"
grep -q 'post-ops at post_row: bias ReLU' "$tmp/out"
ok $? "and its ReLU is still fused"
# a use of matmul_core whose pins cannot hold: an error at the pin, not wrong answers
cat > "$tmp/bad.hgc" <<'SPEC'
config bad { threads = 2; use matmul_core for MatMul; pin matmul_core.MPN = 3; }
spec sb { input a : f32[48, 64]; const b : f32[64, 32]; h = MatMul(a, b); y = ReLU(h); output y; config bad; }
SPEC
"$HGC" run "$tmp/bad.hgc" > "$tmp/out" 2>&1
[ $? -eq 1 ]; ok $? "a pin the thread grid cannot take fails the spec"
grep -q 'bad.hgc:1:[0-9]*: error: ' "$tmp/out"; ok $? "at file:line:col"
