/* The flash chip's 64-bit unique id (command 4Bh), the adapter's USB serial number: the RP2040 has no
 * id of its own. Runs from RAM, because XIP is off while the SSI talks to the flash directly; the XIP
 * setup boot2 made is restored afterwards. */
#include "platform.h"
#include "regs.h"

#define SSI(offset) REG32(XIP_SSI_BASE + (offset))
#define FLASH_CMD_UNIQUE_ID 0x4Bu
#define DUMMY_BYTES 4u
#define ID_BYTES 8u
#define XIP_CTRLR0 ((31u << SSI_CTRLR0_DFS_32_LSB) | (SSI_CTRLR0_TMOD_EEPROM_READ << SSI_CTRLR0_TMOD_LSB))
#define XIP_SPI_CTRLR0                                                                                      \
    ((0x03u << SSI_SPI_CTRLR0_XIP_CMD_LSB) | (SSI_SPI_CTRLR0_INST_L_8B << SSI_SPI_CTRLR0_INST_L_LSB) |     \
     (6u << SSI_SPI_CTRLR0_ADDR_L_LSB))

__attribute__((section(".ramfunc"), noinline)) static void chip_select(uint32_t level)
{
    uint32_t ctrl = REG32(IO_QSPI_BASE + IO_QSPI_SS_CTRL) & ~IO_QSPI_OUTOVER_MASK;
    REG32(IO_QSPI_BASE + IO_QSPI_SS_CTRL) = ctrl | (level << IO_QSPI_OUTOVER_LSB);
    (void)REG32(IO_QSPI_BASE + IO_QSPI_SS_CTRL);
}

__attribute__((section(".ramfunc"), noinline)) void flash_unique_id(uint8_t out[8])
{
    SSI(SSI_SSIENR) = 0;
    SSI(SSI_CTRLR0) = 7u << SSI_CTRLR0_DFS_32_LSB; /* 8-bit frames, transmit and receive */
    SSI(SSI_SER) = 1;
    SSI(SSI_SSIENR) = 1;
    chip_select(IO_QSPI_OUTOVER_LOW);
    for (uint32_t i = 0; i < 1u + DUMMY_BYTES + ID_BYTES; i++) {
        SSI(SSI_DR0) = i == 0 ? FLASH_CMD_UNIQUE_ID : 0u;
        while (!(SSI(SSI_SR) & SSI_SR_RFNE)) {
        }
        uint8_t byte = (uint8_t)SSI(SSI_DR0);
        if (i >= 1u + DUMMY_BYTES) {
            out[i - 1u - DUMMY_BYTES] = byte;
        }
    }
    chip_select(IO_QSPI_OUTOVER_HIGH);
    chip_select(0);
    SSI(SSI_SSIENR) = 0;
    SSI(SSI_CTRLR0) = XIP_CTRLR0;
    SSI(SSI_SPI_CTRLR0) = XIP_SPI_CTRLR0;
    SSI(SSI_CTRLR1) = 0;
    SSI(SSI_SSIENR) = 1;
}
