/*
 * percpu_central.c — the central free list of each class (TCMalloc's
 * CentralFreeList with span prioritisation).
 *
 * The spans of a class that still have free objects sit in PC_FULLNESS
 * lists by how many of their objects are out (allocated * 8 / nobjs).
 * Objects are taken from the fullest span first: the spans with few
 * objects out get no new ones, so they drain, and a span whose objects
 * are all back goes to the page heap at once.  A span keeps its free
 * objects in a bitmap (TCMalloc keeps an index list in the span); the
 * bitmap also catches an object given back twice.
 *
 * front:thread keeps gperftools 2.10's one list of spans with free
 * objects instead (nonempty_, src/central_freelist.cc): a fresh span
 * (Populate) and a span that gets an object back while it had none
 * (ReleaseToSpans) go on its head, a span keeps its place while it has
 * free objects, and a fetch takes from the head span (FetchFromOneSpans).
 * So the span used most recently, not the fullest, gives the objects.
 *
 * front:thread fetches as gperftools 2.10's CentralFreeList::RemoveRange
 * (src/central_freelist.cc): a fresh span only when no span has a free
 * object (a fetch that empties a span and finds no other comes back
 * short, and the thread's next miss cuts the fresh span), and the objects
 * of each further span taken for the same fetch in front of those taken
 * before (SLL_PushRange), so they are allocated first.
 *
 * front:thread also keeps each span's free objects in gperftools 2.10's
 * order (CentralFreeList::Populate, FetchFromOneSpans and ReleaseToSpans,
 * src/central_freelist.cc): a singly linked list, a fresh span's objects
 * in address order, an object given back pushed on top and a fetch taking
 * from the top.  So the object a thread list gave back last is the first
 * that comes out of its span again, not the span's lowest free object.
 */
#include "config.h"
#include <string.h>
#include "percpu.h"

static void pc_central_relist(const pc_state_t *s, pc_central_t *c, pc_span_t *sp)
{
	unsigned want = sp->allocated < sp->nobjs ? pc_fullness(sp, s->mode == PC_MODE_THREAD) : PC_NO_LIST;
	if (want == sp->bucket)
		return;
	if (sp->bucket != PC_NO_LIST)
		pc_list_remove(&c->lists[sp->bucket], sp);
	sp->bucket = (uint8_t)want;
	if (want != PC_NO_LIST)
		pc_list_push(&c->lists[want], sp);
}

/* front:thread: links every object of fresh span @sp to the next, as
 * gperftools 2.10 cuts a span into its free list
 * (CentralFreeList::Populate, src/central_freelist.cc), outside the
 * central lock.  Nothing reads the links (the span's bitmap is the
 * model's free list); the writes are what matters: the thread that cuts
 * the span pages all of it in, one fault per kernel page, and on this
 * machine that takes longer than the other thread needs to use up a span
 * it already has, so two threads that start together mostly end up with
 * spans of their own, as gperftools' do (bench/twofill, RESULTS). */
static void pc_span_link_objects(const pc_state_t *s, const pc_span_t *sp)
{
	size_t stride = s->cl.stride[sp->cls];
	for (uint32_t i = 0; i < sp->nobjs; i++) {
		void **obj = (void **)(sp->start + i * stride);
		*obj = i + 1 < sp->nobjs ? (char *)obj + stride : NULL;
	}
}

/* A fresh span of class @cls from the page heap, every object free. */
static pc_span_t *pc_central_grow(pc_state_t *s, unsigned cls)
{
	pc_span_t *sp = pc_ph_alloc(&s->ph, s->cl.pages[cls], 1, PC_SPAN_SMALL, cls);
	if (!sp)
		return NULL;
	HL_EV(s->heap, HL_EV_NEW, "span from the page heap, class", cls, s->cl.pages[cls] * PC_PAGE, (void *)sp->start);
	sp->cls = (uint16_t)cls;
	sp->nobjs = s->cl.nobjs[cls];
	sp->allocated = 0;
	sp->bucket = PC_NO_LIST;
	for (unsigned w = 0; w < PC_BITMAP_WORDS; w++)
		hl_bit_store_word(sp->free_bits, w, hl_bits_first_n_word(sp->nobjs, w));
	sp->objects = NULL;
	if (s->mode == PC_MODE_THREAD) {
		pc_span_link_objects(s, sp);
		sp->objects = (void *)sp->start;
	}
	return sp;
}

/* Takes up to @n free objects out of span @sp: lowest addresses first, or
 * under front:thread the top of its list (FetchFromOneSpans). */
static unsigned pc_span_take(const pc_state_t *s, pc_span_t *sp, void **out, unsigned n)
{
	if (s->mode == PC_MODE_THREAD) { /* front:thread: from the top of its list */
		unsigned got = 0;
		for (; got < n && sp->objects; got++) {
			void **obj = sp->objects;
			sp->objects = *obj;
			hl_bit_clear(sp->free_bits, (size_t)pc_obj_index(s, sp, obj));
			out[got] = obj;
		}
		sp->allocated += got;
		return got;
	}
	unsigned got = hl_bits_take(sp->free_bits, PC_BITMAP_WORDS, true, sp->start, s->cl.stride[sp->cls], out, n);
	sp->allocated += got;
	return got;
}

unsigned pc_central_remove(pc_state_t *s, unsigned cls, void **out, unsigned n)
{
	pc_central_t *c = &s->central[cls];
	bool gperf = s->mode == PC_MODE_THREAD;
	unsigned got = 0;
	void *before[512]; /* front:thread: what earlier spans gave this fetch */
	pthread_mutex_lock(&c->lock);
	while (got < n) {
		pc_span_t *sp = NULL;
		for (unsigned b = PC_FULLNESS; b-- > 0 && !sp;)
			sp = c->lists[b].head;
		if (!sp && got && gperf)
			break;
		if (!sp) {
			pthread_mutex_unlock(&c->lock); /* the page heap has its own lock */
			sp = pc_central_grow(s, cls);
			pthread_mutex_lock(&c->lock);
			if (!sp)
				break;
			c->spans++;
			c->free_objects += sp->nobjs;
		}
		if (gperf && got)
			memcpy(before, out, got * sizeof *out);
		unsigned k = pc_span_take(s, sp, out + got, n - got);
		HL_EV_COUNT(s->heap, HL_EV_LIST_POP, "central free list: the fullest span, class", cls, 0, k,
			    (void *)sp->start);
		if (gperf && got) { /* this span's objects in front */
			memmove(out, out + got, k * sizeof *out);
			memcpy(out + k, before, got * sizeof *out);
		}
		got += k;
		c->free_objects -= k;
		pc_central_relist(s, c, sp);
	}
	pthread_mutex_unlock(&c->lock);
	return got;
}

/* Gives object @p back to its span; the span when it is empty again. */
static pc_span_t *pc_central_put(pc_state_t *s, pc_central_t *c, unsigned cls, void *p)
{
	pc_span_t *sp = pc_ph_span_of(&s->ph, p);
	long i = sp && sp->state == PC_SPAN_SMALL && sp->cls == cls ? pc_obj_index(s, sp, p) : -1;
	if (i < 0)
		pc_fatal("object of the wrong span in a cache (corrupted cache)", p);
	if (hl_bit_get(sp->free_bits, (size_t)i))
		pc_fatal("double free (object is already free in its span)", p);
	hl_bit_set(sp->free_bits, (size_t)i);
	sp->allocated--;
	c->free_objects++;
	if (sp->allocated) {
		if (s->mode == PC_MODE_THREAD) { /* on top of its list */
			*(void **)p = sp->objects;
			sp->objects = p;
		}
		pc_central_relist(s, c, sp);
		return NULL;
	}
	HL_EV(s->heap, HL_EV_RETIRE, "span empty: back to the page heap, class", cls, sp->npages * PC_PAGE,
	      (void *)sp->start);
	if (sp->bucket != PC_NO_LIST)
		pc_list_remove(&c->lists[sp->bucket], sp);
	sp->bucket = PC_NO_LIST;
	c->free_objects -= sp->nobjs;
	c->spans--;
	return sp;
}

void pc_central_insert(pc_state_t *s, unsigned cls, void *const *objs, unsigned n)
{
	pc_central_t *c = &s->central[cls];
	pc_span_t *empty[64];
	unsigned nempty = 0;
	pthread_mutex_lock(&c->lock);
	for (unsigned k = 0; k < n; k++) {
		pc_span_t *sp = pc_central_put(s, c, cls, objs[k]);
		if (sp && nempty == 64) {
			pthread_mutex_unlock(&c->lock);
			for (unsigned e = 0; e < nempty; e++)
				pc_ph_free(&s->ph, empty[e]);
			nempty = 0;
			pthread_mutex_lock(&c->lock);
		}
		if (sp)
			empty[nempty++] = sp;
	}
	pthread_mutex_unlock(&c->lock);
	if (!nempty)
		return;
	pthread_mutex_lock(&s->ph.lock);
	for (unsigned e = 0; e < nempty; e++)
		pc_ph_free_locked(&s->ph, empty[e]);
	pthread_mutex_unlock(&s->ph.lock);
}
