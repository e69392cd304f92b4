# The heaplab command's sub-commands (one file each).
heaplab_SOURCES += cli/cmd_policies.c cli/cmd_replay.c cli/cmd_sizes.c cli/cmd_run.c
heaplab_SOURCES += cli/cmd_render.c cli/cmd_step.c cli/cmd_diff.c cli/cmd_plot.c
heaplab_SOURCES += cli/cmd_quiz.c
heaplab_SOURCES += cli/cmd_grade.c cli/cmd_bound.c cli/cmd_adversary.c
heaplab_SOURCES += cli/cmd_fidelity.c
heaplab_SOURCES += cli/cmd_diagnose.c
# where `make install` puts the fidelity rows (cli/cmd_fidelity.c)
heaplab_CPPFLAGS = $(AM_CPPFLAGS) -DHL_PKGDATADIR='"$(pkgdatadir)"'
