/* Metadata record pools (see meta.h): fixed-size records carved from 64 KiB
 * metadata regions of the page source, recycled through a free list. */
#include "config.h"
#include <string.h>
#include "bits.h"
#include "meta.h"

enum { META_REGION = 64 * 1024 };

void hl_meta_init(hl_meta_pool_t *m, hl_os_t *os, size_t size)
{
	memset(m, 0, sizeof *m);
	m->os = os;
	m->size = hl_align_up(size < sizeof(void *) ? sizeof(void *) : size, 16);
	pthread_mutex_init(&m->lock, NULL);
}

void hl_meta_init_private(hl_meta_pool_t *m, hl_os_t *os, size_t size)
{
	hl_meta_init(m, os, hl_align_up(size, HL_CACHE_LINE));
}

void *hl_meta_alloc(hl_meta_pool_t *m)
{
	pthread_mutex_lock(&m->lock);
	void *rec = m->free;
	if (rec) {
		m->free = *(void **)rec;
	} else {
		if ((size_t)(m->end - m->cur) < m->size) {
			size_t bytes = m->size > META_REGION ? hl_align_up(m->size, hl_os_page(m->os)) : META_REGION;
			char *r = hl_os_reserve_meta(m->os, bytes);
			if (!r) {
				pthread_mutex_unlock(&m->lock);
				return NULL;
			}
			m->cur = r;
			m->end = r + bytes;
		}
		rec = m->cur;
		m->cur += m->size;
	}
	m->live++;
	pthread_mutex_unlock(&m->lock);
	memset(rec, 0, m->size);
	return rec;
}

void hl_meta_free(hl_meta_pool_t *m, void *rec)
{
	if (!rec)
		return;
	pthread_mutex_lock(&m->lock);
	*(void **)rec = m->free;
	m->free = rec;
	m->live--;
	pthread_mutex_unlock(&m->lock);
}

void hl_meta_fork_child(hl_meta_pool_t *m)
{
	pthread_mutex_init(&m->lock, NULL);
}
