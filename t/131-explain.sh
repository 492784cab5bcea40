#!/bin/sh
# 131-explain: `hgc explain FILE`: for each tunable op, the template, the
# chosen parameters with their estimated cost and the runners-up; usage and
# load errors.  HGC names the binary (default build/hgc).
set -u
HGC=${HGC:-$PWD/build/hgc}
tmp=$(mktemp -d /tmp/hgc-131-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0

# ok STATUS DESCRIPTION
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

echo "1..9"
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
