/* A policy hosting another one in its heap (see host.h). */
#include "config.h"
#include <string.h>
#include "host.h"

const char *hl_guest_refusal(const hl_policy_t *p, const hl_policy_t *host)
{
	if (p == host)
		return "the host itself (it would route requests to itself)";
	if (p->reset)
		return "a region allocator (its free makes nothing reusable)";
	return NULL;
}

void hl_guest_choices(const hl_policy_t *host, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < hl_policy_count(); i++) {
		const hl_policy_t *p = hl_policy_find(hl_policy_name(i));
		if (hl_guest_refusal(p, host))
			continue;
		int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", p->name);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
}

/* The guest named in the host's option, or when not given and its default
 * is not compiled in, the first policy of the registry that may serve. */
static const hl_policy_t *pick(const hl_policy_t *host, const hl_conf_t *conf, const char *key)
{
	const char *name = hl_conf_text(conf, key);
	const hl_policy_t *p = *name ? hl_policy_find(name) : NULL;
	if (p || hl_conf_given(conf, key))
		return p && !hl_guest_refusal(p, host) ? p : NULL;
	for (size_t i = 0; i < hl_policy_count(); i++) {
		p = hl_policy_find(hl_policy_name(i));
		if (!hl_guest_refusal(p, host))
			return p;
	}
	return NULL;
}

int hl_guest_init(hl_guest_t *g, hl_heap_t *h, const hl_policy_t *host, const hl_conf_t *conf,
		  const char *name_key, const char *conf_key)
{
	g->policy = pick(host, conf, name_key);
	if (!g->policy) {
		char choices[256];
		hl_guest_choices(host, choices, sizeof choices);
		const char *name = hl_conf_text(conf, name_key);
		const hl_policy_t *p = hl_policy_find(name);
		const char *why = p ? hl_guest_refusal(p, host) : "not a compiled-in policy";
		char shown[96];
		hl_set_error("%s: %s '%s' cannot serve: %s; choices: %s", host->name, name_key,
			     hl_printable(name, strlen(name), shown, sizeof shown), why,
			     *choices ? choices : "none compiled in");
		return -1;
	}
	hl_conf_t gconf;
	char err[256];
	if (hl_conf_parse(&gconf, g->policy->options, hl_conf_text(conf, conf_key), err, sizeof err) != 0) {
		hl_set_error("%s: %s (for %s): %s", host->name, conf_key, g->policy->name, err);
		return -1;
	}
	g->state = g->policy->init(h, &gconf);
	return g->state ? 0 : -1;
}

void *hl_guest_realloc(hl_guest_t *g, hl_thread_t *t, void *p, size_t n)
{
	if (g->policy->realloc)
		return g->policy->realloc(g->state, t, p, n);
	return hl_realloc_move(g->state, t, p, hl_guest_usable_size(g, p), n, g->policy->malloc, g->policy->free);
}

void hl_guest_destroy(hl_guest_t *g)
{
	if (g->policy->destroy)
		g->policy->destroy(g->state);
}

size_t hl_guest_trim(hl_guest_t *g, size_t pad)
{
	return g->policy->trim ? g->policy->trim(g->state, pad) : 0;
}

void hl_guest_thread_exit(hl_guest_t *g, hl_thread_t *t)
{
	if (g->policy->thread_exit)
		g->policy->thread_exit(g->state, t);
}

void hl_guest_fork_prepare(hl_guest_t *g)
{
	if (g->policy->fork_prepare)
		g->policy->fork_prepare(g->state);
}

void hl_guest_fork_parent(hl_guest_t *g)
{
	if (g->policy->fork_parent)
		g->policy->fork_parent(g->state);
}

void hl_guest_fork_child(hl_guest_t *g)
{
	if (g->policy->fork_child)
		g->policy->fork_child(g->state);
}

int hl_guest_check(hl_guest_t *g, hl_report_t *r)
{
	return g->policy->check(g->state, r);
}

int hl_guest_walk(hl_guest_t *g, hl_walk_fn fn, void *arg)
{
	return g->policy->walk(g->state, fn, arg);
}

void hl_guest_stats(hl_guest_t *g, hl_statw_t *w, const char *key)
{
	hl_statw_object(w, key);
	hl_statw_str(w, "policy", g->policy->name);
	g->policy->stats(g->state, w);
	hl_statw_end(w);
}

void hl_guest_snapshot(hl_guest_t *g, hl_dot_t *d, const char *label)
{
	hl_dot_cluster_begin(d, label);
	g->policy->snapshot(g->state, d);
	hl_dot_cluster_end(d);
}
