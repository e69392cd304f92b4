#!/usr/bin/env bash
# A policy is its folder (hacking/recipes.md, "Adding a policy"): no file outside
# policies/NAME/ names a policy in its code — it reaches one through the
# policy's table (core/policy.h: fidelity_family, whatif, variants,
# layouts, frees_nothing, cells, ...) or a file in its folder
# (misuse.table, libc_tests.table, FAMILY.rows, golden.test).
# tests/house/policy_names.py lists the files that do (prose — comments,
# documents, the book, the labs — may name any).
#
# First the checker is shown to find a name in code, and not in a comment,
# a message or a file of a policy's folder.  Then the tree: every file it
# lists must be in the table below, where the word means something else,
# or the file is data whose subject is a named policy; and every file of
# the table must still be listed, so it stays true.  A new file that names
# a policy fails here: a test of one policy's behaviour belongs in that
# policy's folder, a test that needs to know something of every policy
# reads it from the table, and a test that needs "a model of glibc" asks
# heaplab policies --families.
# The library, the command and the build name none (configure reads the
# roles — the default heap, the lab's skeleton and reference — from
# policies.list; diagnose and fidelity find a family's model by its table).
set -u
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || hl_skip "python3 is needed"
command -v git >/dev/null || hl_skip "git is needed"
here=$(cd "$(dirname "$0")" && pwd) top=$(cd "${srcdir:-.}" && pwd)
git -C "$top" rev-parse --show-toplevel 2>/dev/null | grep -qx "$top" || hl_skip "not a git checkout (the checker reads git's list of files)"
hl_tmpdir policy-names
fail=0

# the checker on a small tree of its own
mkdir -p "$tmp/policies/alpha" "$tmp/core" "$tmp/tests"
printf '# name  in all\nalpha   all\n' >"$tmp/policies/policies.list"
cat >"$tmp/core/uses.c" <<'C'
/* alpha's walk is slow: a comment may say so */
static const char *msg = "an alpha of each class";
void *h(void) { return hl_heap_new("alpha", "x:1"); }
C
cat >"$tmp/core/quiet.c" <<'C'
// alpha in a comment
static const char *msg = "no alpha here, only a message";
C
printf 'x=1 # alpha\nhl_compiled alpha || exit 77\n' >"$tmp/tests/t.sh"
printf 'void alpha_init(void);\nconst char *n = "alpha";\n' >"$tmp/policies/alpha/alpha.c"
got=$(python3 "$here/policy_names.py" "$tmp" core/uses.c core/quiet.c tests/t.sh policies/alpha/alpha.c)
want='core/uses.c: alpha (line 3)
tests/t.sh: alpha (line 2)'
if [ "$got" = "$want" ]; then
	echo "PASS: the checker finds a name in code (a string that is the name, a script's word), not in a comment, a message or the policy's folder"
else
	echo "FAIL: the checker on its example tree printed:"; printf '%s\n' "$got"; fail=1
fi

not_a_policy="
core/event.c                     the event kind HL_EV_BUMP is called \"bump\" (a bump pointer moved)
tests/programs/explain.sh                 the event kinds, one of them \"bump\" (a bump pointer moved)
tests/book/lab_rubrics.sh             the student's edition of the labs (book/make-edition.sh student), not the skeleton policy
fidelity/probes/pymalloc_side.h  pymalloc's own word: its pools, counted in CPython's statistics
tests/house/policy_names.py            its own examples
tests/house/policy_names.sh            its own tables
tests/house/add_policy.sh              its dummy policy is a copy of a model's folder, built beside the model of glibc
tests/book/book_chapters.sh           a check of the book, whose prose and worked examples name the policies they teach
tests/book/book_costs.sh              a check of the book (as above)
tests/book/book_editions.sh           a check of the book's editions: the student's has no source of the lab's reference
tests/book/book_examples.sh           a check of the book (as above)
tests/book/book_explain.sh            a check of the book (as above)
tests/book/book_glossary.sh           a check of the book (as above)
tests/book/book_lib.sh                what the book's checks share
tests/book/book_worked.sh             a check of the book (as above)
tests/fuzz/corpus/conf/pools     a fuzzer input: option strings, whose values may name a fallback policy
tests/fuzz/corpus/conf/pools-fallback  a fuzzer input (as above)
tests/fidelity/glibc.rows        fixture rows for the rows reader's own tests (tests/fidelity/fidelity_runner.sh)
tests/fidelity/jemalloc.rows     fixture rows (as above)
"
known=$(printf '%s\n' "$not_a_policy" | awk 'NF { print $1 }' | sort)
python3 "$here/policy_names.py" "$top" >"$tmp/found" || { echo "FAIL: tests/house/policy_names.py"; exit 1; }
new=$(cut -d: -f1 "$tmp/found" | sort | comm -23 - <(printf '%s\n' "$known"))
gone=$(cut -d: -f1 "$tmp/found" | sort | comm -13 - <(printf '%s\n' "$known"))
if [ -n "$new" ]; then
	echo "FAIL: these files name a policy outside its folder (read it from the policy's table or a file in its folder, or move the file there):"
	grep -F -f <(printf '%s:\n' $new) "$tmp/found" | sed 's/^/    /'
	fail=1
fi
if [ -n "$gone" ]; then
	echo "FAIL: these files of the table no longer name a policy: take them off the table: $(echo $gone)"
	fail=1
fi
[ $fail -eq 0 ] && echo "PASS: no file outside its policy's folder names a policy but the $(printf '%s\n' "$not_a_policy" | grep -c .) that mean something else"
exit $fail
