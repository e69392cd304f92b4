/* heaplab step: not built yet (placeholder until its issue lands). */
#include "cli.h"

int cmd_step(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_error("'step' is not available in this build yet");
}
