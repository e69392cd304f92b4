#!/usr/bin/env bash
# Calls only downward (HACKING.md, "The stack"): between the library's
# folders, and between a policy's files — every policy lists its files in
# layers in its header, and no file may call a function of a layer above
# its own (tests/house/layers.py); diagnose/, grade/ and quiz/ list theirs the same way.  First
# the checker is shown to catch an upward call (and to ignore a comment, a
# string and a prototype) on a small policy made here, then the real
# policies must be clean.
set -u
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || hl_skip "python3 is needed"
here=$(cd "$(dirname "$0")" && pwd) top=$(cd "${srcdir:-.}" && pwd)
hl_tmpdir
fail=0
mkdir -p "$tmp/policies/demo"
cat > "$tmp/policies/demo/demo.h" <<'C'
/* demo.h
 * Layers (top to bottom)
 *   demo.c          entry points
 *   demo_low.c      the bottom
 *   demo.h          types
 *
 */
void demo_top(void);
static inline int demo_inline(int x) { return x + 1; }
C
cat > "$tmp/policies/demo/demo.c" <<'C'
#include "demo.h"
int demo_low(int);
void demo_top(void) { demo_low(demo_inline(1)); }
C
cat > "$tmp/policies/demo/demo_low.c" <<'C'
#include "demo.h"
/* a comment naming demo_top() does not count */
static const char *s = "demo_top()";
void demo_top(void);
int demo_low(int x) { if (x > 9) demo_top(); return demo_inline(x); }
C
out=$(python3 "$here/layers.py" "$tmp" demo); rc=$?
want='policies/demo/demo_low.c:5: demo_top (defined in demo.c, a layer above)'
if [ $rc -eq 1 ] && [ "$out" = "$want" ]; then
	echo "PASS: the checker finds the one upward call, not the comment, the string or the prototype"
else
	echo "FAIL: the checker on a planted policy (status $rc):"; echo "$out"; fail=1
fi

touch "$tmp/policies/demo/demo_new.c"
out=$(python3 "$here/layers.py" "$tmp" demo); rc=$?
if [ $rc -eq 2 ]; then
	echo "PASS: a file missing from the layers list is refused ($out)"
else
	echo "FAIL: a file left out of the list went unnoticed (status $rc): $out"; fail=1
fi

# Between folders: a planted core file that calls into visualize, a
# policy that calls another policy, and the quiz calling the command are
# caught (the quiz calling visualize is not); then a folder the stack does
# not name; then the real tree.
mkdir -p "$tmp/core" "$tmp/visualize" "$tmp/policies/other" "$tmp/cli" "$tmp/quiz"
printf 'int vis_top(int x) { return x; }\n' > "$tmp/visualize/vis_top.c"
printf 'int vis_top(int);\nint core_low(int x) { return vis_top(x); }\n' > "$tmp/core/low.c"
printf 'int other_fn(void) { return demo_low(1); }\n' > "$tmp/policies/other/other.c"
printf 'int cli_top(int x) { return x; }\n' > "$tmp/cli/cli_top.c"
printf 'int qz_low(int x) { return vis_top(x); }\nint qz_up(int x) { return cli_top(x); }\n' > "$tmp/quiz/quiz_low.c"
out=$(python3 "$here/layers.py" "$tmp" --folders); rc=$?
want='core/low.c:2: vis_top (defined in visualize, which core does not stand on)
policies/other/other.c:1: demo_low (defined in policies/demo, which policies/other does not stand on)
quiz/quiz_low.c:2: cli_top (defined in cli, which quiz does not stand on)'
if [ $rc -eq 1 ] && [ "$out" = "$want" ]; then
	echo "PASS: the folder checker finds the core calling up, a policy calling another and the quiz calling the command"
else
	echo "FAIL: the folder checker on a planted tree (status $rc):"; echo "$out"; fail=1
fi
mkdir -p "$tmp/newlayer"
printf 'int new_fn(void) { return 0; }\n' > "$tmp/newlayer/new.c"
out=$(python3 "$here/layers.py" "$tmp" --folders); rc=$?
if [ $rc -eq 2 ] && printf '%s\n' "$out" | grep -qx 'newlayer/new.c: in no folder of the stack'; then
	echo "PASS: a C file in a folder the stack does not name is refused"
else
	echo "FAIL: a folder missing from the stack went unnoticed (status $rc):"; echo "$out"; fail=1
fi
rm -r "$tmp/newlayer"
out=$(python3 "$here/layers.py" "$top" --folders); rc=$?
if [ $rc -eq 0 ]; then
	echo "PASS: every folder of the library uses only the folders it stands on"
else
	echo "FAIL: between folders (status $rc):"; echo "$out"; fail=1
fi

# one layered folder: a policy, or a library folder whose FOLDER.h lists its files
check_layers() {
	out=$(python3 "$here/layers.py" "$top" "$1"); rc=$?
	if [ $rc -eq 0 ]; then
		echo "PASS: $1 calls only downward between its files"
	else
		echo "FAIL: $1 (status $rc):"; echo "$out"; fail=1
	fi
}
for policy in $(sed -n 's/^\([a-z][a-z0-9_]*\)[ 	].*/\1/p' "$top/policies/policies.list"); do
	[ -d "$top/policies/$policy" ] || continue
	if ! ls "$top/policies/$policy"/*.c >/dev/null 2>&1; then
		# the student's edition ships firstfit compiled, without sources
		echo "note: $policy has no sources here (shipped compiled): its layers are not checked"
		continue
	fi
	check_layers "$policy"
done
for folder in diagnose grade quiz; do
	check_layers "$folder"
done
exit $fail
