#!/bin/sh
# 042-brgemm-asm: the compiled microkernels keep C and B in registers.  In
# every innermost loop of every tile function (OP_*) of the AVX-512 and
# AVX2 kernel objects: no FMA or dot product taking an operand from memory
# (gcc re-loading B per FMA, MICROKERNELS.md item 4), and no stack access
# (a spill) in the k loops, those with FMAs or dot products (a strip's
# loop over the rows of C it prefetches may keep its bound on the stack).
# %rbp counts as the stack only in a function that makes it a frame
# pointer: the asm tiles (brgemm_avx512_asm.inc) may get it as a row pointer.  Needs the objects of a build: HGC_BUILD (make check sets it).
B=${HGC_BUILD:-build}
objs="$B/obj/runtime/brgemm_avx512.o $B/obj/runtime/brgemm_avx2.o"
if ! command -v objdump >/dev/null 2>&1; then
	echo "1..0 # SKIP no objdump"
	exit 0
fi
for o in $objs; do
	if [ ! -f "$o" ]; then
		echo "1..0 # SKIP $o not built (set HGC_BUILD)"
		exit 0
	fi
	# ASan's instrumentation takes general registers of its own, so an
	# instrumented kernel spills row pointers the shipped one keeps; the
	# claim is about the shipped code, which `make check` tests.
	if nm "$o" 2>/dev/null | grep -q __asan_; then
		echo "1..0 # SKIP $o is a sanitizer build: its registers are not the shipped kernel's"
		exit 0
	fi
done
echo "1..4"
n=0
for o in $objs; do
	report=$(objdump -d --no-show-raw-insn "$o" | awk '
	function hex(s,   i, v) {
		v = 0
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	function flush(   i, j, k, t, tgt, inner, bad, nf) {
		if (fn !~ /^OP_/) { ni = 0; return }
		for (i = 1; i <= ni; i++) {
			if (!match(txt[i], /^j[a-z]+ +[0-9a-f]+/)) continue
			split(txt[i], w, / +/); tgt = hex(w[2])
			if (tgt >= addr[i]) continue
			inner = 1
			for (j = 1; j < i; j++) if (addr[j] >= tgt && txt[j] ~ /^j[a-z]+ +[0-9a-f]+/) {
				split(txt[j], w, / +/); if (hex(w[2]) < addr[j]) inner = 0
			}
			if (!inner) continue
			loops++; nf = 0; stk = ""
			for (j = 1; j <= i; j++) {
				if (addr[j] < tgt) continue
				t = txt[j]
				if (t ~ /^(vfmadd|vpdpbusd|vdpbf16ps|vpmaddwd)/) nf++
				if (t ~ /%rsp/ || (fp && t ~ /%rbp/))
					stk = stk " " t
				if (t ~ /^(vfmadd|vpdpbusd|vdpbf16ps|vpmaddwd)/ && t ~ /\(/)
					bad = bad " " t
			}
			if (nf) bad = bad stk
			if (bad != "") { print "# " fn ": " bad; bad = ""; fails++ }
			if (nf) kloops++
		}
		ni = 0
		fp = 0
	}
	/^[0-9a-f]+ <.*>:$/ { flush(); fn = $2; gsub(/[<>:]/, "", fn); next }
	/^ +[0-9a-f]+:\t/ {
		a = $1; sub(/:$/, "", a); t = $0; sub(/^ +[0-9a-f]+:\t/, "", t)
		ni++; addr[ni] = hex(a); txt[ni] = t
		if (t ~ /^mov +%rsp,%rbp/) fp = 1
	}
	END { flush(); printf "%d %d %d\n", loops, kloops, fails }')
	summary=$(printf '%s\n' "$report" | tail -n 1)
	set -- $summary
	n=$((n + 1))
	if [ "${1:-0}" -gt 20 ] && [ "${2:-0}" -gt 20 ]; then
		echo "ok $n - $o: $1 tile loops found, $2 with FMAs"
	else
		echo "not ok $n - $o: too few tile loops found ($1, $2)"
	fi
	n=$((n + 1))
	if [ "${3:-1}" -eq 0 ]; then
		echo "ok $n - $o: no spill and no memory-operand FMA in any tile loop"
	else
		echo "not ok $n - $o: $3 tile loops spill or re-load B"
		printf '%s\n' "$report" | grep '^#'
	fi
done
