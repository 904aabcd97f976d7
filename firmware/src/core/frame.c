#include "frame.h"

#include "core_mem.h"
#include "crc32.h"
#include "protocol_gen.h"

#define COBS_FULL_BLOCK FRAME_COBS_BLOCK

void frame_decoder_init(frame_decoder *decoder, uint8_t *buffer, size_t capacity)
{
    decoder->buffer = buffer;
    decoder->capacity = capacity;
    frame_decoder_reset(decoder);
}

void frame_decoder_reset(frame_decoder *decoder)
{
    decoder->length = 0;
    decoder->block_left = 0;
    decoder->zero_due = false;
    decoder->started = false;
    decoder->broken = false;
}

static void store(frame_decoder *decoder, uint8_t byte)
{
    if (decoder->length == decoder->capacity) {
        decoder->broken = true;
        return;
    }
    decoder->buffer[decoder->length++] = byte;
}

static int finish(frame_decoder *decoder)
{
    int result;
    if (!decoder->started) result = FRAME_EMPTY;
    else if (decoder->broken || decoder->block_left != 0) result = FRAME_BAD;
    else if (decoder->length < HB_HEADER_SIZE + HB_CRC_SIZE) result = FRAME_BAD;
    else {
        /* The CRC over a frame followed by its own CRC is a constant: one pass, no comparison. */
        result = crc32_update(0, decoder->buffer, decoder->length) == HB_CRC_RESIDUE ? FRAME_READY : FRAME_BAD;
    }
    size_t length = decoder->length;
    frame_decoder_reset(decoder);
    decoder->length = result == FRAME_READY ? length : 0;
    return result;
}

size_t frame_decoder_feed(frame_decoder *decoder, const uint8_t *bytes, size_t count, int *result)
{
    size_t used = 0;
    *result = FRAME_PENDING;
    while (used < count) {
        uint8_t byte = bytes[used++];
        if (byte == 0) {
            *result = finish(decoder);
            return used;
        }
        if (!decoder->started) {
            decoder->started = true;
            decoder->length = 0;
        }
        if (decoder->broken) continue;
        if (decoder->block_left == 0) {
            if (decoder->zero_due) store(decoder, 0);
            decoder->block_left = (uint8_t)(byte - 1u);
            decoder->zero_due = byte != 0xFFu;
        } else {
            store(decoder, byte);
            decoder->block_left--;
        }
    }
    return used;
}

size_t frame_seal(uint8_t *raw, uint8_t type, uint8_t seq, size_t payload_length)
{
    size_t end = HB_HEADER_SIZE + payload_length;
    raw[0] = type;
    raw[1] = seq;
    uint32_t crc = crc32_update(0, raw, end);
    raw[end] = (uint8_t)crc;
    raw[end + 1] = (uint8_t)(crc >> 8);
    raw[end + 2] = (uint8_t)(crc >> 16);
    raw[end + 3] = (uint8_t)(crc >> 24);
    return end + HB_CRC_SIZE;
}

void frame_encoder_start(frame_encoder *encoder, const uint8_t *raw, size_t length)
{
    encoder->raw = raw;
    encoder->length = length;
    encoder->position = 0;
    encoder->run_left = 0;
    encoder->full_block = false;
    encoder->code_due = true;
    encoder->delimiter_due = false;
    encoder->active = true;
}

/* The block starting at `position`: nonzero bytes up to the next zero, the end, or 254 of them. */
static size_t run_length(const frame_encoder *encoder)
{
    const uint8_t *start = encoder->raw + encoder->position;
    size_t left = encoder->length - encoder->position;
    const uint8_t *end = start + (left < COBS_FULL_BLOCK ? left : COBS_FULL_BLOCK);
    const uint8_t *p = start;
    while (p < end && *p) p++;
    return (size_t)(p - start);
}

size_t frame_encoder_pull(frame_encoder *encoder, uint8_t *out, size_t room)
{
    size_t made = 0;
    while (made < room && encoder->active) {
        if (encoder->delimiter_due) {
            out[made++] = 0;
            encoder->active = false;
        } else if (encoder->code_due) {
            encoder->run_left = run_length(encoder);
            encoder->full_block = encoder->run_left == COBS_FULL_BLOCK;
            out[made++] = (uint8_t)(encoder->run_left + 1u);
            encoder->code_due = false;
        } else if (encoder->run_left) {
            size_t n = encoder->run_left < room - made ? encoder->run_left : room - made;
            mem_copy(out + made, encoder->raw + encoder->position, n);
            made += n;
            encoder->position += n;
            encoder->run_left -= n;
        }
        if (encoder->active && !encoder->code_due && !encoder->delimiter_due && encoder->run_left == 0) {
            /* End of a block: the data ends here, or a zero (implied by a short block) follows. */
            if (encoder->position == encoder->length) encoder->delimiter_due = true;
            else {
                if (!encoder->full_block) encoder->position++; /* the zero the block implies */
                encoder->code_due = true;
            }
        }
    }
    return made;
}

/* One byte into a block that cannot fill up on the way: a zero closes it and opens the next. */
static inline uint32_t cobs_put(uint8_t *wire, uint32_t at, uint32_t *code_at, uint8_t byte)
{
    wire[at] = byte;
    if (byte == 0) {
        wire[*code_at] = (uint8_t)(at - *code_at);
        *code_at = at;
    }
    return at + 1u;
}

void frame_writer_begin(frame_writer *writer, uint8_t *wire, uint8_t type, uint8_t seq)
{
    crc32_prepare();
    writer->wire = wire;
    writer->length = 1; /* the first block's code byte */
    writer->code_at = 0;
    writer->crc = crc32_register(0);
    const uint8_t header[HB_HEADER_SIZE] = {type, seq};
    frame_writer_put(writer, header, sizeof header);
}

void frame_writer_put(frame_writer *writer, const uint8_t *bytes, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (writer->length - writer->code_at == COBS_FULL_BLOCK + 1u) { /* full: code FFh, no zero implied */
            writer->wire[writer->code_at] = 0xFFu;
            writer->code_at = writer->length++;
        }
        writer->length = cobs_put(writer->wire, writer->length, &writer->code_at, bytes[i]);
        writer->crc = crc32_byte(writer->crc, bytes[i]);
    }
}

size_t frame_writer_end(frame_writer *writer)
{
    uint32_t crc = crc32_value(writer->crc);
    const uint8_t crc_bytes[HB_CRC_SIZE] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),
                                            (uint8_t)(crc >> 24)};
    frame_writer_put(writer, crc_bytes, sizeof crc_bytes);
    writer->wire[writer->code_at] = (uint8_t)(writer->length - writer->code_at); /* FFh when full */
    writer->wire[writer->length++] = 0;
    return writer->length;
}

/* cobs_put for byte k of a run written from p on: no index arithmetic, a store at a constant offset. */
static inline void cobs_put_at(uint8_t *p, unsigned k, uint8_t **code, uint8_t byte)
{
    p[k] = byte;
    if (byte == 0) {
        **code = (uint8_t)(p + k - *code);
        *code = p + k;
    }
}

/* frame_writer_put_word where the open block may fill up: byte by byte, out of the usual path's way
 * (its array would give that path a stack frame). */
__attribute__((noinline)) static void put_word_carefully(frame_writer *writer, uint32_t word)
{
    const uint8_t bytes[4] = {(uint8_t)word, (uint8_t)(word >> 8), (uint8_t)(word >> 16), (uint8_t)(word >> 24)};
    frame_writer_put(writer, bytes, sizeof bytes);
}

void frame_writer_put_word(frame_writer *writer, uint32_t word)
{
    uint32_t at = writer->length;
    if (at - writer->code_at > COBS_FULL_BLOCK + 1u - 4u) {
        put_word_carefully(writer, word);
        return;
    }
    uint8_t *wire = writer->wire;
    uint8_t *p = wire + at;
    uint8_t *code = wire + writer->code_at;
    cobs_put_at(p, 0, &code, (uint8_t)word);
    cobs_put_at(p, 1, &code, (uint8_t)(word >> 8));
    cobs_put_at(p, 2, &code, (uint8_t)(word >> 16));
    cobs_put_at(p, 3, &code, (uint8_t)(word >> 24));
    writer->length = at + 4u;
    writer->code_at = (uint32_t)(code - wire);
    writer->crc = crc32_word(writer->crc, word);
}
