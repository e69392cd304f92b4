#!/bin/sh
# gen_steppers.sh HEAPLAB OUTDIR: the stepper page of each chapter's
# example trace, as `heaplab step` writes it (one self-contained HTML
# file, no network), into OUTDIR/chNN-stepper.html.  make doc runs it
# before Doxygen and copies the pages next to the chapters' HTML; each
# chapter embeds its page in an <iframe> inside \htmlonly ... \endhtmlonly,
# so a student reads, steps and predicts in one place.  tests/book/book_examples.sh
# checks the chapters and the pages, tests/book/book_stepper_browser.sh drives
# one embedded page in headless Chromium.
# One line per chapter: chapter, policy, configuration ("-": defaults),
# trace (under book/traces).
# bins is pinned to version:2.43 where the chapter describes glibc 2.43 (16
# chunks a tcache bin, no fastbins); unpinned it follows the running glibc.
set -eu
heaplab=$1
out=$2
src=$(cd "$(dirname "$0")" && pwd)
while read -r chapter policy conf trace; do
	case "$chapter" in '#'*|'') continue ;; esac
	if ! "$heaplab" policies | awk '{print $1}' | grep -qx "$policy"; then
		# the chapter's frame says why it is empty, as gen_figures' notes do
		printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>no stepper</title></head><body><p>The stepper of this chapter needs the %s policy, which is not compiled into this build.</p></body></html>\n' \
			"$policy" >"$out/ch$chapter-stepper.html"
		continue
	fi
	set -- --policy="$policy"
	[ "$conf" = - ] || set -- "$@" --conf="$conf"
	# quiet unless it fails ("wrote N ops" would fill make doc's output)
	if ! msg=$("$heaplab" step "$@" -o "$out/ch$chapter-stepper.html" "$src/traces/$trace" 2>&1); then
		echo "$msg" >&2
		exit 1
	fi
done <<'TABLE'
01 firstfit fit:first explain.rep
02 bins version:2.43 top-200k.rep
03 bump - bump-arith.rep
04 firstfit fit:first,order:address fits.rep
05 slab tcache:off classes.rep
06 bins version:2.43,tcache_count:0 coalesce.rep
07 bins version:2.43,tcache_count:2 tcache-order.rep
08 slab - decay.rep
16 percpu - explain.rep
17 bins version:2.43,tcache_count:0 pairs.rep
18 bins version:2.36 held.rep
TABLE
