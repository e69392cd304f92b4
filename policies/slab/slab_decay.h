/*
 * The decay layer's inline part (policy `slab`): waking the background
 * thread from the layers above it (slab.c, slab_arena.c) without a call
 * when it is not sleeping.
 */
#ifndef HL_SLAB_DECAY_H
#define HL_SLAB_DECAY_H

#include "slab.h"

/** Wakes the background thread of @p s (slab_decay.c; no locks held). */
void sl_bg_kick(sl_state_t *s);

/** Wakes a background thread that may be sleeping long (no locks held). */
static inline void sl_bg_maybe_kick(sl_state_t *s)
{
	if (HL_UNLIKELY(s->bg_on) && __atomic_load_n(&s->bg_idle, __ATOMIC_SEQ_CST))
		sl_bg_kick(s);
}

#endif
