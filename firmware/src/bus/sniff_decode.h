/* Sniff decoder: the sniff PIO program's raw events (tick count + GPIO sample) to capture records.
 *
 * No hardware access: the firmware feeds it from the PIO RX FIFO, the tests from pioemu on the host.
 * What it does (docs/hardware.md, "Sniff"):
 *  - kind from the strobe bits of the sample; address, data and P10/P11/P14 from the other bits;
 *  - the machine cycle of every access from the tick count: each event's PIO cycle is exact
 *    (8 cycles per tick plus the fixed cost of its program path), the cycle number is the previous
 *    one plus the rounded distance in machine cycles (strobe phases from bus_timing.tsv);
 *  - sequential fetches are left out: a FETCH record only when the address is not the previous
 *    fetch's next PC (the 8048 increments within a 2 KB half: A11 is kept);
 *    except 0400h and 0406h, which the protocol core turns into RESET_DETECTED and FRAME_SYNC;
 *  - the NTSC/PAL cycle length from the interval of the 0406h fetches (the VSYNC hook, once a frame).
 * The accesses go to the sink in bus order (on the adapter: core_capture_access of
 * firmware/src/core/adapter_core.h, which adds the P1 records, the events and the kind filter).
 */
#ifndef HILBRIDGE_SNIFF_DECODE_H
#define HILBRIDGE_SNIFF_DECODE_H

#include <stdbool.h>
#include <stdint.h>

/* Capture kinds: bit numbers of docs/protocol.md's capture table. */
enum { SNIFF_FETCH = 0, SNIFF_MOVX_READ = 1, SNIFF_MOVX_WRITE = 2 };

/* PIO cycles from the start of the polling pass that sees a strobe to the `in pins` sample, per
 * program path of firmware/pio/sniff.pio (tests/firmware/test_pio_sniff.py measures them). An
 * emulator whose PIO skips delay cycles (rp2040js) needs other values: each can be given with -D. */
#ifndef SNIFF_SAMPLE_FETCH_WRITE
#define SNIFF_SAMPLE_FETCH_WRITE 86u
#endif
#ifndef SNIFF_SAMPLE_READ
#define SNIFF_SAMPLE_READ 122u
#endif
/* Cycle of the polling pass in which a strobe is tested: /PSEN and /WR by the pass's first
 * instruction, pin E by `jmp pin` four cycles later. */
#ifndef SNIFF_SEEN_FETCH_WRITE
#define SNIFF_SEEN_FETCH_WRITE 0u
#endif
#ifndef SNIFF_SEEN_READ
#define SNIFF_SEEN_READ 4u
#endif
#ifndef SNIFF_CYCLES_PER_TICK
#define SNIFF_CYCLES_PER_TICK 8u
#endif
#ifndef SNIFF_EVENT_EXTRA
#define SNIFF_EVENT_EXTRA 3u /* `in`, `push` and the longer last pass of the wait loop */
#endif

#define SNIFF_RESET_ADDRESS 0x400u
#define SNIFF_VSYNC_HOOK 0x406u

typedef struct {
    void *context;
    /* one access: kind SNIFF_FETCH, _MOVX_READ or _MOVX_WRITE; p1 holds only P10, P11 and P14 */
    void (*access)(void *context, uint32_t cycle, uint8_t kind, uint16_t address, uint8_t value, uint8_t p1);
} sniff_sink;

/* What an event of one kind adds to the distance between two machine-cycle starts, PIO cycles x 256:
 * `own_q8` for the event itself, `carry_q8` for the next one. Both depend on the cycle length. */
typedef struct {
    int32_t own_q8;             /* (SNIFF_EVENT_EXTRA + seen) x 256 - strobe phase + cycle_q8 / 2 */
    int32_t carry_q8;           /* (sample - seen) x 256 + strobe phase */
} sniff_kind_timing;

typedef struct {
    sniff_sink sink;
    uint32_t cycle_q8;          /* PIO cycles per machine cycle x 256 */
    sniff_kind_timing timing[3];
    uint32_t event_pio[3];      /* PIO cycles of each kind's path: SNIFF_EVENT_EXTRA + sample */
    bool started;               /* an event has been seen */
    uint32_t last_ticks;
    int32_t last_carry_q8;      /* carry_q8 of the previous event, at the cycle length it had */
    uint32_t cycle;             /* machine cycle of the previous event */
    uint16_t next_fetch;        /* the address a sequential fetch would have; 0xFFFF: none */
    uint32_t frames;
    uint64_t pio_time;          /* PIO cycles since the first event (for the calibration) */
    uint64_t first_sync_time;
    uint32_t first_sync_frame;
    uint32_t accesses;          /* passed to the sink */
    uint32_t compressed;        /* sequential fetches left out */
} sniff_decoder;

void sniff_decoder_init(sniff_decoder *decoder, const sniff_sink *sink, uint32_t cycle_q8);
/* One event: `ticks` is the first word the program pushed (X), `pins` the second (GPIO 0-25). */
void sniff_decoder_feed(sniff_decoder *decoder, uint32_t ticks, uint32_t pins);
/* `count` words (an even number) of events as the program pushed them: the same as feeding each
 * pair, faster (the main loop's path at one access per machine cycle). */
void sniff_decoder_feed_events(sniff_decoder *decoder, const uint32_t *words, uint32_t count);

#endif
