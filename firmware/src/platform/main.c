/* The adapter's main loop: bytes from USB CDC (or the UART fallback) into the protocol core, its
 * replies and events back out on the link the host last spoke on. */
#include "platform.h"

#if __has_include("adapter_core.h")
#include "adapter_core.h"
#define HAVE_CORE 1
#endif

#define UART_BAUD 115200u
#define CHUNK 64u

enum link { LINK_USB, LINK_UART };

static const char *serial_number(void)
{
    return "HB-0001";
}

int main(void)
{
    uint8_t buffer[CHUNK];
    enum link link = LINK_USB;
    size_t pending = 0, sent = 0;

    clocks_init();
    uart_init(UART_BAUD);
    usb_init(serial_number());
    for (;;) {
        usb_poll();
        size_t count = usb_read(buffer, sizeof buffer);
        if (count) {
            link = LINK_USB;
        } else if ((count = uart_read(buffer, sizeof buffer)) != 0) {
            link = LINK_UART;
        }
#ifdef HAVE_CORE
        if (count) {
            core_receive(buffer, count);
        }
#endif
        (void)count;
        static uint8_t out[CHUNK];
        if (sent == pending) {
#ifdef HAVE_CORE
            pending = core_transmit(out, sizeof out);
#else
            pending = count;
            for (size_t i = 0; i < count; i++) {
                out[i] = buffer[i];
            }
#endif
            sent = 0;
        }
        if (sent < pending) {
            sent += link == LINK_USB ? usb_write(out + sent, pending - sent)
                                     : uart_write(out + sent, pending - sent);
        } else if (link == LINK_USB) {
            usb_flush();
        }
    }
}
