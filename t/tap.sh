# t/tap.sh: TAP for the shell tests, as t/tap.h is for the C ones.  A test
# sources it (`. t/tap.sh` from the repository root), runs commands through
# hgc (or its own runner, leaving rc, $T/out and $T/err behind), checks with
# ok/is_rc/like/unlike, and ends with done_testing.  A failing check prints
# the last command's status and output as TAP comments, so a CI log shows
# why without a rerun.

n=0
failed=0

# The last command's status and output as TAP comments, when there are any.
tap_context() {
	[ -n "${rc-}" ] && echo "#   rc=$rc"
	for f in out err; do
		if [ -n "${T-}" ] && [ -s "$T/$f" ]; then
			echo "#   $f:"
			grep -v '^ok' "$T/$f" | sed 's/^/#     /' | head -20
		fi
	done
}

# ok STATUS DESC: one TAP line; STATUS is a shell status (0 passes).
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		tap_context
	fi
}

# hgc ARGS...: run $HGC, keeping stdout, stderr and the status.
hgc() {
	"$HGC" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# is_rc WANT DESC: the last command's exit status.
is_rc() {
	[ "$rc" -eq "$1" ]; ok $? "$2 (exit $1)"
}

# like FILE REGEX DESC: $T/FILE (out or err) has a line matching the extended regex.
like() {
	grep -Eq -- "$2" "$T/$1"; ok $? "$3"
}

# unlike FILE REGEX DESC: no line of $T/FILE matches.
unlike() {
	! grep -Eq -- "$2" "$T/$1"; ok $? "$3"
}

# done_testing: the plan, and a failing status when a check failed.
done_testing() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
