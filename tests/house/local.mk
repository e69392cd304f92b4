# The house's own rules, checked on the code and the documents themselves.

# The test scripts share tests/lib.sh: no script repeats what it does.
TESTS += tests/house/lib_used.sh
EXTRA_DIST += tests/house/lib_used.sh

# The seams: no file but core/os.c makes a kernel memory call, no policy
# reads the clock or starts a thread itself (core/clock.c does).
TESTS += tests/house/os_seam.sh
EXTRA_DIST += tests/house/os_seam.sh tests/house/os_seam.py tests/house/clock_seam.py

# Calls only downward between a policy's files: sharded and bins list
# their layers in their header; no file calls a layer above its own.
TESTS += tests/house/layers.sh
EXTRA_DIST += tests/house/layers.sh tests/house/layers.py

# No file outside policies/NAME/ names a policy in its code (the files that
# still do are listed in the test, and the list only shrinks).
TESTS += tests/house/policy_names.sh
EXTRA_DIST += tests/house/policy_names.sh tests/house/policy_names.py

# A policy is added by its folder, its tests and one line in
# policies/policies.list (shown on a copy of the tree with a dummy policy).
TESTS += tests/house/add_policy.sh
EXTRA_DIST += tests/house/add_policy.sh

# A tree built in place leaves git status clean: every file the Makefile
# builds is ignored by .gitignore.
TESTS += tests/house/ignored_outputs.sh
EXTRA_DIST += tests/house/ignored_outputs.sh

# The manual pages (man/local.mk) stay true to the code.
TESTS += tests/house/man_pages.sh
dist_noinst_SCRIPTS += tests/house/man_pages.sh

# Every command of README.md and of heaplab(1)'s EXAMPLES, run as written
# in a copy of the tree.
TESTS += tests/house/readme_commands.sh
EXTRA_DIST += tests/house/readme_commands.sh

# The design notes stay a map: HACKING.md short, every topic file of
# hacking/ linked from it, every link of the notes leading to a file.
TESTS += tests/house/hacking_map.sh
EXTRA_DIST += tests/house/hacking_map.sh

# Bad input gets one clear line and a non-zero exit, never a crash.
TESTS += tests/house/bad_input.sh
EXTRA_DIST += tests/house/bad_input.sh
