/* Second-stage boot loader: the boot ROM copies these (at most 252) bytes plus their CRC to
 * 0x20041F00 and runs them. They set the XIP SSI up for plain 03h serial reads, which every SPI
 * flash answers (slow, but no flash-specific quad mode to get wrong), then enter the application
 * through its vector table at 0x10000100. */
#include "regs.h"

#define BOOT2_CTRLR0 ((31 << SSI_CTRLR0_DFS_32_LSB) | (SSI_CTRLR0_TMOD_EEPROM_READ << SSI_CTRLR0_TMOD_LSB))
#define BOOT2_SPI_CTRLR0                                                                            \
    ((0x03 << SSI_SPI_CTRLR0_XIP_CMD_LSB) | (SSI_SPI_CTRLR0_INST_L_8B << SSI_SPI_CTRLR0_INST_L_LSB) | \
     (6 << SSI_SPI_CTRLR0_ADDR_L_LSB) | (SSI_SPI_CTRLR0_TRANS_TYPE_1C1A))
#define FLASH_CLOCK_DIVIDER 4
#define APP_VECTORS 0x10000100

    .syntax unified
    .cpu cortex-m0plus
    .thumb
    .section .text.boot2, "ax"
    .global boot2_entry
    .type boot2_entry, %function
    .thumb_func
boot2_entry:
    ldr r3, =XIP_SSI_BASE
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]
    movs r1, #FLASH_CLOCK_DIVIDER
    str r1, [r3, #SSI_BAUDR]
    ldr r1, =BOOT2_CTRLR0
    str r1, [r3, #SSI_CTRLR0]
    ldr r1, =BOOT2_SPI_CTRLR0
    ldr r0, =(XIP_SSI_BASE + SSI_SPI_CTRLR0)
    str r1, [r0]
    movs r1, #0
    str r1, [r3, #SSI_CTRLR1]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]

    ldr r0, =APP_VECTORS
    ldr r1, =PPB_VTOR
    str r0, [r1]
    ldmia r0, {r0, r1}
    msr msp, r0
    bx r1
    .ltorg
