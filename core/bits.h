/**
 * @file bits.h
 * @brief Small arithmetic helpers every policy needs.
 */
#ifndef HL_BITS_H
#define HL_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HL_LIKELY(x) __builtin_expect(!!(x), 1)
#define HL_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline bool hl_is_pow2(size_t x) { return x && !(x & (x - 1)); }
/** Rounds @p x up to a multiple of @p a (a power of two). */
static inline size_t hl_align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }
static inline size_t hl_align_down(size_t x, size_t a) { return x & ~(a - 1); }
static inline uintptr_t hl_ptr_align_up(uintptr_t x, size_t a) { return (x + a - 1) & ~(uintptr_t)(a - 1); }
/** Index of the highest set bit (x > 0). */
static inline unsigned hl_log2(size_t x) { return (unsigned)(63 - __builtin_clzll((unsigned long long)x)); }
/** Smallest power of two >= x (x > 0). */
static inline size_t hl_pow2_ceil(size_t x) { return x <= 1 ? 1 : (size_t)1 << (hl_log2(x - 1) + 1); }
/** A cheap per-heap random 64-bit value (splitmix64 step). */
static inline uint64_t hl_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/** @name Exact division by a stride
 *  Free paths that must find which object of a run a pointer is (and
 *  that it is an object's start at all) divide its offset by the stride.
 *  With stride = odd << shift, multiplying by the odd factor's inverse
 *  modulo 2^64 and rotating right by shift gives the quotient when the
 *  stride divides the offset, and a number above UINT64_MAX / stride when
 *  it does not: one multiply and one rotation answer both questions, so
 *  one comparison with the run's object count refuses every offset that
 *  is no object's start (Hacker's Delight, 2nd ed., 10-17). */
/**@{*/
/** Fills the inverse and shift of @p stride (> 0) for hl_exact_div.
 *  Newton's iteration doubles the correct low bits of the inverse each
 *  step, from 3 (an odd number is its own inverse modulo 8). */
static inline void hl_exact_div_init(uint64_t stride, uint64_t *inv, uint8_t *shift)
{
	unsigned k = (unsigned)__builtin_ctzll(stride);
	uint64_t odd = stride >> k, x = odd;
	for (int step = 0; step < 5; step++)  /* 6, 12, 24, 48, 96 bits */
		x *= 2 - odd * x;
	*inv = x;
	*shift = (uint8_t)k;
}
/** @p off / stride when the stride divides @p off, else a number above
 *  UINT64_MAX / stride (an offset below the run, which wraps, too). */
static inline uint64_t hl_exact_div(uint64_t off, uint64_t inv, unsigned shift)
{
	uint64_t q = off * inv;
	return (q >> shift) | (q << (-shift & 63));
}
/**@}*/

/* Bitmaps changed under a lock and read without it.  A policy's free path
 * may test an object's bit (its double-free test) while another thread,
 * holding the lock, changes another bit of the same word.  The words are
 * read and written with relaxed atomics (plain moves on x86-64), so such a
 * read sees the word before or after the change and never a torn value;
 * the writers still need the lock between them. */
/** Adds @p n to a counter that one thread writes and others read relaxed
 *  (statistics).  A relaxed load and store would do; on x86-64 one
 *  `addq` to memory is that same thing in one instruction instead of three
 *  (its 8-byte aligned store is atomic, and with one writer the
 *  read-modify-write need not be), which counts on the fast path
 *  (hacking/fast-path.md). */
static inline void hl_counter_add(uint64_t *c, uint64_t n)
{
#if defined(__x86_64__)
	__asm__("addq %1, %0" : "+m"(*c) : "er"(n));
#else
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
#endif
}

/** Bit @p i of bitmap @p bm. */
static inline bool hl_bit_get(const uint64_t *bm, size_t i)
{
	return (__atomic_load_n(&bm[i >> 6], __ATOMIC_RELAXED) >> (i & 63)) & 1;
}
/** Stores @p word as word @p w of @p bm (its lock held). */
static inline void hl_bit_store_word(uint64_t *bm, size_t w, uint64_t word)
{
	__atomic_store_n(&bm[w], word, __ATOMIC_RELAXED);
}
/** Word @p w of @p bm. */
static inline uint64_t hl_bit_load_word(const uint64_t *bm, size_t w)
{
	return __atomic_load_n(&bm[w], __ATOMIC_RELAXED);
}
/** Sets bit @p i of @p bm (its lock held). */
static inline void hl_bit_set(uint64_t *bm, size_t i)
{
	hl_bit_store_word(bm, i >> 6, hl_bit_load_word(bm, i >> 6) | (uint64_t)1 << (i & 63));
}
/** Clears bit @p i of @p bm (its lock held). */
static inline void hl_bit_clear(uint64_t *bm, size_t i)
{
	hl_bit_store_word(bm, i >> 6, hl_bit_load_word(bm, i >> 6) & ~((uint64_t)1 << (i & 63)));
}
/** Word @p w of a bitmap whose bits 0 .. @p n - 1 are set and the rest
 *  clear: a run of @p n objects in a bitmap of whole words. */
static inline uint64_t hl_bits_first_n_word(size_t n, size_t w)
{
	size_t lo = w * 64;
	return n <= lo ? 0 : n - lo >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (n - lo)) - 1;
}
/** Takes up to @p n free objects of a run, lowest address first: bitmap
 *  @p bm (@p nwords words, its lock held) has one bit per object, set for
 *  a free one when @p free_is_set, clear for a free one otherwise; each
 *  object taken has its bit flipped and its address, @p base + index *
 *  @p stride, written to @p out.  A word at a time; returns how many. */
static inline unsigned hl_bits_take(uint64_t *bm, size_t nwords, bool free_is_set, uintptr_t base, size_t stride,
				    void **out, unsigned n)
{
	unsigned got = 0;
	for (size_t w = 0; w < nwords && got < n; w++) {
		uint64_t word = hl_bit_load_word(bm, w), avail = free_is_set ? word : ~word, left = avail;
		if (!avail)
			continue;
		for (; left && got < n; left &= left - 1)
			out[got++] = (void *)(base + (w * 64 + (unsigned)__builtin_ctzll(left)) * stride);
		hl_bit_store_word(bm, w, word ^ (avail ^ left));   /* flip the bits taken */
	}
	return got;
}
#endif
