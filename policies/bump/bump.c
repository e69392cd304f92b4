/*
 * bump: a region allocator.
 *
 * What it models: the arenas of compilers, parsers and request-scoped web
 * servers (obstacks, APR pools, Rust's bumpalo): allocation is a pointer
 * increment, nothing is ever freed one block at a time, and the whole
 * region is dropped at once when the work it served is done (hl_reset).
 *
 * Overhead and alignment: each block carries a 16-byte header (its size,
 * so hl_usable_size can answer and the checker can walk the region) and is
 * rounded up to 16 bytes.  Every payload is 16-byte aligned; memalign pads
 * with a filler record.
 *
 * Cost: malloc O(1) (a bounds check, an add, and now and then a commit of
 * the next `commit_step` bytes); free O(1) and does nothing but count;
 * reset O(regions).
 *
 * Options: described once, in the option table below (bump_options); `heaplab
 * options bump` prints them, the book's options appendix is made from it.
 *
 * Left out on purpose: freeing single blocks (the book explains why a
 * region allocator refuses to), and any detection of double frees — there
 * is nothing a bump allocator remembers that could tell.
 *
 * Misuse detected (debug:off): a free of a pointer outside every region
 * (a stack or foreign address).  Double frees, interior pointers,
 * overflows and writes after free pass silently, as in any region
 * allocator.  With debug:on the core's guard (core/guard.c) catches all of
 * them, and the checker finds a block header written over.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "bits.h"
#include "bump.h"
#include "os.h"

enum { HEADER = 16, FILLER = 1 };

/** The record in front of every block (and of alignment padding). */
typedef struct bump_header {
	size_t size;    /**< payload bytes (a multiple of 16) */
	size_t flags;   /**< FILLER for padding before an aligned block */
} bump_header_t;

static const hl_option_t bump_options[] = {
	{ "region_size", HL_OPT_SIZE, "64M", 1 << 20, (int64_t)1 << 40, NULL,
	  "address space reserved per region" },
	{ "commit_step", HL_OPT_SIZE, "64K", 4096, 1 << 30, NULL,
	  "bytes made read/write at a time as the cursor advances" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL },
};

static inline hl_os_t *os_of(bump_state_t *s) { return hl_heap_os(s->heap); }
static inline bump_header_t *header_of(const void *p) { return (bump_header_t *)p - 1; }
static inline size_t desc_bytes(void) { return hl_align_up(sizeof(bump_region_t), 16); }

/* Reserves a region able to hold at least `need` bytes after its descriptor. */
static bump_region_t *new_region(bump_state_t *s, size_t need)
{
	hl_os_t *os = os_of(s);
	size_t size = s->region_size;
	if (need + desc_bytes() > size)
		size = hl_align_up(need + desc_bytes(), hl_os_page(os));
	char *base = hl_os_reserve(os, size, hl_os_page(os), false);
	if (!base)
		return NULL;
	if (hl_os_commit(os, base, hl_os_page(os)) < 0) {
		hl_os_release(os, base, 0);
		return NULL;
	}
	bump_region_t *r = (bump_region_t *)base;
	r->base = base;
	r->size = size;
	r->cursor = base + desc_bytes();
	r->limit = base + hl_os_page(os);
	r->prev = s->current;
	s->current = r;
	s->regions++;
	HL_EV(s->heap, HL_EV_NEW, s->regions == 1 ? "region (the first)" : "region (the current one is full)", s->regions - 1, size, base);
	return r;
}

/* Makes [cursor, cursor + n) committed; false when the region is full. */
static bool make_room(bump_state_t *s, bump_region_t *r, size_t n)
{
	if (n > (size_t)(r->base + r->size - r->cursor))
		return false;
	if (r->cursor + n <= r->limit)
		return true;
	size_t want = hl_align_up((size_t)(r->cursor + n - r->limit), s->commit_step);
	size_t room = (size_t)(r->base + r->size - r->limit);
	if (want > room)
		want = room;
	if (hl_os_commit(os_of(s), r->limit, want) < 0)
		return false;
	HL_EV(s->heap, HL_EV_GROW, "committed limit moved up", -1, want, r->limit);
	r->limit += want;
	return true;
}

/* Places a block of n payload bytes whose payload is aligned to align. */
static void *carve(bump_state_t *s, size_t n, size_t align)
{
	size_t payload = hl_align_up(n, 16);
	for (int attempt = 0; attempt < 2; attempt++) {
		bump_region_t *r = s->current;
		if (r) {
			uintptr_t at = hl_ptr_align_up((uintptr_t)r->cursor + HEADER, align);
			size_t gap = at - HEADER - (uintptr_t)r->cursor;
			if (make_room(s, r, gap + HEADER + payload)) {
				if (gap) {
					bump_header_t *f = (bump_header_t *)r->cursor;
					f->size = gap - HEADER;
					f->flags = FILLER;
				}
				bump_header_t *h = (bump_header_t *)(at - HEADER);
				h->size = payload;
				h->flags = 0;
				HL_EVENT(s->heap, HL_EV_BUMP, gap ? "cursor moved (an alignment filler first)" : "cursor moved", -1, gap + HEADER + payload, 0, r->cursor - r->base, (char *)at + payload - r->base, (void *)at);
				r->cursor = (char *)at + payload;
				s->handed_out += gap + HEADER + payload;
				s->blocks++;
				return (void *)at;
			}
			HL_EV(s->heap, HL_EV_REJECT, "current region: too little room left (wasted)", -1, (size_t)(r->base + r->size - r->cursor), r->cursor);
			s->waste += (size_t)(r->base + r->size - r->cursor);
		}
		if (!new_region(s, payload + HEADER + align))
			return NULL;
	}
	return NULL;
}

static void *bump_init(hl_heap_t *h, const hl_conf_t *conf)
{
	hl_os_t *os = hl_heap_os(h);
	bump_state_t *s = hl_policy_state_new(h, sizeof *s);
	if (!s)
		return NULL;
	s->heap = h;
	pthread_mutex_init(&s->lock, NULL);
	s->region_size = hl_align_up(hl_conf_size(conf, "region_size"), hl_os_page(os));
	s->commit_step = hl_align_up(hl_conf_size(conf, "commit_step"), hl_os_page(os));
	return s;
}

static void *bump_malloc(void *st, hl_thread_t *t, size_t n)
{
	bump_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	void *p = carve(s, n, 16);
	pthread_mutex_unlock(&s->lock);
	return p;
}

static void *bump_memalign(void *st, hl_thread_t *t, size_t align, size_t n)
{
	bump_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	void *p = carve(s, n, align);
	pthread_mutex_unlock(&s->lock);
	return p;
}

static bump_region_t *region_of(bump_state_t *s, const void *p)
{
	for (bump_region_t *r = s->current; r; r = r->prev)
		if ((const char *)p >= r->base + desc_bytes() && (const char *)p < r->cursor)
			return r;
	return NULL;
}

static bool bump_owns(void *st, const void *p)
{
	bump_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	bool mine = region_of(s, p) != NULL;
	pthread_mutex_unlock(&s->lock);
	return mine;
}

static void bump_free(void *st, hl_thread_t *t, void *p)
{
	bump_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	bool mine = region_of(s, p) != NULL && ((uintptr_t)p & 15) == 0;
	s->frees_ignored++;
	HL_EV(s->heap, HL_EV_LOOK, "free ignored: a bump allocator reuses nothing until reset", -1, 0, p);
	pthread_mutex_unlock(&s->lock);
	if (!mine)
		hl_fatal(&hl_policy_bump, "free of a pointer this heap does not own", p);
}

static size_t bump_usable_size(void *st, const void *p)
{
	return header_of(p)->size;
}

/* The last block can grow in place: only the cursor moves. */
static void *bump_realloc(void *st, hl_thread_t *t, void *p, size_t n)
{
	bump_state_t *s = st;
	bump_header_t *h = header_of(p);
	if (n <= h->size)
		return p;
	pthread_mutex_lock(&s->lock);
	bump_region_t *r = s->current;
	size_t grow = hl_align_up(n, 16) - h->size;
	if ((char *)p + h->size == r->cursor && make_room(s, r, grow)) {
		HL_EVENT(s->heap, HL_EV_BUMP, "cursor moved: the last block grows in place", -1, grow, 0, r->cursor - r->base, r->cursor + grow - r->base, p);
		r->cursor += grow;
		h->size += grow;
		s->handed_out += grow;
		pthread_mutex_unlock(&s->lock);
		return p;
	}
	void *q = carve(s, n, 16);
	pthread_mutex_unlock(&s->lock);
	if (q)
		memcpy(q, p, h->size);
	return q;
}

/* Gives back the committed pages above the cursor of every region. */
static size_t bump_trim(void *st, size_t pad)
{
	bump_state_t *s = st;
	hl_os_t *os = os_of(s);
	size_t given = 0;
	pthread_mutex_lock(&s->lock);
	for (bump_region_t *r = s->current; r; r = r->prev) {
		char *keep = (char *)hl_ptr_align_up((uintptr_t)r->cursor + pad, hl_os_page(os));
		if (keep < r->limit) {
			HL_EV(s->heap, HL_EV_SHRINK, "committed pages above the cursor", -1, (size_t)(r->limit - keep), keep);
			hl_os_decommit(os, keep, (size_t)(r->limit - keep));
			given += (size_t)(r->limit - keep);
			r->limit = keep;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return given;
}

/* Drops every block: older regions go back, the newest is emptied. */
static int bump_reset(void *st)
{
	bump_state_t *s = st;
	hl_os_t *os = os_of(s);
	pthread_mutex_lock(&s->lock);
	bump_region_t *r = s->current;
	while (r && r->prev) {
		bump_region_t *older = r->prev;
		hl_os_release(os, r->base, (size_t)(r->limit - r->base));
		r = older;
	}
	s->current = r;
	HL_EV(s->heap, HL_EV_RETIRE, "every block at once (reset): older regions released, the cursor back to the start", -1, s->handed_out, NULL);
	if (r) {
		r->cursor = r->base + desc_bytes();
		char *keep = r->base + hl_os_page(os);
		hl_os_decommit(os, keep, (size_t)(r->limit - keep));
		r->limit = keep;
		s->regions = 1;
	}
	s->blocks = s->handed_out = s->waste = 0;
	s->resets++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* ---- looking inside ------------------------------------------------------ */

static int walk_region(hl_heap_t *heap, const bump_region_t *r, hl_walk_fn fn, void *arg)
{
	size_t off = 0;
	int k = hl_os_locate(hl_heap_os(heap), r->base, &off);
	hl_block_t meta = { r->base, desc_bytes(), HL_BLOCK_META, k, 0 };
	if (fn(&meta, arg))
		return 1;
	for (const char *q = r->base + desc_bytes(); q < r->cursor;) {
		const bump_header_t *h = (const bump_header_t *)q;
		hl_block_t b = { q + HEADER, h->size, h->flags & FILLER ? HL_BLOCK_META : HL_BLOCK_LIVE, k, 0 };
		if (fn(&b, arg))
			return 1;
		q += HEADER + h->size;
	}
	hl_block_t top = { r->cursor, (size_t)(r->base + r->size - r->cursor), HL_BLOCK_TOP, k, 0 };
	return fn(&top, arg);
}

/* Regions oldest first, so region numbers rise down the picture. */
static int walk_from(bump_state_t *s, const bump_region_t *r, hl_walk_fn fn, void *arg)
{
	if (!r)
		return 0;
	if (walk_from(s, r->prev, fn, arg))
		return 1;
	return walk_region(s->heap, r, fn, arg);
}

static int bump_walk(void *st, hl_walk_fn fn, void *arg)
{
	bump_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	int rc = walk_from(s, s->current, fn, arg);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int bump_check(void *st, hl_report_t *rep)
{
	bump_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	size_t total = 0;
	for (bump_region_t *r = s->current; r; r = r->prev) {
		HL_EXPECT(rep, r->base + desc_bytes() <= r->cursor && r->cursor <= r->limit &&
			       r->limit <= r->base + r->size, "region %p: cursor or limit out of bounds", (void *)r->base);
		HL_EXPECT(rep, ((uintptr_t)r->cursor & 15) == 0, "region %p: cursor not 16-byte aligned", (void *)r->base);
		const char *q = r->base + desc_bytes();
		while (q < r->cursor) {
			const bump_header_t *h = (const bump_header_t *)q;
			if (!HL_EXPECT_AT(rep, (h->size & 15) == 0 && h->size <= (size_t)(r->cursor - q - HEADER),
					  q + HEADER, "block header at %p is damaged (size %zu)", (const void *)q, h->size))
				break;
			q += HEADER + h->size;
		}
		HL_EXPECT(rep, q == r->cursor, "region %p: blocks do not end at the cursor", (void *)r->base);
		total += (size_t)(r->cursor - r->base) - desc_bytes();
	}
	HL_EXPECT(rep, total == s->handed_out, "handed-out bytes %zu disagree with the regions' %zu", s->handed_out, total);
	pthread_mutex_unlock(&s->lock);
	return rep->problems;
}

static void bump_stats(void *st, hl_statw_t *w)
{
	bump_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	hl_statw_u64(w, "regions", s->regions);
	hl_statw_u64(w, "region_size", s->region_size);
	hl_statw_u64(w, "commit_step", s->commit_step);
	hl_statw_u64(w, "header_bytes", HEADER);
	hl_statw_u64(w, "blocks", s->blocks);
	hl_statw_u64(w, "handed_out_bytes", s->handed_out);
	hl_statw_u64(w, "cursor_offset", s->current ? (uint64_t)(s->current->cursor - s->current->base) : 0);
	hl_statw_u64(w, "frees_ignored", s->frees_ignored);
	hl_statw_u64(w, "resets", s->resets);
	hl_statw_u64(w, "waste_bytes", s->waste);
	pthread_mutex_unlock(&s->lock);
}

/* Drawing.  A small heap shows every block as a cell of its own (the
 * stepper outlines the one that changed).  A heap of more than FOLD_OVER
 * blocks folds, as the other policies fold their slabs and spans: a run
 * of RUN_AT or more blocks of one size becomes one cell "blocks of 16 B
 * ×62,481 (976 KiB)", and once a region has drawn REGION_CELLS cells,
 * its remaining blocks become one cell that says how many there are,
 * their sizes and their bytes.  The region's descriptor, padding and the
 * cursor's cell are always drawn.  Full regions alike (every block of
 * one size, the same count, the same unused tail), one after the other,
 * are drawn once with a count, as slab draws its alike slabs: "× 7 alike
 * regions, region#2 to region#8", the region drawn once under "each";
 * the current region (the cursor's) is always drawn on its own. */
enum { FOLD_OVER = 256, RUN_AT = 4, REGION_CELLS = 64 };

typedef struct draw_run {
	unsigned long count;
	size_t size, bytes, min, max;  /**< one size (a run), or min..max (the rest) */
	const void *addr[RUN_AT - 1];  /**< a short run's blocks, drawn one by one */
} draw_run_t;

/* What a full region holds when every block in it has one size. */
typedef struct region_shape {
	size_t size;          /**< each block's payload */
	unsigned long count;  /**< its blocks */
	size_t top;           /**< the unused tail */
} region_shape_t;

/* Regions alike, one after the other, not drawn yet. */
typedef struct alike {
	const bump_region_t *first;
	region_shape_t shape;
	unsigned long n;
	int from, to;         /**< their region numbers (page source) */
} alike_t;

typedef struct draw {
	hl_dot_t *d;
	const bump_state_t *s;
	int region;
	int strips;
	bool fold;        /**< the heap is large: fold runs of alike blocks and regions */
	int cells;        /**< cells drawn in this region */
	draw_run_t run;   /**< blocks of one size, not drawn yet */
	draw_run_t rest;  /**< the region's blocks beyond REGION_CELLS */
	alike_t alike;    /**< full regions alike, not drawn yet */
} draw_t;

static void draw_live(draw_t *dr, const void *addr, size_t size)
{
	hl_dot_block_cell(dr->d, HL_BLOCK_LIVE, addr, NULL, "%zu", size);
	hl_dot_cell_bytes(dr->d, size);   /* a folded run says its total */
	dr->cells++;
}

static void flush_runs(draw_t *dr)
{
	draw_run_t *r = &dr->run;
	if (r->count >= RUN_AT) {
		hl_dot_run_cell(dr->d, HL_BLOCK_LIVE, r->count, r->bytes, "blocks of %zu B", r->size);
		dr->cells++;
	} else {
		for (unsigned long i = 0; i < r->count; i++)
			draw_live(dr, r->addr[i], r->size);
	}
	r->count = 0;
	draw_run_t *x = &dr->rest;
	if (x->count == 1)
		hl_dot_run_cell(dr->d, HL_BLOCK_LIVE, 1, x->bytes, "1 more block of %zu B", x->min);
	else if (x->count && x->min == x->max)
		hl_dot_run_cell(dr->d, HL_BLOCK_LIVE, x->count, x->bytes, "more blocks of %zu B", x->min);
	else if (x->count)
		hl_dot_run_cell(dr->d, HL_BLOCK_LIVE, x->count, x->bytes, "more blocks of %zu–%zu B", x->min,
				x->max);
	x->count = 0;
}

/* Adds a live block to the runs not drawn yet. */
static void fold_live(draw_t *dr, const hl_block_t *b)
{
	draw_run_t *r = &dr->run;
	if (dr->cells >= REGION_CELLS) {
		draw_run_t *x = &dr->rest;
		x->min = x->count && x->min < b->size ? x->min : b->size;
		x->max = x->count && x->max > b->size ? x->max : b->size;
		x->count++;
		x->bytes += b->size;
		return;
	}
	if (r->count && r->size != b->size) {
		flush_runs(dr);
		if (dr->cells >= REGION_CELLS) {
			fold_live(dr, b);
			return;
		}
	}
	if (r->count < RUN_AT - 1)
		r->addr[r->count] = b->addr;
	r->bytes = r->count ? r->bytes + b->size : b->size;
	r->size = b->size;
	r->count++;
}

/* Ends the region's cluster being drawn, if any. */
static void close_region(draw_t *dr)
{
	if (dr->region < 0)
		return;
	flush_runs(dr);
	hl_dot_strip_end(dr->d);
	hl_dot_cluster_end(dr->d);
	dr->region = -1;
}

static int draw_block(const hl_block_t *b, void *arg)
{
	draw_t *dr = arg;
	hl_dot_t *d = dr->d;
	if (b->region != dr->region) {
		close_region(dr);
		char label[64], node[32];
		snprintf(label, sizeof label, "region#%d", b->region);
		snprintf(node, sizeof node, "region%d", dr->strips++);
		hl_dot_cluster_begin(d, label);
		hl_dot_strip_begin(d, node, "address →", 0);
		dr->region = b->region;
		dr->cells = 0;
	}
	if (b->state == HL_BLOCK_LIVE && dr->fold) {
		fold_live(dr, b);
		return 0;
	}
	flush_runs(dr);
	switch (b->state) {
	case HL_BLOCK_TOP: hl_dot_block_cell(d, b->state, b->addr, "cursor", "unused %zu", b->size); break;
	case HL_BLOCK_META:
		hl_dot_block_cell(d, b->state, b->addr, NULL, "%s %zu", b->size == desc_bytes() ? "region" : "pad",
				  b->size);
		break;
	default: hl_dot_block_cell(d, b->state, b->addr, NULL, "%zu", b->size); break;
	}
	hl_dot_cell_bytes(d, b->size);   /* a folded run says its total */
	dr->cells++;
	return 0;
}

/* Whether full region @p r has every block of one size (no filler). */
static bool region_uniform(const bump_region_t *r, region_shape_t *sh)
{
	*sh = (region_shape_t){ 0, 0, (size_t)(r->base + r->size - r->cursor) };
	for (const char *q = r->base + desc_bytes(); q < r->cursor;) {
		const bump_header_t *h = (const bump_header_t *)q;
		if ((h->flags & FILLER) || (sh->count && h->size != sh->size))
			return false;
		sh->size = h->size;
		sh->count++;
		q += HEADER + h->size;
	}
	return sh->count > 0;
}

/* Draws the alike regions not drawn yet: one as itself, more once with a count. */
static void flush_alike(draw_t *dr)
{
	alike_t *a = &dr->alike;
	if (a->n == 1)
		walk_region(dr->s->heap, a->first, draw_block, dr);
	else if (a->n > 1) {
		close_region(dr);
		const region_shape_t *sh = &a->shape;
		char label[128], node[32], n[32], sz[32];
		snprintf(label, sizeof label, "× %s alike regions, region#%d to region#%d: %s of blocks in all",
			 hl_dot_count(a->n, n, sizeof n), a->from, a->to,
			 hl_dot_size(a->n * sh->count * sh->size, sz, sizeof sz));
		snprintf(node, sizeof node, "region%d", dr->strips++);
		hl_dot_cluster_begin(dr->d, label);
		hl_dot_strip_begin(dr->d, node, "each: address →", 0);
		hl_dot_cell(dr->d, HL_BLOCK_META, NULL, "region %zu", desc_bytes());
		hl_dot_run_cell(dr->d, HL_BLOCK_LIVE, sh->count, sh->count * sh->size, "%s of %zu B",
				sh->count == 1 ? "block" : "blocks", sh->size);
		hl_dot_cell(dr->d, HL_BLOCK_TOP, NULL, "unused %zu", sh->top);
		hl_dot_strip_end(dr->d);
		hl_dot_cluster_end(dr->d);
	}
	a->n = 0;
}

/* Draws the regions oldest first (region numbers rise down the picture),
 * folding runs of alike full regions when the heap is large. */
static void draw_regions(draw_t *dr, const bump_region_t *r)
{
	if (!r)
		return;
	draw_regions(dr, r->prev);
	alike_t *a = &dr->alike;
	region_shape_t sh;
	size_t off = 0;
	int k = hl_os_locate(hl_heap_os(dr->s->heap), r->base, &off);
	if (dr->fold && r != dr->s->current && region_uniform(r, &sh)) {
		if (a->n && sh.size == a->shape.size && sh.count == a->shape.count && sh.top == a->shape.top) {
			a->n++;
			a->to = k;
			return;
		}
		flush_alike(dr);
		*a = (alike_t){ r, sh, 1, k, k };
		return;
	}
	flush_alike(dr);
	walk_region(dr->s->heap, r, draw_block, dr);
}

static void bump_snapshot(void *st, hl_dot_t *d)
{
	bump_state_t *s = st;
	draw_t dr = { .d = d, .s = s, .region = -1 };
	pthread_mutex_lock(&s->lock);
	dr.fold = s->blocks > FOLD_OVER;
	draw_regions(&dr, s->current);
	flush_alike(&dr);
	pthread_mutex_unlock(&s->lock);
	if (dr.region >= 0) {
		close_region(&dr);
		hl_dot_list_node(d, "cursor_ptr", "cursor");
		char to[40];
		snprintf(to, sizeof to, "region%d:cursor", dr.strips - 1);
		hl_dot_edge(d, "cursor_ptr", to, HL_EDGE_NEXT, NULL);
	} else {
		hl_dot_note(d, "empty", "no region reserved yet");
	}
}

/* bump_fork_prepare, bump_fork_parent, bump_fork_child: around fork, the one lock */
HL_FORK_ONE_MUTEX(bump, bump_state_t, lock)

/* Configurations the fuzzers run beside the defaults (core/policy.h). */
static const char *const bp_variants[] = {
	"region_size:1M,commit_step:4K",
	"commit_step:1M",
	"region_size:2M,commit_step:16K",
	NULL,
};

const hl_policy_t hl_policy_bump = {
	.name = "bump",
	.summary = "region allocator: a pointer moves forward, free does nothing, reset drops all",
	.options = bump_options,
	.init = bump_init,
	.malloc = bump_malloc,
	.free = bump_free,
	.realloc = bump_realloc,
	.memalign = bump_memalign,
	.usable_size = bump_usable_size,
	.owns = bump_owns,
	.trim = bump_trim,
	.reset = bump_reset,
	.stats = bump_stats,
	.snapshot = bump_snapshot,
	.check = bump_check,
	.walk = bump_walk,
	.fork_prepare = bump_fork_prepare,
	.fork_parent = bump_fork_parent,
	.fork_child = bump_fork_child,
	.variants = bp_variants,
	.frees_nothing = true,
	.cells = HL_CELLS_EVERY_BLOCK,
};
