/* USB full-speed device: one CDC-ACM function on the RP2040 USB controller, polled from the main loop.
 *
 * EP0 answers the standard requests (address, descriptors, configuration) and the CDC class requests
 * (line coding and control line state, which a serial link ignores). Data travels on one bulk OUT and
 * one bulk IN endpoint, single-buffered in the controller's DPRAM; an OUT buffer is handed back to the
 * controller only once its bytes have been read, so a busy firmware NAKs the host instead of losing
 * data. Descriptors are generated from firmware/usb/descriptors.json. */
#include "platform.h"
#include "regs.h"
#include "usb_descriptors.h"

#define USB(offset) REG32(USBCTRL_REGS_BASE + (offset))
#define DPRAM(offset) REG32(USBCTRL_DPRAM_BASE + (offset))
#define DPRAM_BYTES ((volatile uint8_t *)USBCTRL_DPRAM_BASE)

#define EP_OUT_NUM (USB_EP_DATA_OUT & 0x0Fu)
#define EP_IN_NUM (USB_EP_DATA_IN & 0x0Fu)
#define EP_NOTIFY_NUM (USB_EP_NOTIFY_IN & 0x0Fu)
#define BUF_OUT USB_DPRAM_FREE
#define BUF_IN (USB_DPRAM_FREE + 64u)
#define BUF_NOTIFY (USB_DPRAM_FREE + 128u)

#define REQUEST_GET_STATUS 0x00u
#define REQUEST_SET_ADDRESS 0x05u
#define REQUEST_GET_DESCRIPTOR 0x06u
#define REQUEST_GET_CONFIGURATION 0x08u
#define REQUEST_SET_CONFIGURATION 0x09u
#define REQUEST_SET_INTERFACE 0x0Bu
#define CDC_SET_LINE_CODING 0x20u
#define CDC_GET_LINE_CODING 0x21u
#define CDC_SET_CONTROL_LINE_STATE 0x22u
#define DESCRIPTOR_DEVICE 1u
#define DESCRIPTOR_CONFIGURATION 2u
#define DESCRIPTOR_STRING 3u
#define REQUEST_TYPE_MASK 0x60u
#define REQUEST_TYPE_STANDARD 0x00u
#define REQUEST_TYPE_CLASS 0x20u
#define STRING_MAX 64u

static struct {
    const uint8_t *ep0_data; /* rest of the IN data stage */
    uint16_t ep0_left;
    uint8_t ep0_pid;
    uint8_t ep0_zlp; /* the data stage ended on a full packet shorter than asked: end it */
    uint8_t pending_address;
    uint8_t configured;
    uint8_t ep0_receiving_line_coding;
    uint8_t out_pid, in_pid;
    uint8_t in_busy, in_last_full;
    uint16_t out_length, out_taken; /* bytes of the filled OUT buffer, and how many were read */
    uint8_t out_armed;
    uint8_t line_coding[7];
    uint8_t string[2 + 2 * STRING_MAX];
    const char *serial;
} usb;

static void buffer_control(uint32_t offset, uint32_t value)
{
    /* The controller samples AVAILABLE: write the rest first, as the datasheet asks. */
    DPRAM(offset) = value;
    __asm__ volatile("nop; nop; nop");
    DPRAM(offset) = value | USB_BUF_CTRL_AVAILABLE;
}

static void ep0_send_packet(void)
{
    uint16_t length = usb.ep0_left < USB_EP0_SIZE ? usb.ep0_left : (uint16_t)USB_EP0_SIZE;
    for (uint16_t i = 0; i < length; i++) {
        DPRAM_BYTES[USB_DPRAM_EP0_BUF + i] = usb.ep0_data[i];
    }
    usb.ep0_data += length;
    usb.ep0_left = (uint16_t)(usb.ep0_left - length);
    buffer_control(USB_DPRAM_EP_IN_BUF_CTRL(0),
                   length | USB_BUF_CTRL_FULL | (usb.ep0_pid ? USB_BUF_CTRL_DATA1 : 0u));
    usb.ep0_pid ^= 1u;
}

static void ep0_send(const uint8_t *data, uint16_t length, uint16_t asked)
{
    if (length > asked) {
        length = asked;
    }
    usb.ep0_data = data;
    usb.ep0_left = length;
    usb.ep0_pid = 1;
    usb.ep0_zlp = (length < asked) && (length % USB_EP0_SIZE == 0) && length > 0;
    ep0_send_packet();
}

static void ep0_status_in(void)
{
    ep0_send(0, 0, 0);
}

static void ep0_receive(void)
{
    buffer_control(USB_DPRAM_EP_OUT_BUF_CTRL(0), USB_EP0_SIZE | USB_BUF_CTRL_DATA1);
}

static void ep0_stall(void)
{
    USB(USB_EP_STALL_ARM) = 3u;
    DPRAM(USB_DPRAM_EP_IN_BUF_CTRL(0)) = USB_BUF_CTRL_STALL;
    DPRAM(USB_DPRAM_EP_OUT_BUF_CTRL(0)) = USB_BUF_CTRL_STALL;
}

static uint16_t string_descriptor(uint8_t index)
{
    const char *text;
    if (index == 0) {
        usb.string[0] = 4;
        usb.string[1] = DESCRIPTOR_STRING;
        usb.string[2] = (uint8_t)(USB_LANGUAGE_ID & 0xFFu);
        usb.string[3] = (uint8_t)(USB_LANGUAGE_ID >> 8);
        return 4;
    }
    if (index > USB_STRING_COUNT) {
        return 0;
    }
    text = index == USB_STRING_RUNTIME ? usb.serial : usb_strings[index - 1];
    uint16_t length = 0;
    while (text[length] && length < STRING_MAX) {
        usb.string[2 + 2 * length] = (uint8_t)text[length];
        usb.string[3 + 2 * length] = 0;
        length++;
    }
    usb.string[0] = (uint8_t)(2 + 2 * length);
    usb.string[1] = DESCRIPTOR_STRING;
    return usb.string[0];
}

static void arm_out(void)
{
    usb.out_armed = 1;
    buffer_control(USB_DPRAM_EP_OUT_BUF_CTRL(EP_OUT_NUM),
                   USB_EP_DATA_OUT_SIZE | (usb.out_pid ? USB_BUF_CTRL_DATA1 : 0u));
}

static void configure_endpoints(void)
{
    DPRAM(USB_DPRAM_EP_OUT_CTRL(EP_OUT_NUM)) = USB_EP_CTRL_ENABLE | USB_EP_CTRL_INTERRUPT_PER_BUFF |
                                               (USB_EP_TYPE_BULK << USB_EP_CTRL_TYPE_LSB) | BUF_OUT;
    DPRAM(USB_DPRAM_EP_IN_CTRL(EP_IN_NUM)) = USB_EP_CTRL_ENABLE | USB_EP_CTRL_INTERRUPT_PER_BUFF |
                                             (USB_EP_TYPE_BULK << USB_EP_CTRL_TYPE_LSB) | BUF_IN;
    DPRAM(USB_DPRAM_EP_IN_CTRL(EP_NOTIFY_NUM)) = USB_EP_CTRL_ENABLE | USB_EP_CTRL_INTERRUPT_PER_BUFF |
                                                 (USB_EP_TYPE_INTERRUPT << USB_EP_CTRL_TYPE_LSB) | BUF_NOTIFY;
    usb.out_pid = usb.in_pid = 0;
    usb.in_busy = usb.in_last_full = 0;
    usb.out_length = usb.out_taken = 0;
    usb.configured = 1;
    arm_out();
}

static void handle_setup(void)
{
    const volatile uint8_t *setup = &DPRAM_BYTES[USB_DPRAM_SETUP];
    uint8_t request_type = setup[0], request = setup[1];
    uint16_t value = (uint16_t)(setup[2] | setup[3] << 8);
    uint16_t length = (uint16_t)(setup[6] | setup[7] << 8);
    static const uint8_t zero_status[2] = {0, 0};

    usb.ep0_pid = 1;
    if ((request_type & REQUEST_TYPE_MASK) == REQUEST_TYPE_CLASS) {
        if (request == CDC_SET_LINE_CODING) {
            usb.ep0_receiving_line_coding = 1;
            ep0_receive();
        } else if (request == CDC_GET_LINE_CODING) {
            ep0_send(usb.line_coding, sizeof usb.line_coding, length);
        } else if (request == CDC_SET_CONTROL_LINE_STATE) {
            ep0_status_in();
        } else {
            ep0_stall();
        }
        return;
    }
    if ((request_type & REQUEST_TYPE_MASK) != REQUEST_TYPE_STANDARD) {
        ep0_stall();
        return;
    }
    switch (request) {
    case REQUEST_SET_ADDRESS:
        usb.pending_address = (uint8_t)(value & 0x7Fu); /* takes effect after the status stage */
        ep0_status_in();
        break;
    case REQUEST_GET_DESCRIPTOR: {
        uint8_t type = (uint8_t)(value >> 8);
        if (type == DESCRIPTOR_DEVICE) {
            ep0_send(usb_device_descriptor, sizeof usb_device_descriptor, length);
        } else if (type == DESCRIPTOR_CONFIGURATION) {
            ep0_send(usb_config_descriptor, sizeof usb_config_descriptor, length);
        } else if (type == DESCRIPTOR_STRING && string_descriptor((uint8_t)value)) {
            ep0_send(usb.string, usb.string[0], length);
        } else {
            ep0_stall();
        }
        break;
    }
    case REQUEST_SET_CONFIGURATION:
        ep0_status_in();
        if (value) {
            configure_endpoints();
        } else {
            usb.configured = 0;
        }
        break;
    case REQUEST_GET_CONFIGURATION:
        ep0_send(&usb.configured, 1, length);
        break;
    case REQUEST_GET_STATUS:
        ep0_send(zero_status, 2, length);
        break;
    case REQUEST_SET_INTERFACE:
        ep0_status_in();
        break;
    default:
        ep0_stall();
        break;
    }
}

static void ep0_in_done(void)
{
    if (usb.pending_address) {
        USB(USB_ADDR_ENDP) = usb.pending_address;
        usb.pending_address = 0;
    }
    if (usb.ep0_left) {
        ep0_send_packet();
    } else if (usb.ep0_zlp) {
        usb.ep0_zlp = 0;
        ep0_send_packet();
    } else if (usb.ep0_data) {
        usb.ep0_data = 0;
        ep0_receive(); /* the host's zero-length status packet */
    }
}

static void ep0_out_done(void)
{
    if (usb.ep0_receiving_line_coding) {
        usb.ep0_receiving_line_coding = 0;
        for (unsigned i = 0; i < sizeof usb.line_coding; i++) {
            usb.line_coding[i] = DPRAM_BYTES[USB_DPRAM_EP0_BUF + i];
        }
        ep0_status_in();
    }
}

static void bus_reset(void)
{
    USB(USB_SIE_STATUS) = USB_SIE_STATUS_BUS_RESET;
    USB(USB_ADDR_ENDP) = 0;
    usb.pending_address = 0;
    usb.configured = 0;
    usb.out_armed = 0;
    usb.ep0_left = 0;
    usb.ep0_data = 0;
}

void usb_init(const char *serial)
{
    static const uint8_t default_coding[7] = {0x00, 0xC2, 0x01, 0x00, 0, 0, 8}; /* 115200 8N1 */
    usb.serial = serial;
    for (unsigned i = 0; i < sizeof usb.line_coding; i++) {
        usb.line_coding[i] = default_coding[i];
    }
    peripherals_reset(RESET_BIT_USBCTRL);
    peripherals_unreset(RESET_BIT_USBCTRL);
    for (uint32_t offset = 0; offset < USBCTRL_DPRAM_SIZE; offset += 4) {
        DPRAM(offset) = 0;
    }
    USB(USB_USB_MUXING) = USB_MUXING_TO_PHY | USB_MUXING_SOFTCON;
    USB(USB_USB_PWR) = USB_PWR_VBUS_DETECT | USB_PWR_VBUS_DETECT_OVERRIDE_EN;
    USB(USB_MAIN_CTRL) = USB_MAIN_CTRL_CONTROLLER_EN;
    USB(USB_SIE_CTRL) = USB_SIE_CTRL_EP0_INT_1BUF | USB_SIE_CTRL_PULLUP_EN;
}

void usb_poll(void)
{
    uint32_t status = USB(USB_INTR);
    if (status & USB_INTR_BUS_RESET) {
        bus_reset();
    }
    if (status & USB_INTR_SETUP_REQ) {
        USB(USB_SIE_STATUS) = USB_SIE_STATUS_SETUP_REC;
        handle_setup();
    }
    if (status & USB_INTR_BUFF_STATUS) {
        uint32_t buffers = USB(USB_BUFF_STATUS);
        USB(USB_BUFF_STATUS) = buffers;
        if (buffers & (1u << 0)) {
            ep0_in_done();
        }
        if (buffers & (1u << 1)) {
            ep0_out_done();
        }
        if (buffers & (1u << (2 * EP_IN_NUM))) {
            usb.in_busy = 0;
        }
        if (buffers & (1u << (2 * EP_OUT_NUM + 1))) {
            usb.out_armed = 0;
            usb.out_length = (uint16_t)(DPRAM(USB_DPRAM_EP_OUT_BUF_CTRL(EP_OUT_NUM)) & USB_BUF_CTRL_LEN_MASK);
            usb.out_taken = 0;
            usb.out_pid ^= 1u;
            if (!usb.out_length) {
                arm_out();
            }
        }
    }
}

void usb_flush(void)
{
    if (usb.configured && !usb.in_busy && usb.in_last_full) {
        usb_write(0, 0); /* a zero-length packet ends the transfer, so the host's driver hands it on */
    }
}

int usb_configured(void)
{
    return usb.configured;
}

size_t usb_read(uint8_t *out, size_t capacity)
{
    size_t count = 0;
    if (!usb.configured || usb.out_armed) {
        return 0;
    }
    while (count < capacity && usb.out_taken < usb.out_length) {
        out[count++] = DPRAM_BYTES[BUF_OUT + usb.out_taken++];
    }
    if (usb.out_taken >= usb.out_length) {
        arm_out();
    }
    return count;
}

size_t usb_write_space(void)
{
    return usb.configured && !usb.in_busy ? USB_EP_DATA_IN_SIZE : 0;
}

size_t usb_write(const uint8_t *data, size_t length)
{
    if (!usb_write_space()) {
        return 0;
    }
    if (length > USB_EP_DATA_IN_SIZE) {
        length = USB_EP_DATA_IN_SIZE;
    }
    for (size_t i = 0; i < length; i++) {
        DPRAM_BYTES[BUF_IN + i] = data[i];
    }
    usb.in_busy = 1;
    usb.in_last_full = length == USB_EP_DATA_IN_SIZE;
    buffer_control(USB_DPRAM_EP_IN_BUF_CTRL(EP_IN_NUM),
                   (uint32_t)length | USB_BUF_CTRL_FULL | (usb.in_pid ? USB_BUF_CTRL_DATA1 : 0u));
    usb.in_pid ^= 1u;
    return length;
}
