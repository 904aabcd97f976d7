/* The adapter's main loop: bytes from USB (the CDC-ACM or the vendor interface) or the UART fallback
 * into the protocol core, its replies and events back out on the link the host last spoke on, and the
 * bus engines polled. */
#include "adapter_core.h"
#include "bus.h"
#include "firmware_build.h"
#include "platform.h"

#define UART_BAUD 115200u
#define CHUNK 64u
#define BOARD_ID_RP2040 0x2040u
#define SERIAL_PREFIX "HB"

enum link { LINK_USB_CDC = USB_PIPE_CDC, LINK_USB_VENDOR = USB_PIPE_VENDOR, LINK_UART };

static adapter_core core;
static char serial[sizeof SERIAL_PREFIX + 16];

static void make_serial(void)
{
    static const char hex[] = "0123456789ABCDEF";
    uint8_t id[8];
    flash_unique_id(id);
    unsigned at = 0;
    for (const char *p = SERIAL_PREFIX; *p; p++) {
        serial[at++] = *p;
    }
    for (unsigned i = 0; i < sizeof id; i++) {
        serial[at++] = hex[id[i] >> 4];
        serial[at++] = hex[id[i] & 0xFu];
    }
    serial[at] = 0;
}

static uint32_t uptime(void *context)
{
    (void)context;
    return platform_millis();
}

int main(void)
{
    static adapter_ops ops;
    uint8_t in[CHUNK];
    size_t in_length = 0, in_used = 0;
    enum link link = LINK_USB_CDC;

    clocks_init();
    make_serial();
    uart_init(UART_BAUD);
    usb_init(serial);
    bus_board_ops(&ops);
    ops.serial = serial;
    ops.build = FIRMWARE_BUILD;
    ops.fw_major = HB_PACKAGE_VERSION_MAJOR;
    ops.fw_minor = HB_PACKAGE_VERSION_MINOR;
    ops.fw_patch = HB_PACKAGE_VERSION_PATCH;
    ops.board_id = BOARD_ID_RP2040;
    ops.uptime_ms = uptime;
    core_init(&core, &ops);
    bus_board_start(&core);

    int was_configured = 0;
    for (;;) {
        usb_poll();
        if (usb_configured() != was_configured) {
            was_configured = usb_configured();
            core_link_reset(&core); /* a new host session: no half frame from the last one */
            in_used = in_length = 0;
        }
        if (in_used == in_length) {
            in_used = 0;
            if ((in_length = usb_read(USB_PIPE_CDC, in, sizeof in)) != 0) {
                link = LINK_USB_CDC;
            } else if ((in_length = usb_read(USB_PIPE_VENDOR, in, sizeof in)) != 0) {
                link = LINK_USB_VENDOR;
            } else if ((in_length = uart_read(in, sizeof in)) != 0) {
                link = LINK_UART;
            }
        }
        if (in_used < in_length) {
            in_used += core_receive(&core, in + in_used, in_length - in_used);
        }
        bus_board_poll(&core);
        const uint8_t *out;
        size_t out_length = core_transmit_span(&core, &out);
        if (out_length) {
            core_transmit_done(&core, link == LINK_UART ? uart_write(out, out_length)
                                                        : usb_write((enum usb_pipe)link, out, out_length));
        } else if (link != LINK_UART) {
            usb_flush((enum usb_pipe)link);
        }
    }
}
