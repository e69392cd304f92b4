#!/bin/sh
# The test scripts share one tests/lib.sh: no script under tests/ or
# exercises/ but lib.sh itself lists the compiled-in policies (runs
# `heaplab policies`), reads HL_SANITIZERS to skip under a sanitizer, makes
# its own temporary folder (mktemp) or locates the command (heaplab=).
# Comment lines do not count; nor does this script, whose patterns are
# the check's.  The check is first shown to catch each of
# these on scripts made here (and to leave a comment and a quoted
# message alone), then the real tree must be clean.
# Run from anywhere (the tree checked is the one the script is in, or
# $srcdir when set, as make check sets it).
set -u
. "$(dirname "$0")/../lib.sh"
top=${srcdir:-$(dirname "$0")/../..}

# offences DIR: one "FILE:LINE: what it repeats" line per offence in the
# shell scripts under DIR/tests and DIR/exercises, lib.sh and this check
# (whose patterns and made-up scripts are its data) aside
offences() {
	find "$1/tests" "$1/exercises" "$1/policies" -name '*.sh' ! -path "$1/tests/lib.sh" ! -path "$1/tests/house/lib_used.sh" 2>/dev/null | sort |
	while read -r f; do
		awk -v name="${f#"$1"/}" '
		/^[ \t]*#/ { next }
		/heaplab"?[ \t]+policies[ \t]*(\||\)|;|$)/ { print name ":" FNR ": runs heaplab policies (hl_policies, hl_compiled)" }
		/HL_SANITIZERS/ { print name ":" FNR ": reads HL_SANITIZERS (hl_skip_sanitized, hl_sanitized)" }
		/mktemp/ { print name ":" FNR ": makes its own temporary folder (hl_tmpdir)" }
		/^[ \t]*heaplab=/ { print name ":" FNR ": locates heaplab (lib.sh: $heaplab)" }
		' "$f"
	done
}

hl_tmpdir lib-used
mkdir -p "$tmp/demo/tests" "$tmp/demo/exercises/01-x"
cat >"$tmp/demo/tests/bad.sh" <<'SH'
#!/bin/sh
# a comment may say: heaplab policies | awk, HL_SANITIZERS, mktemp
echo "heaplab policies lists dummy"
for p in $("$heaplab" policies | awk '{print $1}'); do :; done
[ -z "${HL_SANITIZERS:-}" ] || { echo "SKIP: sanitizer"; exit 77; }
SH
cat >"$tmp/demo/exercises/01-x/lab.sh" <<'SH'
heaplab=${HEAPLAB:-./heaplab}
tmp=$(mktemp -d)
./heaplab policies
SH
printf '%s\n' 'heaplab policies | awk; HL_SANITIZERS; mktemp' >"$tmp/demo/tests/lib.sh"
want='exercises/01-x/lab.sh:1: locates heaplab (lib.sh: $heaplab)
exercises/01-x/lab.sh:2: makes its own temporary folder (hl_tmpdir)
exercises/01-x/lab.sh:3: runs heaplab policies (hl_policies, hl_compiled)
tests/bad.sh:4: runs heaplab policies (hl_policies, hl_compiled)
tests/bad.sh:5: reads HL_SANITIZERS (hl_skip_sanitized, hl_sanitized)'
got=$(offences "$tmp/demo")
if [ "$got" != "$want" ]; then
	echo "FAIL: the check on scripts made to break the rule found:"
	echo "$got"
	echo "wanted:"
	echo "$want"
	exit 1
fi
echo "PASS: the check finds each repeated concern, not a comment, a message or lib.sh"

[ -f "$top/tests/lib.sh" ] || { echo "FAIL: no $top/tests/lib.sh"; exit 1; }
got=$(offences "$top")
if [ -n "$got" ]; then
	echo "$got"
	echo "FAIL: $(echo "$got" | wc -l) lines repeat what tests/lib.sh does: use its functions"
	exit 1
fi
echo "PASS: $(find "$top/tests" "$top/exercises" "$top/policies" -name '*.sh' | wc -l) scripts leave the policies, the sanitizer skip and the temporary folder to tests/lib.sh"
