/**
 * @file bump.h
 * @brief Policy `bump`: the region (arena) allocator of compilers and web
 *        servers.  Allocation moves one pointer forward; free does nothing;
 *        reset drops everything at once.
 *
 * Glossary
 *   region   one reserved stretch of address space (`region_size` bytes)
 *   cursor   first unused byte of the current region
 *   limit    end of the committed part of the current region
 *   chunk    commit granule: the committed part grows `commit_step` at a time
 *
 *   region#0                                   region#1 (current)
 *   ┌──────────────────────────────┐            ┌───────────────┬──────┬─────────┐
 *   │ b0 │ b1 │ b2 │ ...      │waste│  ──next──► │ b9 │ b10 │ ... │ free │ reserved│
 *   └──────────────────────────────┘            └───────────────┴──────┴─────────┘
 *                                                                ▲cursor ▲limit   ▲end
 *
 * Layers (top to bottom: tests/house/layers.sh checks this list)
 *   bump.c                   the whole policy
 *   bump.h                   types
 *
 * Invariants
 *   base <= cursor <= limit <= base + size          (current region)
 *   cursor ≡ 0 (mod 16)
 *   handed_out_bytes == Σ over regions (cursor - base)   (free never changes it)
 *   committed == Σ over regions (limit - base)
 *
 * Every block is preceded by nothing: the usable size of a block is found
 * from a 16-byte header only because hl_usable_size must answer; the
 * header holds the block's size (see bump.c).
 */
#ifndef HL_POLICY_BUMP_H
#define HL_POLICY_BUMP_H

#include <pthread.h>
#include <stddef.h>
#include "policy.h"

/** One region of the bump allocator. */
typedef struct bump_region {
	char *base;                 /**< first byte (mapped by the page source) */
	size_t size;                /**< bytes reserved */
	char *cursor;               /**< next free byte; moves only forward (lock) */
	char *limit;                /**< end of the committed prefix (lock) */
	struct bump_region *prev;   /**< older region, or NULL (lock) */
} bump_region_t;

/** The policy's state: one lock around one moving pointer. */
typedef struct bump_state {
	hl_heap_t *heap;            /**< owning heap (page source) */
	pthread_mutex_t lock;       /**< guards everything below */
	bump_region_t *current;     /**< region served from */
	size_t region_size;         /**< option region_size */
	size_t commit_step;         /**< option commit_step */
	size_t regions;             /**< regions reserved so far */
	size_t blocks;              /**< blocks handed out since the last reset */
	size_t frees_ignored;       /**< calls to free (they record nothing) */
	size_t resets;              /**< times hl_reset dropped everything */
	size_t handed_out;          /**< bytes of blocks incl. headers since reset */
	size_t waste;               /**< bytes left behind at the end of full regions */
} bump_state_t;

/** Region descriptors live at the start of their own region. */
extern const hl_policy_t hl_policy_bump;
#endif
