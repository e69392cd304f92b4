#!/usr/bin/env bash
# Adding a policy takes its folder, its tests and one line in
# policies/policies.list — nothing else (hacking/recipes.md, "Adding a policy").
# Shown on a copy of the source tree: a policy `dummy` (bump's code under
# another name) is added that way, the tree is bootstrapped, configured with
# --with-policy=dummy and built, and then configure knows the name (and,
# run in the copy's own folder beside core/, says no "cannot remove"), the
# command lists the policy and replays a trace on it, and the conformance
# suite passes on it, and its fatal lines name it from its table (`.name`),
# not from a name typed in its code.  The folder also holds a fast path
# (dummy_fast.h with its HL_FAST_ROWS_DUMMY row) and a what-if knob (the
# table's `whatif`): the preload library builds a malloc and a free for
# dummy's path, and heaplab diagnose replays a recording under dummy's
# knob — with nothing outside the folder edited.  It is an allocator model
# (`all` in the list), so it brings what a model must: a misuse.table
# (tests/programs/misuse.sh runs its cells), golden pictures (the picture test
# compares them) and variants in its table (the events' contract runs them,
# and so does the fuzzer of operations, which takes the policies from the
# registry).  It brings a family of real allocators of its own too: its
# table's `fidelity_family` and the family's rows in its folder, whose
# family stanza says what the real side is (the C library's own malloc
# here), so heaplab fidelity lists the family and runs its row.  The book's
# generated comparison of every model (chapter 11) has a row for it; the
# other generated examples are each their chapter's own policy's.
# Slow-ish (a bootstrap and a small build): about two minutes.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "it builds and tests its own uninstrumented copy of the tree, not this -fsanitize=$hl_sanitizer build"
srcdir=${srcdir:-.}
top=$(cd "$srcdir" && pwd)
for tool in autoreconf tar sed make; do
	command -v $tool >/dev/null || hl_skip "$tool is needed"
done
hl_tmpdir
fail=0
say() { echo "$1: $2"; [ "$1" = PASS ] || fail=1; }

# The copy holds the sources only: from a git checkout the files git knows
# and those it does not ignore (a tree built in place keeps its objects
# beside the sources, and the copy's build would take them for its own);
# from a release tarball, which is built out of tree, the tree as it is.
if git -C "$top" rev-parse --show-toplevel 2>/dev/null | grep -qx "$top"; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard | tar cf - --null -T -) |
		(cd "$tmp" && tar xf -)
else
	(cd "$top" && tar cf - --exclude='./_build*' --exclude=./autom4te.cache \
		--exclude=./config.status --exclude=./config.log --exclude=./Makefile .) | (cd "$tmp" && tar xf -)
fi
src=$tmp
chmod -R u+w "$src"

# The new policy's folder: bump's code, renamed, except that a string that
# is exactly "bump" stays "bump" everywhere but in the table's `.name`: a
# fatal line naming the policy by a typed name would then say bump.  The
# core's event kind HL_EV_BUMP (a bump pointer moved) keeps its name.
mkdir "$src/policies/dummy"
for f in bump.h bump.c; do
	sed 's/bump/dummy/g; s/BUMP/DUMMY/g; s/"dummy"/"bump"/g; s/\(\.name = \)"bump"/\1"dummy"/; s/HL_EV_DUMMY/HL_EV_BUMP/g' \
		"$src/policies/bump/$f" > "$src/policies/dummy/${f/bump/dummy}"
done
# Its fast path: hits that always miss (the shim then calls the table),
# and the row that puts them in the shim.
cat > "$src/policies/dummy/dummy_fast.h" <<'C'
#ifndef HL_DUMMY_FAST_H
#define HL_DUMMY_FAST_H
#include "dummy.h"
static inline void *dm_malloc_hit(void *st, hl_thread_t *t, size_t n)
{
	(void)st, (void)t, (void)n;
	return NULL;
}
static inline bool dm_free_hit(void *st, hl_thread_t *t, void *p)
{
	(void)st, (void)t, (void)p;
	return false;
}
#define HL_FAST_ROWS_DUMMY(X) X(HL_FAST_DUMMY, hl_policy_dummy, dm, true, false)
#endif
C
# Its what-if knob: one candidate for heaplab diagnose, in its own table;
# and the family of real allocators it models, for heaplab fidelity.
sed -i 's/^const hl_policy_t hl_policy_dummy = {/static const hl_whatif_t dm_whatif[] = { { "", "what dummy stands for" }, { NULL, NULL } };\n&/; s/^\t\.options = .*/&\n\t.whatif = dm_whatif,\n\t.fidelity_family = "dummylib",/' \
	"$src/policies/dummy/dummy.c"
# The family's rows: its real side (the C library's malloc, nothing
# preloaded) and one row, run by a generic probe that is already built.
# A row of no model runs on the policy whose table names the family.
cat > "$src/policies/dummy/dummylib.rows" <<'ROWS'
# dummylib rows (fidelity/README.md): dummy against the C library's malloc
family        dummylib
real_preload  none

row       dummylib.realloc-zero
claim     realloc(p, 0) frees the block and returns NULL, as glibc 2.36 does
probe     realloc_zero
key       realloc_zero
compare   equal
ROWS
cat > "$src/policies/dummy/local.mk" <<'MK'
if HL_POLICY_DUMMY
libhlcore_la_SOURCES += policies/dummy/dummy.h policies/dummy/dummy_fast.h policies/dummy/dummy.c
endif
MK
# An allocator model's files: what it does with the classic heap mistakes
# (misuse.table, asked of every model) and its golden pictures (golden.test
# and golden/, bump's with the name changed, its own trace beside them).
sed 's/bump/dummy/g' "$src/policies/bump/misuse.table" >"$src/policies/dummy/misuse.table"
cp "$src/policies/bump/regions.rep" "$src/policies/dummy/regions.rep"
sed 's|policies/bump/|policies/dummy/|; s/bump/dummy/g' "$src/policies/bump/golden.test" >"$src/policies/dummy/golden.test"
mkdir "$src/policies/dummy/golden"
for f in "$src/policies/bump/golden/"*.dot; do
	sed 's/(bump)/(dummy)/g' "$f" >"$src/policies/dummy/golden/$(basename "$f")"
done
echo "EXTRA_DIST += policies/dummy/misuse.table policies/dummy/regions.rep" >>"$src/policies/dummy/local.mk"
# ... and one line in the one list: an allocator model, so `all` takes it.
echo "dummy      all" >> "$src/policies/policies.list"

log=$tmp/build.log
if ! (cd "$src" && ./bootstrap) >"$log" 2>&1; then
	echo "FAIL: bootstrap with the dummy policy"; tail -20 "$log"; exit 1
fi
# Configured in the copy's own folder, as a newcomer's ./configure runs,
# beside the source folder core/: autoconf's clean-up ("rm -f core ...")
# must not complain about it, and its exit trap must still remove
# confdefs.h.  The run fails (an unknown policy), so the copy stays
# unconfigured for the build below.
out=$(cd "$src" && ./configure -q --with-policy=nosuch 2>&1 >/dev/null)
case "$out" in
*"valid policies: "*dummy*) say PASS "configure names dummy among the valid policies" ;;
*) say FAIL "configure's error for an unknown policy does not name dummy: $out" ;;
esac
if printf '%s\n' "$out" | grep -q 'cannot remove'; then
	say FAIL "configure in the source tree says: $(printf '%s\n' "$out" | grep 'cannot remove' | head -1)"
elif [ -e "$src/confdefs.h" ]; then
	say FAIL "configure in the source tree left confdefs.h behind"
else
	say PASS "configure in the source tree, beside core/, removes its files without a 'cannot remove' line"
fi
mkdir "$tmp/b"
cd "$tmp/b"
# bins beside it: heaplab diagnose attributes a recording on bins, the
# model of the C library it was recorded on
if ! "$src/configure" -q --with-policy=dummy,bins >"$log" 2>&1; then
	echo "FAIL: configure --with-policy=dummy,bins"; tail -20 "$log"; exit 1
fi
if ! make -s -j2 heaplab tests/unit/test_conformance tests/unit/test_events tests/programs/misuse_program libheaplab-preload.la \
	fidelity/probes/realloc_zero tests/fuzz/replay_ops tests/fuzz/replay_conf >"$log" 2>&1; then
	echo "FAIL: make with the dummy policy"; tail -30 "$log"; exit 1
fi
if hl_policies ./heaplab | grep -qx dummy; then
	say PASS "heaplab policies lists dummy"
else
	say FAIL "heaplab policies does not list dummy: $(hl_policies ./heaplab | tr '\n' ' ')"
fi
if ./heaplab replay --policy=dummy "$src/traces/short1-bal.rep" >"$log" 2>&1; then
	say PASS "a trace replays on dummy, every check held"
else
	say FAIL "replay on dummy"; cat "$log"
fi
# the conformance suite runs every contract on every compiled-in policy
if ./tests/unit/test_conformance >"$log" 2>&1 && grep -q '^100%: Checks' "$log"; then
	say PASS "the conformance suite passes on dummy ($(grep -E '^[0-9]+%: Checks' "$log"))"
else
	say FAIL "conformance with dummy"; tail -20 "$log"
fi
# a pointer dummy never handed out: its one fatal line names the table's name
out=$(HEAPLAB_POLICY=dummy HEAPLAB_CONF=debug:off LD_PRELOAD=./.libs/libheaplab-preload.so \
	./tests/programs/misuse_program stack 2>&1 >/dev/null)
case "$out" in
"heaplab: dummy: "*) say PASS "dummy's fatal line names it from its table ($out)" ;;
*) say FAIL "dummy's fatal line does not start with 'heaplab: dummy: ': $out" ;;
esac
# the shim built dummy's own malloc and free from the row in its folder
if nm -a .libs/libheaplab-preload.so | grep -q ' malloc_HL_FAST_DUMMY$' &&
   nm -a .libs/libheaplab-preload.so | grep -q ' free_HL_FAST_DUMMY$'; then
	say PASS "the preload library has a malloc and a free for dummy's fast path"
else
	say FAIL "no malloc_HL_FAST_DUMMY / free_HL_FAST_DUMMY in the preload library"
fi
# diagnose's grid holds dummy's knob, with the real setting from its table
if ./heaplab diagnose --trace="$src/traces/short1-bal.rep" --json=- >"$log" 2>&1 &&
   grep -q '"policy":"dummy"' "$log" && grep -q 'what dummy stands for' "$log"; then
	say PASS "heaplab diagnose replays the trace under dummy's what-if knob"
else
	say FAIL "diagnose's candidates do not include dummy's knob"; tail -5 "$log"
fi
# heaplab fidelity: the family from its folder's rows, its real side from
# their family stanza, its model from the table that names it
if ./heaplab fidelity --list >"$log" 2>&1 && grep -q '^dummylib\.realloc-zero	' "$log"; then
	say PASS "heaplab fidelity --list lists the row of dummy's family, dummylib"
else
	say FAIL "heaplab fidelity --list does not list dummylib.realloc-zero"; tail -5 "$log"
fi
out=$(./heaplab fidelity --family dummylib --brief 2>&1)
if [ "$out" = "PASS dummylib.realloc-zero
fidelity: 1 passed, 0 failed, 0 skipped" ]; then
	say PASS "heaplab fidelity --family dummylib runs its row on the C library's malloc and on dummy"
else
	say FAIL "heaplab fidelity --family dummylib: $out"
fi
# the fuzzers: the corpus of operations replayed on the copy runs heaps of
# dummy, under its table's variants too (bump's region sizes and commit
# steps), and the configuration fuzzer tries every string on dummy
if ./tests/fuzz/replay_ops --say "$src"/tests/fuzz/corpus/ops/* >"$log" 2>&1 &&
   grep -q "^fuzz_ops: ran dummy '" "$log" && grep -q "^fuzz_ops: ran dummy '[^']*commit_step:" "$log"; then
	say PASS "the fuzzer of operations runs dummy on $(grep -c "^fuzz_ops: ran dummy '" "$log") of its corpus's inputs, $(grep -c "^fuzz_ops: ran dummy '[^']*commit_step:" "$log") under a variant of its table"
else
	say FAIL "the fuzzer of operations did not run dummy and its variants"; grep -v ': ran ' "$log" | tail -5
fi
if ./tests/fuzz/replay_conf --say "$src"/tests/fuzz/corpus/conf/* >"$log" 2>&1 && grep -q '^fuzz_conf: ran dummy$' "$log"; then
	say PASS "the fuzzer of configurations makes dummy's heaps ($(grep -c '^fuzz_conf: ran dummy$' "$log") of its corpus's strings)"
else
	say FAIL "the fuzzer of configurations did not run dummy"; grep -v ': ran ' "$log" | tail -5
fi
# the book: chapter 11's comparison of every allocator model has its row
mkdir "$tmp/b/worked"
if sh "$src/book/gen_worked.sh" ./heaplab "$tmp/b/worked" >"$log" 2>&1 && grep -q '^dummy  *[0-9.]*% ' "$tmp/b/worked/ch11-compare.txt"; then
	say PASS "the book's generated comparison of every model has a row for dummy ($(grep '^dummy ' "$tmp/b/worked/ch11-compare.txt" | tr -s ' '))"
else
	say FAIL "book/gen_worked.sh wrote no row for dummy in ch11-compare.txt"; tail -5 "$log"
fi
# the feature scripts find it by its folder and its table: the misuse
# cells (debug:on and its misuse.table), the golden pictures, the decision
# events' contract under its defaults and its table's variants
run_test() { # NAME COMMAND...: runs a test of the copy as make check would
	local name=$1
	shift
	if env abs_top_builddir="$tmp/b" srcdir="$src" abs_top_srcdir="$src" CK_TIMEOUT_MULTIPLIER=3 "$@" >"$log" 2>&1; then
		return 0
	fi
	say FAIL "$name on the copy with dummy"; tail -15 "$log"
	return 1
}
if run_test misuse.sh bash "$src/tests/programs/misuse.sh"; then
	if grep -q "^PASS: debug:on dummy double-free" "$log" && grep -q "^PASS: debug:off dummy stack" "$log"; then
		say PASS "tests/programs/misuse.sh runs dummy's cells from its folder's misuse.table ($(tail -1 "$log"))"
	else
		say FAIL "tests/programs/misuse.sh passed but ran no cell of dummy"; grep dummy "$log" | head -5
	fi
fi
if run_test golden.test sh "$src/visualize/check-pictures.sh" "$src/policies/dummy/golden.test"; then
	if grep -q "^PASS: dummy: goldens match" "$log"; then
		say PASS "dummy's golden pictures: $(grep '^PASS: dummy' "$log" | sed 's/^PASS: dummy: //')"
	else
		say FAIL "the golden test of dummy did not run: $(tail -2 "$log")"
	fi
fi
if run_test test_events ./tests/unit/test_events && grep -q '^100%: Checks' "$log"; then
	say PASS "the events' contract holds on dummy, its variants included ($(grep -E '^[0-9]+%: Checks' "$log"))"
fi
exit $fail
