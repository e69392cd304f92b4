/* heaplab plot: not built yet (placeholder until its issue lands). */
#include "cli.h"

int cmd_plot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_error("'plot' is not available in this build yet");
}
