#!/bin/sh
# Writes policies/local.mk from policies/policies.list (run by ./bootstrap,
# since automake must see every policy's fragment as a literal include), and
# shim/fast_rows.h: the fast-path rows of every policy whose folder has
# a NAME_fast.h (shim/fast_paths.h builds the shim's copies from them).
set -e
cd "$(dirname "$0")/.."
list=policies/policies.list
out=policies/local.mk
names=$(sed -n 's/^\([a-z][a-z0-9_]*\)[ 	].*/\1/p' "$list")
models=$(awk '!/^#/ && $2 == "all" { print $1 }' "$list")
{
	echo "# Written by policies/gen-local-mk.sh from policies/policies.list: do not edit."
	echo "HL_MODEL_POLICIES =" $models
	echo "HL_EVERY_POLICY =" $names
	# literal words: automake must see each test's name to make its rules
	# a model's golden pictures: policies/NAME/golden.test lists the
	# traces, policies/NAME/golden/ holds the snapshots
	goldens=$(for n in $models; do [ -f "policies/$n/golden.test" ] && echo "$n"; done)
	echo "HL_GOLDEN_TESTS =" $(for n in $goldens; do printf 'policies/%s/golden.test ' $n; done)
	echo "HL_GOLDEN_DIRS =" $(for n in $goldens; do printf 'policies/%s/golden ' $n; done)
	# the fidelity rows of each family a policy models: policies/NAME/FAMILY.rows
	echo "HL_FIDELITY_ROWS =" $(for n in $names; do for f in "policies/$n/"*.rows; do [ ! -f "$f" ] || echo "$f"; done; done)
	echo "EXTRA_DIST += policies/policies.list policies/gen-local-mk.sh"
	for n in $names; do
		[ -f "policies/$n/local.mk" ] || { echo "gen-local-mk: policies/$n/local.mk is missing" >&2; exit 1; }
		# its Check suite, policies/NAME/test_NAME.c, when it has one (its
		# local.mk may add sources to it and put it in HL_THREADED_TESTS)
		if [ -f "policies/$n/test_$n.c" ]; then
			N=$(echo "$n" | tr a-z A-Z)
			t=policies/$n/test_$n v=policies_${n}_test_$n
			echo "if HL_POLICY_$N"
			echo "check_PROGRAMS += $t"
			echo "TESTS += $t"
			echo "${v}_SOURCES = $t.c tests/unit/testlib.h tests/unit/testlib.c tests/unit/testlib_events.h tests/unit/testlib_events.c"
			echo "${v}_CPPFLAGS = \$(AM_CPPFLAGS) -I\$(top_srcdir)/tests/unit"
			echo "${v}_CFLAGS = \$(AM_CFLAGS) \$(CHECK_CFLAGS)"
			echo "${v}_LDADD = libhlcore.la \$(CHECK_LIBS)"
			echo "endif"
		fi
		echo "include policies/$n/local.mk"
	done
} > "$out.tmp"
mv "$out.tmp" "$out"

rows=shim/fast_rows.h
{
	echo "/* Written by policies/gen-local-mk.sh from policies/policies.list: do not edit."
	echo " * The fast-path rows of each compiled-in policy that has a NAME_fast.h. */"
	echo "#ifndef HL_FAST_ROWS_H"
	echo "#define HL_FAST_ROWS_H"
	each=
	for n in $names; do
		[ -f "policies/$n/${n}_fast.h" ] || continue
		N=$(echo "$n" | tr a-z A-Z)
		grep -q "define HL_FAST_ROWS_$N(X)" "policies/$n/${n}_fast.h" || {
			echo "gen-local-mk: policies/$n/${n}_fast.h defines no HL_FAST_ROWS_$N(X)" >&2; exit 1; }
		echo "#ifdef HL_HAVE_POLICY_$N"
		echo "#include \"../policies/$n/${n}_fast.h\""
		echo "#else"
		echo "#define HL_FAST_ROWS_$N(X)"
		echo "#endif"
		each="$each HL_FAST_ROWS_$N(X)"
	done
	echo "#define HL_FAST_EACH_PATH(X)$each"
	echo "#endif"
} > "$rows.tmp"
mv "$rows.tmp" "$rows"
