/* The byte functions of core_mem.h, and memcpy, memmove, memset and memcmp for a freestanding build
 * (gcc emits calls to them even without a C library) as aliases of them. A hosted build (the PC
 * programs) keeps its C library's; hb-core-test compares the two.
 *
 * They move aligned 32-bit words with a byte head and tail, eight words a turn in the long loops: the
 * Cortex-M0+ takes one instruction per word where a byte loop takes four per byte, and clearing the
 * ~100 KB adapter_core at start-up was half of the emulated chip's boot. Where the two pointers
 * differ in alignment the M0+ (no unaligned access) copies byte by byte. */
#include <stdint.h>

#include "core_mem.h"

/* Keep gcc from turning these loops back into calls to memcpy and memset, which are these. */
#define PLAIN_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))

/* A word that may alias any object, as the bytes it replaces do. */
typedef uint32_t __attribute__((may_alias)) mem_word;

#define WORD_MASK ((uintptr_t)(sizeof(mem_word) - 1u))
#define COPY_TURN_WORDS 4u
#define FILL_TURN_WORDS 8u

static int word_aligned(const void *pointer)
{
    return ((uintptr_t)pointer & WORD_MASK) == 0;
}

/* Front to back; safe for a destination before an overlapping source (memmove). */
PLAIN_LOOP static void copy_forward(unsigned char *d, const unsigned char *s, size_t n)
{
    if ((((uintptr_t)d ^ (uintptr_t)s) & WORD_MASK) == 0) {
        for (; n && !word_aligned(d); n--) *d++ = *s++;
        mem_word *dw = (mem_word *)(void *)d;
        const mem_word *sw = (const mem_word *)(const void *)s;
        for (; n >= COPY_TURN_WORDS * sizeof(mem_word); n -= COPY_TURN_WORDS * sizeof(mem_word)) {
            /* all four loaded before any is stored: one LDM and one STM */
            mem_word w0 = sw[0], w1 = sw[1], w2 = sw[2], w3 = sw[3];
            dw[0] = w0;
            dw[1] = w1;
            dw[2] = w2;
            dw[3] = w3;
            dw += COPY_TURN_WORDS;
            sw += COPY_TURN_WORDS;
        }
        for (; n >= sizeof(mem_word); n -= sizeof(mem_word)) *dw++ = *sw++;
        d = (unsigned char *)dw;
        s = (const unsigned char *)sw;
    }
    while (n--) *d++ = *s++;
}

/* Back to front; safe for a destination after an overlapping source (memmove). */
PLAIN_LOOP static void copy_backward(unsigned char *d, const unsigned char *s, size_t n)
{
    d += n;
    s += n;
    if ((((uintptr_t)d ^ (uintptr_t)s) & WORD_MASK) == 0) {
        for (; n && !word_aligned(d); n--) *--d = *--s;
        mem_word *dw = (mem_word *)(void *)d;
        const mem_word *sw = (const mem_word *)(const void *)s;
        for (; n >= sizeof(mem_word); n -= sizeof(mem_word)) *--dw = *--sw;
        d = (unsigned char *)dw;
        s = (const unsigned char *)sw;
    }
    while (n--) *--d = *--s;
}

PLAIN_LOOP void *core_memcpy(void *to, const void *from, size_t n)
{
    copy_forward(to, from, n);
    return to;
}

PLAIN_LOOP void *core_memmove(void *to, const void *from, size_t n)
{
    if ((uintptr_t)to < (uintptr_t)from) copy_forward(to, from, n);
    else if (to != from) copy_backward(to, from, n);
    return to;
}

PLAIN_LOOP void *core_memset(void *to, int value, size_t n)
{
    unsigned char *d = to;
    const unsigned char byte = (unsigned char)value;
    for (; n && !word_aligned(d); n--) *d++ = byte;
    const mem_word word = byte * 0x01010101u;
    mem_word *w = (mem_word *)(void *)d;
    for (; n >= FILL_TURN_WORDS * sizeof(mem_word); n -= FILL_TURN_WORDS * sizeof(mem_word)) {
        w[0] = w[1] = w[2] = w[3] = w[4] = w[5] = w[6] = w[7] = word;
        w += FILL_TURN_WORDS;
    }
    for (; n >= sizeof(mem_word); n -= sizeof(mem_word)) *w++ = word;
    d = (unsigned char *)w;
    while (n--) *d++ = byte;
    return to;
}

PLAIN_LOOP int core_memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    if ((((uintptr_t)x ^ (uintptr_t)y) & WORD_MASK) == 0) {
        for (; n && !word_aligned(x); n--, x++, y++)
            if (*x != *y) return *x - *y;
        /* Equal words are skipped; the bytes of the first unequal one decide, below. */
        for (; n >= sizeof(mem_word); n -= sizeof(mem_word), x += sizeof(mem_word), y += sizeof(mem_word))
            if (*(const mem_word *)(const void *)x != *(const mem_word *)(const void *)y) break;
    }
    for (; n--; x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}

#if !__STDC_HOSTED__
void *memcpy(void *to, const void *from, size_t n) __attribute__((alias("core_memcpy")));
void *memmove(void *to, const void *from, size_t n) __attribute__((alias("core_memmove")));
void *memset(void *to, int value, size_t n) __attribute__((alias("core_memset")));
int memcmp(const void *a, const void *b, size_t n) __attribute__((alias("core_memcmp")));
#endif
