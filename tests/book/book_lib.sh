# Shared by the tests/book/book_*.sh checks of the book's pages (sourced, not run):
# $top is the source tree, fail() reports one problem and marks the run bad,
# need_page() stops at once when the page under test is missing; what
# every test script shares (the policies compiled in, skips, a temporary
# folder) comes from tests/lib.sh.
set -u
. "$(dirname "$0")/../lib.sh"
top="${srcdir:-.}"
bad=0
fail() { echo "FAIL: $*"; bad=1; }
need_page() { [ -s "$1" ] || { echo "FAIL: $1 is missing"; exit 1; }; }
# Stops with SKIP in the student's edition (make dist-student writes EDITION),
# which has no answer for the check to read; $1 says what the check needs.
answers_needed() {
	[ "$(cat "$top/EDITION" 2> /dev/null)" != student ] ||
		{ echo "SKIP: the student's edition has no $1 (the instructor's has)"; exit 77; }
}
