/* Sniff decoder: see sniff_decode.h. */
#include "sniff_decode.h"

#include "bus_timing_gen.h"
#include "pins_gen.h"

#define STROBE_BITS ((1u << PIN_PSEN_N) | (1u << PIN_WR_N) | (1u << PIN_E))
#define FRAMES_FOR_CALIBRATION 16u

static void set_cycle_length(sniff_decoder *decoder, uint32_t cycle_q8);

void sniff_decoder_init(sniff_decoder *decoder, const sniff_sink *sink, uint32_t cycle_q8)
{
    decoder->sink = *sink;
    set_cycle_length(decoder, cycle_q8);
    decoder->started = false;
    decoder->last_ticks = 0;
    decoder->last_edge_offset = 0;
    decoder->last_phase_q8 = 0;
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

static uint8_t kind_of(uint32_t pins)
{
    if (!(pins >> PIN_PSEN_N & 1u)) {
        return SNIFF_FETCH;
    }
    if (!(pins >> PIN_WR_N & 1u)) {
        return SNIFF_MOVX_WRITE;
    }
    return SNIFF_MOVX_READ;
}

static uint8_t p1_of(uint32_t pins)
{
    return (uint8_t)((pins >> PIN_P10 & 1u) | (pins >> PIN_P11 & 1u) << 1 | (pins >> PIN_P14 & 1u) << 4);
}

/* The Cortex-M0+ has no divide instruction: a division costs libgcc 100 (32-bit) to 250 (64-bit)
 * cycles, and at one access per machine cycle the decoder has about 350 for everything. So the
 * strobe phases are computed once per cycle length, and the machine cycles between two accesses
 * (usually 1 to 3) are counted by subtraction; only a long gap, which leaves time to spare, divides. */
static void set_cycle_length(sniff_decoder *decoder, uint32_t cycle_q8)
{
    decoder->cycle_q8 = cycle_q8;
    decoder->phase_q8[SNIFF_FETCH] = (int32_t)(BUS_STROBE_PSEN_START_OSC * cycle_q8 / 15u);
    decoder->phase_q8[SNIFF_MOVX_WRITE] = (int32_t)(BUS_STROBE_WR_START_OSC * cycle_q8 / 15u);
    decoder->phase_q8[SNIFF_MOVX_READ] = (int32_t)(BUS_STROBE_RD_START_OSC * cycle_q8 / 15u);
}

#define SUBTRACT_AT_MOST 16u

/* round(q8 / cycle_q8) */
static uint32_t machine_cycles(uint64_t q8, uint32_t cycle_q8)
{
    uint64_t rest = q8 + cycle_q8 / 2u;
    if (rest >= (uint64_t)cycle_q8 * SUBTRACT_AT_MOST) {
        return (uint32_t)(rest / cycle_q8);
    }
    uint32_t count = 0;
    while (rest >= cycle_q8) {
        rest -= cycle_q8;
        count++;
    }
    return count;
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

void sniff_decoder_feed(sniff_decoder *decoder, uint32_t ticks, uint32_t pins)
{
    uint8_t kind = kind_of(pins);
    uint32_t cost = kind == SNIFF_MOVX_READ ? SNIFF_SAMPLE_READ : SNIFF_SAMPLE_FETCH_WRITE;
    uint32_t edge = kind == SNIFF_MOVX_READ ? SNIFF_SAMPLE_READ - SNIFF_SEEN_READ
                                            : SNIFF_SAMPLE_FETCH_WRITE - SNIFF_SEEN_FETCH_WRITE;
    int32_t phase = decoder->phase_q8[kind];
    if (decoder->started) {
        uint32_t elapsed_ticks = decoder->last_ticks - ticks; /* X counts down, modulo 2^32 */
        uint64_t between = (uint64_t)elapsed_ticks * SNIFF_CYCLES_PER_TICK + SNIFF_EVENT_EXTRA + cost;
        decoder->pio_time += between;
        /* strobe edge to strobe edge, then back to the starts of the two machine cycles */
        int64_t edges_q8 = (int64_t)((between - edge + decoder->last_edge_offset) << 8);
        int64_t starts_q8 = edges_q8 - phase + decoder->last_phase_q8;
        if (starts_q8 < 0) {
            starts_q8 = 0;
        }
        decoder->cycle += machine_cycles((uint64_t)starts_q8, decoder->cycle_q8);
    }
    decoder->started = true;
    decoder->last_ticks = ticks;
    decoder->last_edge_offset = edge;
    decoder->last_phase_q8 = phase;

    uint8_t p1 = p1_of(pins);
    uint8_t value = (uint8_t)(pins >> PIN_D0);
    uint32_t cycle = kind == SNIFF_FETCH ? decoder->cycle : decoder->cycle + 1u; /* MOVX: its end */
    if (kind == SNIFF_FETCH) {
        uint16_t address = (uint16_t)(pins & 0xFFFu);
        bool marker = address == SNIFF_RESET_ADDRESS || address == SNIFF_VSYNC_HOOK;
        if (address != decoder->next_fetch || marker) {
            emit(decoder, cycle, SNIFF_FETCH, address, value, p1);
        } else {
            decoder->compressed++;
        }
        decoder->next_fetch = (uint16_t)((address & 0x800u) | ((address + 1u) & 0x7FFu));
        if (address == SNIFF_VSYNC_HOOK) {
            decoder->frames++;
            calibrate(decoder);
        }
    } else {
        emit(decoder, cycle, kind, (uint16_t)(pins & 0xFFu), value, p1);
    }
}
