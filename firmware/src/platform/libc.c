/* The three C library functions the compiler and the protocol core call; the firmware links no libc
 * (-nostdlib). Plain byte loops: the hot data paths move at most a frame at a time. */
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *to, const void *from, size_t count);
void *memmove(void *to, const void *from, size_t count);
void *memset(void *to, int value, size_t count);

void *memcpy(void *to, const void *from, size_t count)
{
    uint8_t *out = to;
    const uint8_t *in = from;
    while (count--) {
        *out++ = *in++;
    }
    return to;
}

void *memmove(void *to, const void *from, size_t count)
{
    uint8_t *out = to;
    const uint8_t *in = from;
    if (out < in) {
        while (count--) {
            *out++ = *in++;
        }
    } else {
        while (count--) {
            out[count] = in[count];
        }
    }
    return to;
}

void *memset(void *to, int value, size_t count)
{
    uint8_t *out = to;
    while (count--) {
        *out++ = (uint8_t)value;
    }
    return to;
}
