#!/bin/sh
# Writes policies/local.mk from policies/policies.list (run by ./bootstrap,
# since automake must see every policy's fragment as a literal include).
set -e
cd "$(dirname "$0")/.."
list=policies/policies.list
out=policies/local.mk
names=$(sed -n 's/^\([a-z][a-z0-9_]*\)[ 	].*/\1/p' "$list")
models=$(sed -n 's/^\([a-z][a-z0-9_]*\)[ 	][ 	]*all[ 	]*$/\1/p' "$list")
{
	echo "# Written by policies/gen-local-mk.sh from policies/policies.list: do not edit."
	echo "HL_MODEL_POLICIES =" $models
	echo "HL_EVERY_POLICY =" $names
	# literal words: automake must see each test's name to make its rules
	echo "HL_GOLDEN_TESTS =" $(for n in $models; do printf 'tests/golden/%s.test ' $n; done)
	echo "HL_GOLDEN_DIRS =" $(for n in $models; do printf 'tests/golden/%s ' $n; done)
	echo "EXTRA_DIST += policies/policies.list policies/gen-local-mk.sh"
	for n in $names; do
		[ -f "policies/$n/local.mk" ] || { echo "gen-local-mk: policies/$n/local.mk is missing" >&2; exit 1; }
		echo "include policies/$n/local.mk"
	done
} > "$out.tmp"
mv "$out.tmp" "$out"
