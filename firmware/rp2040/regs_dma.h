/* RP2040 DMA registers (datasheet chapter 2.5.7), offsets and bit positions for the serve chains. */
#ifndef HILBRIDGE_RP2040_REGS_DMA_H
#define HILBRIDGE_RP2040_REGS_DMA_H

#define DMA_BASE 0x50000000u
#define DMA_CH(n) (DMA_BASE + 0x40u * (n))
#define DMA_READ_ADDR 0x00u
#define DMA_WRITE_ADDR 0x04u
#define DMA_TRANS_COUNT 0x08u
#define DMA_CTRL_TRIG 0x0Cu
#define DMA_AL1_CTRL 0x10u
#define DMA_AL3_READ_ADDR_TRIG 0x3Cu
#define DMA_CHAN_ABORT 0x444u

#define DMA_CTRL_EN (1u << 0)
#define DMA_CTRL_HIGH_PRIORITY (1u << 1)
#define DMA_CTRL_DATA_SIZE_BYTE (0u << 2)
#define DMA_CTRL_DATA_SIZE_WORD (2u << 2)
#define DMA_CTRL_INCR_READ (1u << 4)
#define DMA_CTRL_INCR_WRITE (1u << 5)
#define DMA_CTRL_CHAIN_TO(n) ((uint32_t)(n) << 11)
#define DMA_CTRL_TREQ_SEL(n) ((uint32_t)(n) << 15)
#define DMA_CTRL_TREQ_PERMANENT DMA_CTRL_TREQ_SEL(0x3Fu)
#define DMA_CTRL_IRQ_QUIET (1u << 21)
#define DMA_CTRL_BUSY (1u << 24)

#endif
