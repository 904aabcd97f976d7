/* The protocol core: requests in, replies and capture events out (docs/protocol.md §2-§4).
 * Every check and error code follows the simulated adapter (hilbridge/sim/device.py), which the
 * host's conformance suite holds both to. */
#include "adapter_core.h"

#include "core_mem.h"

#include "crc32.h"
#include "cart.h"

enum tx_source { TX_NONE, TX_REPLY, TX_CHUNK, TX_MARKER };

#define RESET_ADDRESS 0x400u
#define VSYNC_HOOK 0x406u
#define MOVX_END 0x100u

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool has_capability(const adapter_core *core, unsigned bit)
{
    return (core->ops->capabilities >> bit) & 1u;
}

static size_t text_length(const char *text)
{
    size_t n = 0;
    if (text)
        while (text[n]) n++;
    return n;
}

void core_init(adapter_core *core, const adapter_ops *ops)
{
    mem_fill(core, 0, sizeof *core);
    core->ops = ops;
    core->capture_p1 = HB_CART_P1_MASK;
    frame_decoder_init(&core->decoder, core->rx, sizeof core->rx);
}

void core_link_reset(adapter_core *core)
{
    frame_decoder_reset(&core->decoder);
    if (core->tx_source == TX_CHUNK || core->tx_source == TX_MARKER) {
        /* An event is sent again from its first byte on the next link rather than lost. */
        core->tx_wire_sent = 0;
        return;
    }
    /* The host that asked for the reply is gone. */
    core->tx.active = false;
    core->tx_staged = core->tx_stage_sent = 0;
    core->tx_source = TX_NONE;
    core->reply_length = 0;
}

/* -- requests ----------------------------------------------------------------------------------- */

static void answer(adapter_core *core)
{
    const uint8_t *raw = core->rx;
    size_t length = core->decoder.length;
    uint8_t type = raw[0], seq = raw[1];
    uint32_t crc = get_u32(raw + length - HB_CRC_SIZE);
    if (type == HB_MSG_HELLO) {
        /* HELLO starts a session: earlier sequence numbers mean nothing now. */
        for (size_t i = 0; i < CORE_REPLY_CACHE; i++) core->cache[i].valid = false;
    }
    core_cached_reply *entry = &core->cache[seq % CORE_REPLY_CACHE];
    bool duplicate = entry->valid && entry->seq == seq && entry->request_type == type &&
                     entry->request_length == length && entry->request_crc == crc;
    core->counters.frames_out++;
    if (duplicate) {
        core->counters.duplicates++;
        if (entry->stored) {
            mem_copy(core->reply + HB_HEADER_SIZE, entry->reply, entry->reply_length);
            core->reply_length = frame_seal(core->reply, entry->reply_type, seq, entry->reply_length);
            return;
        }
    }
    hb_reply reply = {core->reply + HB_HEADER_SIZE, CORE_MAX_PAYLOAD, 0, 0};
    hb_dispatch(core, type, raw + HB_HEADER_SIZE, length - HB_HEADER_SIZE - HB_CRC_SIZE, &reply);
    if (reply.error && reply.length > CORE_CACHED_REPLY_MAX) reply.length = CORE_CACHED_REPLY_MAX;
    uint8_t reply_type = reply.error ? (uint8_t)(HB_MSG_ERROR | HB_REPLY_BIT) : (uint8_t)(type | HB_REPLY_BIT);
    core->reply_length = frame_seal(core->reply, reply_type, seq, reply.length);
    if (duplicate) return;
    entry->valid = true;
    entry->seq = seq;
    entry->request_type = type;
    entry->request_length = (uint32_t)length;
    entry->request_crc = crc;
    entry->reply_type = reply_type;
    entry->stored = reply.length <= CORE_CACHED_REPLY_MAX;
    if (entry->stored) {
        entry->reply_length = (uint8_t)reply.length;
        mem_copy(entry->reply, core->reply + HB_HEADER_SIZE, reply.length);
    }
}

size_t core_receive(adapter_core *core, const uint8_t *bytes, size_t count)
{
    size_t used = 0;
    while (used < count && core->reply_length == 0) {
        int result;
        used += frame_decoder_feed(&core->decoder, bytes + used, count - used, &result);
        if (result == FRAME_BAD) core->counters.frames_bad++;
        else if (result == FRAME_READY) {
            core->counters.frames_in++;
            answer(core);
        }
    }
    return used;
}

/* -- capture stream ------------------------------------------------------------------------------ */

/* A record word (capture_record.tsv): tag, delta, address, value. */
#define WORD_TAG(tag) ((uint32_t)(tag) << HB_CAPTURE_WORD_TAG_LSB)
#define WORD_DELTA_MAX ((1u << HB_CAPTURE_WORD_DELTA_BITS) - 1u)
_Static_assert(HB_CAPTURE_WORD_SIZE == 4u && HB_CAPTURE_WORD_TAG_LSB == 0u && HB_CAPTURE_WORD_DELTA_LSB == 3u &&
                   HB_CAPTURE_WORD_ADDRESS_LSB == 12u && HB_CAPTURE_WORD_VALUE_LSB == 24u &&
                   HB_CAPTURE_WORD_HIGH_LSB == 3u && HB_CAPTURE_WORD_DELTA_BITS == 9u,
               "record_word and add_timed_record build this word layout");
_Static_assert(HB_RECORD_TAG_FETCH == HB_CAPTURE_FETCH && HB_RECORD_TAG_MOVX_READ == HB_CAPTURE_MOVX_READ &&
                   HB_RECORD_TAG_MOVX_WRITE == HB_CAPTURE_MOVX_WRITE && HB_RECORD_TAG_P1 == HB_CAPTURE_P1,
               "a record's tag is its capture kind number");

static uint32_t chunks_waiting(const adapter_core *core) { return core->chunk_open - core->chunk_head; }

static core_chunk_slot *open_chunk(adapter_core *core)
{
    if (chunks_waiting(core) >= CORE_CHUNK_SLOTS) return NULL;
    return &core->chunks[core->chunk_open % CORE_CHUNK_SLOTS];
}

/* The open chunk's frame is begun as the slot opens (not at its first record: the record path then
 * calls nothing but the writer); the chunk will be closed as number capture_chunks, as only the open
 * chunk is ever closed. */
static void open_filling(adapter_core *core)
{
    core_chunk_slot *slot = open_chunk(core);
    core->filling = slot;
    if (slot == NULL) return;
    uint8_t header[CORE_CHUNK_HEADER];
    put_u32(header, core->capture_chunks);
    put_u32(header + 4, core->capture_cycle);
    header[8] = core->capture_p1;
    slot->records = 0;
    slot->words = 0;
    frame_writer_begin(&slot->writer, slot->wire, HB_MSG_CAPTURE_CHUNK, 0);
    frame_writer_put(&slot->writer, header, sizeof header);
}

static void close_chunk(adapter_core *core)
{
    core_chunk_slot *slot = core->filling;
    if (slot == NULL || slot->records == 0) return;
    frame_writer_end(&slot->writer);
    core->capture_chunks++;
    core->capture_records += slot->records;
    core->chunk_open++;
    open_filling(core);
}

/* A record more than WORD_DELTA_MAX cycles after the one before: a TIME word with the delta's high
 * bits first. Rare (a pause of the console, the start of a stream), so out of the usual path. */
__attribute__((noinline)) static uint32_t add_timed_record(adapter_core *core, core_chunk_slot *slot, uint32_t cycle,
                                                           uint32_t delta, uint32_t word)
{
    frame_writer_put_word(&slot->writer, WORD_TAG(HB_RECORD_TAG_TIME) |
                                             (delta >> HB_CAPTURE_WORD_DELTA_BITS) << HB_CAPTURE_WORD_HIGH_LSB);
    frame_writer_put_word(&slot->writer, word | (delta & WORD_DELTA_MAX) << HB_CAPTURE_WORD_DELTA_LSB);
    core->capture_cycle = cycle;
    slot->records++;
    slot->words = (uint16_t)(slot->words + 2u);
    return slot->words;
}

/* The record (`word` without its delta) into the open chunk. Returns the chunk's word count, 0 if the
 * record was dropped. */
static inline uint32_t add_record(adapter_core *core, uint32_t cycle, uint32_t word)
{
    core_chunk_slot *slot = core->filling;
    if (slot == NULL) {
        core->capture_dropped++;
        return 0;
    }
    uint32_t delta = cycle - core->capture_cycle;
    if (delta > WORD_DELTA_MAX) return add_timed_record(core, slot, cycle, delta, word);
    frame_writer_put_word(&slot->writer, word | delta << HB_CAPTURE_WORD_DELTA_LSB);
    core->capture_cycle = cycle;
    slot->records++;
    return ++slot->words;
}

static inline uint32_t record_word(uint8_t kind, uint16_t address, uint8_t value)
{
    return WORD_TAG(kind) | (uint32_t)address << HB_CAPTURE_WORD_ADDRESS_LSB |
           (uint32_t)value << HB_CAPTURE_WORD_VALUE_LSB;
}

/* RESET_DETECTED or FRAME_SYNC, sent after the chunks closed before it. */
static void add_marker(adapter_core *core, uint8_t type, uint32_t first, uint32_t cycle, bool two_fields)
{
    if (core->marker_tail - core->marker_head >= CORE_MARKER_SLOTS) {
        core->capture_dropped++;
        return;
    }
    core_marker *marker = &core->markers[core->marker_tail % CORE_MARKER_SLOTS];
    uint8_t payload[8];
    put_u32(payload, first);
    put_u32(payload + 4, cycle);
    frame_writer writer;
    frame_writer_begin(&writer, marker->wire, type, 0);
    frame_writer_put(&writer, payload, two_fields ? 8u : 4u);
    marker->length = (uint8_t)frame_writer_end(&writer);
    marker->after_chunks = core->capture_chunks;
    core->marker_tail++;
}

static inline bool wanted(const adapter_core *core, uint8_t kind)
{
    return kind <= 7u && (core->capture_what >> kind) & 1u;
}

static inline void record_access(adapter_core *core, uint32_t cycle, uint8_t kind, uint16_t address, uint8_t value)
{
    if (wanted(core, kind) &&
        add_record(core, cycle, record_word(kind, address, value)) > CORE_CHUNK_WORDS - CORE_RECORD_MAX_WORDS)
        close_chunk(core);
}

/* An access that changes P1 or fetches 0400h/0406h: the P1 record first (or, when P1 records are not
 * captured, a P1_LATCH word before the access's own record), the marker after. Out of
 * capture_access's way: a call on its usual path would make it keep every argument in a saved
 * register. */
__attribute__((noinline)) static void capture_unusual(adapter_core *core, uint32_t cycle, uint8_t kind,
                                                      uint16_t address, uint8_t value, uint8_t p1)
{
    uint8_t slot_p1 = p1 & HB_CART_P1_MASK;
    if (slot_p1 != core->capture_p1) {
        if (wanted(core, HB_CAPTURE_P1)) {
            core->capture_p1 = slot_p1;
            record_access(core, cycle, HB_CAPTURE_P1, 0, slot_p1);
        } else if (wanted(core, kind)) {
            /* The latch goes with this access's record (record_access leaves CORE_RECORD_MAX_WORDS
             * free in an open chunk); with no open chunk the record is dropped and the next chunk's
             * header carries the change. Until a record carries it, P1 counts as changed. */
            core->capture_p1 = slot_p1;
            core_chunk_slot *slot = core->filling;
            if (slot != NULL) {
                frame_writer_put_word(&slot->writer, WORD_TAG(HB_RECORD_TAG_P1_LATCH) |
                                                         (uint32_t)slot_p1 << HB_CAPTURE_WORD_VALUE_LSB);
                slot->words++;
            }
        }
    }
    record_access(core, cycle, kind, address, value);
    if (kind == HB_CAPTURE_FETCH && (address == RESET_ADDRESS || address == VSYNC_HOOK)) {
        close_chunk(core);
        if (address == RESET_ADDRESS) {
            core->capture_resets++;
            add_marker(core, HB_MSG_RESET_DETECTED, cycle, 0, false);
        } else {
            add_marker(core, HB_MSG_FRAME_SYNC, core->capture_frames++, cycle, true);
        }
    }
}

static inline void capture_access(adapter_core *core, uint32_t cycle, uint8_t kind, uint16_t address,
                                  uint8_t value, uint8_t p1)
{
    if (!core->capturing) return;
    if ((p1 & HB_CART_P1_MASK) != core->capture_p1 ||
        (kind == HB_CAPTURE_FETCH && (address == RESET_ADDRESS || address == VSYNC_HOOK))) {
        capture_unusual(core, cycle, kind, address, value, p1);
        return;
    }
    record_access(core, cycle, kind, address, value);
}

void core_capture_sink(void *core, uint32_t cycle, uint8_t kind, uint16_t address, uint8_t value, uint8_t p1)
{
    capture_access(core, cycle, kind, address, value, p1);
}

void core_capture_dropped(adapter_core *core, uint32_t records)
{
    if (core->capturing) core->capture_dropped += records;
}

void core_capture_flush(adapter_core *core)
{
    if (core->capturing) close_chunk(core);
}

/* -- sending ------------------------------------------------------------------------------------- */

static void send_wire(adapter_core *core, uint8_t source, const uint8_t *wire, uint32_t length)
{
    core->tx_source = source;
    core->tx_wire = wire;
    core->tx_wire_length = length;
    core->tx_wire_sent = 0;
    core->counters.frames_out++;
}

/* Pick the next frame to send: the reply, then events in stream order. */
static bool start_next(adapter_core *core)
{
    if (core->reply_length) {
        frame_encoder_start(&core->tx, core->reply, core->reply_length);
        core->tx_staged = core->tx_stage_sent = 0;
        core->tx_source = TX_REPLY;
        return true;
    }
    if (core->marker_head != core->marker_tail) {
        core_marker *marker = &core->markers[core->marker_head % CORE_MARKER_SLOTS];
        if (marker->after_chunks <= core->capture_sent) {
            send_wire(core, TX_MARKER, marker->wire, marker->length);
            return true;
        }
    }
    if (chunks_waiting(core) == 0 && core->capturing) close_chunk(core); /* idle link: send what there is */
    if (chunks_waiting(core)) {
        core_chunk_slot *slot = &core->chunks[core->chunk_head % CORE_CHUNK_SLOTS];
        send_wire(core, TX_CHUNK, slot->wire, slot->writer.length);
        return true;
    }
    return false;
}

static void finish_sent(adapter_core *core)
{
    switch (core->tx_source) {
    case TX_REPLY:
        core->reply_length = 0;
        break;
    case TX_MARKER:
        core->marker_head++;
        break;
    case TX_CHUNK:
        core->chunk_head++;
        if (core->tx_stale) core->tx_stale = false;
        else core->capture_sent++;
        if (core->filling == NULL) open_filling(core); /* the freed slot */
        break;
    default:
        break;
    }
    if (core->tx_source == TX_MARKER) core->tx_stale = false;
    core->tx_source = TX_NONE;
}

size_t core_transmit_span(adapter_core *core, const uint8_t **bytes)
{
    for (;;) {
        if (core->tx_source == TX_NONE && !start_next(core)) return 0;
        if (core->tx_source != TX_REPLY) {
            if (core->tx_wire_sent < core->tx_wire_length) {
                *bytes = core->tx_wire + core->tx_wire_sent;
                return core->tx_wire_length - core->tx_wire_sent;
            }
        } else {
            if (core->tx_stage_sent == core->tx_staged && core->tx.active) {
                core->tx_staged = (uint32_t)frame_encoder_pull(&core->tx, core->tx_stage, sizeof core->tx_stage);
                core->tx_stage_sent = 0;
            }
            if (core->tx_stage_sent < core->tx_staged) {
                *bytes = core->tx_stage + core->tx_stage_sent;
                return core->tx_staged - core->tx_stage_sent;
            }
        }
        finish_sent(core);
    }
}

void core_transmit_done(adapter_core *core, size_t count)
{
    if (core->tx_source == TX_REPLY) {
        core->tx_stage_sent += (uint32_t)count;
        if (core->tx_stage_sent == core->tx_staged && !core->tx.active) finish_sent(core);
    } else if (core->tx_source != TX_NONE) {
        core->tx_wire_sent += (uint32_t)count;
        if (core->tx_wire_sent == core->tx_wire_length) finish_sent(core);
    }
}

size_t core_transmit(adapter_core *core, uint8_t *out, size_t room)
{
    size_t made = 0;
    const uint8_t *bytes;
    size_t count;
    while (made < room && (count = core_transmit_span(core, &bytes)) != 0) {
        if (count > room - made) count = room - made;
        mem_copy(out + made, bytes, count);
        core_transmit_done(core, count);
        made += count;
    }
    return made;
}

bool core_has_output(const adapter_core *core)
{
    if (core->tx_source != TX_NONE || core->reply_length || core->marker_head != core->marker_tail ||
        chunks_waiting(core))
        return true;
    return core->capturing && core->chunks[core->chunk_open % CORE_CHUNK_SLOTS].records != 0;
}

/* -- handlers: one per command of messages.tsv ------------------------------------------------- */

static bool refuse_without(adapter_core *core, unsigned bit, hb_reply *reply)
{
    if (has_capability(core, bit)) return false;
    hb_reply_error(reply, HB_ERROR_NOT_SUPPORTED, "this adapter lacks the capability");
    return true;
}

void hb_on_hello(struct adapter_core *core, const hb_hello_request *request, hb_reply *reply)
{
    if (request->host_protocol != HB_PROTOCOL_VERSION) {
        hb_reply_error(reply, HB_ERROR_VERSION_MISMATCH, "adapter speaks protocol " HB_PROTOCOL_VERSION_TEXT);
        return;
    }
    const adapter_ops *ops = core->ops;
    hb_hello_response values = {
        .protocol = HB_PROTOCOL_VERSION,
        .fw_major = ops->fw_major,
        .fw_minor = ops->fw_minor,
        .fw_patch = ops->fw_patch,
        .capabilities = ops->capabilities,
        .board_id = ops->board_id,
        .max_payload = CORE_MAX_PAYLOAD > 0xFFFFu ? 0xFFFFu : (uint16_t)CORE_MAX_PAYLOAD,
        .serial = ops->serial,
        .serial_length = text_length(ops->serial),
    };
    hb_pack_hello_response(reply, &values);
}

void hb_on_firmware_info(struct adapter_core *core, const hb_firmware_info_request *request, hb_reply *reply)
{
    (void)request;
    hb_firmware_info_response values = {.build = core->ops->build, .build_length = text_length(core->ops->build)};
    hb_pack_firmware_info_response(reply, &values);
}

void hb_on_status(struct adapter_core *core, const hb_status_request *request, hb_reply *reply)
{
    (void)request;
    bool capturing = core->capturing;
    hb_status_response values = {
        .frames_in = core->counters.frames_in,
        .frames_bad = core->counters.frames_bad,
        .frames_out = core->counters.frames_out,
        .duplicates = core->counters.duplicates,
        .emulating = core->emulating,
        .capturing = capturing,
        .capture_chunks = capturing ? core->capture_chunks : 0,
        .capture_dropped = capturing ? core->capture_dropped : 0,
        .resets_seen = capturing ? core->capture_resets : 0,
        .uptime_ms = core->ops->uptime_ms ? core->ops->uptime_ms(core->ops->context) : 0,
    };
    hb_pack_status_response(reply, &values);
}

void hb_on_set_ports(struct adapter_core *core, const hb_set_ports_request *request, hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_CART_READ_BIT, reply)) return;
    core->ops->set_ports(core->ops->context, request->p1, request->p2);
    hb_set_ports_response values = {.p1 = request->p1, .p2 = request->p2};
    hb_pack_set_ports_response(reply, &values);
}

static bool slot_refused(adapter_core *core, hb_reply *reply)
{
    if (core->ops->cart_present(core->ops->context)) return false;
    hb_reply_error(reply, HB_ERROR_NO_CARTRIDGE, "the slot is empty");
    return true;
}

/* The range checks of a read; true (and an ERROR in `reply`) when refused. */
static bool read_refused(adapter_core *core, uint8_t strobe, uint32_t address, uint32_t length,
                         uint32_t reply_bytes, hb_reply *reply)
{
    if (slot_refused(core, reply)) return true;
    if (length < 1u || reply_bytes > CORE_MAX_PAYLOAD - 2u) {
        hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "reply length is not 1..max_payload-2");
        return true;
    }
    if (strobe == HB_STROBE_PSEN) {
        if (address < HB_PROGRAM_START || address + length > HB_PROGRAM_END) {
            hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "program reads must lie within 0x400-0xFFF");
            return true;
        }
    } else if (strobe == HB_STROBE_MOVX_READ) {
        if (address + length > MOVX_END) {
            hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "MOVX reads must lie within 0x00-0xFF");
            return true;
        }
    } else {
        hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "unknown strobe");
        return true;
    }
    return false;
}

static void read_passes(adapter_core *core, uint8_t p1, uint8_t p2, uint8_t strobe, uint16_t address,
                        uint16_t length, uint32_t count, hb_reply *reply)
{
    uint8_t *data = reply->payload + HB_CART_READ_RESPONSE_DATA_OFFSET;
    for (uint32_t pass = 0; pass < count; pass++)
        core->ops->cart_read(core->ops->context, p1, p2, strobe, address, length, data + pass * length);
    hb_cart_read_response values = {.address = address, .data = data, .data_length = (size_t)length * count};
    hb_pack_cart_read_response(reply, &values);
}

void hb_on_cart_read(struct adapter_core *core, const hb_cart_read_request *request, hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_CART_READ_BIT, reply)) return;
    if (read_refused(core, request->strobe, request->address, request->length, request->length, reply)) return;
    read_passes(core, request->p1, request->p2, request->strobe, request->address, request->length, 1, reply);
}

void hb_on_cart_read_repeat(struct adapter_core *core, const hb_cart_read_repeat_request *request,
                            hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_CART_READ_BIT, reply)) return;
    if (request->count < 1u) {
        hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "count must be at least 1");
        return;
    }
    uint32_t total = (uint32_t)request->length * request->count;
    if (read_refused(core, request->strobe, request->address, request->length, total, reply)) return;
    read_passes(core, request->p1, request->p2, request->strobe, request->address, request->length,
                request->count, reply);
}

void hb_on_cart_write(struct adapter_core *core, const hb_cart_write_request *request, hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_CART_WRITE_BIT, reply)) return;
    if (slot_refused(core, reply)) return;
    core->ops->cart_write(core->ops->context, request->p1, request->p2, request->address, request->value);
    hb_cart_write_response values = {0};
    hb_pack_cart_write_response(reply, &values);
}

void hb_on_upload_begin(struct adapter_core *core, const hb_upload_begin_request *request, hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_EMULATION_BIT, reply)) return;
    if (core->emulating) {
        hb_reply_error(reply, HB_ERROR_BUSY, "switch emulation off before uploading");
        return;
    }
    if (cart_type_by_id(request->mapper) == NULL) {
        hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "unknown mapper id");
        return;
    }
    if (request->size < 1u || request->size > CORE_UPLOAD_MAX) {
        hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "image size is not 1.." HB_MAX_IMAGE_SIZE_TEXT);
        return;
    }
    mem_fill(core->image, 0, request->size);
    core->upload_size = request->size;
    core->upload_mapper = request->mapper;
    hb_upload_begin_response values = {0};
    hb_pack_upload_begin_response(reply, &values);
}

void hb_on_upload_data(struct adapter_core *core, const hb_upload_data_request *request, hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_EMULATION_BIT, reply)) return;
    if (core->upload_size == 0) {
        hb_reply_error(reply, HB_ERROR_UPLOAD_STATE, "no upload in progress");
        return;
    }
    if (core->emulating) {
        /* The image is the memory being served: it must not change under the console. */
        hb_reply_error(reply, HB_ERROR_BUSY, "switch emulation off before uploading");
        return;
    }
    if ((uint64_t)request->offset + request->data_length > core->upload_size) {
        hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "data beyond the end of the image");
        return;
    }
    mem_copy(core->image + request->offset, request->data, request->data_length);
    hb_upload_data_response values = {.offset = request->offset, .length = (uint16_t)request->data_length};
    hb_pack_upload_data_response(reply, &values);
}

void hb_on_upload_end(struct adapter_core *core, const hb_upload_end_request *request, hb_reply *reply)
{
    (void)request;
    if (refuse_without(core, HB_CAPABILITY_EMULATION_BIT, reply)) return;
    if (core->upload_size == 0) {
        hb_reply_error(reply, HB_ERROR_UPLOAD_STATE, "no upload in progress");
        return;
    }
    hb_upload_end_response values = {.size = core->upload_size,
                                      .crc32 = crc32_update(0, core->image, core->upload_size)};
    hb_pack_upload_end_response(reply, &values);
}

void hb_on_emulation(struct adapter_core *core, const hb_emulation_request *request, hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_EMULATION_BIT, reply)) return;
    const adapter_ops *ops = core->ops;
    if (request->enable && !core->emulating) {
        if (core->upload_size == 0) {
            hb_reply_error(reply, HB_ERROR_UPLOAD_STATE, "upload an image first");
            return;
        }
        const hb_mapper_type *type = cart_type_by_id(core->upload_mapper);
        if (!cart_size_allowed(type, core->upload_size)) {
            hb_reply_error(reply, HB_ERROR_BAD_ARGUMENT, "the image size does not fit the mapper");
            return;
        }
        if (!ops->emulation_start(ops->context, core->image, core->upload_size, core->upload_mapper)) {
            hb_reply_error(reply, HB_ERROR_NOT_SUPPORTED, "this adapter cannot serve that mapper");
            return;
        }
        core->emulating = true;
        core->emulated_mapper = core->upload_mapper;
        core->emulated_size = core->upload_size;
        core->emulated_crc = crc32_update(0, core->image, core->upload_size);
    } else if (!request->enable && core->emulating) {
        ops->emulation_stop(ops->context);
        core->emulating = false;
    }
    bool on = core->emulating;
    hb_emulation_response values = {
        .enabled = on,
        .mapper = on ? core->emulated_mapper : 0,
        .size = on ? core->emulated_size : 0,
        .crc32 = on ? core->emulated_crc : 0,
    };
    hb_pack_emulation_response(reply, &values);
}

void hb_on_capture_start(struct adapter_core *core, const hb_capture_start_request *request, hb_reply *reply)
{
    if (refuse_without(core, HB_CAPABILITY_CAPTURE_BIT, reply)) return;
    const adapter_ops *ops = core->ops;
    if (!core->emulating && !ops->cart_present(ops->context)) {
        hb_reply_error(reply, HB_ERROR_NO_CARTRIDGE, "nothing to run: the slot is empty and emulation is off");
        return;
    }
    if (core->capturing) {
        hb_reply_error(reply, HB_ERROR_BUSY, "a capture is already running");
        return;
    }
    if (!ops->capture_start(ops->context, request->what)) {
        hb_reply_error(reply, HB_ERROR_NOT_SUPPORTED, "this adapter cannot capture now");
        return;
    }
    /* Events of an earlier stream not yet sent are dropped (its totals were reported by its
     * CAPTURE_STOP); one already on the wire is finished but not counted in the new stream. */
    bool chunk_on_wire = core->tx_source == TX_CHUNK;
    bool marker_on_wire = core->tx_source == TX_MARKER;
    core->chunk_open = core->chunk_head + (chunk_on_wire ? 1u : 0u);
    core->marker_tail = core->marker_head + (marker_on_wire ? 1u : 0u);
    core->tx_stale = chunk_on_wire || marker_on_wire;
    core->capturing = true;
    core->capture_what = request->what;
    core->capture_p1 = HB_CART_P1_MASK;
    core->capture_cycle = 0;
    core->capture_chunks = 0;
    core->capture_sent = 0;
    core->capture_records = 0;
    core->capture_dropped = 0;
    core->capture_resets = 0;
    core->capture_frames = 0;
    open_filling(core);
    hb_capture_start_response values = {.what = request->what};
    hb_pack_capture_start_response(reply, &values);
}

void hb_on_capture_stop(struct adapter_core *core, const hb_capture_stop_request *request, hb_reply *reply)
{
    (void)request;
    if (refuse_without(core, HB_CAPABILITY_CAPTURE_BIT, reply)) return;
    hb_capture_stop_response values = {0};
    if (core->capturing) {
        core->ops->capture_stop(core->ops->context);
        close_chunk(core);
        core->capturing = false;
        values.chunks = core->capture_chunks;
        values.records = core->capture_records;
        values.dropped = core->capture_dropped;
    }
    hb_pack_capture_stop_response(reply, &values);
}
