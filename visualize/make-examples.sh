#!/bin/sh
# make-examples.sh HEAPLAB TRACE DIR: one stepper page per compiled-in
# policy for TRACE, and DIR/index.html linking them, for `make examples`.
# The pages open from disk (no server, no network): a teacher can copy DIR
# anywhere.
set -eu
heaplab=$1
trace=$2
dir=$3
mkdir -p "$dir"
html() { sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g'; }
{
	echo '<!DOCTYPE html>'
	echo '<html lang="en"><head><meta charset="utf-8"><title>heaplab: one trace, every policy</title>'
	echo '<style>body { font-family: Helvetica, Arial, sans-serif; margin: 2em; max-width: 50em; }'
	echo 'li { margin: 0.4em 0; } code { background: #eee; padding: 0 0.2em; }</style></head><body>'
	echo '<h1>heaplab: one trace, every policy</h1>'
	printf '<p>Each page steps through <code>%s</code> on one allocator model: the ops on the left, the heap after each op and its statistics on the right.  Keys: arrows or n/p to step, Home/End, space to play.</p>\n' \
		"$(basename "$trace" | html)"
	echo '<ul>'
	"$heaplab" policies | while read -r name summary; do
		"$heaplab" step --policy="$name" -o "$dir/$name.html" "$trace" >&2
		printf '<li><a href="%s.html">%s</a>: %s</li>\n' "$name" "$name" "$(echo "$summary" | sed 's/ *\[default\]$//' | html)"
	done
	echo '</ul>'
	printf '<p>Made with <code>heaplab step --policy=NAME %s</code>.</p>\n' "$(basename "$trace" | html)"
	echo '</body></html>'
} >"$dir/index.html.tmp"
mv "$dir/index.html.tmp" "$dir/index.html"
echo "examples: open $dir/index.html"
