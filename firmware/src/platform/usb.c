/* USB full-speed device on the RP2040 USB controller, polled from the main loop: a composite of one
 * CDC-ACM function (for the host's SerialTransport) and one vendor-specific interface (for its pyusb
 * UsbTransport), each a pipe of one bulk OUT and one bulk IN endpoint carrying the same byte stream.
 *
 * EP0 answers the standard requests (address, descriptors, configuration) and the CDC class requests
 * (line coding and control line state, which a serial link ignores). Each endpoint is single-buffered
 * in the controller's DPRAM; an OUT buffer is handed back to the controller only once its bytes have
 * been read, so a busy firmware NAKs the host instead of losing data. Descriptors are generated from
 * hilbridge/firmware/usb_descriptors.json. */
#include "platform.h"
#include "regs.h"
#include "usb_descriptors.h"

#define USB(offset) REG32(USBCTRL_REGS_BASE + (offset))
#define DPRAM(offset) REG32(USBCTRL_DPRAM_BASE + (offset))
#define DPRAM_BYTES ((volatile uint8_t *)USBCTRL_DPRAM_BASE)

#define EP_NOTIFY_NUM (USB_EP_NOTIFY_IN & 0x0Fu)
#define BUF_NOTIFY USB_DPRAM_FREE
#define BUF_PIPES (USB_DPRAM_FREE + 64u) /* then an OUT and an IN buffer of 64 bytes per pipe */

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
#define USB_PIPE_PACKET 64u /* every bulk endpoint's wMaxPacketSize, asserted below */

_Static_assert(USB_EP_DATA_OUT_SIZE == USB_PIPE_PACKET && USB_EP_DATA_IN_SIZE == USB_PIPE_PACKET &&
                   USB_EP_VENDOR_OUT_SIZE == USB_PIPE_PACKET && USB_EP_VENDOR_IN_SIZE == USB_PIPE_PACKET,
               "the pipes' DPRAM buffers are 64 bytes");

static struct {
    const uint8_t *ep0_data; /* rest of the IN data stage */
    uint16_t ep0_left;
    uint8_t ep0_pid;
    uint8_t ep0_zlp; /* the data stage ended on a full packet shorter than asked: end it */
    uint8_t pending_address;
    uint8_t configured;
    uint8_t ep0_receiving_line_coding;
    uint8_t line_coding[7];
    uint8_t string[2 + 2 * STRING_MAX];
    const char *serial;
} usb;

/* One bulk OUT + bulk IN pair and its transfer state. */
struct pipe {
    uint8_t out_num, in_num;
    uint32_t out_buffer, in_buffer; /* DPRAM offsets */
    uint8_t out_pid, in_pid;
    uint8_t in_busy, in_last_full;
    uint16_t out_length, out_taken; /* bytes of the filled OUT buffer, and how many were read */
    uint8_t out_armed;
};

static struct pipe pipes[USB_PIPE_COUNT] = {
    [USB_PIPE_CDC] = {USB_EP_DATA_OUT & 0x0Fu, USB_EP_DATA_IN & 0x0Fu, BUF_PIPES, BUF_PIPES + 64u},
    [USB_PIPE_VENDOR] = {USB_EP_VENDOR_OUT & 0x0Fu, USB_EP_VENDOR_IN & 0x0Fu, BUF_PIPES + 128u, BUF_PIPES + 192u},
};

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

static void arm_out(struct pipe *pipe)
{
    pipe->out_armed = 1;
    buffer_control(USB_DPRAM_EP_OUT_BUF_CTRL(pipe->out_num),
                   USB_PIPE_PACKET | (pipe->out_pid ? USB_BUF_CTRL_DATA1 : 0u));
}

static void configure_endpoints(void)
{
    DPRAM(USB_DPRAM_EP_IN_CTRL(EP_NOTIFY_NUM)) = USB_EP_CTRL_ENABLE | USB_EP_CTRL_INTERRUPT_PER_BUFF |
                                                 (USB_EP_TYPE_INTERRUPT << USB_EP_CTRL_TYPE_LSB) | BUF_NOTIFY;
    for (unsigned i = 0; i < USB_PIPE_COUNT; i++) {
        struct pipe *pipe = &pipes[i];
        DPRAM(USB_DPRAM_EP_OUT_CTRL(pipe->out_num)) = USB_EP_CTRL_ENABLE | USB_EP_CTRL_INTERRUPT_PER_BUFF |
                                                      (USB_EP_TYPE_BULK << USB_EP_CTRL_TYPE_LSB) |
                                                      pipe->out_buffer;
        DPRAM(USB_DPRAM_EP_IN_CTRL(pipe->in_num)) = USB_EP_CTRL_ENABLE | USB_EP_CTRL_INTERRUPT_PER_BUFF |
                                                    (USB_EP_TYPE_BULK << USB_EP_CTRL_TYPE_LSB) | pipe->in_buffer;
        pipe->out_pid = pipe->in_pid = 0;
        pipe->in_busy = pipe->in_last_full = 0;
        pipe->out_length = pipe->out_taken = 0;
        arm_out(pipe);
    }
    usb.configured = 1;
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
    for (unsigned i = 0; i < USB_PIPE_COUNT; i++) {
        pipes[i].out_armed = 0;
    }
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

static void pipe_buffers_done(struct pipe *pipe, uint32_t buffers)
{
    if (buffers & (1u << (2 * pipe->in_num))) {
        pipe->in_busy = 0;
    }
    if (buffers & (1u << (2 * pipe->out_num + 1))) {
        pipe->out_armed = 0;
        pipe->out_length =
            (uint16_t)(DPRAM(USB_DPRAM_EP_OUT_BUF_CTRL(pipe->out_num)) & USB_BUF_CTRL_LEN_MASK);
        pipe->out_taken = 0;
        pipe->out_pid ^= 1u;
        if (!pipe->out_length) {
            arm_out(pipe);
        }
    }
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
        for (unsigned i = 0; i < USB_PIPE_COUNT; i++) {
            pipe_buffers_done(&pipes[i], buffers);
        }
    }
}

void usb_flush(enum usb_pipe which)
{
    if (usb.configured && !pipes[which].in_busy && pipes[which].in_last_full) {
        usb_write(which, 0, 0); /* a zero-length packet ends the transfer, so the host's driver hands it on */
    }
}

int usb_configured(void)
{
    return usb.configured;
}

size_t usb_read(enum usb_pipe which, uint8_t *out, size_t capacity)
{
    struct pipe *pipe = &pipes[which];
    size_t count = 0;
    if (!usb.configured || pipe->out_armed) {
        return 0;
    }
    while (count < capacity && pipe->out_taken < pipe->out_length) {
        out[count++] = DPRAM_BYTES[pipe->out_buffer + pipe->out_taken++];
    }
    if (pipe->out_taken >= pipe->out_length) {
        arm_out(pipe);
    }
    return count;
}

size_t usb_write_space(enum usb_pipe which)
{
    return usb.configured && !pipes[which].in_busy ? USB_PIPE_PACKET : 0;
}

/* Whole words where the source is word-aligned (the protocol core's encoded frames are, packet after
 * packet): a quarter of the stores, and the capture stream passes through here. */
static void copy_to_dpram(uint32_t offset, const uint8_t *data, size_t length)
{
    size_t words = ((uintptr_t)data & 3u) == 0 ? length / 4u : 0;
    const uint32_t *from = __builtin_assume_aligned(data, 4);
    volatile uint32_t *to = &DPRAM(offset);
    size_t n = words;
    for (; n >= 4u; n -= 4u, from += 4, to += 4) { /* four loads, then four stores */
        uint32_t a = from[0], b = from[1], c = from[2], d = from[3];
        to[0] = a;
        to[1] = b;
        to[2] = c;
        to[3] = d;
    }
    for (; n; n--) {
        *to++ = *from++;
    }
    for (size_t i = words * 4u; i < length; i++) {
        DPRAM_BYTES[offset + i] = data[i];
    }
}

size_t usb_write(enum usb_pipe which, const uint8_t *data, size_t length)
{
    struct pipe *pipe = &pipes[which];
    if (!usb_write_space(which)) {
        return 0;
    }
    if (length > USB_PIPE_PACKET) {
        length = USB_PIPE_PACKET;
    }
    copy_to_dpram(pipe->in_buffer, data, length);
    pipe->in_busy = 1;
    pipe->in_last_full = length == USB_PIPE_PACKET;
    buffer_control(USB_DPRAM_EP_IN_BUF_CTRL(pipe->in_num),
                   (uint32_t)length | USB_BUF_CTRL_FULL | (pipe->in_pid ? USB_BUF_CTRL_DATA1 : 0u));
    pipe->in_pid ^= 1u;
    return length;
}
