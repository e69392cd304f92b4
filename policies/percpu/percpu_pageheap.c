/*
 * percpu_pageheap.c — the back end: spans of 8 KiB pages, as TCMalloc's
 * (legacy, non-hugepage) PageHeap keeps them, and with hugepage:on a
 * model of its hugepage-aware allocator's placement and release
 * (percpu_hugepage.c says what is modelled and what is not).
 *
 * Free spans sit in lists by length (1 .. 128 pages, and one list of
 * longer ones), twice: normal (resident) and returned (purged with
 * MADV_DONTNEED: still mapped read/write, no RSS).  An allocation looks at
 * the lists from its length up, normal before returned at each length,
 * then best fit among the long ones; the span found is split and the rest
 * goes back.  A freed span merges at once with a free neighbour of the
 * same kind (normal with normal, returned with returned) in the same
 * region.  With nothing free the heap grows: the last region commits at
 * least 1 MiB more at its frontier, or a new region of at least 1 GiB is
 * reserved (PROT_NONE) from the page source, as TCMalloc reserves address
 * space 1 GiB at a time (google/tcmalloc, tcmalloc/system-alloc.cc,
 * kMinMmapAlloc; not installed here, so read, not measured).  With
 * front:thread the first region is instead a break, mapped only as far as
 * it has grown, as gperftools grows its heap with sbrk: the process's
 * address space then holds what the heap uses.
 *
 * Release: pc_ph_release_locked purges normal spans, longest lists first,
 * until enough bytes are released; hl_trim releases everything, and with
 * release_rate > 0 the free path pays a debt that grows by release_rate
 * bytes per second of the monotonic clock (TCMalloc's background thread
 * calls ReleaseMemoryToSystem once a second; here the heap's own activity
 * drives it, looking at the clock every 64 spans freed).
 *
 * hugepage:on changes two choices and nothing else.  A span of up to 128
 * pages (half a hugepage) without alignment goes into the free run, inside
 * one 2 MiB hugepage, whose hugepage has the most pages in use (densest
 * first); the heap grows at most twice for it, since 1 MiB at the
 * frontier may end in two runs too short.  Release takes the free runs of
 * the least used hugepages first, wholly free hugepages before any in
 * use, and releases only that run of a longer free span.  Every span's
 * pages are counted in the hugepages they cover, in either mode, so the
 * statistics compare the two.
 */
#include "config.h"
#include <string.h>
#include "percpu.h"

static pc_list_t *pc_ph_list(pc_pageheap_t *ph, const pc_span_t *s)
{
	size_t i = pc_ph_list_index(s->npages);
	return s->state == PC_SPAN_RETURNED ? &ph->returned[i] : &ph->normal[i];
}

static size_t *pc_ph_pages_of(pc_pageheap_t *ph, const pc_span_t *s)
{
	return s->state == PC_SPAN_RETURNED ? &ph->returned_pages : &ph->free_pages;
}

/* Puts free span @s (state FREE or RETURNED) on its list. */
static void pc_ph_insert(pc_pageheap_t *ph, pc_span_t *s)
{
	pc_pagemap_set(&ph->map, s->start, 1, s, 0);
	pc_pagemap_set(&ph->map, s->start + (s->npages - 1) * PC_PAGE, 1, s, 0);
	s->bucket = PC_NO_LIST;
	pc_list_push(pc_ph_list(ph, s), s);
	*pc_ph_pages_of(ph, s) += s->npages;
}

static void pc_ph_unlink(pc_pageheap_t *ph, pc_span_t *s)
{
	pc_list_remove(pc_ph_list(ph, s), s);
	*pc_ph_pages_of(ph, s) -= s->npages;
}

/* The free span of the same kind and region right before or after @s. */
static pc_span_t *pc_ph_neighbour(pc_pageheap_t *ph, const pc_span_t *s, bool after)
{
	const pc_region_t *r = &ph->regions[s->region];
	uintptr_t at = after ? s->start + s->npages * PC_PAGE : s->start - PC_PAGE;
	if (at < r->base || at >= r->base + r->frontier)
		return NULL;
	pc_span_t *n = pc_pagemap_get(&ph->map, at);
	if (!n || n->state != s->state || n->region != s->region)
		return NULL;
	uintptr_t end = n->start + n->npages * PC_PAGE;
	return (after ? n->start == at : end == s->start) ? n : NULL;
}

/* Merges free span @s with its free neighbours, then lists it. */
static void pc_ph_merge_insert(pc_pageheap_t *ph, pc_span_t *s)
{
	pc_span_t *n;
	if ((n = pc_ph_neighbour(ph, s, false))) {
		pc_ph_unlink(ph, n);
		s->start = n->start;
		s->npages += n->npages;
		hl_meta_free(&ph->spans, n);
	}
	if ((n = pc_ph_neighbour(ph, s, true))) {
		pc_ph_unlink(ph, n);
		s->npages += n->npages;
		hl_meta_free(&ph->spans, n);
	}
	pc_ph_insert(ph, s);
}

void pc_ph_init(pc_pageheap_t *ph, hl_heap_t *h, size_t release_rate, bool hugepage, bool sbrk)
{
	hl_os_t *os = hl_heap_os(h);
	ph->hugepage = hugepage;
	ph->sbrk = sbrk;
	pthread_mutex_init(&ph->lock, NULL);
	ph->heap = h;
	ph->os = os;
	hl_meta_init(&ph->spans, os, sizeof(pc_span_t));
	ph->release_rate = release_rate;
	ph->release_clock_ns = pc_now_ns(ph);
	ph->release_tick = 64;
	pc_pagemap_init(&ph->map, os);
}

/* The first region as gperftools grows its heap, with sbrk: a break of
 * PC_REGION bytes, mapped only as far as it has grown.  Its base is
 * GiB-aligned (core/os.c), so it holds whole hugepages; a break mapped
 * whole at once (no free slot) is given back and the region reserved. */
static void *pc_ph_brk_region(pc_pageheap_t *ph, size_t need)
{
	if (!ph->sbrk || ph->nregions || need > PC_REGION || hl_brk_init(ph->os, &ph->brk, PC_REGION) < 0)
		return NULL;
	if (ph->brk.grows && (uintptr_t)ph->brk.base % PC_HUGE == 0)
		return ph->brk.base;
	hl_os_release(ph->os, ph->brk.base, 0);
	ph->brk.base = NULL;
	return NULL;
}

/* Commits @p grow bytes at region @p r's frontier: by moving the break
 * for a break's region, else from what the region reserved. */
static int pc_ph_commit(pc_pageheap_t *ph, pc_region_t *r, size_t grow)
{
	if (ph->brk.base && r->base == (uintptr_t)ph->brk.base)
		return hl_brk_move(ph->os, &ph->brk, (intptr_t)grow) ? 0 : -1;
	return hl_os_commit(ph->os, (void *)(r->base + r->frontier), grow);
}

/* Commits at least @bytes more (a page multiple) and lists them free. */
static int pc_ph_grow(pc_pageheap_t *ph, size_t bytes)
{
	pc_region_t *r = ph->nregions ? &ph->regions[ph->nregions - 1] : NULL;
	if (!r || r->size - r->frontier < bytes) {
		if (ph->nregions == PC_MAX_REGIONS || bytes > ((size_t)1 << 46))
			return -1;
		size_t need = hl_align_up(bytes, PC_HUGE);
		size_t size = bytes < PC_REGION ? PC_REGION : need;
		void *base = pc_ph_brk_region(ph, size);
		if (!base)
			base = hl_os_reserve(ph->os, size, PC_HUGE, false);
		/* refused (RLIMIT_AS, a container's limit): halve the
		 * reservation down to what the request needs; a smaller
		 * region holds whole hugepages all the same */
		while (!base && size > need) {
			size = size / 2 > need ? hl_align_up(size / 2, PC_HUGE) : need;
			base = hl_os_reserve(ph->os, size, PC_HUGE, false);
		}
		if (!base)
			return -1;
		r = &ph->regions[ph->nregions];
		*r = (pc_region_t){ .base = (uintptr_t)base, .size = size };
		if (pc_hp_region_init(r, ph->os) < 0)
			return -1;
		ph->nregions++;
	}
	size_t grow = bytes < PC_GROW ? PC_GROW : bytes;
	if (grow > r->size - r->frontier)
		grow = r->size - r->frontier;
	if (pc_ph_commit(ph, r, grow) < 0)
		return -1;
	pc_span_t *s = hl_meta_alloc(&ph->spans);
	if (!s)
		return -1;
	s->start = r->base + r->frontier;
	s->npages = grow / PC_PAGE;
	s->state = PC_SPAN_FREE;
	s->region = (uint16_t)(r - ph->regions);
	r->frontier += grow;
	pc_ph_merge_insert(ph, s);
	return 0;
}

/* Best fit among the long spans of list @l, lowest address on a tie. */
static pc_span_t *pc_ph_best_fit(pc_list_t *l, size_t npages, pc_span_t *best)
{
	for (pc_span_t *s = l->head; s; s = s->next)
		if (s->npages >= npages && (!best || s->npages < best->npages ||
					    (s->npages == best->npages && s->start < best->start)))
			best = s;
	return best;
}

static pc_span_t *pc_ph_find(pc_pageheap_t *ph, size_t npages)
{
	for (size_t len = npages; len <= PC_PH_LISTS; len++) {
		if (ph->normal[len].head)
			return ph->normal[len].head;
		if (ph->returned[len].head)
			return ph->returned[len].head;
	}
	return pc_ph_best_fit(&ph->returned[0], npages, pc_ph_best_fit(&ph->normal[0], npages, NULL));
}

/* Cuts the first @npages pages off free span @s (unlinked); the rest,
 * when there is one, goes back to the lists. */
static int pc_ph_split(pc_pageheap_t *ph, pc_span_t *s, size_t npages)
{
	if (s->npages == npages)
		return 0;
	pc_span_t *rest = hl_meta_alloc(&ph->spans);
	if (!rest)
		return -1;
	rest->start = s->start + npages * PC_PAGE;
	rest->npages = s->npages - npages;
	rest->state = s->state;
	rest->region = s->region;
	s->npages = npages;
	pc_ph_insert(ph, rest);
	return 0;
}

/* Takes pages [@head, @head + @npages) of free span @s off the lists;
 * the pages before and after them go back. */
static pc_span_t *pc_ph_take(pc_pageheap_t *ph, pc_span_t *s, size_t head, size_t npages)
{
	pc_ph_unlink(ph, s);
	if (head) {
		pc_span_t *h = s;
		if (pc_ph_split(ph, h, head) < 0) {
			pc_ph_insert(ph, s);
			return NULL;
		}
		s = pc_pagemap_get(&ph->map, h->start + head * PC_PAGE);
		pc_ph_insert(ph, h);
		pc_ph_unlink(ph, s);
	}
	if (pc_ph_split(ph, s, npages) < 0) {
		pc_ph_merge_insert(ph, s);
		return NULL;
	}
	return s;
}

/* hugepage:on: the free run, inside one hugepage, of the most used
 * hugepage that has @npages free pages in a row. */
static pc_span_t *pc_ph_find_densest(pc_pageheap_t *ph, size_t npages, size_t *head)
{
	pc_hp_pick_t pick = { 0 };
	for (size_t len = 0; len <= PC_PH_LISTS; len++) {
		if (len && len < npages)
			continue;
		for (pc_span_t *s = ph->normal[len].head; s; s = s->next)
			pc_hp_consider(ph, s, npages, PC_HP_DENSEST, &pick);
		for (pc_span_t *s = ph->returned[len].head; s; s = s->next)
			pc_hp_consider(ph, s, npages, PC_HP_DENSEST, &pick);
	}
	if (pick.span)
		*head = (pick.at - pick.span->start) / PC_PAGE;
	return pick.span;
}

/* The free span a request goes to and the pages to skip at its head. */
static pc_span_t *pc_ph_place(pc_pageheap_t *ph, size_t npages, size_t align_pages, size_t *head)
{
	if (ph->hugepage && align_pages <= 1 && npages <= PC_HUGE_PAGES / 2)
		return pc_ph_find_densest(ph, npages, head);
	pc_span_t *s = pc_ph_find(ph, npages + (align_pages > 1 ? align_pages - 1 : 0));
	if (s && align_pages > 1)
		*head = (size_t)((hl_ptr_align_up(s->start, align_pages * PC_PAGE) - s->start) / PC_PAGE);
	return s;
}

/* Span @s, just taken off the free lists, in use as @state (small: of
 * class @cls, which every page's entry gets). */
static void pc_ph_use(pc_pageheap_t *ph, pc_span_t *s, enum pc_span_state state, unsigned cls)
{
	pc_region_t *r = &ph->regions[s->region];
	if (s->state == PC_SPAN_RETURNED) {
		ph->reused_returned_bytes += s->npages * PC_PAGE;
		pc_hp_add(r, s->start, s->npages, PC_HP_RELEASED, -1);
	}
	pc_hp_add(r, s->start, s->npages, PC_HP_USED, +1);
	s->state = (uint8_t)state;
	s->bucket = PC_NO_LIST;
	if (state == PC_SPAN_SMALL) {
		pc_pagemap_set(&ph->map, s->start, s->npages, s, cls);
		ph->small_spans++;
	} else {
		pc_pagemap_set(&ph->map, s->start, 1, s, 0);
		pc_pagemap_set(&ph->map, s->start + (s->npages - 1) * PC_PAGE, 1, s, 0);
		ph->large_spans++;
		ph->large_pages += s->npages;
	}
}

pc_span_t *pc_ph_alloc(pc_pageheap_t *ph, size_t npages, size_t align_pages, enum pc_span_state state,
		       unsigned cls)
{
	size_t need = npages + (align_pages > 1 ? align_pages - 1 : 0), head = 0;
	pthread_mutex_lock(&ph->lock);
	pc_span_t *s = pc_ph_place(ph, npages, align_pages, &head);
	for (int grown = 0; !s && grown < 2 && pc_ph_grow(ph, need * PC_PAGE) == 0; grown++)
		s = pc_ph_place(ph, npages, align_pages, &head);
	if (s)
		s = pc_ph_take(ph, s, head, npages);
	if (s)
		pc_ph_use(ph, s, state, cls);
	pthread_mutex_unlock(&ph->lock);
	return s;
}


/* release_rate: the debt grows with the clock; paid when a page is owed. */
static void pc_ph_release_tick(pc_pageheap_t *ph)
{
	if (!ph->release_rate || --ph->release_tick)
		return;
	ph->release_tick = 64;
	uint64_t now = pc_now_ns(ph);
	ph->release_debt += (double)(now - ph->release_clock_ns) * 1e-9 * (double)ph->release_rate;
	ph->release_clock_ns = now;
	if (ph->release_debt > (double)ph->free_pages * PC_PAGE)
		ph->release_debt = (double)ph->free_pages * PC_PAGE; /* no credit for idle time */
	if (ph->release_debt >= (double)PC_PAGE) {
		size_t done = pc_ph_release_locked(ph, (size_t)ph->release_debt);
		ph->release_debt = done >= ph->release_debt ? 0 : ph->release_debt - (double)done;
	}
}

void pc_ph_free_locked(pc_pageheap_t *ph, pc_span_t *s)
{
	if (s->state == PC_SPAN_SMALL) {
		/* its pages keep no class: a stale one beside a span record
		 * used again could let an invalid free pass free's hit */
		pc_pagemap_set(&ph->map, s->start, s->npages, s, 0);
		ph->small_spans--;
	} else {
		ph->large_spans--;
		ph->large_pages -= s->npages;
	}
	pc_hp_add(&ph->regions[s->region], s->start, s->npages, PC_HP_USED, -1);
	s->state = PC_SPAN_FREE;
	s->cls = 0;
	s->nobjs = s->allocated = 0;
	pc_ph_merge_insert(ph, s);
	pc_ph_release_tick(ph);
}

void pc_ph_free(pc_pageheap_t *ph, pc_span_t *s)
{
	pthread_mutex_lock(&ph->lock);
	pc_ph_free_locked(ph, s);
	pthread_mutex_unlock(&ph->lock);
}

/* Purges normal span @s, already off its list, and lists it as returned. */
static size_t pc_ph_purge(pc_pageheap_t *ph, pc_span_t *s)
{
	size_t bytes = s->npages * PC_PAGE;
	hl_os_purge(ph->os, (void *)s->start, bytes);
	pc_hp_add(&ph->regions[s->region], s->start, s->npages, PC_HP_RELEASED, +1);
	s->state = PC_SPAN_RETURNED;
	ph->released_bytes += bytes;
	pc_ph_merge_insert(ph, s);
	return bytes;
}

/* hugepage:on: the free runs of the least used hugepages first. */
static size_t pc_ph_release_emptiest(pc_pageheap_t *ph, size_t bytes)
{
	size_t done = 0;
	while (done < bytes) {
		pc_hp_pick_t pick = { 0 };
		for (size_t len = 0; len <= PC_PH_LISTS; len++)
			for (pc_span_t *s = ph->normal[len].head; s; s = s->next)
				pc_hp_consider(ph, s, 1, PC_HP_EMPTIEST, &pick);
		if (!pick.span)
			break;
		pc_span_t *run = pc_ph_take(ph, pick.span, (pick.at - pick.span->start) / PC_PAGE, pick.npages);
		if (!run)
			break;
		done += pc_ph_purge(ph, run);
	}
	return done;
}

size_t pc_ph_release_locked(pc_pageheap_t *ph, size_t bytes)
{
	if (ph->hugepage)
		return pc_ph_release_emptiest(ph, bytes);
	size_t done = 0;
	for (size_t i = 0; i <= PC_PH_LISTS && done < bytes; i++) {
		pc_list_t *l = &ph->normal[i ? PC_PH_LISTS + 1 - i : 0];
		while (l->head && done < bytes) {
			pc_span_t *s = l->head;
			pc_ph_unlink(ph, s);
			done += pc_ph_purge(ph, s);
		}
	}
	return done;
}

void pc_ph_fork_child(pc_pageheap_t *ph)
{
	pthread_mutex_init(&ph->lock, NULL);
	hl_meta_fork_child(&ph->spans);
}
