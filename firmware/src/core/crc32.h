/* CRC-32/ISO-HDLC, the zlib CRC the link frames carry (docs/protocol.md §2). */
#ifndef HILBRIDGE_CRC32_H
#define HILBRIDGE_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* zlib.crc32(data, crc): start with 0, continue with the previous result. */
uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t length);

#endif
