#!/bin/sh
# 102-tmpl-dropin: a template dropped into templates/ is compiled by
# hgc-tmplc, registered and listed by `hgc templates` with no other change.
# The committed tree (git archive HEAD; the tracked files when there is no
# git) is copied to a temporary directory (nothing is reused from any build
# directory), a new .tmpl goes into its templates/, and hgc is built there
# from scratch (-O0 to keep it quick).  Then a broken template must fail the
# build with its file:line:col diagnostic.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/hgc-102-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/tap.sh"


echo "1..7"
if git -C "$top" rev-parse HEAD >/dev/null 2>&1; then
	git -C "$top" archive --format=tar HEAD | tar -xf - -C "$tmp"
else
	(cd "$top" && find . -path ./build\* -prune -o -path ./gen -prune -o -type f -print |
		tar -cf - -T -) | tar -xf - -C "$tmp"
fi
test -f "$tmp/templates/matmul.tmpl"
ok $? "the tracked tree is copied"

cat > "$tmp/templates/zz_dropin.tmpl" <<'EOF'
# A new template: C = A x B by rows of A, k in one batch.
template dropin_rows for MatMul(A:[M, K], B:[K, N]) -> C:[M, N] {
  param RB : one_of(8, 4, 1), RB <= M;
  layout A : [M / RB, K, M % RB];
  layout C : [M / RB, N, M % RB];
  parallel i in 0..ceildiv(M, RB) {
    anchor post_rows : C[i, :, :];
  }
  cost post_rows { working_set = RB * N; calls = ceildiv(M, RB); }
}
EOF
(cd "$tmp" && CFLAGS="-O0 -g0" make -j2 BUILD=b GEN=b/gen b/hgc) > "$tmp/make.log" 2>&1
st=$?
ok $st "make builds hgc with the new template"
[ $st -eq 0 ] || sed 's/^/# /' "$tmp/make.log" | tail -20

"$tmp/b/hgc" templates > "$tmp/list.txt" 2>&1
ok $? "hgc templates runs"
grep -q '^dropin_rows: MatMul(A:\[M, K\], B:\[K, N\]) -> C:\[M, N\]' "$tmp/list.txt"
ok $? "hgc templates lists the new template"
grep -q 'RB : one_of(8, 4, 1), RB <= M' "$tmp/list.txt" &&
	grep -q 'A : \[M / RB, K, M % RB\]' "$tmp/list.txt" &&
	grep -q 'post_rows: post-op, C\[i, :, :\] (2 dims)' "$tmp/list.txt" &&
	grep -q '^matmul_core: ' "$tmp/list.txt"
ok $? "with its parameter, layout and anchor, next to the shipped ones"
[ $? -eq 0 ] || sed 's/^/# /' "$tmp/list.txt"

printf 'template broken for MatMul(A:[M, K], B:[K, N]) -> C:[M, N] {\n  param X : divides(M);\n}\n' \
	> "$tmp/templates/zz_dropin.tmpl"
(cd "$tmp" && CFLAGS="-O0 -g0" make -j2 BUILD=b GEN=b/gen b/hgc) > "$tmp/make.log" 2>&1
[ $? -ne 0 ]
ok $? "a broken template fails the build"
grep -q "templates/zz_dropin.tmpl:2:9: error: parameter 'X' has no domain" "$tmp/make.log"
ok $? "with its diagnostic"
