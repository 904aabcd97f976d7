/* The board behind adapter_ops: the cartridge slot read and written with the console side isolated
 * (DUMP high), by the CPU through SIO. Dumping has no bus deadline (the console is cut off), so plain
 * GPIO writes with settling delays suffice: each access drives A0-A11 and P10/P11/P14, waits, strobes
 * /PSEN, pin E or /WR, waits again and samples D0-D7. Pins from firmware/board/pins.tsv. Emulation
 * and capture need the PIO engines of src/bus and are not announced yet (NOT_SUPPORTED). */
#include "board.h"
#include "pins_gen.h"
#include "platform.h"
#include "regs.h"

#define SIO(offset) REG32(SIO_BASE + (offset))
#define BIT(pin) (1u << (pin))
#define ADDRESS_LINES (0xFFFu << PIN_A0)
#define PORT_LINES (BIT(PIN_P10) | BIT(PIN_P11) | BIT(PIN_P14))
#define STROBES (BIT(PIN_PSEN_N) | BIT(PIN_WR_N) | BIT(PIN_E))
#define DATA_LINES (0xFFu << PIN_D0)
#define STROBES_IDLE (BIT(PIN_PSEN_N) | BIT(PIN_WR_N)) /* /PSEN and /WR high, E low */
#define SLOT_PINS 28u
/* In clk_sys cycles (8 ns), as the dump PIO program of firmware/pio/dump.pio: address set-up before the
 * strobe 256 ns, strobe to sample 512 ns (slow EPROMs need 450 ns). */
#define SETUP_CYCLES 32u
#define ACCESS_CYCLES 64u

static void delay_cycles(uint32_t cycles)
{
    uint32_t loops = cycles / 3u; /* subs (1) + taken bne (2) */
    __asm__ volatile("1: sub %0, #1\n bne 1b" : "+l"(loops) : : "cc");
}

static void set_lines(uint32_t mask, uint32_t value)
{
    SIO(SIO_GPIO_OUT_SET) = value & mask;
    SIO(SIO_GPIO_OUT_CLR) = ~value & mask;
}

static uint32_t slot_lines(uint16_t address, uint8_t p1)
{
    return ((uint32_t)(address & 0xFFFu) << PIN_A0) | ((p1 & 0x01u) ? BIT(PIN_P10) : 0u) |
           ((p1 & 0x02u) ? BIT(PIN_P11) : 0u) | ((p1 & 0x10u) ? BIT(PIN_P14) : 0u);
}

static void dump_mode(bool on)
{
    if (on) {
        set_lines(ADDRESS_LINES | PORT_LINES | STROBES, STROBES_IDLE);
        SIO(SIO_GPIO_OUT_SET) = BIT(PIN_DUMP);
        SIO(SIO_GPIO_OE_SET) = ADDRESS_LINES | PORT_LINES | STROBES;
    } else {
        SIO(SIO_GPIO_OE_CLR) = ADDRESS_LINES | PORT_LINES | STROBES | DATA_LINES;
        SIO(SIO_GPIO_OUT_CLR) = BIT(PIN_DUMP);
    }
}

static uint8_t read_once(uint16_t lines_address, uint8_t p1, uint8_t strobe)
{
    set_lines(ADDRESS_LINES | PORT_LINES, slot_lines(lines_address, p1));
    delay_cycles(SETUP_CYCLES);
    if (strobe == HB_STROBE_PSEN) {
        SIO(SIO_GPIO_OUT_CLR) = BIT(PIN_PSEN_N);
    } else {
        SIO(SIO_GPIO_OUT_SET) = BIT(PIN_E);
    }
    delay_cycles(ACCESS_CYCLES);
    uint8_t value = (uint8_t)(SIO(SIO_GPIO_IN) >> PIN_D0);
    set_lines(STROBES, STROBES_IDLE);
    return value;
}

static bool cart_present(void *context)
{
    (void)context; /* the slot has no presence contact: an empty slot reads FFh everywhere */
    return true;
}

static void set_ports(void *context, uint8_t p1, uint8_t p2)
{
    (void)context;
    set_lines(PORT_LINES | (0xFu << PIN_A8), slot_lines((uint16_t)((p2 & 0xFu) << 8), p1));
}

static void cart_read(void *context, uint8_t p1, uint8_t p2, uint8_t strobe, uint16_t address, uint16_t length,
                      uint8_t *out)
{
    (void)context;
    dump_mode(true);
    for (uint16_t i = 0; i < length; i++) {
        uint16_t at = (uint16_t)(address + i);
        /* MOVX: A0-A7 from the address, A8-A11 are P20-P23 */
        uint16_t lines = strobe == HB_STROBE_PSEN ? at : (uint16_t)((at & 0xFFu) | (p2 & 0xFu) << 8);
        out[i] = read_once(lines, p1, strobe);
    }
    dump_mode(false);
}

static void cart_write(void *context, uint8_t p1, uint8_t p2, uint8_t address, uint8_t value)
{
    (void)context;
    dump_mode(true);
    set_lines(ADDRESS_LINES | PORT_LINES, slot_lines((uint16_t)(address | (p2 & 0xFu) << 8), p1));
    set_lines(DATA_LINES, (uint32_t)value << PIN_D0);
    SIO(SIO_GPIO_OE_SET) = DATA_LINES;
    SIO(SIO_GPIO_OUT_CLR) = BIT(PIN_DOUT_OE_N); /* the data buffer drives D0-D7 */
    delay_cycles(SETUP_CYCLES);
    SIO(SIO_GPIO_OUT_CLR) = BIT(PIN_WR_N);
    delay_cycles(ACCESS_CYCLES); /* /WR width; data held past its rising edge (tWD) */
    SIO(SIO_GPIO_OUT_SET) = BIT(PIN_WR_N);
    delay_cycles(SETUP_CYCLES);
    SIO(SIO_GPIO_OUT_SET) = BIT(PIN_DOUT_OE_N);
    dump_mode(false);
}

void board_ops(adapter_ops *ops)
{
    ops->context = 0;
    ops->capabilities = (1u << HB_CAPABILITY_CART_READ_BIT) | (1u << HB_CAPABILITY_CART_WRITE_BIT);
    ops->cart_present = cart_present;
    ops->set_ports = set_ports;
    ops->cart_read = cart_read;
    ops->cart_write = cart_write;
}

void board_start(adapter_core *core)
{
    (void)core;
    peripherals_unreset(RESET_BIT_IO_BANK0 | RESET_BIT_PADS_BANK0);
    for (uint32_t pin = 0; pin < SLOT_PINS; pin++) {
        REG32(PADS_GPIO(pin)) = PADS_IE | PADS_SCHMITT | PADS_DRIVE_4MA;
        REG32(IO_GPIO_CTRL(pin)) = GPIO_FUNC_SIO;
    }
    SIO(SIO_GPIO_OUT_SET) = BIT(PIN_DOUT_OE_N);
    SIO(SIO_GPIO_OUT_CLR) = BIT(PIN_DUMP);
    SIO(SIO_GPIO_OE_SET) = BIT(PIN_DOUT_OE_N) | BIT(PIN_DUMP);
}

void board_poll(adapter_core *core)
{
    (void)core;
}
