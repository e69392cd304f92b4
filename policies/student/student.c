/*
 * student: the malloc-lab skeleton you complete.
 *
 * What it models: the simplest allocator that is still correct — the
 * implicit free list of a systems textbook, with the interesting parts left
 * for you.  Grade it with `heaplab grade --policy=student` (configure with
 * --with-policy=student,firstfit so the reference policy is compiled in).
 *
 * Overhead and alignment: an 8-byte header and an 8-byte footer per block,
 * blocks are multiples of 16 bytes and at least 32; every payload is
 * 16-byte aligned.
 *
 * Cost as shipped: malloc O(blocks) — it walks every block, live or free;
 * free O(1).  Utilization is poor because a free block is reused whole
 * (no splitting) and neighbours never merge (no coalescing).
 *
 * Options: described once, in the option table below (st_options);
 * `heaplab options student` prints them.
 *
 * What you add, in the order that pays best (each is a TODO(student)):
 *   1. split a free block that is larger than needed          (st_place)
 *   2. coalesce a freed block with free neighbours            (st_free_block)
 *   3. grow the last block in place in realloc                (st_realloc)
 *   4. an explicit free list, then segregated lists           (st_find_fit)
 *   5. the checker: every invariant of student.h (graded)     (st_check)
 *   6. give the top back with hl_brk_move(-n)                 (st_trim)
 *
 * Thread safety: one mutex around everything (fine for the lab).
 *
 * Decision events (`heaplab replay --explain`): each path names itself in
 * one line where it is decided, HL_EV(heap, kind, what, index, size, addr)
 * (core/event.h; the kinds are in heaplab.h).  When you add a path (a
 * split, a merge, a list), add its event beside it.
 */
#include "config.h"
#include <errno.h>
#include <string.h>
#include "bits.h"
#include "student.h"

enum { WORD = 8, OVERHEAD = 16, MIN_BLOCK = 32, ALLOC = 1 };

static const hl_option_t st_options[] = {
	{ "brk_max", HL_OPT_SIZE, "64G", 1 << 20, (int64_t)1 << 44, NULL,
	  "address space reserved for the program break" },
	{ NULL, 0, NULL, 0, 0, NULL, NULL },
};

/* ---- block accessors ---------------------------------------------------- */

static inline size_t st_get(const char *at) { return *(const size_t *)at; }
static inline void st_put(char *at, size_t v) { *(size_t *)at = v; }
static inline size_t st_size(const char *b) { return st_get(b) & ~(size_t)15; }
static inline bool st_alloc(const char *b) { return st_get(b) & ALLOC; }
static inline char *st_payload(char *b) { return b + WORD; }
static inline char *st_block(const void *p) { return (char *)p - WORD; }
static inline char *st_next(const char *b) { return (char *)b + st_size(b); }
/* (for the checker and the coalescing you write: unused until then) */
__attribute__((unused)) static inline char *st_footer(char *b) { return b + st_size(b) - WORD; }
static inline char *st_break(const st_state_t *s) { return hl_brk_current(&s->brk); }

/* Writes header and footer of the block at b. */
static void st_mark(char *b, size_t size, bool alloc)
{
	st_put(b, size | (alloc ? ALLOC : 0));
	st_put(b + size - WORD, size | (alloc ? ALLOC : 0));
}

static inline size_t st_asize(size_t n)
{
	size_t a = hl_align_up(n + OVERHEAD, 16);
	return a < MIN_BLOCK ? MIN_BLOCK : a;
}

/* ---- getting space ------------------------------------------------------ */

/* Makes at least `need` bytes of top available after hi (plus the epilogue). */
static bool st_extend(st_state_t *s, size_t need)
{
	size_t have = (size_t)(st_break(s) - s->hi) - WORD;
	if (need <= have)
		return true;
	size_t delta = hl_align_up(need - have, hl_os_page(s->os));
	if (!hl_brk_move(s->os, &s->brk, (intptr_t)delta))
		return false;
	s->extends++;
	HL_EV(s->heap, HL_EV_GROW, "break moved up", -1, delta, NULL);
	return true;
}

/* Turns the first `size` bytes of top into a block. */
static char *st_carve(st_state_t *s, size_t size, bool alloc)
{
	char *b = s->hi;
	HL_EV(s->heap, HL_EV_SPLIT, "top: a new block at its start", -1, size, st_payload(b));
	st_mark(b, size, alloc);
	s->hi += size;
	st_put(s->hi, 0 | ALLOC); /* the epilogue moves up */
	s->blocks++;
	if (!alloc) {
		s->free_blocks++;
		s->free_bytes += size;
	}
	return b;
}

/* ---- placing blocks ----------------------------------------------------- */

/* First fit over every block.  TODO(student): keep free blocks on an
 * explicit list (links in the payload) so the walk skips live ones, then
 * one list per size class. */
static char *st_find_fit(st_state_t *s, size_t asize)
{
	for (char *b = s->lo; b < s->hi; b = st_next(b)) {
		s->visited++;
		HL_EV(s->heap, !st_alloc(b) && st_size(b) >= asize ? HL_EV_FIRST_FIT : HL_EV_REJECT, st_alloc(b) ? "block in use" : st_size(b) >= asize ? "free block" : "free block too small", -1, st_size(b), st_payload(b));
		if (!st_alloc(b) && st_size(b) >= asize)
			return b;
	}
	return NULL;
}

/* Marks the free block b live for a request of asize bytes.
 * TODO(student): when size(b) - asize >= MIN_BLOCK, split: mark the first
 * asize bytes live and the rest as a new free block. */
static void st_place(st_state_t *s, char *b, size_t asize)
{
	(void)asize;
	st_mark(b, st_size(b), true);
	s->free_blocks--;
	s->free_bytes -= st_size(b);
}

static void *st_malloc(void *st, hl_thread_t *t, size_t n)
{
	st_state_t *s = st;
	size_t asize = st_asize(n);
	pthread_mutex_lock(&s->lock);
	char *b = st_find_fit(s, asize);
	if (b)
		st_place(s, b, asize);
	else if (st_extend(s, asize))
		b = st_carve(s, asize, true);
	pthread_mutex_unlock(&s->lock);
	if (!b)
		errno = ENOMEM;
	return b ? st_payload(b) : NULL;
}

/* Aligned blocks come from top: a free filler block in front of the
 * payload makes it land on the alignment.  TODO(student): look for a free
 * block with room for the filler first. */
static void *st_memalign(void *st, hl_thread_t *t, size_t align, size_t n)
{
	st_state_t *s = st;
	size_t asize = st_asize(n);
	pthread_mutex_lock(&s->lock);
	uintptr_t payload = (uintptr_t)st_payload(s->hi);
	size_t gap = hl_ptr_align_up(payload, align) - payload;
	if (gap && gap < MIN_BLOCK)
		gap += align; /* align > 16, so the gap stays a multiple of 16 */
	char *b = NULL;
	if (st_extend(s, gap + asize)) {
		if (gap)
			st_carve(s, gap, false);
		b = st_carve(s, asize, true);
	}
	pthread_mutex_unlock(&s->lock);
	if (!b)
		errno = ENOMEM;
	return b ? st_payload(b) : NULL;
}

/* ---- freeing ------------------------------------------------------------ */

/* Aborts unless p is the payload of a live block of this heap. */
static void st_validate(st_state_t *s, const void *p)
{
	const char *c = p;
	if (c < s->lo + WORD || c >= s->hi || ((uintptr_t)c & 15))
		hl_fatal(&hl_policy_student, "free of a pointer this heap does not own", p);
	const char *b = st_block(p);
	if (st_size(b) < MIN_BLOCK || b + st_size(b) > s->hi)
		hl_fatal(&hl_policy_student, "free of a pointer that is not a block", p);
	if (!st_alloc(b))
		hl_fatal(&hl_policy_student, "double free", p);
}

/* TODO(student): coalesce.  If the block after b is free, absorb it; if
 * the footer just below b says the block before is free, let it absorb b.
 * Keep blocks, free_blocks and free_bytes right as blocks merge. */
static void st_free_block(st_state_t *s, char *b)
{
	st_mark(b, st_size(b), false);
	HL_EV(s->heap, HL_EV_LIST_PUSH, "marked free (no list, no merge yet)", -1, st_size(b), st_payload(b));
	s->free_blocks++;
	s->free_bytes += st_size(b);
}

static void st_free(void *st, hl_thread_t *t, void *p)
{
	st_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	st_validate(s, p);
	st_free_block(s, st_block(p));
	pthread_mutex_unlock(&s->lock);
}

static size_t st_usable_size(void *st, const void *p)
{
	return st_size(st_block(p)) - OVERHEAD;
}

static bool st_owns(void *st, const void *p)
{
	st_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	bool mine = (const char *)p >= s->lo && (const char *)p < s->hi;
	pthread_mutex_unlock(&s->lock);
	return mine;
}

/* realloc: keep the block when it is big enough, else move it.
 * TODO(student): when b is the last block (next(b) == hi) grow it into
 * top; when the next block is free and large enough, absorb it. */
static void *st_realloc(void *st, hl_thread_t *t, void *p, size_t n)
{
	size_t have = st_usable_size(st, p);
	if (n <= have)
		return p;
	void *q = st_malloc(st, t, n);
	if (!q)
		return NULL;
	memcpy(q, p, have);
	st_free(st, t, p);
	return q;
}

/* ---- life cycle --------------------------------------------------------- */

static void *st_init(hl_heap_t *h, const hl_conf_t *conf)
{
	hl_os_t *os = hl_heap_os(h);
	st_state_t *s = hl_policy_state_new(h, sizeof *s);
	if (!s)
		return NULL;
	s->heap = h;
	s->os = os;
	pthread_mutex_init(&s->lock, NULL);
	size_t max = hl_align_up(hl_conf_size(conf, "brk_max"), hl_os_page(os));
	if (hl_brk_init(os, &s->brk, max) != 0 || !hl_brk_move(os, &s->brk, (intptr_t)hl_os_page(os))) {
		hl_set_error("student: cannot reserve a break of %zu bytes", max);
		return NULL;
	}
	s->lo = s->hi = s->brk.base + WORD;
	st_put(s->hi, 0 | ALLOC);
	return s;
}

/* st_fork_prepare, st_fork_parent, st_fork_child: around fork, the one lock */
HL_FORK_ONE_MUTEX(st, st_state_t, lock)

/* ---- looking inside ----------------------------------------------------- */

/* The checker hook: yours to write.  `heaplab grade` runs it on a sound
 * heap, where it must report nothing, and on heaps it damages (a smashed
 * header, 8 bytes written past a block's end, a block the program holds
 * marked free as a second free leaves it), where it must report something;
 * its points go to a checker that does both.
 * TODO(student): walk the blocks from lo to hi and report each broken
 * invariant of student.h with HL_EXPECT / HL_EXPECT_AT (core/policy.h):
 * a size that is not a multiple of 16, below MIN or past hi; a header that
 * differs from its footer; blocks that do not end exactly at hi; a damaged
 * epilogue; counters (blocks, free_blocks, free_bytes) that disagree with
 * the walk.  Follow no size you have not range-checked first (the heap may
 * be damaged) and stop the walk at the first bad size.  A free block the
 * program still holds shows as a counter that disagrees, or, with
 * hl_heap_block_live, as a free block the ledger says is live.  Once free
 * coalesces, report two free blocks side by side; once there is an
 * explicit list, check that it holds exactly the free blocks, that
 * prev(next(x)) = x, and that its count matches free_blocks. */
static int st_check(void *st, hl_report_t *r)
{
	st_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	pthread_mutex_unlock(&s->lock);
	return r->problems;
}

static int st_walk_locked(st_state_t *s, hl_walk_fn fn, void *arg)
{
	size_t off = 0;
	int k = hl_os_locate(s->os, s->brk.base, &off);
	hl_block_t pad = { s->brk.base, WORD, HL_BLOCK_META, k, 0 };
	if (fn(&pad, arg))
		return 1;
	for (char *b = s->lo; b < s->hi; b = st_next(b)) {
		hl_block_t blk = { st_alloc(b) ? st_payload(b) : b, st_size(b),
				   st_alloc(b) ? HL_BLOCK_LIVE : HL_BLOCK_FREE, k, 0 };
		if (fn(&blk, arg))
			return 1;
	}
	hl_block_t top = { s->hi, (size_t)(st_break(s) - s->hi), HL_BLOCK_TOP, k, 0 };
	return fn(&top, arg);
}

static int st_walk(void *st, hl_walk_fn fn, void *arg)
{
	st_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	int rc = st_walk_locked(s, fn, arg);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static void st_stats(void *st, hl_statw_t *w)
{
	st_state_t *s = st;
	pthread_mutex_lock(&s->lock);
	hl_statw_u64(w, "blocks", s->blocks);
	hl_statw_u64(w, "free_blocks", s->free_blocks);
	hl_statw_u64(w, "free_bytes", s->free_bytes);
	hl_statw_u64(w, "heap_bytes", (uint64_t)(s->hi - s->lo));
	hl_statw_u64(w, "top_bytes", (uint64_t)(st_break(s) - s->hi));
	hl_statw_u64(w, "blocks_visited", s->visited);
	hl_statw_u64(w, "extends", s->extends);
	pthread_mutex_unlock(&s->lock);
}

enum { DRAW_MAX = 120 }; /* cells in one picture; the rest is summarised */

typedef struct st_draw {
	hl_dot_t *d;
	unsigned cells;
	size_t skipped;
} st_draw_t;

static int st_draw_block(const hl_block_t *b, void *arg)
{
	st_draw_t *dr = arg;
	if (dr->cells++ >= DRAW_MAX) {
		dr->skipped += b->size;
		return 0;
	}
	const char *what = b->state == HL_BLOCK_TOP ? "top " : b->state == HL_BLOCK_META ? "pad " : "";
	hl_dot_block_cell(dr->d, b->state, b->addr, NULL, "%s%zu", what, b->size);
	return 0;
}

static void st_snapshot(void *st, hl_dot_t *d)
{
	st_state_t *s = st;
	st_draw_t dr = { d, 0, 0 };
	size_t off = 0;
	char label[64];
	snprintf(label, sizeof label, "region#%d (program break)", hl_os_locate(s->os, s->brk.base, &off));
	hl_dot_cluster_begin(d, label);
	hl_dot_strip_begin(d, "heap", "address →", 0);
	st_walk(st, st_draw_block, &dr);
	hl_dot_strip_end(d);
	hl_dot_cluster_end(d);
	if (dr.skipped) {
		char note[96];
		snprintf(note, sizeof note, "%u more blocks (%zu bytes) not drawn", dr.cells - DRAW_MAX, dr.skipped);
		hl_dot_note(d, "more", note);
	}
}

const hl_policy_t hl_policy_student = {
	.name = "student",
	.summary = "malloc-lab skeleton: implicit list, first fit, no split, no coalescing (complete the TODOs)",
	.options = st_options,
	.init = st_init,
	.malloc = st_malloc,
	.free = st_free,
	.realloc = st_realloc,
	.memalign = st_memalign,
	.usable_size = st_usable_size,
	.owns = st_owns,
	.stats = st_stats,
	.snapshot = st_snapshot,
	.check = st_check,
	.walk = st_walk,
	.fork_prepare = st_fork_prepare,
	.fork_parent = st_fork_parent,
	.fork_child = st_fork_child,
};
