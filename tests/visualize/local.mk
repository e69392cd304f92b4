# The pictures and pages, driven through the heaplab command: render, the
# terminal stepper's quiz, the stepper page in a real browser, plot, the
# report of diagnose in a browser, pictures readable at any heap size
# (the Check suite test_visualize is in tests/unit/; visualize/local.mk
# ships the pages' browser scripts).
HL_VIS_CHECKS = tests/visualize/test_visualize_render.sh tests/visualize/test_visualize_quiz.sh \
	tests/visualize/test_visualize_browser.sh tests/visualize/test_visualize_plot.sh tests/visualize/diagnose_browser.sh \
	tests/visualize/test_visualize_readable.sh
TESTS += $(HL_VIS_CHECKS)
dist_noinst_SCRIPTS += $(HL_VIS_CHECKS)
# what the browser checks share (the book's stepper check too)
EXTRA_DIST += tests/visualize/browser_lib.sh
# The lockstep (heaplab step --policy=A,B): the terminal's table against
# replay --explain of each policy, and the page in headless Chromium
# (tests/visualize/lockstep_lib.sh works out what each op did without the
# lockstep's code).
TESTS += tests/visualize/test_visualize_lockstep.sh tests/visualize/test_visualize_lockstep_browser.sh
dist_noinst_SCRIPTS += tests/visualize/test_visualize_lockstep.sh tests/visualize/test_visualize_lockstep_browser.sh
EXTRA_DIST += tests/visualize/lockstep_lib.sh
