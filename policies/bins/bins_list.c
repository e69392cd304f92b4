/*
 * bins_list.c -- taking a free chunk out of its bin (glibc's unlink_chunk),
 * with glibc's checks.  A bin is a circular doubly linked list of free
 * chunks headed by a dummy chunk in the arena; a large bin also links the
 * first chunk of each size in a skip list (fd_nextsize / bk_nextsize).
 * Both the arena algorithm (bins_arena.c) and the sub-heap code that
 * merges a dropped sub-heap's last free chunk into the top (bins_sys.c)
 * unlink chunks, so this sits below both; it calls nothing of the policy
 * (see bins.h, "Layers").  Filing chunks into bins stays in bins_arena.c.
 */
#include "bins.h"

/* Removes a free chunk from whatever bin holds it (skip list included). */
void bn_unlink(bn_chunk_t *p)
{
	size_t sz = bn_csize(p);
	if (HL_UNLIKELY(bn_at(p, sz)->prev_size != sz))
		hl_fatal(BN, "corrupted size vs. prev_size", bn_chunk2mem(p));
	bn_chunk_t *fd = p->fd, *bk = p->bk;
	if (HL_UNLIKELY(fd->bk != p || bk->fd != p))
		hl_fatal(BN, "corrupted double-linked list", bn_chunk2mem(p));
	fd->bk = bk;
	bk->fd = fd;
	if (bn_is_small(sz) || p->fd_nextsize == NULL)
		return;
	if (HL_UNLIKELY(p->fd_nextsize->bk_nextsize != p || p->bk_nextsize->fd_nextsize != p))
		hl_fatal(BN, "corrupted double-linked list (not small)", bn_chunk2mem(p));
	if (fd->fd_nextsize == NULL) {          /* a same-size follower takes over */
		if (p->fd_nextsize == p) {
			fd->fd_nextsize = fd->bk_nextsize = fd;
		} else {
			fd->fd_nextsize = p->fd_nextsize;
			fd->bk_nextsize = p->bk_nextsize;
			p->fd_nextsize->bk_nextsize = fd;
			p->bk_nextsize->fd_nextsize = fd;
		}
	} else {
		p->fd_nextsize->bk_nextsize = p->bk_nextsize;
		p->bk_nextsize->fd_nextsize = p->fd_nextsize;
	}
}

