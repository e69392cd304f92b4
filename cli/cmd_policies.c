/* heaplab policies: what is compiled in, and (verbose) every option. */
#include "config.h"
#include <string.h>
#include "cli.h"

int cmd_policies(int argc, char **argv)
{
	bool verbose = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: heaplab policies [--verbose]\n"
			       "Lists the compiled-in policies; --verbose adds each option with its default and help.\n");
			return 0;
		} else
			return cli_error("policies: unknown argument '%s'", argv[i]);
	}
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		printf("%-9s %s%s\n", name, hl_policy_summary(name),
		       strcmp(name, hl_default_policy()) ? "" : "  [default]");
		if (verbose) {
			hl_policy_options(name, stdout);
			printf("\n");
		}
	}
	if (verbose) {
		printf("every policy also accepts:\n");
		printf("    debug            on|off  run the checker after every operation, junk-fill memory\n");
		printf("    ledger           on|off  remember requested sizes (live_requested_bytes)\n");
	}
	return 0;
}
