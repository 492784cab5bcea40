#!/bin/sh
# 060-cli: the hgc command: exit codes, messages, run/check/compile, golden
# values, negative specs, --io files checked with numpy, --inputs round trips.
cd "$(dirname "$0")/.." || exit 1
HGC=${HGC:-$PWD/build/hgc}
PYTHON=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/hgc-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
. t/tap.sh






# --- version, help, usage errors --------------------------------------------
hgc --version
is_rc 0 "--version"
like out '^hgc [0-9]+\.[0-9]+\.[0-9]+$' "--version prints hgc X.Y.Z"
hgc --help
is_rc 0 "--help"
like out '^  run ' "--help lists run"
like out '^  compile ' "--help lists compile"
like out '^  explain ' "--help lists explain"
hgc help run
is_rc 0 "help run"
like out '^usage: hgc run ' "help run shows the run synopsis"
like out '--backend=NAME' "help run lists --backend"
hgc help explain
is_rc 0 "help explain"
like out '^usage: hgc explain ' "help explain shows the explain synopsis"
like out '--threads=N' "help explain lists --threads"
unlike out '--backend' "explain --help does not offer --backend"
hgc explain --threads=1 spec/demo/mlp.hgc
is_rc 0 "explain takes --threads=N"
like out '^spec .*, 1 thread, config' "explain honours --threads=N"
hgc explain --threads 2 spec/demo/mlp.hgc
is_rc 0 "explain takes --threads N"
like out '^spec .*, 2 threads, config' "explain honours --threads N"
hgc explain --thread=2 spec/demo/mlp.hgc
is_rc 2 "explain: a misspelt option is a usage error"
like err "did you mean '--threads'" "explain suggests the spelling"
hgc explain --threads=0 spec/demo/mlp.hgc
is_rc 2 "explain: --threads=0 is a usage error"
hgc explain
is_rc 2 "explain without a file is a usage error"
hgc explain --config=nosuch spec/demo/mlp.hgc
is_rc 1 "explain: an unknown config fails"
like err "no config named 'nosuch'" "explain names the unknown config"
hgc check --help
is_rc 0 "check --help"
unlike out '--explain' "check --help does not offer run's --explain"
hgc compile -h
like out '--dump=LIST' "compile -h lists --dump"
hgc
is_rc 2 "no arguments"
hgc frobnicate
is_rc 2 "unknown command"
like err "^hgc: unknown command 'frobnicate'; see 'hgc --help'$" "unknown command message"
hgc rnu spec
like err "did you mean 'run'" "unknown command suggests the close one"
hgc help nosuch
is_rc 2 "help of an unknown command"
hgc run --thread 2 spec/demo
is_rc 2 "misspelt option"
like err "^hgc: unknown option '--thread'; see 'hgc run --help'$" "unknown option message"
like err "did you mean '--threads'" "unknown option suggests --threads"
hgc run --threads abc spec/demo
is_rc 2 "--threads abc"
like err "threads wants an integer" "--threads abc message"
hgc run spec/demo --threads
is_rc 2 "--threads without a value"
like err "needs a value" "missing value message"
hgc run --threads 0 spec/demo
is_rc 2 "--threads 0"
hgc run --explain=yes spec/demo
is_rc 2 "--explain takes no value"
hgc run --backend=cuda spec/demo
is_rc 2 "unknown backend"
like err "unknown backend 'cuda' \(known: interp, c, jit\)" "unknown backend lists the known ones"
hgc compile --io "$T/x" spec/demo
is_rc 2 "compile does not take --io"
hgc run
is_rc 2 "run without a path"
like err "no file or directory given" "run without a path says so"
hgc run -x spec/demo
is_rc 2 "unknown short option"
hgc --versoin
is_rc 2 "unknown top-level option"
like err "did you mean '--version'" "top-level option suggestion"

# Never crash, whatever the arguments: every status below 3, and no sanitizer
# report (they exit 1 too).
crash=0
# survives ARGS...: run hgc; note a signal, a status above 2 or a sanitizer report.
survives() {
	"$HGC" "$@" >/dev/null 2>"$T/fuzz"; s=$?
	if [ $s -gt 2 ] || grep -Eq 'Sanitizer|runtime error' "$T/fuzz"; then
		crash=1
		echo "# hgc $*: status $s"
	fi
}
for args in "" "-" "--" "--=" "---" "--backend=" "--backend" "--threads=-1" \
	"--threads=99999999999999999999" "--config=" "--dump=" "--dump=,," "--io" \
	"--inputs=" "-h -h" "--help=1" "=" "--x=y=z"; do
	# shellcheck disable=SC2086
	survives run $args
	# shellcheck disable=SC2086
	survives compile $args
	# shellcheck disable=SC2086
	survives check $args
done
survives ""
survives run ""
survives help run extra
survives run --io "" spec/demo
rc=$crash; : >"$T/out"; : >"$T/err"
ok $crash "odd arguments never crash"

# --- loading: missing files, malformed specs, directories --------------------
hgc run "$T/nope.hgc"
is_rc 1 "a missing file"
like err "cannot open .*nope.hgc" "a missing file is named"
mkdir "$T/empty"
hgc run "$T/empty"
is_rc 1 "a directory without specs"
like err "no \*\.hgc file in directory" "an empty directory says so"

cat >"$T/bad.hgc" <<'EOF'
spec bad_op {
  input x : f32[2, 3];
  y = Frobnicate(x);
  output y;
}
EOF
hgc run "$T/bad.hgc"
is_rc 1 "a malformed spec"
like err "^$T/bad\.hgc:3:7: error: " "the diagnostic is file:line:col: error:"
like err "Frobnicate" "the diagnostic names the unknown op"

cat >"$T/syntax.hgc" <<'EOF'
spec syntax {
  input x : f32[2 3];
  output x;
}
EOF
hgc run "$T/syntax.hgc"
is_rc 1 "a syntax error"
like err "^$T/syntax\.hgc:2:19: error: " "a syntax error has file:line:col"

# --- passing, failing and golden specs ---------------------------------------
mkdir -p "$T/suite/sub"
cat >"$T/suite/a.hgc" <<'EOF'
# MatMul + ReLU with hand-checked golden values:
# x = [[1, 2, 3], [-4, 5, -6]], w = [[1, -1], [0, 2], [-1, 1]]
# x.w = [[1-3, -1+4+3], [-4+6, 4+10-6]] = [[-2, 6], [2, 8]]
spec mm_relu_golden {
  input x : f32[2, 3] = [1, 2, 3, -4, 5, -6];
  const w : f32[3, 2] = [1, -1, 0, 2, -1, 1];
  h = MatMul(x, w);
  y = ReLU(h);
  output y;
  expect y = [0, 6, 2, 8];
}
EOF
cat >"$T/suite/sub/b.hgc" <<'EOF'
spec add_bcast {
  input a : f32[4, 1, 5];
  input b : f32[3, 1];
  y = Add(a, b);
  output y;
  bench { iters = 3; warmup = 1; }
}

spec neg_rank {
  input a : f32[2, 3];
  input b : f32[4, 5];
  y = MatMul(a, b);
  output y;
  expect error "MatMul";
}
EOF
hgc run "$T/suite"
is_rc 0 "a directory of good specs"
like out '^mm_relu_golden +ok +max_err=0\.00e\+00 +time=[0-9.]+ms$' "golden spec line"
like out '^add_bcast +ok +max_err=' "specs below subdirectories run"
like out '^neg_rank +ok +max_err=- .*expected error' "a negative spec passes"
like out '^3 specs: 3 ok, 0 failed' "the summary counts the specs"
[ "$(grep -n '^mm_relu_golden' "$T/out" | cut -d: -f1)" -lt \
  "$(grep -n '^add_bcast' "$T/out" | cut -d: -f1)" ]
ok $? "files run in sorted path order"

sed 's/expect y = \[0, 6, 2, 8\]/expect y = [0, 6, 2, 9]/' "$T/suite/a.hgc" >"$T/wrong.hgc"
hgc run "$T/wrong.hgc"
is_rc 1 "a wrong golden value"
like out '^mm_relu_golden +FAIL +max_err=1\.00e\+00' "a wrong golden value FAILs with max_err 1"
like out "golden values.*y\[1, 1\]: got 8, want 9" "the failure names the element"

# Integer outputs: exact, but one step off allowed in a quantized graph.
cat >"$T/qstep.hgc" <<'EOF'
spec q_step {
  input xq : u8[1, 2] = [1, 1];
  const wq : s8[2, 1] = [1, 1];
  x = Dequantize(xq, qtype = "per_tensor", scales = [1.0], zps = [0]);
  w = Dequantize(wq, qtype = "per_tensor", scales = [1.0], zps = [0]);
  h = MatMul(x, w);
  y : u8 = Quantize(h, qtype = "per_tensor", scales = [1.0], zps = [0]);
  output y;
  expect y = [3];
}
EOF
hgc run "$T/qstep.hgc"
is_rc 0 "a quantized graph's u8 output may be one step off"
like out '^q_step +ok +max_err=1\.00e\+00' "it passes with max_err 1"
sed 's/expect y = \[3\]/expect y = [4]/' "$T/qstep.hgc" >"$T/qstep2.hgc"
hgc run "$T/qstep2.hgc"
is_rc 1 "two steps off fail"
like out "golden values \(rtol 0, atol 1\); first at y\[0, 0\]: got 2, want 4" "the failure says atol 1"
cat >"$T/qexact.hgc" <<'EOF'
spec q_exact {
  input x : f32[2] = [1, 2];
  y : u8 = Quantize(x, qtype = "per_tensor", scales = [1.0], zps = [0]);
  output y;
  expect y = [1, 3];
}
EOF
hgc run "$T/qexact.hgc"
is_rc 1 "without a MatMul, integer outputs compare exactly"
like out "golden values \(rtol 0, atol 0\); first at y\[1\]: got 2, want 3" "the failure says atol 0"

sed 's/expect error "MatMul"/expect error "no such text"/' "$T/suite/sub/b.hgc" >"$T/negwrong.hgc"
hgc run "$T/negwrong.hgc"
is_rc 1 "a negative spec with the wrong text"
like out '^neg_rank +FAIL' "it FAILs"

cat >"$T/negbuilds.hgc" <<'EOF'
spec builds_fine {
  input a : f32[2, 3];
  y = ReLU(a);
  output y;
  expect error "anything";
}
EOF
hgc run "$T/negbuilds.hgc"
is_rc 1 "a negative spec that builds"
like out "but the spec built" "a negative spec that builds says so"

hgc run "$T/suite" "$T/bad.hgc"
is_rc 1 "good and bad files together"
like out '^mm_relu_golden +ok' "good files still run beside a bad one"
like out '1 file with errors' "the summary counts the bad file"

# Every backend of the table runs the suite, checked against the interpreter.
for b in interp c jit; do
	hgc run --backend $b --threads 1 "$T/suite"
	is_rc 0 "--backend $b --threads 1"
	like out '^mm_relu_golden +ok' "--backend $b passes the golden spec"
	hgc run --backend=$b "$T/wrong.hgc"
	like out '^mm_relu_golden +FAIL .*' "--backend=$b fails the wrong golden value"
done
hgc run --config nosuch "$T/suite"
is_rc 1 "--config names no config"
like err "no config 'nosuch'" "unknown config message"

# --- check: TAP ----------------------------------------------------------------
hgc check "$T/suite"
is_rc 0 "check passes"
like out '^1\.\.3$' "check prints the plan"
like out "^ok 1 - $T/suite/a\.hgc: mm_relu_golden$" "check names file and spec"
hgc check "$T/wrong.hgc" "$T/bad.hgc"
is_rc 1 "check with failures"
like out '^1\.\.2$' "a bad file counts as one test"
like out '^not ok 1 - .*wrong\.hgc: mm_relu_golden # max_err 1$' "a failing spec is not ok"
like out '^not ok 2 - .*bad\.hgc: cannot load$' "a bad file is not ok"
like out "^# $T/bad\.hgc:3:7: error: " "its diagnostic becomes a TAP comment"
hgc check --config nosuch "$T/suite"
is_rc 1 "check under a config no file has"
like out '^Bail out!' "check bails out"

# --- compile -------------------------------------------------------------------
hgc compile --dump=graph "$T/suite/a.hgc"
is_rc 0 "compile --dump=graph"
like out '^# spec mm_relu_golden ' "compile names the spec"
like out 'MatMul' "compile prints the MatMul"
like out 'ReLU' "compile prints the ReLU"
hgc compile "$T/suite/sub/b.hgc"
like out 'negative spec' "compile reports a negative spec"
hgc compile --dump=graph,fused "$T/suite/a.hgc"
is_rc 0 "compile --dump=graph,fused"
like out '^# fusion plan: 1 fused op$' "the fused dump gives the fusion plan"
like out '^fused op 0: MatMul [a-z0-9_]+ \+ ReLU' "the MatMul takes its ReLU"
hgc compile --dump=bogus "$T/suite/a.hgc"
is_rc 2 "compile --dump=bogus"
hgc compile "$T/bad.hgc"
is_rc 1 "compile of a malformed spec"

cat >"$T/cfg.hgc" <<'EOF'
config later { dump = [graph, fused]; }
config jitty { backend = jit; threads = 1; }
spec uses_jit {
  input x : f32[3];
  y = ReLU(x);
  output y;
  config jitty;
}
EOF
hgc compile "$T/cfg.hgc"
is_rc 0 "compile under the spec's own config"
like out '^# spec uses_jit .*, config jitty$' "compile names the config"
hgc compile --config later "$T/cfg.hgc"
is_rc 0 "compile under a config that dumps the fused graph"
like out "^# fusion plan: 0 fused ops$" "a config's dump is honoured"
hgc run --explain "$T/cfg.hgc"
is_rc 0 "a spec whose config wants the jit"
like out "^  backend: jit" "the config's backend is used"
like out "^  config: jitty .*threads 1" "the config is explained"
hgc run --explain --backend=interp "$T/cfg.hgc"
is_rc 0 "--backend overrides the config's backend"
like out "^  backend: interp" "the command line's backend is used"

# --- explain ---------------------------------------------------------------------
hgc run --explain "$T/suite/a.hgc"
is_rc 0 "--explain"
like out '^  graph: 2 ops \(1 MatMul, 1 ReLU\)' "--explain counts the ops"
like out '^  plan: ' "--explain shows the backend's plan"
like out '^  timing: build ' "--explain splits the time"
like out '^  check: against the reference interpreter and golden values' "--explain says what was checked"
hgc run --explain "$T/suite/sub/b.hgc"
like out 'run [0-9.]+ ms \(median of 3, after 1 warmup\)' "the bench block's runs give the median"
hgc run --explain --fastest "$T/suite/sub/b.hgc"
is_rc 0 "--fastest"
like out 'run [0-9.]+ ms \(fastest of 3, after 1 warmup\)' "--fastest reports the fastest of them"
hgc run --explain --backend=interp "$T/suite/a.hgc"
like out 'runs unfused in the interpreter' "--explain on the interpreter: nothing is fused"
like out '^  backend: interp' "--explain names the backend"

# --- --io and --inputs -----------------------------------------------------------
cat >"$T/io.hgc" <<'EOF'
spec io_mm {
  input x : f32[5, 13] = uniform(lo = -1, hi = 1, seed = 3);
  const w : f32[13, 7] = normal(mean = 0, std = 0.5, seed = 4);
  h = MatMul(x, w);
  y = ReLU(h);
  output y;
}
EOF
hgc run --io "$T/io/deep" "$T/io.hgc"
is_rc 0 "--io"
ls "$T/io/deep/io_mm.x.npy" "$T/io/deep/io_mm.w.npy" "$T/io/deep/io_mm.y.npy" >/dev/null 2>&1
ok $? "--io writes every input and output (and creates the directory)"
"$PYTHON" - "$T/io/deep" >"$T/out" 2>"$T/err" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
x = np.load(d + "/io_mm.x.npy"); w = np.load(d + "/io_mm.w.npy"); y = np.load(d + "/io_mm.y.npy")
assert x.dtype == np.float32 and x.shape == (5, 13), (x.dtype, x.shape)
assert w.shape == (13, 7) and y.shape == (5, 7), (w.shape, y.shape)
want = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
err = np.abs(y - want).max()
assert err < 1e-5, err
assert (y == 0).any() and (y > 0).any()
print("max err", err)
EOF
rc=$?
ok $rc "numpy recomputes MatMul+ReLU from the --io files"

hgc run --inputs "$T/io/deep" --io "$T/io2" "$T/io.hgc"
is_rc 0 "--inputs reads the files back"
cmp -s "$T/io/deep/io_mm.y.npy" "$T/io2/io_mm.y.npy"
ok $? "--inputs round-trips: the same output"
"$PYTHON" -c "
import numpy as np, sys
d = sys.argv[1]
x = np.load(d + '/io_mm.x.npy'); np.save(d + '/io_mm.x.npy', -x)
" "$T/io2" >"$T/out" 2>"$T/err"
hgc run --inputs "$T/io2" --io "$T/io3" "$T/io.hgc"
is_rc 0 "--inputs with edited inputs"
"$PYTHON" - "$T/io3" >"$T/out" 2>"$T/err" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
x = np.load(d + "/io_mm.x.npy"); w = np.load(d + "/io_mm.w.npy"); y = np.load(d + "/io_mm.y.npy")
assert np.abs(y - np.maximum(x.astype(np.float64) @ w, 0)).max() < 1e-5
EOF
rc=$?
ok $rc "the output follows the edited input"
rm "$T/io2/io_mm.w.npy"
hgc run --inputs "$T/io2" "$T/io.hgc"
is_rc 1 "--inputs with a missing file"
like out "io_mm\.w\.npy" "the missing file is named"
"$PYTHON" -c "
import numpy as np, sys
np.save(sys.argv[1] + '/io_mm.w.npy', np.zeros((7, 13), np.float32))
" "$T/io2" >/dev/null 2>&1
hgc run --inputs "$T/io2" "$T/io.hgc"
is_rc 1 "--inputs with a mismatched shape"
like out "holds f32\[7, 13\], but input 'w' of spec 'io_mm' is f32\[13, 7\]" "the mismatch is explained"
: >"$T/notadir"
hgc run --io "$T/notadir" "$T/io.hgc"
is_rc 1 "--io onto a file"

# --- pass switches ------------------------------------------------------------------
cat >"$T/passes.hgc" <<'EOF2'
config typo { pass dcee = off; }
config ok { pass fuse = off; pass tensor_shrink = off; }
EOF2
hgc run --config typo "$T/passes.hgc" spec/demo/mlp.hgc
is_rc 1 "an unknown pass name fails the run"
like out "passes.hgc:1:20: error: unknown pass 'dcee' \(graph passes: decompose, .*fuse; tensor IR passes: .*parallel_merge.*index_flatten" \
	"the error names both sets of passes"
hgc explain --config typo "$T/passes.hgc" spec/demo/mlp.hgc
like out "unknown pass 'dcee'" "explain reports it the same way"
hgc run --config ok "$T/passes.hgc" spec/demo/mlp.hgc
is_rc 0 "a graph and a TIR pass switched off in one config"

# --- template rules: reasons and values ---------------------------------------------
cat >"$T/usebad.hgc" <<'EOF'
config ugr { threads = 2; use gemv_row for MatMul; }
spec r {
  input a : f32[1, 7];
  const b : f32[7, 130];
  const c : f32[130];
  h = MatMul(a, b, c);
  y = ReLU(h);
  output y;
  config ugr;
}
EOF
hgc run --explain "$T/usebad.hgc"
is_rc 0 "a use rule that cannot serve a fused MatMul still runs"
like out '^    fused op: no template \(gemv_row: no parameter values satisfy NBLK % NPN == 0\); the post-ops follow the naive loops' \
	"run --explain gives the fused op's reason: the constraint no candidate meets"
like err "^$T/usebad.hgc:1:31: warning: use gemv_row for MatMul: it does not serve MatMul h" \
	"and a warning at the use rule"
hgc explain "$T/usebad.hgc"
is_rc 0 "explain on it"
like out '^  fused op: no template \(gemv_row: no parameter values satisfy NBLK % NPN == 0\)' \
	"explain gives the fused op's reason"
cat >"$T/pins.hgc" <<'EOF'
config huge { pin region_rows.RB = 99999999999999999999; }
config tiny { pin region_rows.RB = -99999999999999999999; }
config frac { pin region_rows.RB = 2.5; }
config max { pin region_rows.RB = 9223372036854775807; }
spec s {
  input x : f32[3, 5, 17];
  y = SoftMax(x, axis = -1);
  output y;
}
EOF
hgc run --config huge "$T/pins.hgc"
is_rc 1 "a pin value beyond int64 fails"
like out 'pins.hgc:1:19: error: pin region_rows.RB = 99999999999999999999: the value 99999999999999999999 is out of range \(at most 9223372036854775807\)$' \
	"it is out of range, at file:line:col"
hgc run --config tiny "$T/pins.hgc"
is_rc 1 "a pin value below int64 fails"
like out 'pins.hgc:2:19: error: pin region_rows.RB = -99999999999999999999: the value -99999999999999999999 is out of range \(at least -9223372036854775808\)$' \
	"it is out of range, the lower bound"
hgc run --config frac "$T/pins.hgc"
is_rc 1 "a fractional pin value fails"
like out 'pins.hgc:3:19: error: pin region_rows.RB = 2.5: the value must be an integer$' \
	"a fraction is no integer"
hgc run --config max "$T/pins.hgc"
is_rc 1 "INT64_MAX fits but is not a divisor"
unlike out 'out of range|must be an integer' "INT64_MAX is not out of range"
like out "pins.hgc:4:18: error: pin region_rows.RB = 9223372036854775807: not in the domain" "the domain check takes it"

# --- the demo ---------------------------------------------------------------------
# --- a `use` rule whose template does not serve the op ----------------------
# the op runs (naive loops, still checked against the interpreter), and the
# rule's place gets a warning on stderr; a template that serves: no warning
# (the generator t/103 uses: a one-conv spec with its config on line 1)
. t/conv_spec.inc
{
	conv strided 1 16 8 8 1 2 0 "use conv_1x1_rows for Convolution;"
	conv unit 1 16 8 8 1 1 0 "use conv_1x1_rows for Convolution;"
} > "$T/use.hgc"
for be in jit c; do
	hgc run --backend=$be "$T/use.hgc"
	is_rc 0 "a use rule that does not serve an op: the spec still passes on $be"
	like err "^$T/use.hgc:1:37: warning: use conv_1x1_rows for Convolution: it does not serve Convolution y \(conv_1x1_rows: no parameter values satisfy stride_h == 1\); that op runs naive loops$" \
		"the warning names the rule's place, the op and the failed constraint ($be)"
	[ "$(grep -c warning "$T/err")" -eq 1 ]; ok $? "only the op the template does not serve is warned about ($be)"
done

hgc run --explain spec/demo/mlp.hgc
is_rc 0 "the demo spec passes"
like out 'MatMul' "the demo explains its MatMuls"

done_testing
