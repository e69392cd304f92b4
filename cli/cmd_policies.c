/* heaplab policies: what is compiled in, and (verbose) every option;
 * heaplab options: the options' documentation, from the option tables. */
#include "config.h"
#include <string.h>
#include "cli.h"

int cmd_policies(int argc, char **argv)
{
	bool verbose = false, families = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v"))
			verbose = true;
		else if (!strcmp(argv[i], "--families"))
			families = true;
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: heaplab policies [--verbose | --families]\n"
			       "Lists the compiled-in policies; --verbose adds the real allocators each models\n"
			       "and each option with its default and help; --families prints one line per\n"
			       "policy that models a family of real allocators: POLICY FAMILY [OPTIONS], the\n"
			       "options it follows that family's installed allocator under.\n");
			return 0;
		} else
			return cli_error("policies: unknown argument '%s'", argv[i]);
	}
	if (families) {
		for (size_t i = 0; i < hl_policy_count(); i++) {
			const char *name = hl_policy_name(i), *family = hl_policy_family(name);
			const char *conf = hl_policy_family_conf(name);
			if (family)
				printf("%s %s%s%s\n", name, family, conf ? " " : "", conf ? conf : "");
		}
		return 0;
	}
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const char *name = hl_policy_name(i);
		printf("%-9s %s%s\n", name, hl_policy_summary(name),
		       strcmp(name, hl_default_policy()) ? "" : "  [default]");
		if (verbose) {
			const char *family = hl_policy_family(name), *conf = hl_policy_family_conf(name);
			if (family)
				printf("  models %s: heaplab fidelity --family %s%s%s%s\n", family, family,
				       conf ? " (with " : "", conf ? conf : "", conf ? ")" : "");
			hl_policy_options(name, stdout);
			printf("\n");
		}
	}
	if (verbose) {
		printf("every policy also accepts:\n");
		hl_options_doc(NULL, false, stdout);
	}
	return 0;
}

/* One section: a heading, then the table of @p name (NULL: the core's). */
static void options_section(const char *name, bool markdown)
{
	if (markdown)
		printf("\n### %s\n\n%s\n\n", name ? name : "Every policy",
		       name ? hl_policy_summary(name) : "Options every heap accepts, whatever its policy.");
	else
		printf("%s:\n", name ? name : "every policy");
	hl_options_doc(name, markdown, stdout);
	if (!markdown)
		printf("\n");
}

int cmd_options(int argc, char **argv)
{
	bool markdown = false;
	const char *policy = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--markdown"))
			markdown = true;
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: heaplab options [POLICY] [--markdown]\n"
			       "Describes every option (key, default, accepted values, help) of the options\n"
			       "every heap accepts and of POLICY, or of every compiled-in policy; generated\n"
			       "from the option tables. --markdown writes the book's appendix.\n"
			       "Give options as --conf=key:value,key:value (or HEAPLAB_CONF).\n");
			return 0;
		} else if (argv[i][0] == '-' || policy)
			return cli_error("options: unknown argument '%s'", argv[i]);
		else if (!hl_policy_summary(argv[i]))
			return cli_error("options: no policy '%s' is compiled in (see heaplab policies)", argv[i]);
		else
			policy = argv[i];
	}
	if (markdown)
		printf("## Options\n\nGenerated from the option tables by `heaplab options --markdown`: "
		       "do not edit. Give them as `key:value,key:value` (`--conf`, `HEAPLAB_CONF`).\n");
	options_section(NULL, markdown);
	for (size_t i = 0; i < hl_policy_count(); i++)
		if (!policy || !strcmp(policy, hl_policy_name(i)))
			options_section(hl_policy_name(i), markdown);
	return 0;
}
