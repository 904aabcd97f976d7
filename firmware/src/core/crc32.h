/* CRC-32/ISO-HDLC, the zlib CRC the link frames carry (docs/protocol.md §2). */
#ifndef HILBRIDGE_CRC32_H
#define HILBRIDGE_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* zlib.crc32(data, crc): start with 0, continue with the previous result. */
uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t length);

/* The CRC register of a running computation is the inverted CRC: start at crc32_register(0), end
 * with crc32_value. The steps take bytes from values in registers, so a capture record is checked
 * where it is made, without being stored and loaded again. crc32_prepare must have run first. */
extern uint32_t crc32_tables[4][256]; /* [0] the byte table; [k][n]: n followed by k zero bytes */

void crc32_prepare(void);

static inline uint32_t crc32_register(uint32_t crc) { return ~crc; }

static inline uint32_t crc32_value(uint32_t reg) { return ~reg; }

static inline uint32_t crc32_byte(uint32_t reg, uint8_t byte)
{
    return crc32_tables[0][(reg ^ byte) & 0xFFu] ^ (reg >> 8);
}

/* Four bytes at once (slicing-by-4): `word` holds them little-endian, the first in bits 0-7. */
static inline uint32_t crc32_word(uint32_t reg, uint32_t word)
{
    reg ^= word;
    return crc32_tables[3][reg & 0xFFu] ^ crc32_tables[2][(reg >> 8) & 0xFFu] ^
           crc32_tables[1][(reg >> 16) & 0xFFu] ^ crc32_tables[0][reg >> 24];
}

#endif
