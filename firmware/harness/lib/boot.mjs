// What rp2040js 1.4.1 lacks to boot through the real RP2040 boot ROM (docs: firmware/README.md,
// "Harness"): an SPI flash behind the XIP SSI's data register, chip select from the QSPI SS output
// override, VREG_AND_CHIP_RESET.CHIP_RESET reading 0 (all ones sends the ROM to its debugger wait),
// and the QSPI SS pin reading high (low means BOOTSEL is held: USB boot).
import { BasePeripheral } from 'rp2040js';

const SSI_CTRLR0 = 0x00, SSI_CTRLR1 = 0x04, SSI_SSIENR = 0x08, SSI_SER = 0x10, SSI_BAUDR = 0x14;
const SSI_TXFLR = 0x20, SSI_RXFLR = 0x24, SSI_SR = 0x28, SSI_IDR = 0x58, SSI_VERSION_ID = 0x5c;
const SSI_DR0 = 0x60, SSI_RX_SAMPLE_DLY = 0xf0, SSI_SPI_CTRLR0 = 0xf4;
const SR_TFNF = 1 << 1, SR_TFE = 1 << 2, SR_RFNE = 1 << 3;
const IO_QSPI_SS_CTRL = 0x0c;
const OUTOVER_LOW = 2;
export const FLASH_UNIQUE_ID = [0xe6, 0x60, 0x38, 0x28, 0x43, 0x2c, 0x5d, 0x2b];
const JEDEC_ID = [0xef, 0x40, 0x15]; // a 2 MB W25Q16

/** A serial flash that answers 03h read, 4Bh unique id, 9Fh JEDEC id and 05h status; one byte out per byte in. */
class SpiFlash {
  constructor(memory) {
    this.memory = memory;
    this.deselect();
  }
  deselect() {
    this.command = null;
    this.position = 0;
    this.address = 0;
  }
  exchange(byte) {
    if (this.command === null) {
      this.command = byte;
      this.position = 0;
      return 0;
    }
    const position = this.position++;
    switch (this.command) {
      case 0x03:
        if (position < 3) {
          this.address = ((this.address << 8) | byte) & 0xffffff;
          return 0;
        }
        return this.memory[this.address++ & 0xffffff];
      case 0x4b:
        return position < 4 ? 0 : FLASH_UNIQUE_ID[(position - 4) % 8];
      case 0x9f:
        return JEDEC_ID[position % 3];
      default:
        return 0;
    }
  }
}

export class FlashSSI extends BasePeripheral {
  constructor(rp2040, name) {
    super(rp2040, name);
    this.flash = new SpiFlash(rp2040.flash);
    this.registers = new Map();
    this.rx = [];
    this.selected = false;
  }
  select(selected) {
    if (!selected) this.flash.deselect();
    this.selected = selected;
  }
  readUint32(offset) {
    switch (offset) {
      case SSI_TXFLR:
        return 0;
      case SSI_RXFLR:
        return this.rx.length;
      case SSI_SR:
        return SR_TFNF | SR_TFE | (this.rx.length ? SR_RFNE : 0);
      case SSI_IDR:
        return 0x51535049;
      case SSI_VERSION_ID:
        return 0x3430312a;
      case SSI_DR0:
        return this.rx.length ? this.rx.shift() : 0;
      default:
        return this.registers.get(offset) ?? 0;
    }
  }
  writeUint32(offset, value) {
    if (offset === SSI_DR0) {
      this.rx.push(this.selected ? this.flash.exchange(value & 0xff) : 0);
      if (this.rx.length > 16) this.rx.shift();
      return;
    }
    if (offset === SSI_SSIENR && !(value & 1)) this.rx = [];
    this.registers.set(offset, value >>> 0);
  }
}

/** IO_QSPI: only the SS pin's control register matters (its output override is the flash chip select). */
class QspiIO extends BasePeripheral {
  constructor(rp2040, name, ssi) {
    super(rp2040, name);
    this.ssi = ssi;
    this.registers = new Map();
  }
  readUint32(offset) {
    return this.registers.get(offset) ?? 0;
  }
  writeUint32(offset, value) {
    this.registers.set(offset, value >>> 0);
    if (offset === IO_QSPI_SS_CTRL) this.ssi.select(((value >>> 8) & 3) === OUTOVER_LOW);
  }
}

class ChipReset extends BasePeripheral {
  constructor(rp2040, name) {
    super(rp2040, name);
    this.registers = new Map();
  }
  readUint32(offset) {
    return this.registers.get(offset) ?? 0; // CHIP_RESET (0x08) = 0: a power-on reset, no debugger request
  }
  writeUint32(offset, value) {
    this.registers.set(offset, value >>> 0);
  }
}

/** Load the boot ROM and the flash image, and give the chip what the ROM needs to boot from flash. */
export function prepareBoot(mcu, bootrom, flashBlocks) {
  mcu.loadBootrom(new Uint32Array(bootrom.buffer, bootrom.byteOffset, bootrom.byteLength / 4));
  for (const { address, payload } of flashBlocks) mcu.flash.set(payload, address);
  const ssi = new FlashSSI(mcu, 'SSI');
  mcu.peripherals[0x18000] = ssi;
  mcu.peripherals[0x40018] = new QspiIO(mcu, 'IO_QSPI_BASE', ssi);
  mcu.peripherals[0x40064] = new ChipReset(mcu, 'VREG_AND_CHIP_RESET_BASE');
  const ss = mcu.qspi[1];
  ss.padValue |= 0x40;
  ss.setInputValue(true);
  Object.defineProperty(ss, 'inputValue', { get: () => true }); // a pulled-up CSn: BOOTSEL not held
  return ssi;
}
