/**
 * @file host.h
 * @brief A policy that routes some requests to another policy built in the
 *        same heap (pools sends what pymalloc sends to libc to its
 *        `fallback`): the guest, found by name in the registry, built from
 *        its own options, and every hook forwarded to it.
 *
 *   host policy ── small requests ──► its own structures
 *        │ the rest, and pointers it does not own
 *        ▼
 *   hl_guest_t ── guest->policy->hook(guest->state, t, ...) ──► guest policy
 *
 * The host names two options of its table: one TEXT option holding the
 * guest's name (its default is the guest to take; when that one is not
 * compiled in and the option was not given, the first policy of the
 * registry that may serve) and one TEXT option holding the guest's own
 * configuration string, with ';' for ',' (conf.h): e.g.
 * `fallback:bins,fallback_conf:tcache_count=0;arena_max=1`.
 *
 * Which policies may be a guest (hl_guest_refusal): any compiled-in one
 * but the host itself (it would route to itself) and region allocators
 * (a table with `reset`: their free never makes memory reusable, and the
 * guest gets every large block a long-running program frees).
 *
 * The guest gets the thread record the host was given, unchanged: a host
 * keeps no policy_tls of its own (policy.h).  Its fatal lines name the
 * guest (hl_fatal prints the table the guest passes).
 */
#ifndef HL_HOST_H
#define HL_HOST_H

#include "policy.h"

/** A hosted policy instance (set once by hl_guest_init). */
typedef struct hl_guest {
	const hl_policy_t *policy;  /**< the guest's table */
	void *state;                /**< its state, in the host's heap */
} hl_guest_t;

/** Why @p p may not be @p host's guest, or NULL when it may. */
const char *hl_guest_refusal(const hl_policy_t *p, const hl_policy_t *host);
/** Writes the compiled-in policies that may be @p host's guest, ", "
 *  between them, into @p buf. */
void hl_guest_choices(const hl_policy_t *host, char *buf, size_t len);
/** Builds the guest inside heap @p h from @p host's options @p conf: the
 *  name in TEXT option @p name_key, the guest's options in TEXT option
 *  @p conf_key.  0, or -1 after hl_set_error ("<host>: <name_key> ...",
 *  an unknown or refused name listing the choices). */
int hl_guest_init(hl_guest_t *g, hl_heap_t *h, const hl_policy_t *host, const hl_conf_t *conf,
		  const char *name_key, const char *conf_key);

/** The guest's name (its table's). */
static inline const char *hl_guest_name(const hl_guest_t *g) { return g->policy->name; }
static inline void *hl_guest_malloc(hl_guest_t *g, hl_thread_t *t, size_t n)
{
	return g->policy->malloc(g->state, t, n);
}
static inline void hl_guest_free(hl_guest_t *g, hl_thread_t *t, void *p)
{
	g->policy->free(g->state, t, p);
}
static inline void *hl_guest_memalign(hl_guest_t *g, hl_thread_t *t, size_t align, size_t n)
{
	return g->policy->memalign(g->state, t, align, n);
}
static inline size_t hl_guest_usable_size(hl_guest_t *g, const void *p)
{
	return g->policy->usable_size(g->state, p);
}
/* calloc's question (hl_policy_t.fresh_zero) put to the guest; false when
 * it has no answer (the block is then cleared). */
static inline bool hl_guest_fresh_zero(hl_guest_t *g, const void *p)
{
	return g->policy->fresh_zero && g->policy->fresh_zero(g->state, p);
}
static inline bool hl_guest_owns(hl_guest_t *g, const void *p)
{
	return g->policy->owns(g->state, p);
}
/** The guest's realloc; a guest without one has its block moved (within
 *  the guest: a guest's block stays the guest's). */
void *hl_guest_realloc(hl_guest_t *g, hl_thread_t *t, void *p, size_t n);

/* The hooks a host forwards as they are (each a no-op when the guest has
 * none). */
void hl_guest_destroy(hl_guest_t *g);
size_t hl_guest_trim(hl_guest_t *g, size_t pad);
void hl_guest_thread_exit(hl_guest_t *g, hl_thread_t *t);
void hl_guest_fork_prepare(hl_guest_t *g);
void hl_guest_fork_parent(hl_guest_t *g);
void hl_guest_fork_child(hl_guest_t *g);

/* What the host adds to its own checker, walker, statistics and picture. */
/** The guest's checker's problems, reported in @p r. */
int hl_guest_check(hl_guest_t *g, hl_report_t *r);
/** Visits the guest's blocks. */
int hl_guest_walk(hl_guest_t *g, hl_walk_fn fn, void *arg);
/** The guest's statistics as object @p key: {"policy": name, ...}. */
void hl_guest_stats(hl_guest_t *g, hl_statw_t *w, const char *key);
/** The guest's picture in a cluster labelled @p label. */
void hl_guest_snapshot(hl_guest_t *g, hl_dot_t *d, const char *label);

#endif
