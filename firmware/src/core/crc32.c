/* Table-driven because every byte of every frame passes through it: slicing-by-4, four 1 KB tables
 * interleaved by byte (a step of four bytes costs about what one byte does with a single table, and
 * on the M0+ each look-up is a shift, an add and a load at a small constant offset). The tables are computed
 * on first use rather than by the preprocessor, whose nested expansion took about a minute to
 * compile; they live in SRAM, which the RP2040 also reads faster than XIP flash. Filling them twice
 * (an interrupt during the first fill) writes the same values, so the flag needs no lock. */
#include "crc32.h"

#include <stdbool.h>

#define CRC32_POLYNOMIAL_REFLECTED 0xEDB88320u

crc32_slice crc32_slices[256];
static volatile bool crc_tables_ready;

void crc32_prepare(void)
{
    if (crc_tables_ready) return;
    for (uint32_t n = 0; n < 256u; n++) {
        uint32_t c = n;
        for (int step = 0; step < 8; step++) c = (c & 1u) ? (c >> 1) ^ CRC32_POLYNOMIAL_REFLECTED : c >> 1;
        crc32_slices[n].after[0] = c;
    }
    for (uint32_t n = 0; n < 256u; n++)
        for (int k = 1; k < 4; k++) {
            uint32_t previous = crc32_slices[n].after[k - 1];
            crc32_slices[n].after[k] = (previous >> 8) ^ crc32_slices[previous & 0xFFu].after[0];
        }
    crc_tables_ready = true;
}

uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t length)
{
    crc32_prepare();
    uint32_t reg = crc32_register(crc);
    for (; length && ((uintptr_t)data & 3u); length--) reg = crc32_byte(reg, *data++);
    for (; length >= 4u; length -= 4u, data += 4) {
        const uint8_t *p = __builtin_assume_aligned(data, 4);
        reg = crc32_word(reg, (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    }
    while (length--) reg = crc32_byte(reg, *data++);
    return crc32_value(reg);
}
