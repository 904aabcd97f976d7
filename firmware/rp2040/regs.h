/* RP2040 registers used by the platform code, written from the RP2040 datasheet register map
 * (chapter 2: resets, clocks, XOSC, PLL, IO_BANK0, PADS, SIO, watchdog, timer; chapter 4: UART,
 * USB, SSI). Offsets and bit positions only; PIO and DMA live in their own files of this folder.
 * Usable from C and from assembler (boot2). */
#ifndef HILBRIDGE_RP2040_REGS_H
#define HILBRIDGE_RP2040_REGS_H

#ifdef __ASSEMBLER__
#define _U(x) x
#else
#include <stdint.h>
#define _U(x) x##u
#define REG32(address) (*(volatile uint32_t *)(uintptr_t)(address))
#endif

/* Atomic aliases of every APB/AHB peripheral register (not SIO): XOR, SET and CLEAR writes. */
#define ALIAS_XOR _U(0x1000)
#define ALIAS_SET _U(0x2000)
#define ALIAS_CLR _U(0x3000)

/* ---- System control (Cortex-M0+ private peripheral bus) ---- */
#define PPB_BASE _U(0xE0000000)
#define PPB_VTOR (PPB_BASE + _U(0xED08))

/* ---- RESETS ---- */
#define RESETS_BASE _U(0x4000C000)
#define RESETS_RESET _U(0x00)
#define RESETS_RESET_DONE _U(0x08)
#define RESET_BIT_IO_BANK0 (_U(1) << 5)
#define RESET_BIT_IO_QSPI (_U(1) << 6)
#define RESET_BIT_PADS_BANK0 (_U(1) << 8)
#define RESET_BIT_PADS_QSPI (_U(1) << 9)
#define RESET_BIT_PIO0 (_U(1) << 10)
#define RESET_BIT_PIO1 (_U(1) << 11)
#define RESET_BIT_PLL_SYS (_U(1) << 12)
#define RESET_BIT_PLL_USB (_U(1) << 13)
#define RESET_BIT_TIMER (_U(1) << 21)
#define RESET_BIT_UART0 (_U(1) << 22)
#define RESET_BIT_UART1 (_U(1) << 23)
#define RESET_BIT_USBCTRL (_U(1) << 24)
#define RESET_BIT_DMA (_U(1) << 2)

/* ---- CLOCKS: each generator has CTRL, DIV, SELECTED ---- */
#define CLOCKS_BASE _U(0x40008000)
#define CLK_REF_CTRL _U(0x30)
#define CLK_REF_DIV _U(0x34)
#define CLK_REF_SELECTED _U(0x38)
#define CLK_SYS_CTRL _U(0x3C)
#define CLK_SYS_DIV _U(0x40)
#define CLK_SYS_SELECTED _U(0x44)
#define CLK_PERI_CTRL _U(0x48)
#define CLK_USB_CTRL _U(0x54)
#define CLK_USB_DIV _U(0x58)
#define CLK_SYS_RESUS_CTRL _U(0x78)
#define CLK_CTRL_ENABLE (_U(1) << 11)
#define CLK_CTRL_AUXSRC_LSB 5
#define CLK_REF_SRC_ROSC _U(0)
#define CLK_REF_SRC_XOSC _U(2)
#define CLK_SYS_SRC_REF _U(0)
#define CLK_SYS_SRC_AUX _U(1)
#define CLK_SYS_AUX_PLL_SYS _U(0)
#define CLK_PERI_AUX_CLK_SYS _U(0)
#define CLK_USB_AUX_PLL_USB _U(0)
#define CLK_DIV_INT_1 (_U(1) << 8)

/* ---- XOSC ---- */
#define XOSC_BASE _U(0x40024000)
#define XOSC_CTRL _U(0x00)
#define XOSC_STATUS _U(0x04)
#define XOSC_STARTUP _U(0x0C)
#define XOSC_CTRL_FREQ_1_15MHZ _U(0xAA0)
#define XOSC_CTRL_ENABLE (_U(0xFAB) << 12)
#define XOSC_STATUS_STABLE (_U(1) << 31)

/* ---- PLL_SYS / PLL_USB ---- */
#define PLL_SYS_BASE _U(0x40028000)
#define PLL_USB_BASE _U(0x4002C000)
#define PLL_CS _U(0x00)
#define PLL_PWR _U(0x04)
#define PLL_FBDIV_INT _U(0x08)
#define PLL_PRIM _U(0x0C)
#define PLL_CS_LOCK (_U(1) << 31)
#define PLL_PWR_PD (_U(1) << 0)
#define PLL_PWR_POSTDIVPD (_U(1) << 3)
#define PLL_PWR_VCOPD (_U(1) << 5)
#define PLL_PRIM_POSTDIV1_LSB 16
#define PLL_PRIM_POSTDIV2_LSB 12

/* ---- IO_BANK0: GPIOn_STATUS at 8n, GPIOn_CTRL at 8n + 4 ---- */
#define IO_BANK0_BASE _U(0x40014000)
#define IO_GPIO_CTRL(n) (IO_BANK0_BASE + _U(8) * (n) + _U(4))
#define GPIO_FUNC_UART _U(2)
#define GPIO_FUNC_SIO _U(5)
#define GPIO_FUNC_PIO0 _U(6)
#define GPIO_FUNC_PIO1 _U(7)
#define GPIO_FUNC_NULL _U(0x1F)

/* ---- PADS_BANK0: GPIOn at 4 + 4n ---- */
#define PADS_BANK0_BASE _U(0x4001C000)
#define PADS_GPIO(n) (PADS_BANK0_BASE + _U(4) + _U(4) * (n))
#define PADS_SLEWFAST (_U(1) << 0)
#define PADS_SCHMITT (_U(1) << 1)
#define PADS_PDE (_U(1) << 2)
#define PADS_PUE (_U(1) << 3)
#define PADS_DRIVE_4MA (_U(1) << 4)
#define PADS_IE (_U(1) << 6)
#define PADS_OD (_U(1) << 7)

/* ---- SIO ---- */
#define SIO_BASE _U(0xD0000000)
#define SIO_GPIO_IN _U(0x04)
#define SIO_GPIO_OUT _U(0x10)
#define SIO_GPIO_OUT_SET _U(0x14)
#define SIO_GPIO_OUT_CLR _U(0x18)
#define SIO_GPIO_OE _U(0x20)
#define SIO_GPIO_OE_SET _U(0x24)
#define SIO_GPIO_OE_CLR _U(0x28)

/* ---- UART0 / UART1 (ARM PL011) ---- */
#define UART0_BASE _U(0x40034000)
#define UART1_BASE _U(0x40038000)
#define UART_DR _U(0x00)
#define UART_FR _U(0x18)
#define UART_IBRD _U(0x24)
#define UART_FBRD _U(0x28)
#define UART_LCR_H _U(0x2C)
#define UART_CR _U(0x30)
#define UART_FR_RXFE (_U(1) << 4)
#define UART_FR_TXFF (_U(1) << 5)
#define UART_LCR_H_WLEN_8 (_U(3) << 5)
#define UART_LCR_H_FEN (_U(1) << 4)
#define UART_CR_UARTEN (_U(1) << 0)
#define UART_CR_TXE (_U(1) << 8)
#define UART_CR_RXE (_U(1) << 9)

/* ---- WATCHDOG (its TICK generator clocks the timer) and TIMER ---- */
#define WATCHDOG_BASE _U(0x40058000)
#define WATCHDOG_TICK _U(0x2C)
#define WATCHDOG_TICK_ENABLE (_U(1) << 9)
#define TIMER_BASE _U(0x40054000)
#define TIMER_TIMERAWL _U(0x28)

/* ---- XIP SSI (Synopsys DW_apb_ssi) ---- */
#define XIP_SSI_BASE _U(0x18000000)
#define SSI_CTRLR0 _U(0x00)
#define SSI_CTRLR1 _U(0x04)
#define SSI_SSIENR _U(0x08)
#define SSI_BAUDR _U(0x14)
#define SSI_SER _U(0x10)
#define SSI_SR _U(0x28)
#define SSI_DR0 _U(0x60)
#define SSI_SR_RFNE (_U(1) << 3)
#define SSI_SPI_CTRLR0 _U(0xF4)
#define SSI_CTRLR0_DFS_32_LSB 16
#define SSI_CTRLR0_TMOD_LSB 8
#define SSI_CTRLR0_TMOD_EEPROM_READ _U(3)
#define SSI_SPI_CTRLR0_XIP_CMD_LSB 24
#define SSI_SPI_CTRLR0_INST_L_LSB 8
#define SSI_SPI_CTRLR0_INST_L_8B _U(2)
#define SSI_SPI_CTRLR0_ADDR_L_LSB 2
#define SSI_SPI_CTRLR0_TRANS_TYPE_1C1A _U(0)

/* ---- IO_QSPI: the flash chip select's output override (force low or high) ---- */
#define IO_QSPI_BASE _U(0x40018000)
#define IO_QSPI_SS_CTRL _U(0x0C)
#define IO_QSPI_OUTOVER_LSB 8
#define IO_QSPI_OUTOVER_MASK (_U(3) << 8)
#define IO_QSPI_OUTOVER_LOW _U(2)
#define IO_QSPI_OUTOVER_HIGH _U(3)

/* ---- USB controller: registers and the dual-port RAM it shares with the CPU ---- */
#define USBCTRL_DPRAM_BASE _U(0x50100000)
#define USBCTRL_DPRAM_SIZE _U(4096)
#define USBCTRL_REGS_BASE _U(0x50110000)
#define USB_ADDR_ENDP _U(0x00)
#define USB_MAIN_CTRL _U(0x40)
#define USB_SIE_CTRL _U(0x4C)
#define USB_SIE_STATUS _U(0x50)
#define USB_BUFF_STATUS _U(0x58)
#define USB_EP_STALL_ARM _U(0x68)
#define USB_USB_MUXING _U(0x74)
#define USB_USB_PWR _U(0x78)
#define USB_INTR _U(0x8C)
#define USB_MAIN_CTRL_CONTROLLER_EN (_U(1) << 0)
#define USB_SIE_CTRL_EP0_INT_1BUF (_U(1) << 29)
#define USB_SIE_CTRL_PULLUP_EN (_U(1) << 16)
#define USB_SIE_STATUS_BUS_RESET (_U(1) << 19)
#define USB_SIE_STATUS_SETUP_REC (_U(1) << 17)
#define USB_MUXING_TO_PHY (_U(1) << 0)
#define USB_MUXING_SOFTCON (_U(1) << 3)
#define USB_PWR_VBUS_DETECT (_U(1) << 2)
#define USB_PWR_VBUS_DETECT_OVERRIDE_EN (_U(1) << 3)
#define USB_INTR_BUFF_STATUS (_U(1) << 4)
#define USB_INTR_BUS_RESET (_U(1) << 12)
#define USB_INTR_SETUP_REQ (_U(1) << 16)
/* DPRAM: setup packet, endpoint control words (EPn IN at 8n, OUT at 8n + 4, n >= 1), buffer control
 * words (EPn IN at 0x80 + 8n, OUT at 0x84 + 8n), the shared EP0 buffer and free buffer space. */
#define USB_DPRAM_SETUP _U(0x000)
#define USB_DPRAM_EP_IN_CTRL(n) (_U(8) * (n))
#define USB_DPRAM_EP_OUT_CTRL(n) (_U(8) * (n) + _U(4))
#define USB_DPRAM_EP_IN_BUF_CTRL(n) (_U(0x80) + _U(8) * (n))
#define USB_DPRAM_EP_OUT_BUF_CTRL(n) (_U(0x84) + _U(8) * (n))
#define USB_DPRAM_EP0_BUF _U(0x100)
#define USB_DPRAM_FREE _U(0x180)
#define USB_EP_CTRL_ENABLE (_U(1) << 31)
#define USB_EP_CTRL_INTERRUPT_PER_BUFF (_U(1) << 29)
#define USB_EP_CTRL_TYPE_LSB 26
#define USB_EP_TYPE_BULK _U(2)
#define USB_EP_TYPE_INTERRUPT _U(3)
#define USB_BUF_CTRL_FULL (_U(1) << 15)
#define USB_BUF_CTRL_LAST (_U(1) << 14)
#define USB_BUF_CTRL_DATA1 (_U(1) << 13)
#define USB_BUF_CTRL_STALL (_U(1) << 11)
#define USB_BUF_CTRL_AVAILABLE (_U(1) << 10)
#define USB_BUF_CTRL_LEN_MASK _U(0x3FF)

#endif
