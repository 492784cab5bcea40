#!/bin/sh
# 074-ukernel-shapes: bench/ukernel's shape arguments, without asserting any
# speed.  `ukernel REPS SHAPE...` measures the peaks, then only the given
# calls ([f32:|u8s8:|bf16:]MxNxK/BS, e.g. the call `hgc explain` chose) at
# the best ISA, each row with a fraction of its instruction's peak; a
# malformed shape is a usage error (exit 2) before anything is measured.
cd "$(dirname "$0")/.." || exit 1
HGC_BUILD=${HGC_BUILD:-$PWD/build}
UK="$HGC_BUILD/bench/ukernel"
T=$(mktemp -d "${TMPDIR:-/tmp}/hgc-ukernel.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
. t/tap.sh

uk() {
	"$UK" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

uk 3 13x40x20/3 u8s8:9x24x8/2 bf16:5x16x6/1
is_rc 0 "ukernel 3 with three shapes runs"
like out '^peak per core, median of 3:$' "the peaks come first"
like out '^f32 +[a-z0-9-]+ +13x40x20 bs3 +[0-9.]+ +([0-9.]+ +[0-9.]+  [a-z0-9 +]+|- +-  \(no [a-z0-9 +]+\))$' \
	"the f32 row: GFLOP/s, of peak, best, the peak's instruction"
like out '^u8s8s32 +[a-z0-9-]+ +9x24x8 bs2 +[0-9.]+ ' "the u8s8: prefix gives the int8 kernel"
like out '^bf16 +[a-z0-9-]+ +5x16x6 bs1 +[0-9.]+ ' "the bf16: prefix gives the bf16 kernel"
unlike out '32x64x64' "only the shapes given, not the built-in blocks"

for bad in 13x40x20 13x40/3 0x4x4/1 4x4x4/0 u8s8:4x4x6/1 bf16:4x4x3/1 4x4x4/1x \
	f64:4x4x4/1 70000x70000x4/1 99999999999x99999999999x4/1 4x4x4/5000; do
	uk 3 8x16x16/1 "$bad"
	is_rc 2 "'$bad' is refused"
	like err "^ukernel: '$bad' is not a shape: " "'$bad': the message names it"
	unlike out 'peak per core' "'$bad': refused before anything is measured"
done

done_testing
