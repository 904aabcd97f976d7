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
typedef struct crc32_slice {
    uint32_t after[4]; /* after[k]: the CRC step of byte n followed by k zero bytes */
} crc32_slice;
extern crc32_slice crc32_slices[256]; /* by byte: the four values one step of four bytes needs lie together */

void crc32_prepare(void);

static inline uint32_t crc32_register(uint32_t crc) { return ~crc; }

static inline uint32_t crc32_value(uint32_t reg) { return ~reg; }

static inline uint32_t crc32_byte(uint32_t reg, uint8_t byte)
{
    return crc32_slices[(reg ^ byte) & 0xFFu].after[0] ^ (reg >> 8);
}

/* Four bytes at once (slicing-by-4): `word` holds them little-endian, the first in bits 0-7. */
static inline uint32_t crc32_word(uint32_t reg, uint32_t word)
{
    reg ^= word;
    return crc32_slices[reg & 0xFFu].after[3] ^ crc32_slices[(reg >> 8) & 0xFFu].after[2] ^
           crc32_slices[(reg >> 16) & 0xFFu].after[1] ^ crc32_slices[reg >> 24].after[0];
}

#endif
