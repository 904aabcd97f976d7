/* Byte copies through the compiler's builtins, so the core needs no C library headers: the RP2040
 * build has none (gcc-arm-none-eabi without newlib); mem.c supplies the functions gcc may call. */
#ifndef HILBRIDGE_CORE_MEM_H
#define HILBRIDGE_CORE_MEM_H

#define mem_copy(to, from, n) __builtin_memcpy((to), (from), (n))
#define mem_move(to, from, n) __builtin_memmove((to), (from), (n))
#define mem_fill(to, value, n) __builtin_memset((to), (value), (n))

#endif
