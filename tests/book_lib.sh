# Shared by the tests/book_*.sh checks of the book's pages (sourced, not run):
# $top is the source tree, fail() reports one problem and marks the run bad,
# need_page() stops at once when the page under test is missing; what
# every test script shares (the policies compiled in, skips, a temporary
# folder) comes from tests/lib.sh.
set -u
. "$(dirname "$0")/lib.sh"
top="${srcdir:-.}"
bad=0
fail() { echo "FAIL: $*"; bad=1; }
need_page() { [ -s "$1" ] || { echo "FAIL: $1 is missing"; exit 1; }; }
