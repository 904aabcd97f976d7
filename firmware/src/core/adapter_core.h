/* The adapter's protocol core: framing, sequence numbers, duplicate suppression, every command of
 * docs/protocol.md, and the capture stream. Plain C11, no hardware access, static memory only: the
 * platform (RP2040 firmware or the host program) reaches the cartridge slot, the serve engine and the
 * bus sniffer through the `adapter_ops` table it fills in, and moves link bytes with core_receive /
 * core_transmit. All core_* functions must be called from one execution context (the platform's main
 * loop), never from an interrupt handler. */
#ifndef HILBRIDGE_ADAPTER_CORE_H
#define HILBRIDGE_ADAPTER_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "protocol_gen.h"

/* The largest payload the core accepts and sends, announced in HELLO. Two frame buffers of this size
 * (request and reply) are the core's largest memory; 32768 leaves most of the RP2040's 264 KB to the
 * platform and still carries 10 passes of a 3 KB program area in one CART_READ_REPEAT. */
#ifndef CORE_MAX_PAYLOAD
#define CORE_MAX_PAYLOAD 32768u
#endif
#define CORE_MAX_FRAME (HB_HEADER_SIZE + CORE_MAX_PAYLOAD + HB_CRC_SIZE)

/* Largest uploadable image: the largest of any mapper (hilbridge/machine/mappers.tsv). */
#define CORE_UPLOAD_MAX HB_MAX_IMAGE_SIZE

/* Remembered replies (docs/protocol.md §3 "Duplicates"). Replies up to CORE_CACHED_REPLY_MAX payload
 * bytes are kept verbatim (ERROR details are cut to fit, so every refusal is kept); a duplicate of a
 * request with a longer reply (reads, FIRMWARE_INFO: no side effects) is executed again, as the
 * protocol allows. */
#define CORE_REPLY_CACHE 64u
#define CORE_CACHED_REPLY_MAX 64u

/* Capture stream buffering: chunks of up to CORE_CHUNK_WORDS record words (docs/protocol.md §4.1: a
 * record and its TIME and P1_LATCH words); CORE_CHUNK_SLOTS of them may wait for the link;
 * RESET_DETECTED / FRAME_SYNC events wait in CORE_MARKER_SLOTS. */
#ifndef CORE_CHUNK_WORDS
#define CORE_CHUNK_WORDS 253u
#endif
#ifndef CORE_CHUNK_SLOTS
#define CORE_CHUNK_SLOTS 16u
#endif
#define CORE_MARKER_SLOTS 32u
#define CORE_CHUNK_HEADER 9u /* chunk_seq:I cycle:I p1:B */
#define CORE_CHUNK_PAYLOAD (CORE_CHUNK_HEADER + CORE_CHUNK_WORDS * HB_CAPTURE_WORD_SIZE)
/* A chunk is closed when fewer words are free than the longest record takes (P1_LATCH, TIME, record). */
#define CORE_RECORD_MAX_WORDS 3u

/* What the platform provides. `context` is passed back to every function. */
typedef struct adapter_ops {
    void *context;

    /* Board description for HELLO and FIRMWARE_INFO. */
    const char *serial;    /* USB serial number */
    const char *build;     /* FIRMWARE_INFO text: version, commit, build date */
    uint8_t fw_major, fw_minor, fw_patch;
    uint16_t board_id;
    uint32_t capabilities; /* bit set of HB_CAPABILITY_*_BIT; commands of a missing one get NOT_SUPPORTED */
    uint32_t (*uptime_ms)(void *context);

    /* The slot, console side isolated. cart_read fills `out` with `length` bytes from `address` on,
     * strobing /PSEN (HB_STROBE_PSEN) or pin E (HB_STROBE_MOVX_READ); the core has checked the range. */
    bool (*cart_present)(void *context);
    void (*set_ports)(void *context, uint8_t p1, uint8_t p2);
    void (*cart_read)(void *context, uint8_t p1, uint8_t p2, uint8_t strobe, uint16_t address,
                      uint16_t length, uint8_t *out);
    void (*cart_write)(void *context, uint8_t p1, uint8_t p2, uint8_t address, uint8_t value);

    /* Cartridge emulation: serve `image` (owned by the core, unchanged until emulation_stop) with
     * the mapper of that protocol id (HB_MAPPER_*). False: the platform cannot serve it. */
    bool (*emulation_start)(void *context, const uint8_t *image, uint32_t size, uint8_t mapper_id);
    void (*emulation_stop)(void *context);

    /* Bus capture: start sniffing (`what` = bit set of HB_CAPTURE_* kinds) and report every access
     * with core_capture_access until capture_stop. False: the platform cannot capture now. */
    bool (*capture_start)(void *context, uint8_t what);
    void (*capture_stop)(void *context);
} adapter_ops;

/* One remembered reply: the request's identity (type, length, CRC-32 of type+seq+payload as framed)
 * and, when short enough, the reply payload itself. */
typedef struct core_cached_reply {
    bool valid;
    uint8_t seq;
    bool stored;       /* false: re-execute the request to answer a duplicate */
    uint8_t request_type;
    uint32_t request_length; /* raw frame length */
    uint32_t request_crc;    /* the frame's own CRC field */
    uint8_t reply_type;
    uint8_t reply_length;
    uint8_t reply[CORE_CACHED_REPLY_MAX];
} core_cached_reply;

/* A CAPTURE_CHUNK frame, written on the wire's form as its records come (frame_writer). */
typedef struct core_chunk_slot {
    uint16_t records;
    uint16_t words;  /* records and their TIME and P1_LATCH words */
    frame_writer writer;
    _Alignas(4) uint8_t wire[FRAME_WIRE_MAX(HB_HEADER_SIZE + CORE_CHUNK_PAYLOAD + HB_CRC_SIZE)];
} core_chunk_slot;

typedef struct core_marker {
    uint32_t after_chunks; /* sent once this many chunks of the stream have been sent */
    _Alignas(4) uint8_t wire[FRAME_WIRE_MAX(HB_HEADER_SIZE + 8u + HB_CRC_SIZE)];
    uint8_t length;
} core_marker;

/* Reply bytes are COBS-encoded into this buffer a piece at a time (one USB packet). */
#define CORE_TX_STAGE 64u

typedef struct core_counters {
    uint32_t frames_in, frames_bad, frames_out, duplicates;
} core_counters;

typedef struct adapter_core {
    /* What the record path reads for every access comes first: at small offsets, which the M0+
     * reaches without loading the offset from a literal pool. */
    bool capturing;
    uint8_t capture_what;
    uint8_t capture_p1;    /* P1 AND the slot mask, as the stream last told it */
    uint32_t capture_cycle; /* the last record's cycle: the next record's delta is from here */
    struct core_chunk_slot *filling; /* the open chunk's slot; NULL while every slot waits for the link */
    uint32_t capture_dropped;  /* records and events discarded for want of buffer space */

    const adapter_ops *ops;
    core_counters counters;

    /* Receiving: COBS decoded as bytes arrive, the CRC checked at the delimiter. */
    uint8_t rx[CORE_MAX_FRAME];
    frame_decoder decoder;

    /* Sending: one reply at a time, COBS-encoded on the fly into tx_stage, then capture events, whose
     * frames are already encoded (tx_wire). */
    uint8_t reply[CORE_MAX_FRAME];
    size_t reply_length;   /* raw frame length of a reply not yet (fully) sent; 0 = none */
    frame_encoder tx;
    _Alignas(4) uint8_t tx_stage[CORE_TX_STAGE];
    uint32_t tx_staged, tx_stage_sent;
    const uint8_t *tx_wire;
    uint32_t tx_wire_length, tx_wire_sent;
    uint8_t tx_source;     /* what is being sent: see adapter_core.c */
    bool tx_stale;         /* it is an event of a capture stream that has ended */

    core_cached_reply cache[CORE_REPLY_CACHE]; /* indexed by seq % CORE_REPLY_CACHE */

    /* Upload and emulation. */
    uint8_t image[CORE_UPLOAD_MAX];
    uint32_t upload_size;  /* 0 = no upload begun */
    uint8_t upload_mapper;
    bool emulating;
    uint8_t emulated_mapper;
    uint32_t emulated_size;
    uint32_t emulated_crc;

    /* Capture stream. */
    uint32_t capture_chunks;   /* chunks closed (numbered) in this stream */
    uint32_t capture_sent;     /* chunks fully sent */
    uint32_t capture_records;  /* records in closed chunks */
    uint32_t capture_resets;
    uint32_t capture_frames;
    core_chunk_slot chunks[CORE_CHUNK_SLOTS];
    uint32_t chunk_head;   /* oldest closed, unsent chunk (index modulo CORE_CHUNK_SLOTS) */
    uint32_t chunk_open;   /* the chunk being filled; chunk_open - chunk_head = closed chunks waiting */
    core_marker markers[CORE_MARKER_SLOTS];
    uint32_t marker_head, marker_tail;
} adapter_core;

/* Set up the core with the platform's operations (`ops` must outlive the core). */
void core_init(adapter_core *core, const adapter_ops *ops);

/* Feed bytes received from the host. Returns how many were consumed: fewer than `count` when a
 * complete request waits for the previous reply to be sent; call core_transmit, then feed the rest. */
size_t core_receive(adapter_core *core, const uint8_t *bytes, size_t count);

/* Up to `room` bytes to send to the host (replies first, then capture events); 0 when idle. */
size_t core_transmit(adapter_core *core, uint8_t *out, size_t room);

/* The same without a copy: `*bytes` points at the next bytes to send, valid until core_transmit_done
 * or any other core_* call; returns how many there are (0 when idle). core_transmit_done(count) then
 * says how many of them went out. The platform copies them straight into its link's buffer. */
size_t core_transmit_span(adapter_core *core, const uint8_t **bytes);
void core_transmit_done(adapter_core *core, size_t count);

/* True while the core has bytes to send. */
bool core_has_output(const adapter_core *core);

/* The host link went away (USB reset, cable pulled): drop the partial request and the unsent rest of
 * the frame being sent. Emulation and a running capture continue, as on the simulated adapter. */
void core_link_reset(adapter_core *core);

/* One bus access seen while capturing, in bus order: kind HB_CAPTURE_FETCH, _MOVX_READ or _MOVX_WRITE,
 * `cycle` the machine cycle (ALE count), `p1` the console's P1 at the time. The core adds the P1
 * change records, filters by the CAPTURE_START kinds, and sends RESET_DETECTED for a fetch of 0x400
 * and FRAME_SYNC for a fetch of 0x406 (so pass those fetches even when compressing sequential ones). */
void core_capture_sink(void *core, uint32_t cycle, uint8_t kind, uint16_t address, uint8_t value, uint8_t p1);

/* core_capture_sink takes the core untyped, in the shape of a sniff decoder's sink, so the decoder
 * reaches the core in one call per access. */
static inline void core_capture_access(adapter_core *core, uint32_t cycle, uint8_t kind, uint16_t address,
                                       uint8_t value, uint8_t p1)
{
    core_capture_sink(core, cycle, kind, address, value, p1);
}

/* Records the platform lost before they reached the core (e.g. a full PIO FIFO): counted as dropped. */
void core_capture_dropped(adapter_core *core, uint32_t records);

/* Close the chunk being filled so it is sent now (the core also does so when the link is idle). */
void core_capture_flush(adapter_core *core);

#endif
