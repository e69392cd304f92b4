/* The compiled-in policies, from configure's --with-policy list. */
#include "config.h"
#include <string.h>
#include "policy.h"

#define X(name) extern const hl_policy_t hl_policy_##name;
HL_POLICY_XLIST
#undef X

static const hl_policy_t *const policies[] = {
#define X(name) &hl_policy_##name,
	HL_POLICY_XLIST
#undef X
};

enum { NPOLICIES = sizeof policies / sizeof policies[0] };

const hl_policy_t *hl_policy_find(const char *name)
{
	if (!name || !*name)
		name = HL_DEFAULT_POLICY;
	for (size_t i = 0; i < NPOLICIES; i++)
		if (!strcmp(policies[i]->name, name))
			return policies[i];
	return NULL;
}

size_t hl_policy_count(void) { return NPOLICIES; }

const char *hl_policy_name(size_t i) { return i < NPOLICIES ? policies[i]->name : NULL; }

const char *hl_policy_summary(const char *name)
{
	const hl_policy_t *p = hl_policy_find(name);
	return p && name && *name ? p->summary : NULL;
}

const char *hl_policy_whatif(const char *name, size_t i, const char **real)
{
	const hl_policy_t *p = name && *name ? hl_policy_find(name) : NULL;
	if (!p || !p->whatif)
		return NULL;
	for (size_t k = 0; k < i; k++)
		if (!p->whatif[k].conf)
			return NULL;
	if (real)
		*real = p->whatif[i].real;
	return p->whatif[i].conf;
}

const char *hl_policy_of_family(const char *family)
{
	for (size_t i = 0; family && i < NPOLICIES; i++)
		if (policies[i]->fidelity_family && !strcmp(policies[i]->fidelity_family, family))
			return policies[i]->name;
	return NULL;
}

const char *const *hl_policy_variants(const char *name)
{
	const hl_policy_t *p = hl_policy_find(name);
	return p ? p->variants : NULL;
}

const char *hl_policy_family(const char *name)
{
	const hl_policy_t *p = hl_policy_find(name);
	return p ? p->fidelity_family : NULL;
}

const char *hl_policy_family_conf(const char *name)
{
	const hl_policy_t *p = hl_policy_find(name);
	return p ? p->fidelity_conf : NULL;
}

const char *hl_default_policy(void) { return HL_DEFAULT_POLICY; }

int hl_options_doc(const char *name, bool markdown, FILE *out)
{
	const hl_policy_t *p = name ? hl_policy_find(name) : NULL;
	if (name && !p)
		return -1;
	const hl_option_t *opts = p ? p->options : hl_core_options;
	if (!markdown) {
		hl_conf_describe(opts, out);
		return 0;
	}
	fprintf(out, "| option | default | accepts | what it does |\n| --- | --- | --- | --- |\n");
	hl_conf_markdown(opts, out);
	return 0;
}

int hl_policy_options(const char *name, FILE *out)
{
	const hl_policy_t *p = hl_policy_find(name);
	if (!p)
		return -1;
	hl_conf_describe(p->options, out);
	return 0;
}
