# The manual pages: heaplab(1) for the command, hl_heap_new(3) for the
# library; tests/house/man_pages.sh keeps them true to the code (appends to the
# lists in Makefile.am).
dist_man_MANS = man/heaplab.1 man/hl_heap_new.3
