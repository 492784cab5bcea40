#!/bin/sh
# 103-conv: convolution paths.  conv_direct's choice for ResNet-50 shapes
# (the estimate must not pick pixel blocks shorter than the 6-row tile, and
# must split the input channels of a 3x3 conv whose weights per call would
# not stay in cache, and take input-channel blocks of 32 or more for
# res5's 512 channels), the BS chunk loop in the nest, the channels-last row
# path of grouped and depthwise convolutions (in the TIR, and its results on
# both backends against the interpreter), a pin outside BS's domain, and
# conv_1x1 reading and writing channels-last tensors in place.
# HGC names the binary (default build/hgc).  The plans checked are the Zen 3
# core's, whatever the host (t/pin_machine.h).
set -u
export HGC_ISA=avx2 HGC_MACHINE=amd,32K,512K
HGC=${HGC:-$PWD/build/hgc}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/hgc-103-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0

# ok STATUS DESCRIPTION
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

. "$top/t/conv_spec.inc"

echo "1..45"

conv r3b 1 128 28 128 3 1 1 "" > "$tmp/r3b.hgc"
owb=$(chosen "$tmp/r3b.hgc" OWB)
test "${owb:-0}" -ge 6
ok $? "res3a_branch2b: pixel blocks of at least 6 rows (OWB=$owb)"

conv r5b 1 512 7 512 3 1 1 "" > "$tmp/r5b.hgc"
owb=$(chosen "$tmp/r5b.hgc" OWB)
test "${owb:-0}" -ge 7
ok $? "res5a_branch2b: a 7-pixel row is one block (OWB=$owb)"

# 512 input channels x 9 taps x OCB: one call over all of them would stream
# 1 MiB or more of weights per row tile
icb=$(chosen "$tmp/r5b.hgc" ICB) ocb=$(chosen "$tmp/r5b.hgc" OCB) bs=$(chosen "$tmp/r5b.hgc" BS)
test $(( ${icb:-0} * ${bs:-0} * 9 * ${ocb:-0} * 4 )) -le $((192 * 1024)) && test "${bs:-0}" -ge 1
ok $? "res5a_branch2b: the weights of one call fit a sixth of L2 (ICB=$icb BS=$bs OCB=$ocb)"

# at the bench's batch 4, blocks of 16 input channels start a batch element
# per 16 x 16 k-steps: the estimate's per-element cost takes 32 or more
conv r5b4 4 512 7 512 3 1 1 "use conv_direct for Convolution;" > "$tmp/r5b4.hgc"
icb=$(chosen "$tmp/r5b4.hgc" ICB)
test "${icb:-0}" -ge 32
ok $? "res5a_branch2b, batch 4, conv_direct: blocks of 32 or more input channels (ICB=$icb)"

conv chunks 1 48 9 16 3 1 1 "pin conv_direct.ICB = 16; pin conv_direct.BS = 1;" > "$tmp/chunks.hgc"
"$HGC" compile --dump=tir "$tmp/chunks.hgc" > "$tmp/chunks.tir" 2>&1
grep -q 'for (ics in \[0, 3))' "$tmp/chunks.tir" &&
	grep -q 'brgemm(.*, !(ics == 0));' "$tmp/chunks.tir"
ok $? "BS=1 of 3 input-channel blocks: a chunk loop around the calls"

"$HGC" run "$tmp/chunks.hgc" > "$tmp/chunks.out" 2>&1
ok $? "the chunked conv matches the interpreter"

conv badbs 1 48 9 16 3 1 1 "pin conv_direct.ICB = 16; pin conv_direct.BS = 2;" > "$tmp/badbs.hgc"
"$HGC" run "$tmp/badbs.hgc" > "$tmp/badbs.out" 2>&1
st=$?
test $st -eq 1 && grep -q "error: pin conv_direct.BS = 2: not in the domain divisor_of(ICBLK)" "$tmp/badbs.out"
ok $? "a BS that does not divide the blocks is an error at the pin"

cat > "$tmp/dw.hgc" <<'SPEC'
spec dw {
  input x : f32[1, 9, 9, 24];
  const w : f32[3, 3, 1, 24];
  const b : f32[24];
  y = Convolution(x, w, b, strides = [2, 2], pads_begin = [1, 1], pads_end = [1, 1],
                  dilations = [1, 1], groups = 24, data_format = "NXC", weights_format = "XIO");
  output y;
}
SPEC
"$HGC" compile --dump=tir "$tmp/dw.hgc" > "$tmp/dw.tir" 2>&1
grep -q 'tensor row: f32\[24\]' "$tmp/dw.tir" &&
	grep -q 'row\[oc.*\] = row\[oc.*\] + x\[' "$tmp/dw.tir"
ok $? "depthwise channels-last: a row of 24 channel sums per pixel"

sed 's/data_format = "NXC", weights_format = "XIO"/data_format = "NCX", weights_format = "OIX"/;
     s/f32\[1, 9, 9, 24\]/f32[1, 24, 9, 9]/; s/f32\[3, 3, 1, 24\]/f32[24, 1, 3, 3]/' \
	"$tmp/dw.hgc" > "$tmp/dwncx.hgc"
"$HGC" compile --dump=tir "$tmp/dwncx.hgc" > "$tmp/dwncx.tir" 2>&1
! grep -q 'tensor row' "$tmp/dwncx.tir" && grep -q 'acc' "$tmp/dwncx.tir"
ok $? "depthwise channels-first: the element-wise loops"

for be in jit c; do
	"$HGC" run --backend=$be "$top/spec/ops/conv_groups.hgc" "$top/spec/ops/conv_blocked.hgc" \
		> "$tmp/specs.$be" 2>&1
	ok $? "conv_groups and conv_blocked specs pass on $be"
done

# a strided 1x1 conv on channels-last tensors: conv_1x1, X read and Y
# written in place (no packed copy of either), on both backends
conv r3s 2 32 14 48 1 2 0 "use conv_1x1 for Convolution;" > "$tmp/r3s.hgc"
"$HGC" compile --dump=tir "$tmp/r3s.hgc" > "$tmp/r3s.tir" 2>&1
"$HGC" explain "$tmp/r3s.hgc" 2>&1 | grep -q 'template conv_1x1:' &&
	! grep -q 'tensor [XY]: ' "$tmp/r3s.tir" && grep -q 'brgemm' "$tmp/r3s.tir"
ok $? "1x1 stride 2 channels-last: conv_1x1 in place, no packed input or output"
for be in jit c; do
	"$HGC" run --backend=$be "$tmp/r3s.hgc" > "$tmp/r3s.$be" 2>&1
	ok $? "the in-place 1x1 conv matches the interpreter on $be"
done

# the estimate knows the channels-last tensors are not copied; NCX ones are
"$HGC" explain "$tmp/r3s.hgc" | grep -q 'chosen .*packing 0\.0;'
ok $? "conv_1x1 on channels-last tensors: no packing in the estimate"
sed 's/"NXC"/"NCX"/; s/f32\[2, 14, 14, 32\]/f32[2, 32, 14, 14]/' "$tmp/r3s.hgc" > "$tmp/r3n.hgc"
"$HGC" explain "$tmp/r3n.hgc" | grep 'chosen' | grep -q -v 'packing 0\.0;'
ok $? "conv_1x1 on channels-first tensors: their packing is estimated"

# few input channels, a 7x7 window (ResNet-50's conv1 at 56x56): conv_kwrow,
# whose calls take a pixel's whole window row (7 taps x 3 channels = 21 k
# values) from T, the window rows the batch (7), X and Y in place
conv kw1 1 3 56 64 7 2 3 "" > "$tmp/kw1.hgc"
"$HGC" explain "$tmp/kw1.hgc" 2>&1 | grep -q 'template conv_kwrow'
ok $? "3 input channels, 7x7 stride 2: conv_kwrow"
"$HGC" compile --dump=tir "$tmp/kw1.hgc" > "$tmp/kw1.tir" 2>&1
grep -q 'brgemm(&a_addr\[0\], &b_addr\[0\], &y\[.*, bs, [0-9]*, 64, 21, 21, 64, 64, false);' "$tmp/kw1.tir" &&
	grep -q 'tensor T: f32' "$tmp/kw1.tir" && ! grep -q 'tensor Y: ' "$tmp/kw1.tir"
ok $? "conv_kwrow: k = 21 per window row, A's rows 21 apart, Y in place"
# the channels-last input is read in place (no padded copy of it on every
# run): the taps in the padding are zeros written into T
! grep -q 'tensor X: ' "$tmp/kw1.tir" && grep -q '\] = 0.0f;' "$tmp/kw1.tir"
ok $? "conv_kwrow: X read in place, the padding's taps zeroed in T"

# odd sizes, asymmetric pads, dilations, a bias and a fused ReLU, NCX data
cat > "$tmp/kwodd.hgc" <<'SPEC'
spec kw_odd {
  input x : f32[2, 13, 11, 5];
  const w : f32[3, 5, 5, 24];
  const b : f32[24];
  y = Convolution(x, w, b, strides = [1, 2], pads_begin = [0, 2], pads_end = [1, 1],
                  dilations = [1, 1], data_format = "NXC", weights_format = "XIO");
  z = ReLU(y);
  output z;
  expect { rtol = 1e-4; atol = 1e-5; }
}
spec kw_dil {
  input x : f32[2, 17, 19, 2];
  const w : f32[3, 3, 2, 8];
  y = Convolution(x, w, strides = [1, 1], pads_begin = [2, 1], pads_end = [2, 3],
                  dilations = [2, 3], data_format = "NXC", weights_format = "XIO");
  output y;
  expect { rtol = 1e-4; atol = 1e-5; }
}
spec kw_ncx {
  input x : f32[1, 3, 20, 20];
  const w : f32[80, 3, 4, 4];
  y = Convolution(x, w, strides = [2, 2], pads_begin = [1, 1], pads_end = [1, 1],
                  dilations = [1, 1], data_format = "NCX", weights_format = "OIX");
  output y;
  expect { rtol = 1e-4; atol = 1e-5; }
}
SPEC
test "$("$HGC" explain "$tmp/kwodd.hgc" 2>&1 | grep -c 'template conv_kwrow:')" -eq 3
ok $? "odd, dilated and channels-first small-IC convs take conv_kwrow"
for be in jit c; do
	"$HGC" run --backend=$be "$tmp/kw1.hgc" "$tmp/kwodd.hgc" > "$tmp/kw.$be" 2>&1
	ok $? "conv_kwrow matches the interpreter on $be"
done

# small images in a batch (res5's 7x7 at batch 4): conv_direct_nb, the
# batch in the rows of a call (7 pixels x 4 images = 28 rows of A and C;
# with pad 1 the 5 inner pixels in one call of 20 rows, each edge pixel in
# one of 4 rows over the two taps that read input columns)
conv nb5 4 512 7 512 3 1 1 "" > "$tmp/nb5.hgc"
"$HGC" explain "$tmp/nb5.hgc" 2>&1 | grep -q 'template conv_direct_nb'
ok $? "res5a_branch2b at batch 4: conv_direct_nb"
conv nb5s 4 64 7 32 3 1 1 "" > "$tmp/nb5s.hgc"
"$HGC" compile --dump=tir "$tmp/nb5s.hgc" > "$tmp/nb5s.tir" 2>&1
grep -q 'brgemm(.*, bs, 20, [0-9]*, [0-9]*, [0-9]*, [0-9]*, [0-9]*, ' "$tmp/nb5s.tir" &&
	grep -q 'for (el in \[0, 1))' "$tmp/nb5s.tir" && grep -q 'for (er in \[6, 7))' "$tmp/nb5s.tir" &&
	grep -q 'let kwl0: index = 1 - el;' "$tmp/nb5s.tir" &&
	[ "$(grep -c 'brgemm(.*, bs_[12], 4, [0-9]*, [0-9]*, [0-9]*, [0-9]*, [0-9]*, ' "$tmp/nb5s.tir")" -eq 2 ]
ok $? "conv_direct_nb: a row is 5 inner pixels x 4 images (20 rows) in a call, and an edge pixel on each side (4 rows)"
conv nb5p 4 64 7 32 3 1 0 "" > "$tmp/nb5p.hgc"
"$HGC" compile --dump=tir "$tmp/nb5p.hgc" > "$tmp/nb5p.tir" 2>&1
grep -q 'brgemm(.*, bs, 20, [0-9]*, [0-9]*, [0-9]*, [0-9]*, [0-9]*, ' "$tmp/nb5p.tir" && ! grep -q 'for (el' "$tmp/nb5p.tir"
ok $? "conv_direct_nb without padding: one call of 5 pixels x 4 images, no edge calls"
conv nb5b2 2 64 7 32 3 1 1 "" > "$tmp/nb5b2.hgc"
"$HGC" compile --dump=tir "$tmp/nb5b2.hgc" > "$tmp/nb5b2.tir" 2>&1
grep -q 'brgemm(.*, bs, 14, [0-9]*, [0-9]*, [0-9]*, [0-9]*, [0-9]*, ' "$tmp/nb5b2.tir" && ! grep -q 'for (el' "$tmp/nb5b2.tir"
ok $? "conv_direct_nb at batch 2: the whole row in one call (edge calls of 2 rows gain nothing)"
# res4a_branch2b at batch 4 (147 KiB of weights a block and 204 KiB of
# input rows a row fit three quarters of L2): calls of every input channel,
# B streamed from L2 (measured 1.04-1.1x faster than ICB = 16, BS = 1);
# res5a_branch2b (295 + 240 KiB) keeps short calls
conv nb4 4 256 14 256 3 1 1 "" > "$tmp/nb4.hgc"
icb=$(chosen "$tmp/nb4.hgc" ICB) bs=$(chosen "$tmp/nb4.hgc" BS) icb5=$(chosen "$tmp/nb5.hgc" ICB)
test $(( ${icb:-0} * ${bs:-0} )) -eq 256 && test "${icb5:-0}" -le 32
ok $? "conv_direct_nb: res4's 3x3 sums all 256 channels a call (ICB=$icb BS=$bs), res5's not (ICB=$icb5)"
# the same at batch 1 and at 28x28 (OW x N > 64): conv_direct
conv nb1 1 64 7 32 3 1 1 "" > "$tmp/nb1.hgc"
conv nb28 4 64 28 32 3 1 1 "" > "$tmp/nb28.hgc"
! "$HGC" explain "$tmp/nb1.hgc" 2>&1 | grep -q 'template conv_direct_nb' &&
	! "$HGC" explain "$tmp/nb28.hgc" 2>&1 | grep -q 'template conv_direct_nb'
ok $? "batch 1 and 28x28 images at batch 4: not conv_direct_nb"

# odd sizes: channel tails, a pixel tail (OWB 4 of 5), dilation, asymmetric
# pads, a stride in H, a bias and a fused ReLU, the BS < ICBLK chunk loop
cat > "$tmp/nbodd.hgc" <<'SPEC'
config nb_chunks { pin conv_direct_nb.ICB = 8; pin conv_direct_nb.BS = 1; pin conv_direct_nb.OWB = 4; }
spec nb_odd {
  input x : f32[3, 9, 5, 13];
  const w : f32[3, 3, 13, 19];
  const b : f32[19];
  y = Convolution(x, w, b, strides = [2, 1], pads_begin = [1, 2], pads_end = [0, 1],
                  dilations = [1, 2], data_format = "NXC", weights_format = "XIO");
  z = ReLU(y);
  output z;
  expect { rtol = 1e-4; atol = 1e-5; }
}
spec nb_chunked {
  input x : f32[2, 20, 6, 6];
  const w : f32[24, 20, 3, 3];
  y = Convolution(x, w, strides = [1, 1], pads_begin = [1, 1], pads_end = [1, 1],
                  dilations = [1, 1], data_format = "NCX", weights_format = "OIX");
  output y;
  config nb_chunks;
  expect { rtol = 1e-4; atol = 1e-5; }
}
SPEC
test "$("$HGC" explain "$tmp/nbodd.hgc" 2>&1 | grep -c 'template conv_direct_nb:')" -eq 2
ok $? "odd and chunked batch-in-rows convs take conv_direct_nb"
for be in jit c; do
	"$HGC" run --backend=$be "$tmp/nb5s.hgc" "$tmp/nbodd.hgc" > "$tmp/nb.$be" 2>&1
	ok $? "conv_direct_nb matches the interpreter on $be"
done

# strided 1x1 convs of small images in a batch (res5a_branch1 at batch 4):
# conv_1x1_nb, one output row of every image per call from T ([OW, N, IC]:
# 7 x 4 = 28 rows), channel groups of 256 or more per copy
conv nb1x1 4 1024 14 2048 1 2 0 "" > "$tmp/nb1x1.hgc"
"$HGC" explain "$tmp/nb1x1.hgc" > "$tmp/nb1x1.exp" 2>&1
ocb=$(chosen "$tmp/nb1x1.hgc" OCB) ocgb=$(chosen "$tmp/nb1x1.hgc" OCGB)
grep -q 'template conv_1x1_nb' "$tmp/nb1x1.exp" && test $(( ${ocb:-0} * ${ocgb:-0} )) -ge 256
ok $? "res5a_branch1 at batch 4: conv_1x1_nb, groups of 256 or more channels (OCB=$ocb OCGB=$ocgb)"
# its 8 MiB of weights, re-read once per output row: groups of at most
# 2 MiB, which stay in L3 across a group's rows
test $(( ${ocb:-0} * ${ocgb:-0} * 1024 * 4 )) -le $((2 << 20))
ok $? "res5a_branch1 at batch 4: a group's weights fit 2 MiB (OCB=$ocb OCGB=$ocgb)"
# res4a_branch1 at batch 4 (14-pixel output rows): conv_1x1, rows read in
# place, one output row a call; the copies of conv_1x1_nb and
# conv_1x1_copy are for rows of fewer than 12 pixels
conv nb4a1 4 512 28 1024 1 2 0 "" > "$tmp/nb4a1.hgc"
"$HGC" explain "$tmp/nb4a1.hgc" 2>&1 | grep -q 'template conv_1x1:'
ok $? "res4a_branch1 at batch 4: conv_1x1"
conv nb1x1s 4 64 14 32 1 2 0 "" > "$tmp/nb1x1s.hgc"
"$HGC" compile --dump=tir "$tmp/nb1x1s.hgc" > "$tmp/nb1x1s.tir" 2>&1
grep -q 'brgemm(.*, bs, 28, [0-9]*, [0-9]*, 64, ' "$tmp/nb1x1s.tir" && grep -q 'tensor T: f32\[1792\]' "$tmp/nb1x1s.tir"
ok $? "conv_1x1_nb: 28-row calls from T (7 pixels x 4 images x 64 channels)"
# odd sizes, stride 3 x 2, a bias and a fused ReLU, NCX data
cat > "$tmp/nb1odd.hgc" <<'SPEC'
spec nb1_odd {
  input x : f32[3, 11, 9, 40];
  const w : f32[1, 1, 40, 24];
  const b : f32[24];
  y = Convolution(x, w, b, strides = [3, 2], pads_begin = [0, 0], pads_end = [0, 0],
                  dilations = [1, 1], data_format = "NXC", weights_format = "XIO");
  z = ReLU(y);
  output z;
  expect { rtol = 1e-4; atol = 1e-5; }
}
spec nb1_ncx {
  input x : f32[2, 12, 10, 10];
  const w : f32[36, 12, 1, 1];
  y = Convolution(x, w, strides = [2, 2], pads_begin = [0, 0], pads_end = [0, 0],
                  dilations = [1, 1], data_format = "NCX", weights_format = "OIX");
  output y;
  expect { rtol = 1e-4; atol = 1e-5; }
}
SPEC
test "$("$HGC" explain "$tmp/nb1odd.hgc" 2>&1 | grep -c 'template conv_1x1_nb:')" -eq 2
ok $? "odd and channels-first strided 1x1 convs in a batch take conv_1x1_nb"
for be in jit c; do
	"$HGC" run --backend=$be "$tmp/nb1x1s.hgc" "$tmp/nb1odd.hgc" > "$tmp/nb1.$be" 2>&1
	ok $? "conv_1x1_nb matches the interpreter on $be"
done

# strided 1x1 convs of short rows where conv_1x1_nb does not apply
# (res5a_branch1 at batch 1: one image, OW 7): conv_1x1_copy, the picked
# pixels of OHB rows copied into T, calls of more than one output row from
# it; res3a_branch1 at batch 4 (OW 28) reads its rows in place (conv_1x1)
conv cp5a 1 1024 14 2048 1 2 0 "" > "$tmp/cp5a.hgc"
"$HGC" explain "$tmp/cp5a.hgc" > "$tmp/cp5a.exp" 2>&1
ohb=$(chosen "$tmp/cp5a.hgc" OHB)
grep -q 'template conv_1x1_copy' "$tmp/cp5a.exp" && test "${ohb:-0}" -ge 2
ok $? "res5a_branch1 at batch 1: conv_1x1_copy, calls of several rows (OHB=$ohb)"
conv cp3a 4 256 56 512 1 2 0 "" > "$tmp/cp3a.hgc"
"$HGC" explain "$tmp/cp3a.hgc" 2>&1 | grep -q 'template conv_1x1:'
ok $? "res3a_branch1 at batch 4: conv_1x1"
conv cp1 1 24 9 40 1 2 0 "pin conv_1x1_copy.OHB = 5;" > "$tmp/cp1.hgc"
"$HGC" compile --dump=tir "$tmp/cp1.hgc" > "$tmp/cp1.tir" 2>&1
grep -q 'brgemm(.*, bs, 25, 40, 24, 24, ' "$tmp/cp1.tir" && grep -q 'tensor T: f32\[600\]' "$tmp/cp1.tir"
ok $? "conv_1x1_copy: one image, 25-row calls from T (5 x 5 pixels x 24 channels)"

# res2a_branch2b at batch 4: blocks of 64 output channels, so that the
# packed 58x58x64 input (841 KiB, beyond L2) is read once per image, not
# once per block of 16 (the estimate's input term, and calls of 6 rows or
# more rated by their B stream, not the L1 term)
conv r2b4 4 64 56 64 3 1 1 "" > "$tmp/r2b4.hgc"
ocb=$(chosen "$tmp/r2b4.hgc" OCB)
test "${ocb:-0}" -eq 64
ok $? "res2a_branch2b, batch 4: one block of 64 output channels (OCB=$ocb)"

# Convolutions anchor fused ops (core/graph/passes/fuse.c): the bottleneck's
# three convolutions take their ReLU and the shortcut's Add and ReLU; a
# channels-last conv's bias and ReLU fold into its calls (fold_post)
"$HGC" explain --threads=1 "$top/spec/models/convnets.hgc" > "$tmp/cf.out" 2>&1
grep -q 'fused op 2: Convolution sc + Add s, ReLU y' "$tmp/cf.out" &&
	grep -q 'fused op 0: Convolution c + ReLU y' "$tmp/cf.out"
ok $? "convolutions anchor fused ops (the bottleneck's shortcut takes its Add and ReLU)"
"$HGC" explain --threads=1 "$top/spec/ops/edge_conv_fused.hgc" > "$tmp/cf.out" 2>&1
sed -n '/^spec edge_convf_1x1_rows /,/^spec /p' "$tmp/cf.out" |
	grep -q 'post-ops at post_rows: bias ReLU' &&
	sed -n '/^spec edge_convf_1x1_rows /,/^spec /p' "$tmp/cf.out" | grep -q 'fold_post: 1 brgemm call'
ok $? "a channels-last conv's bias is a member, and bias and ReLU fold into its call"
sed -n '/^spec edge_convf_nxc_sum_also_output /,/^spec /p' "$tmp/cf.out" | grep -q 'fold_post:'
test $? -ne 0
ok $? "a conv whose sum is also an output keeps its nest (no fold)"
