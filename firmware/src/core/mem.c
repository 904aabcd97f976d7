/* memcpy, memmove, memset and memcmp for a freestanding build (gcc emits calls to them even without
 * a C library). A hosted build (the PC programs) uses its C library's and compiles nothing here. */
#if !__STDC_HOSTED__
#include <stddef.h>

/* Keep gcc from turning these loops back into calls to themselves. */
#define PLAIN_LOOP __attribute__((optimize("no-tree-loop-distribute-patterns")))

PLAIN_LOOP void *memcpy(void *to, const void *from, size_t n)
{
    unsigned char *d = to;
    const unsigned char *s = from;
    while (n--) *d++ = *s++;
    return to;
}

PLAIN_LOOP void *memmove(void *to, const void *from, size_t n)
{
    unsigned char *d = to;
    const unsigned char *s = from;
    if (d < s)
        while (n--) *d++ = *s++;
    else
        while (n--) d[n] = s[n];
    return to;
}

PLAIN_LOOP void *memset(void *to, int value, size_t n)
{
    unsigned char *d = to;
    while (n--) *d++ = (unsigned char)value;
    return to;
}

PLAIN_LOOP int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n--; x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}
#else
typedef int hosted_build_uses_the_c_library; /* ISO C wants at least one declaration per file */
#endif
