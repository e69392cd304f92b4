# Turns text files into C strings: for each input file F, writes
#   const char vis_asset_F[] = "line\n" ...;
# with F's base name, its dots and dashes made underscores.  Used to carry
# the stepper's style and script inside the heaplab program.
# (Splitting and joining instead of gsub: awks disagree on backslashes in
# gsub's replacement text.)
function replace_all(s, what, with,    parts, n, i, r) {
	n = split(s, parts, what)
	r = parts[1]
	for (i = 2; i <= n; i++)
		r = r with parts[i]
	return r
}
FNR == 1 {
	if (NR > 1)
		print ";"
	name = FILENAME
	sub(/.*\//, "", name)
	gsub(/[^A-Za-z0-9_]/, "_", name)
	print "const char vis_asset_" name "[] ="
}
{
	line = replace_all($0, "\\", "\\\\")
	line = replace_all(line, "\"", "\\\"")
	print "\t\"" line "\\n\""
}
END {
	print ";"
}
