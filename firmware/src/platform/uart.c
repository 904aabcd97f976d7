/* UART fallback link: UART0 on GPIO 28 (TX) and 29 (RX), the two pins firmware/board/pins.tsv keeps
 * off the bus (UART0 is the function of both there); 8N1, FIFOs on, polled. */
#include "platform.h"
#include "regs.h"
#include "pins_gen.h"

#define UART(offset) REG32(UART0_BASE + (offset))

static void pin_to_uart(uint32_t pin)
{
    REG32(PADS_GPIO(pin)) = PADS_IE | PADS_DRIVE_4MA | PADS_SCHMITT | PADS_PUE;
    REG32(IO_GPIO_CTRL(pin)) = GPIO_FUNC_UART;
}

void uart_init(uint32_t baud)
{
    peripherals_reset(RESET_BIT_UART0);
    peripherals_unreset(RESET_BIT_UART0 | RESET_BIT_IO_BANK0 | RESET_BIT_PADS_BANK0);
    uint32_t divider = 8u * PLATFORM_SYS_HZ / baud; /* 64ths of the baud divisor, times 2 */
    UART(UART_IBRD) = divider >> 7;
    UART(UART_FBRD) = ((divider & 0x7Fu) + 1u) / 2u;
    UART(UART_LCR_H) = UART_LCR_H_WLEN_8 | UART_LCR_H_FEN;
    UART(UART_CR) = UART_CR_UARTEN | UART_CR_TXE | UART_CR_RXE;
    pin_to_uart(PIN_UART_TX);
    pin_to_uart(PIN_UART_RX);
}

size_t uart_read(uint8_t *out, size_t capacity)
{
    size_t count = 0;
    while (count < capacity && !(UART(UART_FR) & UART_FR_RXFE)) {
        out[count++] = (uint8_t)UART(UART_DR);
    }
    return count;
}

size_t uart_write(const uint8_t *data, size_t length)
{
    size_t count = 0;
    while (count < length && !(UART(UART_FR) & UART_FR_TXFF)) {
        UART(UART_DR) = data[count++];
    }
    return count;
}
