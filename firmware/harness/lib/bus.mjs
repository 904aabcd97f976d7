// The world on the adapter's GPIOs: the cartridge in its slot, and the console.
//
// The cartridge answers from a table file made by hilbridge's own cartridge model
// (hilbridge/firmware/cart_table.py), only while the firmware holds DUMP high (console side isolated,
// the adapter driving the slot): /PSEN low puts the fetched byte on D0-D7, pin E high the MOVX-read
// byte, and a rising /WR with A7 = 1 and P14 = 0 stores D0-D7 in a Videopac+ latch. A line nobody
// drives reads high (the slot's pull-ups), so a byte nobody drives reads FFh.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPins } from './pins.mjs';

const ENGINES_TSV = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../pio/engines.tsv');

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

/** The GPIO objects of these pin symbols, looked up once (the plugins run after every instruction). */
function gpiosOf(mcu, pins, symbols) {
  return symbols.map((symbol) => mcu.gpio[pins[symbol]]);
}

/** The level a pin shows on the bus: the adapter's output where it drives, else the pull-up. */
function driven(pin) {
  return pin.outputEnable ? pin.outputValue : true;
}

/** Put a level on a pin from outside the chip, if it is not there already. */
function setLevel(pin, level) {
  if (pin.rawInputValue !== level) pin.setInputValue(level);
}

class Cartridge {
  constructor(mcu, pins, table) {
    this.mcu = mcu;
    this.pins = pins;
    this.table = table;
    this.latch = 0;
    this.wasWriting = false;
    this.busy = false;
    this.fetches = 0;
    this.dirty = true;
    this.address = gpiosOf(mcu, pins, ADDRESS);
    this.data = gpiosOf(mcu, pins, DATA);
    this.gpio = Object.fromEntries(WATCHED.map((symbol) => [symbol, mcu.gpio[pins[symbol]]]));
    for (const symbol of WATCHED) mcu.gpio[pins[symbol]].addListener(() => (this.dirty = true));
  }
  level(symbol) {
    return driven(this.gpio[symbol]);
  }
  bits(gpios) {
    let value = 0;
    for (let bit = 0; bit < gpios.length; bit++) {
      if (driven(gpios[bit])) value |= 1 << bit;
    }
    return value;
  }
  drive(value) {
    const data = this.data;
    for (let bit = 0; bit < data.length; bit++) {
      setLevel(data[bit], !!(value & (1 << bit)));
    }
  }
  update() {
    if (!this.level('DUMP')) {
      this.wasWriting = false;
      return;
    }
    const address = this.bits(this.address);
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
    if (this.table.latchRule === 1 && address & 0x80 && !(p1 & 0x10)) this.latch = this.bits(this.data);
  }
  /** Lines change one SIO or PIO write at a time; the cartridge answers before the next instruction. */
  afterInstruction() {
    if (this.dirty) {
      this.dirty = false;
      this.update();
    }
  }
}

// The console: plays a trace of the reference emulator's slot accesses (9-byte records cycle:u32
// kind:u8 address:u16 value:u8 p1:u8, kind 0 fetch, 1 MOVX read, 2 MOVX write) onto the bus at the
// 8048's pace, each in its machine cycle with the strobe windows of firmware/board/bus_timing.tsv:
// address and P1 at the cycle start, then /PSEN low (the trace's byte on D0-D7, as the cartridge gave
// it), /WR low with the byte, or pin E high. It starts from the trace's first record whenever the
// firmware starts its sniff or serve engine (engines.tsv). While the firmware serves, fetches are not
// answered by the trace but checked: the firmware must drive the trace's byte; a "console-done" event
// on stdout reports the accesses played and every wrong fetch.
// --console-slowdown N stretches every machine cycle N times (a console clocked N times slower).
const OSC_HZ = 5369317; // NTSC
const CLK_PER_MACHINE_CYCLE = (125e6 * 15) / OSC_HZ;
const STROBE_START = 6 / 15;
const STROBE_END = { 0: 12 / 15, 1: 13 / 15, 2: 13 / 15 };
const STROBE_PIN = { 0: 'PSEN_N', 1: 'E', 2: 'WR_N' };
const STROBE_ACTIVE = { 0: false, 1: true, 2: false };

function engineOf(program) {
  const lines = fs.readFileSync(ENGINES_TSV, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
  const header = lines[0].split('\t');
  for (const line of lines.slice(1)) {
    const row = Object.fromEntries(header.map((name, i) => [name, line.split('\t')[i]]));
    if (row.program === program) return { pio: Number(row.pio), sm: Number(row.sm) };
  }
  throw new Error(`engines.tsv has no ${program} engine`);
}

class Console {
  constructor(mcu, pins, trace, slowdown, events) {
    this.mcu = mcu;
    this.pins = pins;
    this.machineCycle = CLK_PER_MACHINE_CYCLE * slowdown;
    const view = new DataView(trace.buffer, trace.byteOffset, trace.byteLength);
    this.accesses = [];
    for (let at = 0; at + 9 <= trace.length; at += 9) {
      this.accesses.push({
        cycle: view.getUint32(at, true),
        kind: trace[at + 4],
        address: view.getUint16(at + 5, true),
        value: trace[at + 7],
        p1: trace[at + 8],
      });
    }
    this.gpio = Object.fromEntries(Object.entries(pins).map(([symbol, gpio]) => [symbol, mcu.gpio[gpio]]));
    this.address = gpiosOf(mcu, pins, ADDRESS);
    this.data = gpiosOf(mcu, pins, DATA);
    const sniff = engineOf('sniff');
    const serve = engineOf('serve');
    this.sniff = mcu.pio[sniff.pio].machines[sniff.sm];
    this.serve = mcu.pio[serve.pio].machines[serve.sm];
    this.harnessEvents = events;
    this.playing = false;
    this.wasSniffing = false;
    this.wasServing = false;
    this.played = 0;
    this.wrong = [];
    this.idleLines();
  }
  get busy() {
    return this.playing;
  }
  set(symbol, level) {
    setLevel(this.gpio[symbol], level);
  }
  setBits(gpios, value) {
    for (let bit = 0; bit < gpios.length; bit++) setLevel(gpios[bit], !!(value & (1 << bit)));
  }
  idleLines() {
    this.set('PSEN_N', true);
    this.set('WR_N', true);
    this.set('E', false);
    this.setBits(this.data, 0xff);
  }
  /** While the firmware serves: the byte it drives at the end of the /PSEN window, through an
   * enabled data buffer (DOUT_OE_N low), must be the trace's. */
  check(access) {
    this.fetches++;
    const oe = this.gpio.DOUT_OE_N;
    const bufferOn = oe.outputEnable && !oe.outputValue;
    let value = 0;
    let allDriven = true;
    this.data.forEach((pin, bit) => {
      if (!pin.outputEnable) allDriven = false;
      if (pin.outputValue) value |= 1 << bit;
    });
    if (!bufferOn || !allDriven || value !== access.value) {
      if (this.wrong.length < 1000) {
        this.wrong.push({ address: access.address, p1: access.p1, expected: access.value, got: allDriven ? value : null, bufferOn });
      }
    }
  }
  report() {
    const mode = this.verifying ? 'serve' : 'sniff';
    const wrong = this.verifying ? this.wrong.length : 0;
    this.harnessEvents.emit({ event: 'console-done', mode, accesses: this.played, fetches: this.fetches, wrong, examples: (this.wrong || []).slice(0, 5) });
  }
  /** Events of one access, in clk_sys cycles. The trace stamps both fetches of a two-byte
   * instruction with its first cycle; on the bus the second comes a machine cycle later. */
  schedule(access) {
    this.slot = Math.max(access.cycle - this.firstCycle, this.slot + 1);
    const start = this.origin + this.slot * this.machineCycle;
    return [
      [start, () => {
        this.setBits(this.address, access.kind === 0 ? access.address : access.address & 0xff);
        this.set('P10', !!(access.p1 & 1));
        this.set('P11', !!(access.p1 & 2));
        this.set('P14', !!(access.p1 & 0x10));
      }],
      [start + STROBE_START * this.machineCycle, () => {
        if (!this.verifying || access.kind === 2) this.setBits(this.data, access.value);
        this.set(STROBE_PIN[access.kind], STROBE_ACTIVE[access.kind]);
      }],
      [start + STROBE_END[access.kind] * this.machineCycle, () => {
        if (this.verifying && access.kind === 0) this.check(access);
        this.set(STROBE_PIN[access.kind], !STROBE_ACTIVE[access.kind]);
        this.setBits(this.data, 0xff);
        this.played++;
      }],
    ];
  }
  afterInstruction(cycles) {
    // The console side is cut off while the firmware dumps (DUMP high; the dump engine may even run
    // in the sniff's state machine): the console neither starts nor drives anything then.
    const dump = this.gpio.DUMP;
    if (dump.outputEnable && dump.outputValue) {
      this.wasSniffing = this.wasServing = true;
      if (this.playing) {
        this.playing = false;
        this.report();
      }
      return;
    }
    const sniffing = this.sniff.enabled;
    const serving = this.serve.enabled;
    const started = (sniffing && !this.wasSniffing) || (serving && !this.wasServing);
    this.wasSniffing = sniffing;
    this.wasServing = serving;
    if (started && this.accesses.length && !this.playing) {
      this.verifying = serving;
      this.fetches = 0;
      this.played = 0;
      this.wrong = [];
      this.playing = true;
      this.next = 0;
      this.pending = [];
      this.origin = cycles + this.machineCycle;
      this.firstCycle = this.accesses[0].cycle;
      this.slot = -1;
    }
    if (!this.playing) return;
    while (true) {
      if (!this.pending.length) {
        if (this.next >= this.accesses.length) {
          this.playing = false;
          this.idleLines();
          this.report();
          return;
        }
        this.pending = this.schedule(this.accesses[this.next++]);
      }
      if (this.pending[0][0] > cycles) return;
      this.pending.shift()[1]();
    }
  }
}

export async function attachBus(mcu, options, events) {
  const pins = loadPins();
  const plugins = [];
  if (options['cart-table']) {
    plugins.push(new Cartridge(mcu, pins, parseTable(new Uint8Array(fs.readFileSync(options['cart-table'])))));
  }
  if (options.console) {
    const trace = new Uint8Array(fs.readFileSync(options.console));
    plugins.push(new Console(mcu, pins, trace, Number(options['console-slowdown'] ?? 1), events));
  }
  return plugins;
}

