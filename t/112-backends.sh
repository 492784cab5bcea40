#!/bin/sh
# 112-backends: the compiled backends from the command line.  Every spec
# passes on the JIT and on the C backend (`hgc check --backend=...`; the C
# backend runs cc per graph, so this takes a minute); a second JIT run hits
# the disk cache; `cache = off;` and HGC_CACHE=off keep it off; `--dump=tir`
# and `--dump=llvm` print the stages; `--emit=c` compiles; `--emit=obj`
# makes an object file and header that a small C program links against the
# runtime alone (no LLVM), whose outputs numpy compares with `hgc run --io`.
cd "$(dirname "$0")/.." || exit 1
HGC=${HGC:-$PWD/build/hgc}
HGC_BUILD=${HGC_BUILD:-$(dirname "$HGC")}
PYTHON=${PYTHON:-/usr/bin/python3}
CC=${CC:-cc}
T=$(mktemp -d "${TMPDIR:-/tmp}/hgc-backends.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
unset HGC_CACHE
. t/tap.sh






# check_all BACKEND: every spec under spec/ passes on BACKEND.
check_all() {
	hgc check --backend="$1" spec
	is_rc 0 "hgc check --backend=$1 spec"
	total=$(grep -c '^ok ' "$T/out")
	bad=$(grep -c '^not ok ' "$T/out")
	[ "$bad" -eq 0 ] && [ "$total" -gt 100 ]
	ok $? "$1: $total specs ok, $bad failed"
	grep -A3 '^not ok' "$T/out" | sed 's/^/# /' | head -40
}

# --- every spec on both backends; the JIT again from the disk cache ---------
t0=$(date +%s)
check_all jit
t1=$(date +%s)
files=$(find "$XDG_CACHE_HOME/hgc" -name '*.hgc-obj' | wc -l)
[ "$files" -gt 50 ]; ok $? "the JIT stored object code ($files files)"
check_all jit
t2=$(date +%s)
echo "# hgc check --backend=jit spec: $((t1 - t0)) s cold, $((t2 - t1)) s from the disk cache"
check_all c
echo "# hgc check --backend=c spec: $(($(date +%s) - t2)) s"
files2=$(find "$XDG_CACHE_HOME/hgc" -name '*.hgc-obj' | wc -l)
[ "$files2" -eq "$files" ]; ok $? "the C backend stores nothing on disk"

# --- the cache in --explain; off by config and by environment ---------------
cat >"$T/one.hgc" <<'EOF'
config lean { threads = 1; }
spec mlp_one {
  graph {
    input x : f32[8, 48] = uniform(-1, 1, seed = 3);
    const w : f32[48, 32] = uniform(-0.5, 0.5, seed = 4);
    const b : f32[32] = uniform(-1, 1, seed = 5);
    h = MatMul(x, w, b);
    y = ReLU(h);
    output y;
  }
  config lean;
  expect { rtol = 1e-5; atol = 1e-5; }
}
EOF
hgc run --explain "$T/one.hgc"
is_rc 0 "run --explain on the default backend"
like out '^  backend: jit: ' "jit is the default backend"
like out '^  compile: jit, [0-9.]+ ms, cache miss, object code stored in .*\.hgc-obj$' \
	"--explain: compile time, a miss, the file written"
like out '^    MatMul h: template ' "--explain: the template the MatMul took"
hgc run --explain "$T/one.hgc"
like out '^  compile: jit, [0-9.]+ ms, cache hit on disk: .*\.hgc-obj$' \
	"a new process hits the disk cache"
like out '^    MatMul h: template ' "the plan comes back from the disk cache too"
sed 's/threads = 1;/threads = 1; cache = off;/' "$T/one.hgc" >"$T/off.hgc"
rm -rf "$XDG_CACHE_HOME"
hgc run --explain "$T/off.hgc"
like out '^  compile: jit, [0-9.]+ ms, cache miss$' "cache = off: a miss, nothing stored"
[ ! -d "$XDG_CACHE_HOME/hgc" ]; ok $? "cache = off: no cache directory"
HGC_CACHE=off "$HGC" run --explain "$T/one.hgc" >"$T/out" 2>"$T/err"
like out '^  compile: jit, [0-9.]+ ms, cache miss$' "HGC_CACHE=off: a miss, nothing stored"
[ ! -d "$XDG_CACHE_HOME/hgc" ]; ok $? "HGC_CACHE=off: no cache directory"
hgc run --explain --backend=c "$T/one.hgc"
is_rc 0 "run --backend=c"
like out '^  compile: c, [0-9.]+ ms, cache miss$' "--explain on the C backend"
printf 'config bad { cache = maybe; }\n' >"$T/bad.hgc"
hgc run "$T/bad.hgc"
is_rc 1 "a bad cache value"
like err "bad.hgc:1:22: error: 'cache' must be on or off" "says what it must be"

# --- dumps ---------------------------------------------------------------------
hgc compile --dump=graph,tir,llvm "$T/one.hgc"
is_rc 0 "compile --dump=graph,tir,llvm"
like out '^graph \{$' "the graph"
like out '^module graph \{$' "the Tensor IR module"
like out '^  entry func entry\(x: f32\[8, 48\], w: f32\[48, 32\], b: f32\[32\], y: f32\[8, 32\]\)' \
	"its entry: inputs, then outputs"
like out '^# MatMul h: template ' "the template plan as a comment"
like out '^define void @hgc_entry\(i8\*\* ' "the LLVM IR's exported entry"
like out '^target triple = ' "the LLVM IR names its target"
[ "$(grep -n '^graph {' "$T/out" | cut -d: -f1)" -lt "$(grep -n '^module graph' "$T/out" | cut -d: -f1)" ] &&
	[ "$(grep -n '^module graph' "$T/out" | cut -d: -f1)" -lt "$(grep -n '^target triple' "$T/out" | cut -d: -f1)" ]
ok $? "stages in pipeline order"
hgc compile --dump=tir "$T/one.hgc"
unlike out '^graph \{$' "--dump=tir alone: no graph"
hgc compile --dump=fused "$T/one.hgc"
is_rc 0 "--dump=fused"
like out '^fused op 0: MatMul h \+ ReLU y$' "the fusion plan"
unlike out '^module graph' "--dump=fused alone: no Tensor IR"

# --- emit c --------------------------------------------------------------------
hgc compile --emit=c "$T/one.hgc"
is_rc 0 "compile --emit=c to stdout"
cp "$T/out" "$T/one.c"
"$CC" -c -fopenmp -o "$T/one_c.o" "$T/one.c" 2>"$T/err"
rc=$?; ok $rc "the C source compiles"
hgc compile --emit=c -o "$T/two.c" "$T/one.hgc"
cmp -s "$T/one.c" "$T/two.c"; ok $? "-o PATH writes the same source"

# --- emit obj: link with the runtime alone, compare with hgc run --io ----------
hgc compile --emit=obj -o "$T/g.o" "$T/one.hgc"
is_rc 0 "compile --emit=obj -o g.o"
[ -s "$T/g.o" ] && [ -s "$T/g.h" ]; ok $? "g.o and g.h written"
[ ! -s "$T/out" ]; ok $? "nothing on stdout"
grep -q 'void hgc_entry(void \*\*args);' "$T/g.h"; ok $? "g.h declares hgc_entry"
INIT=""
grep -q 'void hgc_init(void \*\*args);' "$T/g.h" && INIT="hgc_init(args);"
cat >"$T/main.c" <<EOF
#include <stdio.h>
#include <stdlib.h>
#include "g.h"

/* Read n floats from path, or exit. */
static void load(const char *path, float *p, size_t n)
{
	FILE *f = fopen(path, "rb");

	if (!f || fread(p, sizeof(float), n, f) != n) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	static float x[8 * 48], w[48 * 32], b[32], y[8 * 32];
	void *args[] = { x, w, b, y };
	FILE *f;

	load(argv[1], x, 8 * 48);
	load(argv[2], w, 48 * 32);
	load(argv[3], b, 32);
	$INIT
	hgc_entry(args);
	f = fopen(argv[4], "wb");
	if (!f || fwrite(y, sizeof(float), 8 * 32, f) != 8 * 32)
		return 1;
	return fclose(f) != 0;
}
EOF
RT="$HGC_BUILD/libhgc-rt.a"
[ -f "$RT" ] || RT=$(ls "$HGC_BUILD"/obj/runtime/*.o)
SAN=""
nm $RT 2>/dev/null | grep -q __asan && SAN="-fsanitize=address,undefined"
# shellcheck disable=SC2086
"$CC" $SAN -fopenmp -I"$T" -o "$T/main" "$T/main.c" "$T/g.o" $RT -lm 2>"$T/err"
rc=$?; ok $rc "main.c links g.o with the runtime alone"
! (ldd "$T/main"; nm -u "$T/main") 2>/dev/null | grep -qi llvm
ok $? "no LLVM in the program"
hgc run --io "$T/io" "$T/one.hgc"
is_rc 0 "hgc run --io"
"$PYTHON" - "$T" <<'EOF' >"$T/out" 2>"$T/err"
import sys, numpy as np
t = sys.argv[1]
for name in ("x", "w", "b"):
    np.load(f"{t}/io/mlp_one.{name}.npy").astype("<f4").tofile(f"{t}/{name}.bin")
EOF
rc=$?; ok $rc "inputs from the .npy files"
"$T/main" "$T/x.bin" "$T/w.bin" "$T/b.bin" "$T/y.bin" >"$T/out" 2>"$T/err"
rc=$?; ok $rc "the program runs"
"$PYTHON" - "$T" <<'EOF' >"$T/out" 2>"$T/err"
import sys, numpy as np
t = sys.argv[1]
got = np.fromfile(f"{t}/y.bin", dtype="<f4").reshape(8, 32)
want = np.load(f"{t}/io/mlp_one.y.npy")
x, w, b = (np.load(f"{t}/io/mlp_one.{n}.npy") for n in ("x", "w", "b"))
ref = np.maximum(x.astype(np.float64) @ w + b, 0)
assert got.shape == want.shape
assert np.allclose(got, want, rtol=1e-5, atol=1e-5), abs(got - want).max()
assert np.allclose(got, ref, rtol=1e-4, atol=1e-4), abs(got - ref).max()
assert (got > 0).any() and (got == 0).any()
print("max diff", abs(got - want).max())
EOF
rc=$?; ok $rc "the program's outputs match hgc run's and numpy's"

# --- emit errors ---------------------------------------------------------------
hgc compile --emit=obj -o "$T/no/such/dir/g.o" "$T/one.hgc"
is_rc 1 "an object file that cannot be written"
like err "error: llvm backend: cannot write $T/no/such/dir/g.o" "says so"
hgc compile --emit=obj,c -o "$T/x" "$T/one.hgc"
is_rc 1 "-o with two kinds to emit"
hgc compile -o "$T/x" "$T/one.hgc"
is_rc 1 "-o without --emit"
like err "error: -o PATH goes with one of --emit=c and --emit=obj" "says what -o goes with"
hgc compile --emit=obj -o "$T/x.o" spec/ops/matmul.hgc
is_rc 1 "-o with many specs"
like err "error: -o PATH writes one compiled graph, but the files hold [0-9]+ specs" "says why"
hgc compile --emit=asm "$T/one.hgc"
is_rc 2 "an unknown --emit kind"
like err "unknown --emit kind 'asm' \(known: c, obj\)" "lists the known ones"
hgc compile -o
is_rc 2 "-o without a value"
(cd "$T" && "$HGC" compile --emit=obj one.hgc >/dev/null 2>&1)
[ -s "$T/mlp_one.o" ] && [ -s "$T/mlp_one.h" ]; ok $? "--emit=obj without -o: SPEC.o and SPEC.h"

# Two specs with one graph but other constant weights share the compiled code
# (the cache key has no weights in it); init must pack each spec's own.
cat > "$T/weights.hgc" <<'EOF2'
spec w_seed2 {
  input x : f32[16, 32] = uniform(seed = 1);
  const w : f32[32, 64] = uniform(seed = 2);
  y = MatMul(x, w);
  output y;
}
spec w_seed3 {
  input x : f32[16, 32] = uniform(seed = 1);
  const w : f32[32, 64] = uniform(seed = 3);
  y = MatMul(x, w);
  output y;
}
EOF2
for b in jit c; do
	hgc run --backend=$b "$T/weights.hgc"
	is_rc 0 "$b: same graph, other constant weights: both specs match the reference"
done

done_testing
