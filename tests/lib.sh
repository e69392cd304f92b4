# What the test scripts share (sourced, never run; POSIX sh, so the /bin/sh
# scripts and the bash ones read the same file).  A script in a folder of
# tests/ (tests/KIND/x.sh) sources it with
#     . "$(dirname "$0")/../lib.sh"
# (a script outside tests/ names the way to it), so it is found both when
# make check runs the script from the top of the build tree and when a
# person runs it by hand as its header says.  tests/house/lib_used.sh fails when
# a script does again what this file does.
#
#   build              the build tree (abs_top_builddir under make check,
#                      the current folder by hand)
#   heaplab, preload   the built command and the preload library in it;
#                      HEAPLAB overrides the command, as the labs' Makefiles
#                      set it
#   hl_skip REASON     print "SKIP: REASON" and exit 77 (automake's SKIP:
#                      never counted as a pass)
#   hl_policies [CMD]  the compiled-in policies, one name a line (of CMD,
#                      another build's heaplab, when given)
#   hl_compiled NAME   true when policy NAME is compiled in
#   hl_role ROLE       the policy policies/policies.list gives ROLE (default:
#                      the default heap of `all`; skeleton: the malloc lab's;
#                      reference: what the lab is graded against), if any
#   hl_models          the compiled-in allocator models (`all` in the list:
#                      not the lab's skeleton), one a line
#   hl_model_of FAMILY the compiled-in policy that models FAMILY (glibc,
#                      jemalloc, mimalloc, tcmalloc, pymalloc), or nothing
#   hl_families        the compiled-in models of a family of real allocators,
#                      one "POLICY FAMILY [OPTIONS]" a line (heaplab
#                      policies --families)
#   hl_unmodelled FAMILY...
#                      the first FAMILY no compiled-in policy models, or
#                      nothing (a one-policy build models none)
#   hl_need_models FAMILY...
#                      hl_skip, naming it, unless every FAMILY has a
#                      compiled-in model: for a script that can run nothing
#                      without them
#   hl_one_cpu         the words that run a command on one CPU, one this
#                      process may run on (taskset -c N), or nothing
#                      without taskset: a policy whose caches follow the
#                      CPU a thread runs on replays alike twice there
#   hl_demo_trace      the demo's workload as a trace, on the standard
#                      output: 500,000 x 1 KiB, free 90 %, free the rest,
#                      a label after each step (after-alloc, after-free-90,
#                      after-free-all)
#   hl_sanitizer       the -fsanitize= list of a sanitizer build, else empty
#   hl_sanitized       true in a sanitizer build (HL_SANITIZERS set by make)
#   hl_skip_sanitized REASON
#                      hl_skip REASON in a sanitizer build: the sanitizer's
#                      runtime owns malloc, so nothing can be preloaded
#   hl_tmpdir [NAME]   a new folder in $tmp (NAME names it), removed when the
#                      script exits
#   hl_candidate JSON KEY MATCH FIELD...
#                      of heaplab diagnose's --json file JSON, the FIELDs of
#                      the first candidate whose KEY (policy, real_setting)
#                      is MATCH, or starts with it when MATCH ends in '*';
#                      one line, nothing when none is

build=${abs_top_builddir:-.}
heaplab=${HEAPLAB:-$build/heaplab}
preload=$build/.libs/libheaplab-preload.so
hl_sanitizer=${HL_SANITIZERS:-}

hl_skip() { echo "SKIP: $*"; exit 77; }
hl_policies() { "${1:-$heaplab}" policies | awk '{print $1}'; }
hl_compiled() { hl_policies | grep -qx "$1"; }
hl_families() { "$heaplab" policies --families; }
hl_model_of() { hl_families | awk -v f="$1" '$2 == f { print $1; exit }'; }
hl_unmodelled() {
	for _hl_f; do
		[ -n "$(hl_model_of "$_hl_f")" ] || { echo "$_hl_f"; return; }
	done
}
hl_need_models() {
	_hl_f=$(hl_unmodelled "$@")
	[ -z "$_hl_f" ] || hl_skip "no compiled-in policy models $_hl_f (configure --with-policy=all)"
}
hl_list_file() { echo "${abs_top_srcdir:-${srcdir:-.}}/policies/policies.list"; }
hl_role() { awk -v r="$1" '!/^#/ && $3 == r { print $1; exit }' "$(hl_list_file)"; }
hl_models() {
	_hl_all=" $(awk '!/^#/ && $2 == "all" { printf "%s ", $1 }' "$(hl_list_file)")"
	for _hl_p in $(hl_policies); do
		case "$_hl_all" in *" $_hl_p "*) echo "$_hl_p" ;; esac
	done
}
hl_one_cpu() {
	command -v taskset >/dev/null && echo "taskset -c $(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')"
}
hl_demo_trace() {
	awk 'BEGIN {
		n = 500000
		for (i = 0; i < n; i++) print "a " i " 1024"
		print "s after-alloc"
		for (i = 0; i < n; i++) if (i % 10) print "f " i
		print "s after-free-90"
		for (i = 0; i < n; i += 10) print "f " i
		print "s after-free-all"
	}'
}
hl_sanitized() { [ -n "$hl_sanitizer" ]; }
hl_skip_sanitized() { if hl_sanitized; then hl_skip "$@"; fi; }
hl_tmpdir() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/${1:-heaplab-test}.XXXXXX") || { echo "no temporary folder"; exit 99; }
	trap 'rm -rf "$tmp"' EXIT
}
hl_candidate() {
	python3 -c 'import json, sys
path, key, match, fields = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
for c in json.load(open(path))["candidates"]:
    v = c.get(key) or ""
    if v == match or (match.endswith("*") and v.startswith(match[:-1])):
        print(*(c[f] for f in fields)); break' "$@" 2>/dev/null
}
