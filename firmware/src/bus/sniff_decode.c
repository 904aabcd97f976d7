/* Sniff decoder: see sniff_decode.h. */
#include "sniff_decode.h"

#include "bus_timing_gen.h"
#include "pins_gen.h"

#define FRAMES_FOR_CALIBRATION 16u

static void set_cycle_length(sniff_decoder *decoder, uint32_t cycle_q8);

void sniff_decoder_init(sniff_decoder *decoder, const sniff_sink *sink, uint32_t cycle_q8)
{
    decoder->sink = *sink;
    set_cycle_length(decoder, cycle_q8);
    decoder->started = false;
    decoder->last_ticks = 0;
    decoder->last_carry_q8 = 0;
    decoder->cycle = 0;
    decoder->next_fetch = 0xFFFFu;
    decoder->frames = 0;
    decoder->pio_time = 0;
    decoder->first_sync_time = 0;
    decoder->first_sync_frame = 0;
    decoder->accesses = 0;
    decoder->compressed = 0;
}

static void emit(sniff_decoder *decoder, uint32_t cycle, uint8_t kind, uint16_t address, uint8_t value, uint8_t p1)
{
    decoder->sink.access(decoder->sink.context, cycle, kind, address, value, p1);
    decoder->accesses++;
}

static inline uint8_t kind_of(uint32_t pins)
{
    if (!(pins >> PIN_PSEN_N & 1u)) {
        return SNIFF_FETCH;
    }
    if (!(pins >> PIN_WR_N & 1u)) {
        return SNIFF_MOVX_WRITE;
    }
    return SNIFF_MOVX_READ;
}

static inline uint8_t p1_of(uint32_t pins)
{
    return (uint8_t)((pins >> PIN_P10 & 1u) | (pins >> PIN_P11 & 1u) << 1 | (pins >> PIN_P14 & 1u) << 4);
}

/* The Cortex-M0+ has no divide instruction, no 64-bit arithmetic and eight registers most
 * instructions reach: a division costs libgcc 100 (32-bit) to 250 (64-bit) cycles, and at one access
 * per machine cycle the decoder has about 350 for everything, sending included. So the constants of
 * each kind (with the rounding's half cycle) are computed once per cycle length, gaps shorter than
 * FAST_TICKS are timed in 32 bits, the machine cycles between two accesses (usually 1 to 3) are
 * counted by subtraction (only a long gap, which leaves time to spare, divides), and the usual events
 * are decoded in one loop with the state in locals (feed_usual). */
static void set_cycle_length(sniff_decoder *decoder, uint32_t cycle_q8)
{
    static const uint32_t strobe_osc[3] = {
        [SNIFF_FETCH] = BUS_STROBE_PSEN_START_OSC,
        [SNIFF_MOVX_READ] = BUS_STROBE_RD_START_OSC,
        [SNIFF_MOVX_WRITE] = BUS_STROBE_WR_START_OSC,
    };
    decoder->cycle_q8 = cycle_q8;
    for (unsigned kind = 0; kind < 3u; kind++) {
        int32_t phase_q8 = (int32_t)(strobe_osc[kind] * cycle_q8 / 15u);
        int32_t seen = (int32_t)(kind == SNIFF_MOVX_READ ? SNIFF_SEEN_READ : SNIFF_SEEN_FETCH_WRITE);
        int32_t sample = (int32_t)(kind == SNIFF_MOVX_READ ? SNIFF_SAMPLE_READ : SNIFF_SAMPLE_FETCH_WRITE);
        decoder->timing[kind].own_q8 = ((int32_t)SNIFF_EVENT_EXTRA + seen) * 256 - phase_q8 + (int32_t)(cycle_q8 >> 1);
        decoder->timing[kind].carry_q8 = (sample - seen) * 256 + phase_q8;
        decoder->event_pio[kind] = SNIFF_EVENT_EXTRA + (uint32_t)sample;
    }
}

/* Below 2^19 ticks (4.2 M PIO cycles, about 12,000 machine cycles) the distance x 256 fits an int32. */
#define FAST_TICKS (1u << 19)
/* At most this many events per run of feed_usual, so that their ticks add up below 2^32. */
#define RUN_EVENTS 4096u
#define SUBTRACT_AT_MOST 16u

/* round(distance / cycle_q8), given rest = distance + cycle_q8 / 2 (own_q8 holds the half), for a
 * gap shorter than FAST_TICKS; a distance below zero (events closer than the model allows) is 0. */
static inline uint32_t machine_cycles(int32_t rest, uint32_t cycle_q8)
{
    if (rest < (int32_t)cycle_q8) {
        return 0;
    }
    if ((uint32_t)rest >= cycle_q8 * SUBTRACT_AT_MOST) {
        return (uint32_t)rest / cycle_q8;
    }
    uint32_t count = 0;
    while (rest >= (int32_t)cycle_q8) {
        rest -= (int32_t)cycle_q8;
        count++;
    }
    return count;
}

/* The same for a gap of at least FAST_TICKS, in 64 bits. */
static uint32_t machine_cycles_long(const sniff_decoder *decoder, uint64_t elapsed_pio, uint8_t kind)
{
    int64_t rest = (int64_t)(elapsed_pio << 8) + decoder->timing[kind].own_q8 + decoder->last_carry_q8;
    return (uint32_t)((uint64_t)rest / decoder->cycle_q8);
}

/* The frame period tells NTSC from PAL; 16 frames later it gives the cycle length to ~30 ppm. */
static void calibrate(sniff_decoder *decoder)
{
    if (decoder->frames == 1) {
        decoder->first_sync_time = decoder->pio_time;
        decoder->first_sync_frame = 1;
        return;
    }
    uint32_t frames = decoder->frames - decoder->first_sync_frame;
    uint64_t span = decoder->pio_time - decoder->first_sync_time;
    if (frames == 1) {
        uint64_t ntsc = (uint64_t)BUS_NTSC_CYCLE_Q8 * BUS_NTSC_FRAME_CYCLES_Q8 >> 16;
        uint64_t pal = (uint64_t)BUS_PAL_CYCLE_Q8 * BUS_PAL_FRAME_CYCLES_Q8 >> 16;
        set_cycle_length(decoder, span * 2u < ntsc + pal ? BUS_NTSC_CYCLE_Q8 : BUS_PAL_CYCLE_Q8);
    } else if (frames == FRAMES_FOR_CALIBRATION) {
        uint32_t frame_q8 = decoder->cycle_q8 == BUS_NTSC_CYCLE_Q8 ? BUS_NTSC_FRAME_CYCLES_Q8 : BUS_PAL_FRAME_CYCLES_Q8;
        uint64_t measured = (span << 16) / ((uint64_t)frame_q8 * frames);
        uint64_t nominal = decoder->cycle_q8;
        if (measured * 200u > nominal * 199u && measured * 200u < nominal * 201u) { /* within 0.5 % */
            set_cycle_length(decoder, (uint32_t)measured);
        }
    }
}

static uint16_t next_pc(uint32_t address)
{
    return (uint16_t)((address & 0x800u) | ((address + 1u) & 0x7FFu));
}

/* 0400h or 0406h: (address & 0xFF9) == 0x400 picks 0400h-0406h's even addresses with one test. */
static inline bool is_marker(uint32_t address)
{
    return (address & 0xFF9u) == 0x400u && (address == SNIFF_RESET_ADDRESS || address == SNIFF_VSYNC_HOOK);
}

/* The distance from the previous event's machine-cycle start to this one's, PIO cycles x 256: the
 * ticks between the two samples, the fixed parts of both paths (own_q8, carry_q8: from each sample
 * back to its strobe being seen, then to the start of its machine cycle), rounded to machine cycles.
 * This is the general path; feed_usual takes the usual events the same way, faster. */
void sniff_decoder_feed(sniff_decoder *decoder, uint32_t ticks, uint32_t pins)
{
    uint8_t kind = kind_of(pins);
    if (decoder->started) {
        uint32_t elapsed_ticks = decoder->last_ticks - ticks; /* X counts down, modulo 2^32 */
        uint64_t elapsed_pio = (uint64_t)elapsed_ticks * SNIFF_CYCLES_PER_TICK;
        decoder->pio_time += elapsed_pio + decoder->event_pio[kind];
        if (elapsed_ticks < FAST_TICKS) {
            int32_t rest = (int32_t)(elapsed_ticks * (SNIFF_CYCLES_PER_TICK << 8)) + decoder->timing[kind].own_q8 +
                           decoder->last_carry_q8;
            decoder->cycle += machine_cycles(rest, decoder->cycle_q8);
        } else {
            decoder->cycle += machine_cycles_long(decoder, elapsed_pio, kind);
        }
    }
    decoder->started = true;
    decoder->last_ticks = ticks;
    decoder->last_carry_q8 = decoder->timing[kind].carry_q8;

    uint8_t p1 = p1_of(pins);
    uint8_t value = (uint8_t)(pins >> PIN_D0);
    if (kind == SNIFF_FETCH) {
        uint16_t address = (uint16_t)(pins & 0xFFFu);
        if (address != decoder->next_fetch || is_marker(address)) {
            emit(decoder, decoder->cycle, SNIFF_FETCH, address, value, p1);
        } else {
            decoder->compressed++;
        }
        decoder->next_fetch = next_pc(address);
        if (address == SNIFF_VSYNC_HOOK) {
            decoder->frames++;
            calibrate(decoder);
        }
    } else {
        emit(decoder, decoder->cycle + 1u, kind, (uint16_t)(pins & 0xFFu), value, p1); /* MOVX: its end */
    }
}

/* The usual events (after the first, a gap below FAST_TICKS, no fetch of 0400h or 0406h) as
 * sniff_decoder_feed takes them, with the state in locals; stops before any other event. The PIO
 * time is summed once per run: the ticks between the events add up to the first X minus the last.
 * Returns the words it took. */
static uint32_t feed_usual(sniff_decoder *restrict decoder, const uint32_t *restrict words, uint32_t count)
{
    if (!decoder->started) {
        return 0;
    }
    const uint32_t *word = words;
    const uint32_t *stop = words + (count < 2u * RUN_EVENTS ? count : 2u * RUN_EVENTS);
    const sniff_kind_timing *timing = decoder->timing;
    const uint32_t cycle_q8 = decoder->cycle_q8;
    const uint32_t first_ticks = decoder->last_ticks;
    uint32_t last_ticks = first_ticks;
    int32_t last_carry_q8 = decoder->last_carry_q8;
    uint32_t cycle = decoder->cycle;
    uint32_t next_fetch = decoder->next_fetch;
    uint32_t reads = 0; /* the PIO time of the events: fetches and writes take one path, reads another */
    uint32_t compressed = 0;
    for (; word != stop; word += 2) {
        uint32_t ticks = word[0];
        uint32_t pins = word[1];
        uint32_t elapsed_ticks = last_ticks - ticks;
        uint8_t kind = kind_of(pins);
        uint32_t address = pins & 0xFFFu;
        if (elapsed_ticks >= FAST_TICKS || (kind == SNIFF_FETCH && is_marker(address))) {
            break;
        }
        last_ticks = ticks;
        int32_t rest = (int32_t)(elapsed_ticks * (SNIFF_CYCLES_PER_TICK << 8)) + timing[kind].own_q8 + last_carry_q8;
        last_carry_q8 = timing[kind].carry_q8;
        cycle += machine_cycles(rest, cycle_q8);
        if (kind == SNIFF_FETCH) {
            bool sequential = address == next_fetch;
            next_fetch = next_pc(address);
            if (sequential) {
                compressed++;
                continue;
            }
            decoder->sink.access(decoder->sink.context, cycle, SNIFF_FETCH, (uint16_t)address,
                                 (uint8_t)(pins >> PIN_D0), p1_of(pins));
        } else {
            reads += kind == SNIFF_MOVX_READ;
            decoder->sink.access(decoder->sink.context, cycle + 1u, kind, (uint16_t)(pins & 0xFFu),
                                 (uint8_t)(pins >> PIN_D0), p1_of(pins));
        }
    }
    uint32_t taken = (uint32_t)(word - words);
    /* event_pio[SNIFF_MOVX_WRITE] == event_pio[SNIFF_FETCH] (SNIFF_SAMPLE_FETCH_WRITE); modulo 2^32 */
    uint32_t event_pio = taken / 2u * decoder->event_pio[SNIFF_FETCH] +
                         reads * (decoder->event_pio[SNIFF_MOVX_READ] - decoder->event_pio[SNIFF_FETCH]);
    decoder->pio_time += (uint64_t)(first_ticks - last_ticks) * SNIFF_CYCLES_PER_TICK + event_pio;
    decoder->last_ticks = last_ticks;
    decoder->last_carry_q8 = last_carry_q8;
    decoder->cycle = cycle;
    decoder->next_fetch = (uint16_t)next_fetch;
    decoder->compressed += compressed;
    decoder->accesses += taken / 2u - compressed;
    return taken;
}

void sniff_decoder_feed_events(sniff_decoder *decoder, const uint32_t *words, uint32_t count)
{
    uint32_t at = 0;
    while (at < count) {
        at += feed_usual(decoder, words + at, count - at);
        if (at < count) {
            sniff_decoder_feed(decoder, words[at], words[at + 1u]);
            at += 2u;
        }
    }
}
