/* Byte copies through the compiler's builtins, so the core needs no C library headers: the RP2040
 * build has none (gcc-arm-none-eabi without newlib); mem.c supplies the functions gcc may call, as
 * the core_mem* functions, which a hosted build (hb-core-test) compares with its C library's. */
#ifndef HILBRIDGE_CORE_MEM_H
#define HILBRIDGE_CORE_MEM_H

#include <stddef.h>

#define mem_copy(to, from, n) __builtin_memcpy((to), (from), (n))
#define mem_move(to, from, n) __builtin_memmove((to), (from), (n))
#define mem_fill(to, value, n) __builtin_memset((to), (value), (n))

void *core_memcpy(void *to, const void *from, size_t n);
void *core_memmove(void *to, const void *from, size_t n);
void *core_memset(void *to, int value, size_t n);
int core_memcmp(const void *a, const void *b, size_t n);

#endif
