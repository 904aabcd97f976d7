/* The bus engines on the RP2040: pins, PIO programs (pio_gen.h), DMA chains, and the adapter_ops
 * the protocol core calls. See bus.h and docs/hardware.md. */
#include "bus.h"

#include "bus_table.h"
#include "bus_timing_gen.h"
#include "cart.h"
#include "pins_gen.h"
#include "pio_gen.h"
#include "regs.h"
#include "regs_dma.h"
#include "regs_pio.h"
#include "sniff_decode.h"

#define GPIO_CTRL_OUTOVER_INVERT (1u << 8)
#define GPIO_CTRL_INOVER_INVERT (1u << 16)
#define BUS_PINS_SLOT_MASK ((1u << 26) - 1u) /* GPIO 0-25: address, ports, data, strobes */
#define DATA_MASK (0xFFu << PIN_D0)
#define DUMP_OUT_MASK (PINS_DUMP_OUT_MASK & BUS_PINS_SLOT_MASK)
#define STROBES_IDLE ((1u << PIN_PSEN_N) | (1u << PIN_WR_N))
#define PIO_INSTR_PULL_BLOCK 0x80A0u
#define PIO_INSTR_MOV_X_OSR 0xA027u
#define NO_CART_READS 16u
#define DUMP_RELEASE_SPINS 4u /* at least 4 CPU cycles each: more than dump.pio's `out [HOLD]` (8) */

/* Serve tables (16 KB aligned: the serve engine ORs the index into base << bits), the o2_rally
 * table of table bases (1 KB aligned), and the sniff ring (aligned to its size for DMA ring mode). */
static uint8_t tables[BUS_TABLE_BYTES] __attribute__((aligned(16384)));
static uint32_t latch_bases[256] __attribute__((aligned(1024)));
static uint32_t sniff_ring[BUS_SNIFF_RING_WORDS] __attribute__((aligned(1u << BUS_SNIFF_RING_LOG2)));

typedef enum { MODE_IDLE, MODE_DUMP } bus_mode;

static struct {
    adapter_core *core;
    bus_mode mode;
    bool serving;
    bool capturing;
    cart served;
    sniff_decoder decoder;
    uint32_t consumed; /* sniff ring words read */
} bus;

static inline volatile uint32_t *reg(uint32_t address)
{
    return (volatile uint32_t *)(uintptr_t)address;
}

static inline volatile uint32_t *pio_reg(unsigned pio, uint32_t offset)
{
    return reg(PIO_BASE(pio) + offset);
}

static inline volatile uint32_t *dma_reg(unsigned channel, uint32_t offset)
{
    return reg(DMA_CH(channel) + offset);
}

static void pio_exec(unsigned pio, unsigned sm, uint16_t instruction)
{
    *pio_reg(pio, PIO_SM_INSTR(sm)) = instruction;
}

/* Copy a program into instruction memory at `offset`; its JMPs were assembled for offset 0. */
static void pio_load(unsigned pio, const uint16_t *program, unsigned length, unsigned offset)
{
    for (unsigned i = 0; i < length; i++) {
        uint16_t opcode = program[i];
        if (PIO_INSTR_IS_JMP(opcode)) {
            opcode = (uint16_t)((opcode & ~0x1Fu) | ((opcode + offset) & 0x1Fu));
        }
        *pio_reg(pio, PIO_INSTR_MEM(offset + i)) = opcode;
    }
}

static void pio_configure(unsigned pio, unsigned sm, uint32_t execctrl, uint32_t shiftctrl, uint32_t pinctrl,
                          unsigned start)
{
    *pio_reg(pio, PIO_CTRL) &= ~PIO_CTRL_SM_ENABLE(sm);
    *pio_reg(pio, PIO_SM_CLKDIV(sm)) = PIO_CLKDIV_INT_1;
    *pio_reg(pio, PIO_SM_EXECCTRL(sm)) = execctrl;
    *pio_reg(pio, PIO_SM_SHIFTCTRL(sm)) = shiftctrl;
    *pio_reg(pio, PIO_SM_PINCTRL(sm)) = pinctrl;
    *pio_reg(pio, PIO_CTRL) |= PIO_CTRL_SM_RESTART(sm) | PIO_CTRL_CLKDIV_RESTART(sm);
    pio_exec(pio, sm, PIO_INSTR_JMP(start));
}

/* Give a machine's side-set pin a level and make it an output before the pin is switched to the
 * PIO (SIO holds the same level until then), through a temporary SET pin mapping. */
static void pio_side_pin(unsigned pio, unsigned sm, unsigned pin, unsigned level, uint32_t pinctrl)
{
    *pio_reg(pio, PIO_SM_PINCTRL(sm)) = (1u << 26) | (pin << 5);
    pio_exec(pio, sm, PIO_INSTR_SET_PINS(level));
    pio_exec(pio, sm, PIO_INSTR_SET_PINDIRS(1u));
    *pio_reg(pio, PIO_SM_PINCTRL(sm)) = pinctrl;
}

static void pio_put(unsigned pio, unsigned sm, uint32_t word)
{
    while (*pio_reg(pio, PIO_FSTAT) & PIO_FSTAT_TXFULL(sm)) {
    }
    *pio_reg(pio, PIO_TXF(sm)) = word;
}

static uint32_t pio_get(unsigned pio, unsigned sm)
{
    while (*pio_reg(pio, PIO_FSTAT) & PIO_FSTAT_RXEMPTY(sm)) {
    }
    return *pio_reg(pio, PIO_RXF(sm));
}

static void pio_stop(unsigned pio, unsigned sm)
{
    *pio_reg(pio, PIO_CTRL) &= ~PIO_CTRL_SM_ENABLE(sm);
    *pio_reg(pio, PIO_CTRL) |= PIO_CTRL_SM_RESTART(sm);
}

/* Set a machine's pin directions (OUT range) to `mask` through its own OSR, then resume it at
 * `resume_at`. The machine is held meanwhile (running, it would take the word with its own `pull`)
 * and restarted, which drops the stall of its own blocking PULL: an executed OUT would otherwise
 * wait behind it (rp2040js skips it). */
static void pio_pindirs(unsigned pio, unsigned sm, uint32_t mask, unsigned count, unsigned resume_at)
{
    uint32_t enabled = *pio_reg(pio, PIO_CTRL) & PIO_CTRL_SM_ENABLE(sm);
    *pio_reg(pio, PIO_CTRL) &= ~PIO_CTRL_SM_ENABLE(sm);
    *pio_reg(pio, PIO_CTRL) |= PIO_CTRL_SM_RESTART(sm);
    pio_put(pio, sm, mask);
    pio_exec(pio, sm, PIO_INSTR_PULL_BLOCK);
    pio_exec(pio, sm, PIO_INSTR_OUT_PINDIRS(count));
    pio_exec(pio, sm, PIO_INSTR_JMP(resume_at));
    *pio_reg(pio, PIO_CTRL) |= enabled;
}

static void gpio_function(uint32_t mask, uint32_t function)
{
    for (unsigned pin = 0; pin < 30u; pin++) {
        if (mask >> pin & 1u) {
            uint32_t invert = pin == PIN_E && !PIN_E_ACTIVE ? GPIO_CTRL_INOVER_INVERT | GPIO_CTRL_OUTOVER_INVERT : 0u;
            *reg(IO_GPIO_CTRL(pin)) = function | invert;
        }
    }
}

static void sio_drive(unsigned pin, bool level)
{
    *reg(SIO_BASE + (level ? SIO_GPIO_OUT_SET : SIO_GPIO_OUT_CLR)) = 1u << pin;
    *reg(SIO_BASE + SIO_GPIO_OE_SET) = 1u << pin;
    *reg(IO_GPIO_CTRL(pin)) = GPIO_FUNC_SIO;
}

/* ---- modes: the console side connected (serve, sniff) or isolated (dump) ---- */

static void serve_stop(void);
static void board_capture_stop(void *context);

static void enter_idle(void)
{
    if (bus.mode == MODE_DUMP) {
        pio_pindirs(PIO_DUMP_PIO, PIO_DUMP_SM, 0, 26u, PIO_DUMP_OFFSET);
        pio_stop(PIO_DUMP_PIO, PIO_DUMP_SM);
        gpio_function(BUS_PINS_SLOT_MASK, GPIO_FUNC_NULL);
        sio_drive(PIN_DOUT_OE_N, true);
    }
    sio_drive(PIN_DUMP, false); /* console connected, U1/U2/U5 towards the RP2040 */
    bus.mode = MODE_IDLE;
}

/* Dumping takes the slot: a running serve engine stops first (the host asked for the slot). */
static void enter_dump(void)
{
    if (bus.mode == MODE_DUMP) {
        return;
    }
    if (bus.serving) {
        serve_stop();
    }
    sio_drive(PIN_DOUT_OE_N, true);
    sio_drive(PIN_DUMP, true); /* U8-U11 off first, then the RP2040 may drive */
    if (bus.capturing) {
        board_capture_stop(0);
    }
    pio_load(PIO_DUMP_PIO, pio_dump_program, PIO_DUMP_LENGTH, PIO_DUMP_OFFSET); /* in the sniff's place */
    pio_configure(PIO_DUMP_PIO, PIO_DUMP_SM, PIO_DUMP_EXECCTRL, PIO_DUMP_SHIFTCTRL, PIO_DUMP_PINCTRL,
                  PIO_DUMP_OFFSET);
    gpio_function(BUS_PINS_SLOT_MASK, PIO_DUMP_PIO ? GPIO_FUNC_PIO1 : GPIO_FUNC_PIO0);
    pio_put(PIO_DUMP_PIO, PIO_DUMP_SM, STROBES_IDLE);
    pio_exec(PIO_DUMP_PIO, PIO_DUMP_SM, PIO_INSTR_PULL_BLOCK);
    pio_exec(PIO_DUMP_PIO, PIO_DUMP_SM, PIO_INSTR_OUT_PINS(26u)); /* idle levels before driving */
    pio_pindirs(PIO_DUMP_PIO, PIO_DUMP_SM, DUMP_OUT_MASK, 26u, PIO_DUMP_OFFSET);
    pio_exec(PIO_DUMP_PIO, PIO_DUMP_SM, PIO_INSTR_JMP(PIO_DUMP_OFFSET));
    *pio_reg(PIO_DUMP_PIO, PIO_CTRL) |= PIO_CTRL_SM_ENABLE(PIO_DUMP_SM);
    bus.mode = MODE_DUMP;
}

static uint32_t port_bits(uint8_t p1)
{
    return (uint32_t)(p1 & 1u) << PIN_P10 | (uint32_t)(p1 >> 1 & 1u) << PIN_P11 | (uint32_t)(p1 >> 4 & 1u) << PIN_P14;
}

/* One access through the dump program: the lines with the strobes idle, with one strobe active, and
 * idle again with the lines held. */
static uint8_t dump_access(uint32_t lines, uint32_t strobe_active_bits, uint32_t strobe_clear_bits)
{
    uint32_t idle = lines | STROBES_IDLE;
    pio_put(PIO_DUMP_PIO, PIO_DUMP_SM, idle);
    pio_put(PIO_DUMP_PIO, PIO_DUMP_SM, (idle & ~strobe_clear_bits) | strobe_active_bits);
    pio_put(PIO_DUMP_PIO, PIO_DUMP_SM, idle);
    uint8_t value = (uint8_t)(pio_get(PIO_DUMP_PIO, PIO_DUMP_SM) >> PIN_D0);
    while (!(*pio_reg(PIO_DUMP_PIO, PIO_FSTAT) & PIO_FSTAT_TXEMPTY(PIO_DUMP_SM))) {
    }
    /* the release word is pulled; its `out` and hold take 8 more PIO cycles, after which the caller
     * may turn the data pins around */
    for (volatile unsigned spin = 0; spin < DUMP_RELEASE_SPINS; spin++) {
    }
    return value;
}

static void board_set_ports(void *context, uint8_t p1, uint8_t p2)
{
    (void)context;
    enter_dump();
    (void)dump_access(port_bits(p1) | (uint32_t)(p2 & 0x0Fu) << 8, 0, 0);
}

static void board_cart_read(void *context, uint8_t p1, uint8_t p2, uint8_t strobe, uint16_t address,
                            uint16_t length, uint8_t *out)
{
    (void)context;
    enter_dump();
    for (uint16_t i = 0; i < length; i++) {
        uint16_t at = (uint16_t)(address + i);
        if (strobe == HB_STROBE_MOVX_READ) {
            uint32_t lines = port_bits(p1) | (at & 0xFFu) | (uint32_t)(p2 & 0x0Fu) << 8;
            out[i] = dump_access(lines, 1u << PIN_E, 0);
        } else {
            out[i] = dump_access(port_bits(p1) | (at & 0xFFFu), 0, 1u << PIN_PSEN_N);
        }
    }
}

static void board_cart_write(void *context, uint8_t p1, uint8_t p2, uint8_t address, uint8_t value)
{
    (void)context;
    enter_dump();
    uint32_t lines = port_bits(p1) | address | (uint32_t)(p2 & 0x0Fu) << 8 | (uint32_t)value << PIN_D0;
    pio_pindirs(PIO_DUMP_PIO, PIO_DUMP_SM, DUMP_OUT_MASK | DATA_MASK, 26u, PIO_DUMP_OFFSET);
    *reg(SIO_BASE + SIO_GPIO_OUT_CLR) = 1u << PIN_DOUT_OE_N; /* U4 drives the slot's D0-D7 */
    (void)dump_access(lines, 0, 1u << PIN_WR_N);
    *reg(SIO_BASE + SIO_GPIO_OUT_SET) = 1u << PIN_DOUT_OE_N;
    pio_pindirs(PIO_DUMP_PIO, PIO_DUMP_SM, DUMP_OUT_MASK, 26u, PIO_DUMP_OFFSET);
}

/* An empty slot reads as the pull-ups (FFh) on every address; a cartridge header does not. Probing
 * isolates the console for about 20 us, so it is not done under a running capture or serve engine
 * (the answer is then "present": the console is running something). */
static bool board_cart_present(void *context)
{
    if (bus.capturing || bus.serving) {
        return true;
    }
    uint8_t bytes[NO_CART_READS];
    board_cart_read(context, 0xFFu, 0xFFu, HB_STROBE_PSEN, HB_PROGRAM_START, NO_CART_READS, bytes);
    for (unsigned i = 0; i < NO_CART_READS; i++) {
        if (bytes[i] != 0xFFu) {
            return true;
        }
    }
    return false;
}

/* ---- serve ---- */

static void dma_lookup_chain(unsigned address_channel, unsigned data_channel, unsigned sm, uint32_t data_size)
{
    *dma_reg(data_channel, DMA_WRITE_ADDR) = PIO0_BASE + PIO_TXF(sm);
    *dma_reg(data_channel, DMA_TRANS_COUNT) = 1u;
    *dma_reg(data_channel, DMA_AL1_CTRL) = DMA_CTRL_EN | DMA_CTRL_HIGH_PRIORITY | data_size | DMA_CTRL_IRQ_QUIET |
                                           DMA_CTRL_TREQ_SEL(DREQ_PIO_TX(0u, sm)) |
                                           DMA_CTRL_CHAIN_TO(address_channel);
    *dma_reg(address_channel, DMA_READ_ADDR) = PIO0_BASE + PIO_RXF(sm);
    *dma_reg(address_channel, DMA_WRITE_ADDR) = DMA_CH(data_channel) + DMA_AL3_READ_ADDR_TRIG;
    *dma_reg(address_channel, DMA_TRANS_COUNT) = 1u;
    *dma_reg(address_channel, DMA_CTRL_TRIG) = DMA_CTRL_EN | DMA_CTRL_HIGH_PRIORITY | DMA_CTRL_DATA_SIZE_WORD |
                                               DMA_CTRL_IRQ_QUIET | DMA_CTRL_TREQ_SEL(DREQ_PIO_RX(0u, sm)) |
                                               DMA_CTRL_CHAIN_TO(address_channel);
}

static void serve_stop(void)
{
    for (unsigned sm = 0; sm < 2u; sm++) {
        pio_stop(0u, sm);
    }
    *reg(DMA_BASE + DMA_CHAN_ABORT) = 1u << BUS_DMA_SERVE_ADDRESS | 1u << BUS_DMA_SERVE_DATA |
                                      1u << BUS_DMA_AUX_ADDRESS | 1u << BUS_DMA_AUX_DATA;
    pio_exec(0u, 0u, PIO_INSTR_MOV_OSR_NULL);
    pio_exec(0u, 0u, PIO_INSTR_OUT_PINDIRS(8u));
    sio_drive(PIN_DOUT_OE_N, true);
    gpio_function(DATA_MASK, GPIO_FUNC_NULL);
    bus.serving = false;
}

static bool board_emulation_start(void *context, const uint8_t *image, uint32_t size, uint8_t mapper_id)
{
    (void)context;
    const hb_mapper_type *type = cart_type_by_id(mapper_id);
    if (type == 0 || !cart_size_allowed(type, size)) {
        return false;
    }
    if (bus.serving) {
        serve_stop();
    }
    enter_idle();
    sio_drive(PIN_DOUT_OE_N, true);
    cart_init(&bus.served, type, image, size);
    bus_table_build(tables, &bus.served);
    unsigned bits = bus_table_index_bits(&bus.served);
    uint32_t base = (uint32_t)(uintptr_t)tables >> bits;
    bool rally = bus_table_count(&bus.served) > 1u;

    /* PIO0: the serve program in SM0 (with the side-set pin high before it owns the pin) */
    if (rally) {
        pio_load(0u, pio_serve_rally_program, PIO_SERVE_RALLY_LENGTH, PIO_SERVE_RALLY_OFFSET);
        pio_load(0u, pio_rally_latch_program, PIO_RALLY_LATCH_LENGTH, PIO_RALLY_LATCH_OFFSET);
        pio_configure(0u, 0u, PIO_SERVE_RALLY_EXECCTRL, PIO_SERVE_RALLY_SHIFTCTRL, PIO_SERVE_RALLY_PINCTRL,
                      PIO_SERVE_RALLY_LABEL_IDLE);
        pio_side_pin(0u, 0u, PIN_DOUT_OE_N, 1u, PIO_SERVE_RALLY_PINCTRL);
        pio_configure(0u, 1u, PIO_RALLY_LATCH_EXECCTRL, PIO_RALLY_LATCH_SHIFTCTRL, PIO_RALLY_LATCH_PINCTRL,
                      PIO_RALLY_LATCH_OFFSET);
        for (unsigned value = 0; value < 256u; value++) {
            latch_bases[value] = base + (value & (bus_table_count(&bus.served) - 1u));
        }
        pio_put(0u, 1u, (uint32_t)(uintptr_t)latch_bases >> 10);
        pio_exec(0u, 1u, PIO_INSTR_PULL_BLOCK);
        pio_exec(0u, 1u, PIO_INSTR_MOV_X_OSR);
        pio_put(0u, 0u, base); /* serve_rally's idle loop takes it with `pull noblock` */
        dma_lookup_chain(BUS_DMA_SERVE_ADDRESS, BUS_DMA_SERVE_DATA, 0u, DMA_CTRL_DATA_SIZE_BYTE);
        /* the latch engine's word addresses an entry of latch_bases: copy that entry to SM0 */
        *dma_reg(BUS_DMA_AUX_DATA, DMA_WRITE_ADDR) = PIO0_BASE + PIO_TXF(0u);
        *dma_reg(BUS_DMA_AUX_DATA, DMA_TRANS_COUNT) = 1u;
        *dma_reg(BUS_DMA_AUX_DATA, DMA_AL1_CTRL) = DMA_CTRL_EN | DMA_CTRL_DATA_SIZE_WORD | DMA_CTRL_IRQ_QUIET |
                                                   DMA_CTRL_TREQ_PERMANENT | DMA_CTRL_CHAIN_TO(BUS_DMA_AUX_ADDRESS);
        *dma_reg(BUS_DMA_AUX_ADDRESS, DMA_READ_ADDR) = PIO0_BASE + PIO_RXF(1u);
        *dma_reg(BUS_DMA_AUX_ADDRESS, DMA_WRITE_ADDR) = DMA_CH(BUS_DMA_AUX_DATA) + DMA_AL3_READ_ADDR_TRIG;
        *dma_reg(BUS_DMA_AUX_ADDRESS, DMA_TRANS_COUNT) = 1u;
        *dma_reg(BUS_DMA_AUX_ADDRESS, DMA_CTRL_TRIG) = DMA_CTRL_EN | DMA_CTRL_DATA_SIZE_WORD | DMA_CTRL_IRQ_QUIET |
                                                       DMA_CTRL_TREQ_SEL(DREQ_PIO_RX(0u, 1u)) |
                                                       DMA_CTRL_CHAIN_TO(BUS_DMA_AUX_ADDRESS);
    } else {
        pio_load(0u, pio_serve_program, PIO_SERVE_LENGTH, PIO_SERVE_OFFSET);
        pio_load(0u, pio_serve_movx_program, PIO_SERVE_MOVX_LENGTH, PIO_SERVE_MOVX_OFFSET);
        pio_configure(0u, 0u, PIO_SERVE_EXECCTRL, PIO_SERVE_SHIFTCTRL, PIO_SERVE_PINCTRL, PIO_SERVE_LABEL_START);
        pio_side_pin(0u, 0u, PIN_DOUT_OE_N, 1u, PIO_SERVE_PINCTRL);
        pio_put(0u, 0u, base);
        dma_lookup_chain(BUS_DMA_SERVE_ADDRESS, BUS_DMA_SERVE_DATA, 0u, DMA_CTRL_DATA_SIZE_BYTE);
        if (bus_table_movx_data(&bus.served)) {
            pio_configure(0u, 1u, PIO_SERVE_MOVX_EXECCTRL, PIO_SERVE_MOVX_SHIFTCTRL, PIO_SERVE_MOVX_PINCTRL,
                          PIO_SERVE_MOVX_LABEL_START);
            pio_put(0u, 1u, base);
            dma_lookup_chain(BUS_DMA_AUX_ADDRESS, BUS_DMA_AUX_DATA, 1u, DMA_CTRL_DATA_SIZE_BYTE);
        }
    }
    gpio_function(DATA_MASK | 1u << PIN_DOUT_OE_N, GPIO_FUNC_PIO0); /* SIO left the side-set pin high */
    bool second = rally || bus_table_movx_data(&bus.served);
    *pio_reg(0u, PIO_CTRL) |= PIO_CTRL_SM_ENABLE(0u) | (second ? PIO_CTRL_SM_ENABLE(1u) : 0u);
    bus.serving = true;
    return true;
}

static void board_emulation_stop(void *context)
{
    (void)context;
    if (bus.serving) {
        serve_stop();
    }
}

/* ---- sniff ---- */

static uint32_t sniff_produced(void)
{
    return 0xFFFFFFFFu - *dma_reg(BUS_DMA_SNIFF, DMA_TRANS_COUNT);
}

static bool board_capture_start(void *context, uint8_t what)
{
    (void)context;
    (void)what; /* the core filters by kind */
    enter_idle();
    if (bus.capturing) {
        board_capture_stop(0);
    }
    sniff_sink sink = {bus.core, core_capture_sink};
    sniff_decoder_init(&bus.decoder, &sink, BUS_NTSC_CYCLE_Q8);
    pio_load(PIO_SNIFF_PIO, pio_sniff_program, PIO_SNIFF_LENGTH, PIO_SNIFF_OFFSET);
    pio_configure(PIO_SNIFF_PIO, PIO_SNIFF_SM, PIO_SNIFF_EXECCTRL, PIO_SNIFF_SHIFTCTRL, PIO_SNIFF_PINCTRL,
                  PIO_SNIFF_OFFSET);
    pio_exec(PIO_SNIFF_PIO, PIO_SNIFF_SM, PIO_INSTR_MOV_X_NOT_NULL);
    *dma_reg(BUS_DMA_SNIFF, DMA_READ_ADDR) = PIO_BASE(PIO_SNIFF_PIO) + PIO_RXF(PIO_SNIFF_SM);
    *dma_reg(BUS_DMA_SNIFF, DMA_WRITE_ADDR) = (uint32_t)(uintptr_t)sniff_ring;
    *dma_reg(BUS_DMA_SNIFF, DMA_TRANS_COUNT) = 0xFFFFFFFFu;
    *dma_reg(BUS_DMA_SNIFF, DMA_CTRL_TRIG) = DMA_CTRL_EN | DMA_CTRL_DATA_SIZE_WORD | DMA_CTRL_INCR_WRITE |
                                             (BUS_SNIFF_RING_LOG2 << 6) | (1u << 10) | DMA_CTRL_IRQ_QUIET |
                                             DMA_CTRL_TREQ_SEL(DREQ_PIO_RX(PIO_SNIFF_PIO, PIO_SNIFF_SM)) |
                                             DMA_CTRL_CHAIN_TO(BUS_DMA_SNIFF);
    bus.consumed = 0;
    *pio_reg(PIO_SNIFF_PIO, PIO_FDEBUG) = PIO_FDEBUG_RXSTALL(PIO_SNIFF_SM);
    *pio_reg(PIO_SNIFF_PIO, PIO_CTRL) |= PIO_CTRL_SM_ENABLE(PIO_SNIFF_SM);
    bus.capturing = true;
    return true;
}

static void sniff_drain(void)
{
    uint32_t produced = sniff_produced() & ~1u;
    if (produced - bus.consumed > BUS_SNIFF_RING_WORDS) { /* the ring overran: whole events lost */
        uint32_t skip = (produced - bus.consumed - BUS_SNIFF_RING_WORDS + 1u) & ~1u;
        core_capture_dropped(bus.core, skip / 2u);
        bus.consumed += skip;
    }
    while (bus.consumed != produced) { /* up to the ring's end, then from its start */
        uint32_t at = bus.consumed % BUS_SNIFF_RING_WORDS;
        uint32_t count = produced - bus.consumed;
        if (count > BUS_SNIFF_RING_WORDS - at) {
            count = BUS_SNIFF_RING_WORDS - at;
        }
        sniff_decoder_feed_events(&bus.decoder, sniff_ring + at, count);
        bus.consumed += count;
    }
    if (*pio_reg(PIO_SNIFF_PIO, PIO_FDEBUG) & PIO_FDEBUG_RXSTALL(PIO_SNIFF_SM)) {
        *pio_reg(PIO_SNIFF_PIO, PIO_FDEBUG) = PIO_FDEBUG_RXSTALL(PIO_SNIFF_SM);
        core_capture_dropped(bus.core, 1u); /* the program waited: at least one strobe missed */
    }
}

static void board_capture_stop(void *context)
{
    (void)context;
    if (!bus.capturing) {
        return;
    }
    sniff_drain();
    pio_stop(PIO_SNIFF_PIO, PIO_SNIFF_SM);
    *reg(DMA_BASE + DMA_CHAN_ABORT) = 1u << BUS_DMA_SNIFF;
    bus.capturing = false;
}

/* ---- the board interface ---- */

void bus_board_ops(adapter_ops *ops)
{
    ops->capabilities = 1u << HB_CAPABILITY_CART_READ_BIT | 1u << HB_CAPABILITY_CART_WRITE_BIT |
                        1u << HB_CAPABILITY_EMULATION_BIT | 1u << HB_CAPABILITY_CAPTURE_BIT |
                        1u << HB_CAPABILITY_RESET_DETECT_BIT | 1u << HB_CAPABILITY_FRAME_SYNC_BIT;
    ops->cart_present = board_cart_present;
    ops->set_ports = board_set_ports;
    ops->cart_read = board_cart_read;
    ops->cart_write = board_cart_write;
    ops->emulation_start = board_emulation_start;
    ops->emulation_stop = board_emulation_stop;
    ops->capture_start = board_capture_start;
    ops->capture_stop = board_capture_stop;
}

void bus_board_start(adapter_core *core)
{
    bus.core = core;
    uint32_t blocks = RESET_BIT_PIO0 | RESET_BIT_PIO1 | RESET_BIT_DMA; /* the platform has the GPIO banks */
    *reg(RESETS_BASE + ALIAS_CLR + RESETS_RESET) = blocks;
    while ((*reg(RESETS_BASE + RESETS_RESET_DONE) & blocks) != blocks) {
    }
    for (unsigned pin = 0; pin < 30u; pin++) {
        if ((BUS_PINS_SLOT_MASK | 1u << PIN_DOUT_OE_N | 1u << PIN_DUMP) >> pin & 1u) {
            *reg(PADS_GPIO(pin)) = PADS_IE | PADS_SCHMITT | PADS_DRIVE_4MA;
        }
    }
    bus.mode = MODE_IDLE;
    enter_idle();
}

void bus_board_poll(adapter_core *core)
{
    (void)core;
    if (bus.capturing) {
        sniff_drain();
    }
}
