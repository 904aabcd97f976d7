// The world on the adapter's GPIOs: the cartridge in its slot (and, later, the console).
//
// The cartridge answers from a table file made by hilbridge's own cartridge model
// (hilbridge/firmware/cart_table.py), only while the firmware holds DUMP high (console side isolated,
// the adapter driving the slot): /PSEN low puts the fetched byte on D0-D7, pin E high the MOVX-read
// byte, and a rising /WR with A7 = 1 and P14 = 0 stores D0-D7 in a Videopac+ latch. A line nobody
// drives reads high (the slot's pull-ups), so a byte nobody drives reads FFh.
import fs from 'node:fs';

import { loadPins } from './pins.mjs';

const ADDRESS = ['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10', 'A11'];
const DATA = ['D0', 'D1', 'D2', 'D3', 'D4', 'D5', 'D6', 'D7'];
const WATCHED = [...ADDRESS, 'P10', 'P11', 'P14', 'PSEN_N', 'WR_N', 'E', 'DUMP'];

function parseTable(data) {
  if (String.fromCharCode(...data.subarray(0, 4)) !== 'HBCT') throw new Error('not a cartridge table');
  const latchRule = data[4];
  const states = data[5];
  const fetch = data.subarray(6, 6 + states * 4 * 4096);
  const read = data.subarray(6 + states * 4 * 4096, 6 + states * 4 * 4096 + 2 * 16 * 256);
  return { latchRule, states, fetch, read };
}

class Cartridge {
  constructor(mcu, pins, table) {
    this.mcu = mcu;
    this.pins = pins;
    this.table = table;
    this.latch = 0;
    this.wasWriting = false;
    this.driven = -1;
    this.busy = false;
    this.fetches = 0;
    this.dirty = true;
    for (const symbol of WATCHED) mcu.gpio[pins[symbol]].addListener(() => (this.dirty = true));
  }
  level(symbol) {
    const pin = this.mcu.gpio[this.pins[symbol]];
    return pin.outputEnable ? pin.outputValue : true;
  }
  bits(symbols) {
    let value = 0;
    symbols.forEach((symbol, bit) => {
      if (this.level(symbol)) value |= 1 << bit;
    });
    return value;
  }
  drive(value) {
    if (value === this.driven) return;
    this.driven = value;
    DATA.forEach((symbol, bit) => this.mcu.gpio[this.pins[symbol]].setInputValue(!!(value & (1 << bit))));
  }
  update() {
    if (!this.level('DUMP')) {
      this.wasWriting = false;
      return;
    }
    const address = this.bits(ADDRESS);
    const p1 = 0xec | (this.level('P10') ? 1 : 0) | (this.level('P11') ? 2 : 0) | (this.level('P14') ? 0x10 : 0);
    const writing = !this.level('WR_N');
    if (this.wasWriting && !writing) this.written(address, p1);
    this.wasWriting = writing;
    const { fetch, read, states } = this.table;
    if (!this.level('PSEN_N')) {
      this.fetches++;
      this.drive(fetch[((this.latch & (states - 1)) * 4 + (p1 & 3)) * 4096 + address]);
    } else if (this.level('E')) {
      this.drive(read[(((p1 >> 1) & 1) * 16 + ((address >> 8) & 15)) * 256 + (address & 0xff)]);
    } else {
      this.drive(0xff);
    }
  }
  written(address, p1) {
    if (this.table.latchRule === 1 && address & 0x80 && !(p1 & 0x10)) this.latch = this.bits(DATA);
  }
  /** Lines change one SIO or PIO write at a time; the cartridge answers before the next instruction. */
  afterInstruction() {
    if (this.dirty) {
      this.dirty = false;
      this.update();
    }
  }
}

export async function attachBus(mcu, options) {
  const pins = loadPins();
  const plugins = [];
  if (options['cart-table']) {
    plugins.push(new Cartridge(mcu, pins, parseTable(new Uint8Array(fs.readFileSync(options['cart-table'])))));
  }
  return plugins;
}

