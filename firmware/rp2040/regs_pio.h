/* RP2040 PIO registers (datasheet chapter 3.7), offsets and bit positions for the bus engines. */
#ifndef HILBRIDGE_RP2040_REGS_PIO_H
#define HILBRIDGE_RP2040_REGS_PIO_H

#include <stdint.h>

#define PIO0_BASE 0x50200000u
#define PIO1_BASE 0x50300000u
#define PIO_BASE(n) ((n) ? PIO1_BASE : PIO0_BASE)

#define PIO_CTRL 0x000u      /* SM_ENABLE 3:0, SM_RESTART 7:4, CLKDIV_RESTART 11:8 */
#define PIO_FSTAT 0x004u     /* RXFULL 3:0, RXEMPTY 11:8, TXFULL 19:16, TXEMPTY 27:24 */
#define PIO_FDEBUG 0x008u    /* RXSTALL 3:0, RXUNDER 11:8, TXOVER 19:16, TXSTALL 27:24; write 1 to clear */
#define PIO_FLEVEL 0x00Cu
#define PIO_TXF(sm) (0x010u + 4u * (sm))
#define PIO_RXF(sm) (0x020u + 4u * (sm))
#define PIO_INPUT_SYNC_BYPASS 0x038u
#define PIO_INSTR_MEM(i) (0x048u + 4u * (i))
#define PIO_SM_CLKDIV(sm) (0x0C8u + 0x18u * (sm))
#define PIO_SM_EXECCTRL(sm) (0x0CCu + 0x18u * (sm))
#define PIO_SM_SHIFTCTRL(sm) (0x0D0u + 0x18u * (sm))
#define PIO_SM_ADDR(sm) (0x0D4u + 0x18u * (sm))
#define PIO_SM_INSTR(sm) (0x0D8u + 0x18u * (sm))
#define PIO_SM_PINCTRL(sm) (0x0DCu + 0x18u * (sm))
#define PIO_INTR 0x128u
#define PIO_IRQ0_INTE 0x12Cu
#define PIO_IRQ0_INTS 0x134u
#define PIO_IRQ1_INTE 0x138u

#define PIO_CTRL_SM_ENABLE(sm) (1u << (sm))
#define PIO_CTRL_SM_RESTART(sm) (1u << (4u + (sm)))
#define PIO_CTRL_CLKDIV_RESTART(sm) (1u << (8u + (sm)))
#define PIO_FSTAT_RXEMPTY(sm) (1u << (8u + (sm)))
#define PIO_FSTAT_TXFULL(sm) (1u << (16u + (sm)))
#define PIO_FSTAT_TXEMPTY(sm) (1u << (24u + (sm)))
#define PIO_FDEBUG_RXSTALL(sm) (1u << (sm))
#define PIO_INT_RXNEMPTY(sm) (1u << (sm))
#define PIO_CLKDIV_INT_1 (1u << 16) /* divider 1.0: one instruction per system clock */

/* Instruction encodings the C glue executes through SMx_INSTR (datasheet 3.4). */
#define PIO_INSTR_JMP(address) ((uint16_t)(0x0000u | (address)))
#define PIO_INSTR_IS_JMP(opcode) (((opcode) & 0xE000u) == 0x0000u)
#define PIO_INSTR_MOV_X_NOT_NULL 0xA02Bu /* mov x, ~null: the sniff tick counter starts at all ones */
#define PIO_INSTR_SET_PINS(value) ((uint16_t)(0xE000u | (value)))
#define PIO_INSTR_SET_PINDIRS(value) ((uint16_t)(0xE080u | (value)))
#define PIO_INSTR_MOV_OSR_NOT_NULL 0xA0EBu
#define PIO_INSTR_MOV_OSR_NULL 0xA0E3u
#define PIO_INSTR_OUT_PINDIRS(count) ((uint16_t)(0x6080u | ((count) & 31u)))
#define PIO_INSTR_OUT_PINS(count) ((uint16_t)(0x6000u | ((count) & 31u)))

/* DREQ numbers of the PIO FIFOs for the DMA (datasheet 2.5.3.1). */
#define DREQ_PIO_TX(pio, sm) ((pio) * 8u + (sm))
#define DREQ_PIO_RX(pio, sm) ((pio) * 8u + 4u + (sm))

/* NVIC interrupt numbers. */
#define IRQ_PIO0_IRQ_0 7u
#define IRQ_PIO1_IRQ_0 9u

#endif
