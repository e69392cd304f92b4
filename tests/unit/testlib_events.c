/* What the Check suites share to test decision events (testlib_events.h). */
#include "testlib_events.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_keep(hl_heap_t *h, const hl_event_t *e, void *arg)
{
	tl_tally_t *t = arg;
	(void)h;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->ev = realloc(t->ev, t->cap * sizeof *t->ev);
		ck_assert_ptr_nonnull(t->ev);
	}
	t->ev[t->n++] = *e;
}

double tl_n_of(const tl_tally_t *t, int kind, const char *prefix)
{
	double n = 0;
	for (size_t i = 0; i < t->n; i++)
		if ((kind < 0 || (int)t->ev[i].kind == kind) &&
		    (!prefix || !strncmp(t->ev[i].what, prefix, strlen(prefix))))
			n++;
	return n;
}

int tl_heard(const tl_tally_t *t, size_t from, int kind, const char *what)
{
	for (size_t i = from; i < t->n; i++)
		if (!what || ((int)t->ev[i].kind == kind && !strcmp(t->ev[i].what, what)))
			return 1;
	return 0;
}

static const char *const os_keys[] = {
	"os.mmap_calls", "os.munmap_calls", "os.madvise_dontneed_calls", "os.madvise_free_calls",
	"os.mprotect_calls", "os.mincore_calls", "os.brk_calls", "os.mremap_calls", NULL,
};

void tl_take_snap(hl_heap_t *h, const char *const *keys, tl_snap_t *s)
{
	s->keys = keys;
	for (int i = 0; keys[i]; i++)
		s->v[i] = tl_stat(h, keys[i]);
}

double tl_grew(const tl_snap_t *a, const tl_snap_t *b, const char *key)
{
	for (int i = 0; a->keys[i]; i++)
		if (!strcmp(a->keys[i], key))
			return b->v[i] - a->v[i];
	ck_abort_msg("no counter %s in the snap", key);
	return 0;
}

static void expect_os_events(const tl_tally_t *t, const tl_snap_t *a, const tl_snap_t *b)
{
	for (int c = 0; os_keys[c]; c++) {
		if (strstr(os_keys[c], "mincore"))
			continue;
		double events = 0;
		for (size_t i = 0; i < t->n; i++)
			events += t->ev[i].kind == HL_EV_OS && t->ev[i].index == c;
		ck_assert_msg(events == tl_grew(a, b, os_keys[c]), "%s grew by %.0f, %.0f os events", os_keys[c],
			      tl_grew(a, b, os_keys[c]), events);
	}
}

hl_heap_t *tl_run_begin(tl_events_run_t *r, const char *policy, const char *conf, const char *const *keys)
{
	memset(r, 0, sizeof *r);
	r->h = tl_heap(policy, conf);
	/* a first statistics read may make this thread's record (a hosting
	 * policy asks its guest's statistics for it): one metadata mapping,
	 * before listening */
	double ignored;
	hl_stat(r->h, "policy_stats", &ignored);
	ck_assert_int_eq(hl_set_listener(r->h, tl_keep, &r->t), 0);
	tl_take_snap(r->h, keys, &r->a);
	tl_take_snap(r->h, os_keys, &r->oa);
	return r->h;
}

void tl_run_measure(tl_events_run_t *r)
{
	tl_take_snap(r->h, r->a.keys, &r->b);
	tl_take_snap(r->h, os_keys, &r->ob);
	expect_os_events(&r->t, &r->oa, &r->ob);
}

void tl_expect_count(const tl_events_run_t *r, int kind, const char *what, const char *key)
{
	double events = tl_n_of(&r->t, kind, what), counted = tl_grew(&r->a, &r->b, key);
	ck_assert_msg(events == counted, "%s: %.0f %s events \"%s\", %s grew by %.0f", hl_heap_policy(r->h), events,
		      kind < 0 ? "any" : hl_event_kind_name(kind), what ? what : "", key, counted);
}

void tl_expect_paths(const tl_events_run_t *r, const int *kinds, const char *const *whats)
{
	for (int i = 0; kinds[i] >= 0; i++)
		ck_assert_msg(tl_n_of(&r->t, kinds[i], whats[i]) > 0, "%s: no %s event \"%s\"", hl_heap_policy(r->h),
			      hl_event_kind_name(kinds[i]), whats[i] ? whats[i] : "");
}

void tl_run_end(tl_events_run_t *r)
{
	tl_check_clean(r->h);
	hl_heap_destroy(r->h);
	free(r->t.ev);
}

void tl_holes_workload(hl_heap_t *h)
{
	enum { N = 64 };
	void *p[N];
	for (int i = 0; i < N; i++)
		p[i] = hl_malloc(h, 32 + (size_t)(i % 7) * 48);
	for (int i = 0; i < N; i += 3)
		hl_free(h, p[i]);
	for (int i = 0; i < N; i += 3)
		p[i] = hl_malloc(h, 16 + (size_t)(i % 5) * 40);
	p[0] = hl_realloc(h, p[0], 20000);
	for (int i = N - 1; i >= 0; i--)
		hl_free(h, p[i]);
	hl_trim(h, 0);
}

void tl_fast_path_heard(const char *name, const char *conf, const char *hit, const char *put)
{
	hl_heap_t *h = tl_heap(name, conf);
	tl_tally_t t = { 0 };
	const char *c = conf ? conf : "";
	hl_free(h, hl_malloc(h, 48));      /* warm: the next pair is a fast one */
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(hl_set_listener(h, tl_keep, &t), 0);
		size_t before = t.n;
		void *p = hl_malloc(h, 48);
		ck_assert_msg(tl_heard(&t, before, HL_EV_CACHE_HIT, hit), "%s %s, round %d: the fast malloc was not heard%s%s",
			      name, c, round, hit ? " as " : "", hit ? hit : "");
		before = t.n;
		hl_free(h, p);
		ck_assert_msg(tl_heard(&t, before, HL_EV_CACHE_PUT, put), "%s %s, round %d: the fast free was not heard%s%s",
			      name, c, round, put ? " as " : "", put ? put : "");
		ck_assert_int_eq(hl_set_listener(h, NULL, NULL), 0);
		before = t.n;
		hl_free(h, hl_malloc(h, 48));
		ck_assert_msg(t.n == before, "%s %s, round %d: a removed listener was called", name, c, round);
	}
	ck_assert_int_eq(hl_events_keep(h, true), 0);   /* keeping alone switches too */
	hl_event_t ev[16];
	hl_events_take(h, ev, 16);
	void *p = hl_malloc(h, 48);
	ck_assert_msg(hl_events_take(h, ev, 16) > 0, "%s %s: the fast malloc kept no event", name, c);
	hl_free(h, p);
	ck_assert_msg(hl_events_take(h, ev, 16) > 0, "%s %s: the fast free kept no event", name, c);
	hl_heap_destroy(h);
	free(t.ev);
}
