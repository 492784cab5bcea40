#!/bin/sh
# 131-explain: `hgc explain FILE`: for each tunable op, the templates
# compared by the cost model, the template, the chosen parameters with their
# estimated cost and the runners-up; usage and load errors.  HGC names the binary (default build/hgc).
set -u
HGC=${HGC:-$PWD/build/hgc}
tmp=$(mktemp -d /tmp/hgc-131-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"

echo "1..19"
cat > "$tmp/mm.hgc" <<'SPEC'
config two { threads = 2; use matmul_core for MatMul; }
config pinned { threads = 2; use matmul_core for MatMul; pin matmul_core.MB = 16; }
spec mm {
  input x : f32[256, 512] = uniform(-1, 1);
  const w : f32[512, 384] = uniform(-1, 1);
  y = MatMul(x, w);
  output y;
  config two;
}
SPEC
"$HGC" explain "$tmp/mm.hgc" > "$tmp/out" 2> "$tmp/err"
ok $? "explain exits 0"
grep -q '^spec mm .*2 threads, config two$' "$tmp/out"; ok $? "the spec, its threads and config"
grep -q '^  template matmul_core: [0-9]* valid candidates$' "$tmp/out"; ok $? "the template and its space"
grep -q '^    chosen  MB=[0-9]* NB=[0-9]* .* cost [0-9.]* us (compute' "$tmp/out"; ok $? "the choice with its cost"
[ "$(grep -c '^    #[2-5] ' "$tmp/out")" -eq 4 ]; ok $? "four runners-up"
"$HGC" explain --config pinned "$tmp/mm.hgc" > "$tmp/out2" 2>&1
[ "$(grep -c 'MB=16 ' "$tmp/out2")" -eq 5 ]; ok $? "--config: pins hold in every candidate"
"$HGC" explain > /dev/null 2>&1
[ $? -eq 2 ]; ok $? "no file: usage, exit 2"
"$HGC" explain --config nope "$tmp/mm.hgc" > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "no config named 'nope'" "$tmp/err"; ok $? "an unknown config: exit 1"
"$HGC" explain "$tmp/missing.hgc" > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "cannot open" "$tmp/err"; ok $? "a missing file: exit 1"

# Without a use rule the cost model compares the templates that apply,
# cheapest first, and the lowering takes the first (the one explained).
cat > "$tmp/rank.hgc" <<'SPEC'
config two { threads = 2; }
spec col {
  input x : f32[128, 256];
  const w : f32[256, 1];
  y = MatMul(x, w);
  output y;
  config two;
}
spec sq {
  input x : f32[256, 256];
  const w : f32[256, 256];
  y = MatMul(x, w);
  output y;
  config two;
}
SPEC
"$HGC" explain "$tmp/rank.hgc" > "$tmp/out3" 2>&1
ok $? "explain without a use rule exits 0"
grep -q '^  templates by estimate: gemv_col_serial [0-9.]* us, gemv_col [0-9.]* us, matmul_plain [0-9.]* us,.*; do not apply: .*gemv_row' "$tmp/out3"
ok $? "N = 1: the comparison, gemv_col_serial cheapest, the ones that do not apply"
sed -n '/^spec col/,/^spec sq/p' "$tmp/out3" | grep -q '^  template gemv_col_serial: '
ok $? "the cheapest is the one explained"
first=$(sed -n '/^spec sq/,$p' "$tmp/out3" | sed -n 's/^  templates by estimate: \([a-z_]*\) .*/\1/p')
sed -n '/^spec sq/,$p' "$tmp/out3" | grep -q "^  template $first: "
ok $? "256^3: the explained template is the first of the comparison ($first)"
[ "$(grep -c 'templates by estimate' "$tmp/out")" -eq 0 ]
ok $? "a use rule: no comparison"

# Convolutions have no estimates across templates: the first in registry
# order that applies serves, and the ones before it are listed with the
# constraint that ruled each out.
. "$(dirname "$0")/conv_spec.inc"
conv c3 2 32 14 32 3 1 1 "" > "$tmp/conv.hgc"
"$HGC" explain --threads=1 "$tmp/conv.hgc" > "$tmp/out5" 2>&1
grep -q '^  templates in registry order, the first that applies serves' "$tmp/out5" &&
  [ "$(grep -c 'templates by estimate' "$tmp/out5")" -eq 0 ]
ok $? "a convolution: registry order, no estimates claimed"
grep -q '^    skipped conv_1x1_rows: no parameter values satisfy KH == 1 for this Convolution$' "$tmp/out5" &&
  grep -q '^    skipped conv_kwrow: no parameter values satisfy IC < 8 for this Convolution$' "$tmp/out5"
ok $? "the templates before the chosen one, each with its reason on one line"
served=$(sed -n 's/^  template \([a-z_0-9]*\): [0-9]* valid candidates$/\1/p' "$tmp/out5")
! grep -q "skipped $served:" "$tmp/out5" && [ -n "$served" ] &&
  ! sed -n "/^  template $served:/,\$p" "$tmp/out5" | grep -q 'skipped'
ok $? "the one that serves ($served) is not listed as skipped, and nothing after it is"

# A spec whose pin fails does not stop the files after it; the status is 1.
cat > "$tmp/a_bad.hgc" <<'SPEC'
config pin61 { threads = 2; pin matmul_plain.NB = 61; }
spec bad {
  input x : f32[64, 32];
  const w : f32[32, 64];
  y = MatMul(x, w);
  output y;
  config pin61;
}
SPEC
cat > "$tmp/b_good.hgc" <<'SPEC'
spec good {
  input x : f32[64, 32];
  const w : f32[32, 64];
  y = MatMul(x, w);
  output y;
}
SPEC
"$HGC" explain "$tmp/a_bad.hgc" "$tmp/b_good.hgc" > "$tmp/out4" 2>&1
[ $? -eq 1 ] && grep -q 'pin matmul_plain.NB = 61' "$tmp/out4"
ok $? "a failing pin: its error, exit 1"
grep -q '^spec good ' "$tmp/out4" && grep -q '^  template ' "$tmp/out4"
ok $? "and the next file is still explained"
