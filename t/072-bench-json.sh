#!/bin/sh
# 072-bench-json: the harness end to end on one small subgraph row, without
# asserting any speed: it runs (exit 0: every column's result passed its
# sampled check), prints the row and the geometric-mean summary, and
# writes bench.json with the fields issue 4 lists plus hgc_nofusion_ms and
# set.  A bad option is a usage error.  Skipped when hgc-bench is not built
# (it needs oneDNN: make bench-deps).
cd "$(dirname "$0")/.." || exit 1
HGC_BUILD=${HGC_BUILD:-$PWD/build}
BENCH="$HGC_BUILD/bench/hgc-bench"
PYTHON=${PYTHON:-/usr/bin/python3}
if [ ! -x "$BENCH" ]; then
	echo "1..0 # SKIP $BENCH not built (make bench-deps, then make $BENCH)"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/hgc-bench-json.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
. t/tap.sh



env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_PROC_BIND=close OMP_PLACES=cores \
	"$BENCH" --filter mha_bert_base_b1_s128 --threads 1 --time 0.01 --json "$T/b.json" \
	>"$T/out" 2>"$T/err"
ok $? "hgc-bench --filter mha_bert_base_b1_s128 runs, every result checked"
like out '^mha_bert_base_b1_s128 +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +- +- ' \
	"the row: hgc, nofusion, oneDNN plain and packed measured, no blocked (conv only), no OpenBLAS"
like out '^  the OpenMP columns of a row interleaved in up to 10 rotating rounds, OpenBLAS apart; median$' \
	"the intro: the timing protocol"
like out '^  hgc compile of that MLP \(spec mlp_dlrm_top_b128, bias\+ReLU fused\), threads 1: [0-9.]+ ms cold, [0-9.]+ ms from the disk cache, [0-9.]+ ms from memory$' \
	"the intro: hgc's compile of the MLP cold, from the disk cache and from memory"
like out '^mha +1 +1 +[0-9.]+x \(1\) +[0-9.]+x \(1\) +- +[0-9.]+x \(1\) +[0-9.]+x \(1\) +[01]$' \
	"the geometric-mean line of set mha"
"$PYTHON" - "$T/b.json" >"$T/out" 2>"$T/err" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 1, rows
r = rows[0]
keys = {"name", "threads", "hgc_ms", "hgc_nofusion_ms", "onednn_ms", "onednn_packed_ms",
        "onednn_blocked_ms", "openblas_ms", "gflops", "peak_frac", "compile_ms", "shape", "set"}
assert keys <= set(r), keys - set(r)
assert r["name"] == "mha_bert_base_b1_s128" and r["threads"] == 1 and r["set"] == "mha"
for k in ("hgc_ms", "hgc_nofusion_ms", "onednn_ms", "onednn_packed_ms", "compile_ms", "gflops"):
    assert isinstance(r[k], float) and r[k] > 0, (k, r[k])
assert r["openblas_ms"] is None and r["onednn_blocked_ms"] is None
assert r["shape"] == "spec/models/mha.hgc:mha_bert_base_b1_s128", r["shape"]
print("ok")
PY
ok $? "bench.json: every field, the measured ones positive, openblas and blocked null"

"$BENCH" --threads 0 >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q "bad --threads '0'" "$T/err"; ok $? "a bad --threads value is refused"
"$BENCH" --filter no_such_row --list >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q "no workload matches" "$T/err"; ok $? "a filter that matches nothing"
HGC_ROOT=/nonexistent "$BENCH" --filter mlp_dlrm_bottom_b32 --list >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q "cannot open '/nonexistent/spec/models/dlrm.hgc'" "$T/err"
ok $? "HGC_ROOT without the specs: the file it cannot open"
"$BENCH" --list >"$T/out" 2>"$T/err"
like out '^mha_bert_large_b32_s384 +f32 +19\.327 GFLOP +bench/specs/mha_large.hgc:mha_bert_large_b32_s384$' \
	"--list shows the batch-32 attention and its spec"

done_testing
