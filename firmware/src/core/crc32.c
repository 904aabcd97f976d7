/* Table-driven (one 1 KB table in flash) because every byte of every frame passes through it. */
#include "crc32.h"

#define CRC32_POLYNOMIAL_REFLECTED 0xEDB88320u

/* The table, built by the preprocessor: entry n is 8 shift steps of n. */
#define CRC_STEP(c) (((c) & 1u) ? ((c) >> 1) ^ CRC32_POLYNOMIAL_REFLECTED : (c) >> 1)
#define CRC_ENTRY(n) CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP(CRC_STEP((uint32_t)(n)))))))))
#define CRC_ROW4(n) CRC_ENTRY(n), CRC_ENTRY((n) + 1), CRC_ENTRY((n) + 2), CRC_ENTRY((n) + 3)
#define CRC_ROW16(n) CRC_ROW4(n), CRC_ROW4((n) + 4), CRC_ROW4((n) + 8), CRC_ROW4((n) + 12)
#define CRC_ROW64(n) CRC_ROW16(n), CRC_ROW16((n) + 16), CRC_ROW16((n) + 32), CRC_ROW16((n) + 48)

static const uint32_t crc_table[256] = {CRC_ROW64(0), CRC_ROW64(64), CRC_ROW64(128), CRC_ROW64(192)};

uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t length)
{
    crc = ~crc;
    while (length--) crc = crc_table[(crc ^ *data++) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}
