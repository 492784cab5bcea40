#!/bin/sh
# 107-conv-groups: conv_1x1's row and channel groups.  The threads split
# the batch, groups of OCGB blocks of output channels and groups of OHB
# output rows, the channel blocks of a group innermost: the estimate keeps
# every block inner when all the weights fit L2 beside a group's input rows,
# and a group of weights that fits when they do not; pinned groups compute
# what the interpreter does on both backends; a group of rows that does not
# divide the rows is an error at the pin.  conv_1x1_rows (stride 1): a
# group of whole rows is one brgemm call (7 rows of 7 pixels: 49 rows of
# A), with a bias and a fused ReLU, on both backends.
# HGC names the binary (default build/hgc).
set -u
HGC=${HGC:-$PWD/build/hgc}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/hgc-107-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0

# ok STATUS DESCRIPTION
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

. "$top/t/conv_spec.inc"

echo "1..19"

# res2b_branch2a: 64 KiB of weights, 56 KiB of input per row: every block
# of weights passes while a row group's input stays
conv r2 4 256 56 64 1 1 0 "use conv_1x1 for Convolution;" > "$tmp/r2.hgc"
ocb=$(chosen "$tmp/r2.hgc" OCB) ocgb=$(chosen "$tmp/r2.hgc" OCGB)
test $(( ${ocb:-0} * ${ocgb:-0} )) -eq 64
ok $? "res2b_branch2a: every block of output channels inside a row group (OCB=$ocb OCGB=$ocgb)"

# res5a_branch2c-like, 512 x 2048 weights (4 MiB): a group of them fits L2
conv r5 1 512 7 2048 1 1 0 "use conv_1x1 for Convolution;" > "$tmp/r5.hgc"
ocb=$(chosen "$tmp/r5.hgc" OCB) ocgb=$(chosen "$tmp/r5.hgc" OCGB)
test "${ocgb:-0}" -ge 1 && test $(( ${ocb:-0} * ${ocgb:-0} * 512 * 4 )) -le $((384 * 1024))
ok $? "4 MiB of weights: a group of them fits three quarters of L2 (OCB=$ocb OCGB=$ocgb)"

# pinned groups: 3 blocks of 16 output channels in a group, rows in groups
# of 4; then stride 2 with the rows of a channel block inner
conv g1 2 32 12 48 1 1 0 "use conv_1x1 for Convolution; pin conv_1x1.OCB = 16; pin conv_1x1.OHB = 4; pin conv_1x1.OCGB = 3;
  pin conv_1x1.BS = 1; pin conv_1x1.ICB = 16;" > "$tmp/g1.hgc"
"$HGC" compile --dump=tir "$tmp/g1.hgc" > "$tmp/g1.tir" 2>&1
grep -q 'parallel for (n in \[0, 2), ocg in \[0, 1), ohb in \[0, 3), oci in \[0, 3))' "$tmp/g1.tir" &&
	grep -q 'for (ohi in \[0, 4))' "$tmp/g1.tir"
ok $? "OHB=4 OCGB=3: batch, channel groups, row groups and blocks in parallel, rows inside"
for be in jit c; do
	"$HGC" run --backend=$be "$tmp/g1.hgc" > "$tmp/g1.$be" 2>&1
	ok $? "pinned groups match the interpreter on $be"
done

conv g2 2 32 14 48 1 2 0 "pin conv_1x1.OCB = 16; pin conv_1x1.OHB = 7; pin conv_1x1.OCGB = 1;" \
	> "$tmp/g2.hgc"
"$HGC" run --backend=c "$tmp/g2.hgc" > "$tmp/g2.out" 2>&1
ok $? "stride 2, OHB=7 OCGB=1 (the rows of a channel block inner) matches the interpreter"

conv bad 1 32 14 48 1 1 0 "use conv_1x1 for Convolution; pin conv_1x1.OHB = 4;" > "$tmp/bad.hgc"
"$HGC" run "$tmp/bad.hgc" > "$tmp/bad.out" 2>&1
st=$?
test $st -eq 1 && grep -q "error: .*conv_1x1.OHB = 4.*divides(OH)" "$tmp/bad.out"
ok $? "OHB=4 of 14 rows is an error at the pin naming divides(OH)"
grep -q "$tmp/bad.hgc:1:" "$tmp/bad.out"
ok $? "the error points at the config"

# conv_1x1_rows: stride 1 takes it by default; 7 rows of 7 pixels in one call
conv w7 2 64 7 48 1 1 0 "" > "$tmp/w7.hgc"
"$HGC" compile --dump=tir "$tmp/w7.hgc" > "$tmp/w7.tir" 2>&1
grep -q 'template conv_1x1_rows (.*OHB=7' "$tmp/w7.tir" &&
	grep -q 'brgemm(.*, bs, 49, 48, 64, 64, 48, 48, ' "$tmp/w7.tir"
ok $? "7x7 pixels, stride 1: conv_1x1_rows, one call of 49 rows (lda 64, ldc 48)"
"$HGC" run "$tmp/w7.hgc" > "$tmp/w7.out" 2>&1
ok $? "conv_1x1_rows matches the interpreter"

# 3 rows of 5 pixels a call over 9 rows, 3 blocks of 16 channels, a bias
# and a ReLU fused at the anchor
cat > "$tmp/rb.hgc" <<'SPEC'
config c_rb { threads = 2; pin conv_1x1_rows.OHB = 3; pin conv_1x1_rows.OCB = 16;
  pin conv_1x1_rows.OCGB = 3; pin conv_1x1_rows.ICB = 16; pin conv_1x1_rows.BS = 1; }
spec rb {
  input x : f32[3, 9, 5, 32];
  const w : f32[1, 1, 32, 48];
  const b : f32[48];
  y0 = Convolution(x, w, b, strides = [1, 1], pads_begin = [0, 0], pads_end = [0, 0],
                   dilations = [1, 1], data_format = "NXC", weights_format = "XIO");
  y = ReLU(y0);
  output y;
  config c_rb;
  expect { rtol = 1e-4; atol = 1e-5; }
}
SPEC
"$HGC" compile --dump=tir "$tmp/rb.hgc" > "$tmp/rb.tir" 2>&1
grep -q 'brgemm(.*, bs, 15, 16, 16, 32, 16, 48, ' "$tmp/rb.tir"
ok $? "OHB=3 of 5-pixel rows: 15 rows a call"
for be in jit c; do
	"$HGC" run --backend=$be "$tmp/rb.hgc" > "$tmp/rb.$be" 2>&1
	ok $? "conv_1x1_rows with a bias and a fused ReLU matches the interpreter on $be"
done

# calls longer than 112 rows when their input rows fit 256 KiB: each call
# brings its weights into L1 once for all of its row tiles.  res4a_branch2c
# at batch 4 (196 pixels x 256 channels, 196 KiB): a whole image a call
conv r4c 4 256 14 1024 1 1 0 "" > "$tmp/r4c.hgc"
ohb=$(chosen "$tmp/r4c.hgc" OHB)
"$HGC" compile --dump=tir "$tmp/r4c.hgc" > "$tmp/r4c.tir" 2>&1
test "${ohb:-0}" -eq 14 && grep -q 'brgemm(.*, bs, 196, ' "$tmp/r4c.tir"
ok $? "res4a_branch2c, batch 4: conv_1x1_rows, one 196-row call per image and block (OHB=$ohb)"

# res4b_branch2a (1024 channels: a whole image is 784 KiB): 7 rows of 14
# pixels a call, not 2 (measured 1.1x faster)
conv r4b 4 1024 14 256 1 1 0 "" > "$tmp/r4b.hgc"
ohb=$(chosen "$tmp/r4b.hgc" OHB)
test "${ohb:-0}" -eq 7
ok $? "res4b_branch2a, batch 4: 98-row calls (OHB=$ohb)"

conv r4bad 1 1024 14 256 1 1 0 "pin conv_1x1_rows.OHB = 14;" > "$tmp/r4bad.hgc"
"$HGC" run "$tmp/r4bad.hgc" > "$tmp/r4bad.out" 2>&1
st=$?
test $st -eq 1 && grep -q "error: pin conv_1x1_rows.OHB = 14: .*OHB \* OW \* IC <= 65536" "$tmp/r4bad.out"
ok $? "a row group whose input rows exceed 256 KiB is an error at the pin"

# 12 rows of 12 pixels in one call (144 rows of A and C) against the
# interpreter, with channel blocks of 8
conv r144 2 24 12 40 1 1 0 "pin conv_1x1_rows.OHB = 12; pin conv_1x1_rows.OCB = 8;" > "$tmp/r144.hgc"
"$HGC" compile --dump=tir "$tmp/r144.hgc" > "$tmp/r144.tir" 2>&1
grep -q 'brgemm(.*, bs, 144, 8, ' "$tmp/r144.tir"
ok $? "OHB=12 of 12-pixel rows: 144 rows a call"
for be in jit c; do
	"$HGC" run --backend=$be "$tmp/r144.hgc" > "$tmp/r144.$be" 2>&1
	ok $? "144-row conv_1x1_rows calls match the interpreter on $be"
done
