/* The bare-metal platform: clocks, a microsecond clock, the UART fallback and the USB links. */
#ifndef HILBRIDGE_PLATFORM_H
#define HILBRIDGE_PLATFORM_H
#include <stddef.h>
#include <stdint.h>

#define PLATFORM_SYS_HZ 125000000u
#define PLATFORM_XOSC_HZ 12000000u

void clocks_init(void);
void peripherals_reset(uint32_t bits);
void peripherals_unreset(uint32_t bits);
uint32_t platform_micros(void);
uint32_t platform_millis(void);

void uart_init(uint32_t baud);
size_t uart_read(uint8_t *out, size_t capacity);
size_t uart_write(const uint8_t *data, size_t length);

/* The USB device's two byte pipes: the CDC-ACM data interface and the vendor-specific interface. */
enum usb_pipe { USB_PIPE_CDC, USB_PIPE_VENDOR, USB_PIPE_COUNT };

void usb_init(const char *serial);
void usb_poll(void);
int usb_configured(void);
size_t usb_read(enum usb_pipe pipe, uint8_t *out, size_t capacity);
size_t usb_write_space(enum usb_pipe pipe);
size_t usb_write(enum usb_pipe pipe, const uint8_t *data, size_t length);
void usb_flush(enum usb_pipe pipe);

void flash_unique_id(uint8_t out[8]);

#endif
