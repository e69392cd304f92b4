/* heaplab render: not built yet (placeholder until its issue lands). */
#include "cli.h"

int cmd_render(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_error("'render' is not available in this build yet");
}
