/* Table-driven because every byte of every frame passes through it. The 1 KB table is computed on
 * first use (2,048 shift steps) rather than by the preprocessor, whose nested expansion took about a
 * minute to compile; it lives in SRAM, which the RP2040 also reads faster than XIP flash. Filling it
 * twice (an interrupt during the first fill) writes the same values, so the flag needs no lock. */
#include "crc32.h"

#include <stdbool.h>

#define CRC32_POLYNOMIAL_REFLECTED 0xEDB88320u

static uint32_t crc_table[256];
static volatile bool crc_table_ready;

static void crc_table_fill(void)
{
    for (uint32_t n = 0; n < 256u; n++) {
        uint32_t c = n;
        for (int step = 0; step < 8; step++) c = (c & 1u) ? (c >> 1) ^ CRC32_POLYNOMIAL_REFLECTED : c >> 1;
        crc_table[n] = c;
    }
    crc_table_ready = true;
}

uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t length)
{
    if (!crc_table_ready) crc_table_fill();
    crc = ~crc;
    while (length--) crc = crc_table[(crc ^ *data++) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}
