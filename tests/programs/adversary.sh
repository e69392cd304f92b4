#!/usr/bin/env bash
# heaplab adversary: the trace it writes is the one it measured, and the
# shipped worst traces (traces/adversarial/) hurt the real allocators as
# they hurt the models: each is replayed on the real allocator by
# bench/sysreplay --rss (peak anonymous resident growth, every trace thread
# on a thread of its own) and on its model by heaplab bound (peak resident
# bytes plus the growth of the model's resident metadata, which the real
# RSS counts too: jemalloc's arena and tcache for each new thread are about
# 125 KB); the real ratio to the bound must be large and the model's within
# 25 % of it.  Every model agrees today (bench/FIDELITY.md, "Adversarial
# traces"); the rows come from the policies (their traces here, their
# families' real allocators), and a model that departs fails.
set -u
. "$(dirname "$0")/../lib.sh"
hl_skip_sanitized "the real allocators are preloaded into bench/sysreplay, which a -fsanitize=$hl_sanitizer build's malloc rules out"
src="${srcdir:-.}"
sysreplay="$build/bench/sysreplay"
lib=/usr/lib/x86_64-linux-gnu
passed=0 failed=0 skipped=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
skip() { skipped=$((skipped + 1)); echo "SKIP: $*"; }
hl_tmpdir
# judge OK MARK IF-MARKED-BUT-OK IF-MARKED IF-NOT-OK: a row marked as a known
# shortfall is counted as skipped while it falls short, and fails once it holds.
judge() {
	if [ "$1" = 1 ]; then
		[ -z "$2" ] && pass || fail "$3"
	elif [ -n "$2" ]; then
		skip "$4"
	else
		fail "$5"
	fi
}
json() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
# The real allocator of a policy: the family it models (heaplab policies
# --families) as the library to preload, glibc for none, "-" when its
# allocator cannot run under a trace here (pymalloc, or no family); and
# the options it follows that allocator with.
real_lib_of() {
	case $(hl_families | awk -v p="$1" '$1 == p { print $2 }') in
	glibc) echo glibc ;;
	jemalloc) echo libjemalloc.so.2 ;;
	mimalloc) echo libmimalloc.so.2 ;;
	tcmalloc) echo libtcmalloc_minimal.so.4 ;;
	*) echo - ;;
	esac
}
family_conf() { c=$(hl_families | awk -v p="$1" '$1 == p { print $3 }'); echo "${c:--}"; }
# the shipped worst traces: one per policy, traces/adversarial/POLICY.rep;
# "rule" when it says which rule it attacks (built by rules.py), "search"
# when heaplab adversary found it
adversarial() { # rule|any: POLICY REAL CONF rows (no mark: none departs)
	for p in $(hl_policies); do
		t="$src/traces/adversarial/$p.rep"
		[ -f "$t" ] || continue
		real=$(real_lib_of "$p")
		if [ "$1" = rule ]; then
			grep -q '^# rule attacked: ' "$t" || continue
			[ "$real" = glibc ] && real=-
		else
			[ "$real" = - ] && continue
		fi
		echo "$p $real $(family_conf "$p")"
	done
}

# 1. The shipped worst traces on the real allocators.
"$heaplab" adversary --policy=nope -o "$tmp/x.rep" > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "unknown policy 'nope'" "$tmp/err" && pass || fail "unknown policy: $(cat "$tmp/err")"
[ -x "$sysreplay" ] || { echo "no $sysreplay"; exit 99; }
while read -r policy real conf departs; do
	[ "$conf" = - ] && conf=""
	t="$src/traces/adversarial/$policy.rep"
	hl_compiled "$policy" || { skip "$policy is not compiled in"; continue; }
	real_lib=""
	if [ "$real" != glibc ]; then
		[ -e "$lib/$real" ] || { skip "$real is not installed"; continue; }
		real_lib="$lib/$real"
	fi
	LD_PRELOAD=$real_lib "$sysreplay" --rss "$t" > "$tmp/real" 2>&1 || { fail "$policy: sysreplay on $real: $(cat "$tmp/real")"; continue; }
	"$heaplab" bound --policy="$policy" ${conf:+--conf="$conf"} --json "$t" > "$tmp/model.json" || { fail "$policy: heaplab bound"; continue; }
	real_x=$(awk '/\.rep /{ printf "%.2f", $5 / $4 }' "$tmp/real")
	model_x=$(json "$tmp/model.json" '"%.2f" % (o["policies"][0]["peak_resident_with_metadata"] / o["bound_bytes"])')
	echo "$policy: model $model_x x bound, $real $real_x x bound (peak resident)"
	awk -v r="$real_x" 'BEGIN { exit !(r >= 3) }' && pass || fail "$policy: $real holds only $real_x x the bound"
	agree=0
	awk -v m="$model_x" -v r="$real_x" 'BEGIN { d = m / r; exit !(d >= 0.75 && d <= 1.25) }' && agree=1
	judge "$agree" "$departs" "$policy: agrees with $real now: remove its 'departs' mark" \
		"$policy: a known departure: model $model_x x bound, $real $real_x x bound" \
		"$policy: model $model_x x bound, $real $real_x x bound: more than 25 % apart"
done < <(adversarial any)

# 2. The traces built by hand from a policy's rule (traces/adversarial/rules.py)
#    hold at least twice the policy's worst ratio to the bound on the shipped
#    traces, on the model (peak committed and peak resident, heaplab bound)
#    and on the real allocator where one is installed (peak resident,
#    sysreplay --rss), the worst computed here over the shipped traces whose
#    bound is at least 256 KiB (below that the heap's first mapping is the
#    figure: bins holds 117x the few live bytes of malloc-free.rep).  A
#    trace that reaches less than 2x fails.
worst() { # heaplab bound --json objects of the shipped traces: worst committed and resident ratios
	python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
big = [o for o in objs if o["bound_bytes"] >= 256 * 1024]
print("%.3f %.3f %d" % (max(o["policies"][0]["peak_committed"] / o["bound_bytes"] for o in big),
                        max(o["policies"][0]["peak_resident"] / o["bound_bytes"] for o in big), len(big)))' "$1"
}
real_worst() { # sysreplay --rss lines: the worst peak resident over the bound, bound >= 256 KiB
	awk '/\.rep / && $4 >= 262144 { r = $5 / $4; if (r > w) w = r } END { printf "%.3f", w }' "$1"
}
at_least() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= 2 * b) }'; }
while read -r policy real conf short; do
	[ "$conf" = - ] && conf=""
	t="$src/traces/adversarial/$policy.rep"
	hl_compiled "$policy" || { skip "$policy is not compiled in"; continue; }
	grep -q '^# rule attacked: ' "$t" && pass || fail "$policy: $t does not say which rule it attacks"
	"$heaplab" bound --offline-max=0 --policy="$policy" ${conf:+--conf="$conf"} --json "$src"/traces/*.rep > "$tmp/all.json" 2> /dev/null ||
		{ fail "$policy: heaplab bound on the shipped traces"; continue; }
	"$heaplab" bound --offline-max=0 --policy="$policy" ${conf:+--conf="$conf"} --json "$t" > "$tmp/adv.json" ||
		{ fail "$policy: heaplab bound on $t"; continue; }
	read -r wc wr nbig < <(worst "$tmp/all.json")
	read -r ac ar bound < <(json "$tmp/adv.json" '"%.3f %.3f %d" % (o["policies"][0]["peak_committed"] / o["bound_bytes"], o["policies"][0]["peak_resident"] / o["bound_bytes"], o["bound_bytes"])')
	[ "$nbig" -ge 20 ] && pass || fail "$policy: only $nbig shipped traces have a bound of 256 KiB or more"
	[ "$bound" -ge 262144 ] && pass || fail "$policy: $t's bound is $bound bytes, under 256 KiB"
	figures="model committed $ac x bound (worst shipped $wc), resident $ar (worst $wr)"
	ok=1
	at_least "$ac" "$wc" || ok=0
	at_least "$ar" "$wr" || ok=0
	if [ "$real" != - ] && [ -e "$lib/$real" ]; then
		LD_PRELOAD=$lib/$real "$sysreplay" --rss "$src"/traces/*.rep > "$tmp/real_all" 2>&1 || { fail "$policy: sysreplay on $real, shipped traces"; continue; }
		LD_PRELOAD=$lib/$real "$sysreplay" --rss "$t" > "$tmp/real_adv" 2>&1 || { fail "$policy: sysreplay on $real: $(cat "$tmp/real_adv")"; continue; }
		rw=$(real_worst "$tmp/real_all")
		ra=$(awk '/\.rep /{ printf "%.3f", $5 / $4 }' "$tmp/real_adv")
		figures="$figures; $real $ra x bound (worst shipped $rw)"
		at_least "$ra" "$rw" || ok=0
	elif [ "$real" != - ]; then
		figures="$figures; $real is not installed"
	fi
	echo "$policy (rule): $figures"
	judge "$ok" "$short" "$policy: reaches 2x its worst now: remove its 'short' mark" \
		"$policy: short of 2x its worst: $figures" "$policy: short of 2x its worst: $figures"
done < <(adversarial rule)

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
