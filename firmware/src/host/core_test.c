/* hb-core-test: the core's building blocks behind a line protocol on stdin/stdout, so the tests in
 * tests/firmware/ can compare them with the Python side (hilbridge.link.protocol, the cartridge
 * model) one call at a time. Hex in, hex out; one answer line per request line:
 *
 *   tables                        the generated tables, one "KIND ..." line each, then "END"
 *   crc HEX                       CRC-32 of the bytes, 8 hex digits
 *   cobs HEX                      COBS encoding of the bytes (no delimiter)
 *   encode TYPE SEQ PAYLOAD       the wire bytes of a frame (delimiter included)
 *   writer TYPE SEQ PAYLOAD PIECES  the same through frame_writer (the capture stream's one-pass encoder):
 *                                 the payload put as 4-byte record words where PIECES says so, the rest
 *                                 bytewise; PIECES is a string of r (a record) and b (a byte)
 *   decode WIRE                   what the decoder makes of the bytes: READY type seq payload | BAD | EMPTY,
 *                                 one per delimiter, separated by spaces, then PENDING n
 *   pack ID DIR V,V,.. TAIL       payload of message ID (DIR 0 request, 1 response) from its fields
 *   unpack ID DIR PAYLOAD         OK V,V,.. TAIL | SHORT | LONG
 *   cart NAME IMAGE               load a cartridge; then fetch A P1 | read A P1 P2 | write A V P1 |
 *                                 bank P1 | view P1
 *   memsweep FUNCTION OFFSETS LENGTHS  the core's memcpy, memmove, memset or memcmp (mem.c, which the
 *                                 RP2040 build links as the C library's) against this C library's, for
 *                                 every destination and source offset below OFFSETS and every length up
 *                                 to LENGTHS (memset: five fill values; memcmp: the first difference at
 *                                 every position, or none): CASES n MISMATCHES m, then the first one's
 *                                 offsets, length and value
 * (hex strings may be "-" for no bytes; numbers are decimal) */
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cart.h"
#include "core_mem.h"
#include "crc32.h"
#include "frame.h"
#include "protocol_codec_gen.h"
#include "protocol_gen.h"

#define TEST_FRAME (HB_HEADER_SIZE + HB_PROTOCOL_MAX_PAYLOAD + HB_CRC_SIZE)

static uint8_t raw[TEST_FRAME];
static uint8_t wire[TEST_FRAME * 2 + 16];
static uint8_t bytes[TEST_FRAME * 2 + 16];
static uint8_t cart_image[HB_MAX_IMAGE_SIZE];
static cart current;

static size_t from_hex(const char *text, uint8_t *out, size_t room)
{
    size_t n = 0;
    if (text == NULL || strcmp(text, "-") == 0) return 0;
    while (text[0] && text[1] && n < room) {
        unsigned value;
        if (sscanf(text, "%2x", &value) != 1) break;
        out[n++] = (uint8_t)value;
        text += 2;
    }
    return n;
}

static void print_hex(const uint8_t *data, size_t length)
{
    if (length == 0) fputs("-", stdout);
    for (size_t i = 0; i < length; i++) printf("%02x", data[i]);
}

static void print_tables(void)
{
    for (size_t i = 0; i < HB_MESSAGE_COUNT; i++) {
        const hb_message_info *m = &HB_MESSAGE_TABLE[i];
        printf("MESSAGE\t%s\t%u\t%u\t%s\t%s\n", m->name, m->id, m->kind, m->request, m->response);
    }
    for (size_t i = 0; i < HB_CODE_COUNT; i++)
        printf("CODE\t%s\t%s\t%u\n", HB_CODE_TABLE[i].table, HB_CODE_TABLE[i].name, (unsigned)HB_CODE_TABLE[i].value);
    for (size_t i = 0; i < HB_MAPPER_TYPE_COUNT; i++) {
        const hb_mapper_type *t = &HB_MAPPER_TYPES[i];
        printf("MAPPER\t%s\t%u\t", t->name, t->protocol_id);
        for (size_t s = 0; s < t->size_count; s++) printf(s ? ",%u" : "%u", (unsigned)t->sizes[s]);
        printf("\t%u\t%u\t%u\t%u\t%u\t%u\n", (unsigned)t->bank_size, t->bank_select, t->high_window,
               (unsigned)t->program_offset, t->wrap, t->data_area);
    }
    printf("CONST\tPROTOCOL_VERSION\t%u\n", HB_PROTOCOL_VERSION);
    printf("CONST\tMAX_PAYLOAD\t%u\n", HB_PROTOCOL_MAX_PAYLOAD);
    printf("CONST\tCRC_RESIDUE\t%u\n", HB_CRC_RESIDUE);
    printf("CONST\tCAPTURE_WORD_SIZE\t%u\n", HB_CAPTURE_WORD_SIZE);
    printf("WORD\ttag\t%u\t%u\n", HB_CAPTURE_WORD_TAG_LSB, HB_CAPTURE_WORD_TAG_BITS);
    printf("WORD\tdelta\t%u\t%u\n", HB_CAPTURE_WORD_DELTA_LSB, HB_CAPTURE_WORD_DELTA_BITS);
    printf("WORD\taddress\t%u\t%u\n", HB_CAPTURE_WORD_ADDRESS_LSB, HB_CAPTURE_WORD_ADDRESS_BITS);
    printf("WORD\tvalue\t%u\t%u\n", HB_CAPTURE_WORD_VALUE_LSB, HB_CAPTURE_WORD_VALUE_BITS);
    printf("WORD\thigh\t%u\t%u\n", HB_CAPTURE_WORD_HIGH_LSB, HB_CAPTURE_WORD_HIGH_BITS);
    printf("END\n");
}

static void encode(unsigned type, unsigned seq, const char *payload_hex)
{
    size_t payload = from_hex(payload_hex, raw + HB_HEADER_SIZE, HB_PROTOCOL_MAX_PAYLOAD);
    size_t length = frame_seal(raw, (uint8_t)type, (uint8_t)seq, payload);
    frame_encoder encoder;
    frame_encoder_start(&encoder, raw, length);
    size_t made = 0;
    while (encoder.active) made += frame_encoder_pull(&encoder, wire + made, 7); /* small pieces on purpose */
    print_hex(wire, made);
    putchar('\n');
}

static void write_frame(unsigned type, unsigned seq, const char *payload_hex, const char *pieces)
{
    size_t payload = from_hex(payload_hex, raw, HB_PROTOCOL_MAX_PAYLOAD);
    frame_writer writer;
    frame_writer_begin(&writer, wire, (uint8_t)type, (uint8_t)seq);
    size_t at = 0;
    for (const char *piece = pieces ? pieces : ""; at < payload; piece = *piece ? piece + 1 : piece) {
        if (*piece == 'r' && payload - at >= HB_CAPTURE_WORD_SIZE) {
            const uint8_t *r = raw + at;
            frame_writer_put_word(&writer, (uint32_t)r[0] | (uint32_t)r[1] << 8 | (uint32_t)r[2] << 16 |
                                               (uint32_t)r[3] << 24);
            at += HB_CAPTURE_WORD_SIZE;
        } else {
            frame_writer_put(&writer, raw + at, 1);
            at++;
        }
    }
    print_hex(wire, frame_writer_end(&writer));
    putchar('\n');
}

static void cobs(const char *hex)
{
    size_t length = from_hex(hex, raw, sizeof raw);
    frame_encoder encoder;
    frame_encoder_start(&encoder, raw, length);
    size_t made = 0;
    while (encoder.active) made += frame_encoder_pull(&encoder, wire + made, 5);
    print_hex(wire, made - 1); /* without the delimiter */
    putchar('\n');
}

static void decode(const char *wire_hex)
{
    size_t count = from_hex(wire_hex, bytes, sizeof bytes);
    frame_decoder decoder;
    frame_decoder_init(&decoder, raw, sizeof raw);
    size_t used = 0;
    while (used < count) {
        int result;
        used += frame_decoder_feed(&decoder, bytes + used, count - used, &result);
        if (result == FRAME_READY) {
            printf("READY %u %u ", raw[0], raw[1]);
            print_hex(raw + HB_HEADER_SIZE, decoder.length - HB_HEADER_SIZE - HB_CRC_SIZE);
            putchar(' ');
        } else if (result == FRAME_BAD) fputs("BAD ", stdout);
        else if (result == FRAME_EMPTY) fputs("EMPTY ", stdout);
    }
    printf("PENDING %u\n", decoder.started ? 1u : 0u);
}

static void pack(unsigned id, unsigned direction, char *values_text, const char *tail_hex)
{
    uint32_t values[16];
    size_t n = 0;
    for (char *item = strtok(values_text, ","); item && n < 16; item = strtok(NULL, ","))
        if (strcmp(item, "-") != 0) values[n++] = (uint32_t)strtoul(item, NULL, 10);
    size_t tail = from_hex(tail_hex, bytes, sizeof bytes);
    hb_reply out = {raw, HB_PROTOCOL_MAX_PAYLOAD, 0, 0};
    if (hb_codec_pack((uint8_t)id, (int)direction, values, bytes, tail, &out) < 0) puts("UNKNOWN");
    else {
        print_hex(raw, out.length);
        putchar('\n');
    }
}

static void unpack(unsigned id, unsigned direction, const char *payload_hex)
{
    size_t length = from_hex(payload_hex, bytes, sizeof bytes);
    uint32_t values[16];
    const uint8_t *tail;
    size_t tail_length;
    int n = hb_codec_unpack((uint8_t)id, (int)direction, bytes, length, values, &tail, &tail_length);
    if (n == -1) puts("SHORT");
    else if (n == -2) puts("LONG");
    else if (n < 0) puts("UNKNOWN");
    else {
        fputs("OK ", stdout);
        if (n == 0) fputs("-", stdout);
        for (int i = 0; i < n; i++) printf(i ? ",%u" : "%u", (unsigned)values[i]);
        putchar(' ');
        print_hex(tail, tail_length);
        putchar('\n');
    }
}

static void load_cart(const char *name, const char *image_hex)
{
    const hb_mapper_type *type = cart_type_by_name(name);
    size_t size = from_hex(image_hex, cart_image, sizeof cart_image);
    if (type == NULL || !cart_size_allowed(type, (uint32_t)size)) {
        puts("REFUSED");
        return;
    }
    cart_init(&current, type, cart_image, (uint32_t)size);
    puts("OK");
}

#define SWEEP_ROOM 512
static _Alignas(8) unsigned char ours[SWEEP_ROOM], theirs[SWEEP_ROOM], source[SWEEP_ROOM], other[SWEEP_ROOM];
static const int sweep_fills[] = {0x00, 0x5a, 0xff, 0x1a5, -1};
#define SWEEP_FILLS (sizeof sweep_fills / sizeof sweep_fills[0])

static int sign(int value)
{
    return (value > 0) - (value < 0);
}

static void sweep_patterns(void)
{
    for (unsigned i = 0; i < SWEEP_ROOM; i++) {
        ours[i] = theirs[i] = (unsigned char)(i * 37u + 11u);
        source[i] = (unsigned char)(i * 91u + 5u);
    }
}

/* One case of memsweep: whether the core's function did what the C library's does. `value` is the
 * fill (memset) or the position of the first difference (memcmp). */
static int sweep_case(const char *function, unsigned to, unsigned from, unsigned n, int value)
{
    sweep_patterns();
    void *returned;
    if (strcmp(function, "memcpy") == 0) {
        returned = core_memcpy(ours + to, source + from, n);
        memcpy(theirs + to, source + from, n);
    } else if (strcmp(function, "memmove") == 0) {
        returned = core_memmove(ours + to, ours + from, n);
        memmove(theirs + to, theirs + from, n);
    } else if (strcmp(function, "memset") == 0) {
        returned = core_memset(ours + to, value, n);
        memset(theirs + to, value, n);
    } else {
        memcpy(other + from, ours + to, n);
        if ((unsigned)value < n) other[from + (unsigned)value] ^= (unsigned char)(1u << (value % 8));
        const unsigned char *a = ours + to, *b = other + from;
        return sign(core_memcmp(a, b, n)) == sign(memcmp(a, b, n)) &&
               sign(core_memcmp(b, a, n)) == sign(memcmp(b, a, n));
    }
    return returned == ours + to && memcmp(ours, theirs, SWEEP_ROOM) == 0;
}

static void mem_sweep(const char *function, unsigned offsets, unsigned lengths)
{
    const int known = strcmp(function, "memcpy") == 0 || strcmp(function, "memmove") == 0 ||
                      strcmp(function, "memset") == 0 || strcmp(function, "memcmp") == 0;
    if (!known || offsets + lengths > SWEEP_ROOM) {
        puts("BAD");
        return;
    }
    const int fills = strcmp(function, "memset") == 0, differences = strcmp(function, "memcmp") == 0;
    unsigned long cases = 0, mismatches = 0;
    char first[96] = "";
    for (unsigned to = 0; to < offsets; to++) {
        for (unsigned from = 0; from < (fills ? 1u : offsets); from++) {
            for (unsigned n = 0; n <= lengths; n++) {
                const unsigned values = fills ? SWEEP_FILLS : differences ? n + 1 : 1;
                for (unsigned v = 0; v < values; v++) {
                    const int value = fills ? sweep_fills[v] : (int)v;
                    cases++;
                    if (sweep_case(function, to, from, n, value)) continue;
                    if (!mismatches++) snprintf(first, sizeof first, " FIRST %u %u %u %d", to, from, n, value);
                }
            }
        }
    }
    printf("CASES %lu MISMATCHES %lu%s\n", cases, mismatches, first);
}

int main(void)
{
    char *line = NULL;
    size_t room = 0;
    while (getline(&line, &room, stdin) > 0) {
        line[strcspn(line, "\r\n")] = 0;
        char *command = strtok(line, " ");
        char *a = strtok(NULL, " "), *b = strtok(NULL, " "), *c = strtok(NULL, " "), *d = strtok(NULL, " ");
        unsigned x = a ? (unsigned)strtoul(a, NULL, 10) : 0, y = b ? (unsigned)strtoul(b, NULL, 10) : 0;
        unsigned z = c ? (unsigned)strtoul(c, NULL, 10) : 0;
        if (command == NULL) continue;
        if (strcmp(command, "tables") == 0) print_tables();
        else if (strcmp(command, "crc") == 0) {
            size_t n = from_hex(a, bytes, sizeof bytes);
            printf("%08x\n", (unsigned)crc32_update(0, bytes, n));
        } else if (strcmp(command, "cobs") == 0) cobs(a);
        else if (strcmp(command, "encode") == 0) encode(x, y, c);
        else if (strcmp(command, "writer") == 0) write_frame(x, y, c, d);
        else if (strcmp(command, "decode") == 0) decode(a);
        else if (strcmp(command, "pack") == 0 && c) pack(x, y, c, d);
        else if (strcmp(command, "unpack") == 0) unpack(x, y, c);
        else if (strcmp(command, "cart") == 0) load_cart(a ? a : "", b);
        else if (strcmp(command, "memsweep") == 0) mem_sweep(a ? a : "", y, z);
        else if (current.type == NULL) puts("NO CART");
        else if (strcmp(command, "fetch") == 0) printf("%u\n", cart_fetch(&current, (uint16_t)x, (uint8_t)y));
        else if (strcmp(command, "read") == 0) printf("%u\n", cart_movx_read(&current, (uint16_t)x, (uint8_t)y, (uint8_t)z));
        else if (strcmp(command, "write") == 0) {
            cart_movx_write(&current, (uint16_t)x, (uint8_t)y, (uint8_t)z);
            puts("OK");
        } else if (strcmp(command, "bank") == 0) printf("%u\n", (unsigned)cart_bank(&current, (uint8_t)x));
        else if (strcmp(command, "view") == 0) {
            static uint8_t view[CART_VIEW_SIZE];
            cart_program_view(&current, (uint8_t)x, view);
            print_hex(view, sizeof view);
            putchar('\n');
        } else puts("UNKNOWN");
        fflush(stdout);
    }
    free(line);
    return 0;
}
