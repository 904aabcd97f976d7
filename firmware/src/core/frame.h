/* Link frames: COBS( type seq payload crc32le ) 0x00 (docs/protocol.md §2), decoded and encoded a
 * piece at a time, so neither side needs a second buffer for the encoded form; or written already
 * encoded as the bytes are made (frame_writer: the capture stream's frames). */
#ifndef HILBRIDGE_FRAME_H
#define HILBRIDGE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum frame_result {
    FRAME_PENDING, /* no delimiter yet */
    FRAME_READY,   /* a valid frame is in the buffer (type, seq, payload, crc) */
    FRAME_BAD,     /* a damaged frame was dropped: bad COBS, too short, too long or a CRC mismatch */
    FRAME_EMPTY    /* two delimiters in a row: nothing, not counted */
};

typedef struct frame_decoder {
    uint8_t *buffer;
    size_t capacity;
    size_t length;     /* decoded bytes so far */
    uint8_t block_left;
    bool zero_due;
    bool started;
    bool broken;       /* overlong: the rest up to the delimiter is discarded */
} frame_decoder;

void frame_decoder_init(frame_decoder *decoder, uint8_t *buffer, size_t capacity);

/* Forget the bytes of an unfinished frame. */
void frame_decoder_reset(frame_decoder *decoder);

/* Consume bytes up to and including the first delimiter; `*result` says what the delimiter ended
 * (FRAME_PENDING if none was reached). After FRAME_READY the frame is buffer[0..length). */
size_t frame_decoder_feed(frame_decoder *decoder, const uint8_t *bytes, size_t count, int *result);

typedef struct frame_encoder {
    const uint8_t *raw;
    size_t length;
    size_t position;
    size_t run_left;
    bool full_block;
    bool code_due;
    bool delimiter_due;
    bool active;
} frame_encoder;

/* Fill in type and seq before the `payload_length` bytes at raw + 2 and the CRC after them; returns
 * the raw frame length. */
size_t frame_seal(uint8_t *raw, uint8_t type, uint8_t seq, size_t payload_length);

/* Start sending the raw (sealed) frame of `length` bytes; it must stay unchanged until sent. */
void frame_encoder_start(frame_encoder *encoder, const uint8_t *raw, size_t length);

/* Up to `room` encoded bytes; the frame is done when encoder->active turns false. */
size_t frame_encoder_pull(frame_encoder *encoder, uint8_t *out, size_t room);

/* A frame written encoded as its raw bytes come, CRC-32 kept on the way: each byte is COBS-encoded
 * into `wire` once, where it is made, with no raw copy and no second pass. The wire bytes equal
 * frame_encoder_pull's for the same raw frame. */
typedef struct frame_writer {
    uint8_t *wire;
    uint32_t length;  /* wire bytes so far, the open block's code byte included */
    uint32_t code_at; /* where the open block's code byte goes */
    uint32_t crc;     /* CRC register (crc32.h) over the raw bytes so far */
} frame_writer;

#define FRAME_COBS_BLOCK 254u
/* Wire bytes of a raw frame of `raw` bytes at most: a code byte per started block and the delimiter. */
#define FRAME_WIRE_MAX(raw) ((raw) + (raw) / FRAME_COBS_BLOCK + 2u)

void frame_writer_begin(frame_writer *writer, uint8_t *wire, uint8_t type, uint8_t seq);
void frame_writer_put(frame_writer *writer, const uint8_t *bytes, size_t count);
/* Append the CRC and the delimiter; returns the wire length. */
size_t frame_writer_end(frame_writer *writer);

/* Four raw bytes (a capture record word), little-endian; runs once per captured access (a function
 * of its own: inlined, it spills its caller's registers on the M0+). */
void frame_writer_put_word(frame_writer *writer, uint32_t word);

#endif
