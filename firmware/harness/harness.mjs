#!/usr/bin/env node
// Firmware in the loop: the built UF2 booted through the real RP2040 boot ROM in rp2040js, its USB
// link served on TCP, PIO state machines stepped in lock-step with the CPU, and (optionally) the
// cartridge and the console played on the GPIOs. See firmware/README.md, "Harness".
//
//   node harness.mjs --uf2 build/hilbridge-adapter.uf2 --bootrom ROM.bin [--port 0] [--link usb|vendor|uart]
//                    [--cart-table FILE] [--console TRACE [--console-slowdown N]] [--cpu-slowdown K]
//                    [--boot-check CYCLES] [--pc-profile FILE] [--usb-frame-packets N] [--commands]
//
// --cpu-slowdown K (>= 1) makes every CPU instruction take K times its cycles while PIO, timers and
// the console keep their pace: a CPU K times slower, to measure how much of the CPU a capture leaves.
// --pc-profile writes, at exit, the CPU cycles spent at each PC while the console was playing, as JSON
// pairs [pc, cycles], pc -1 for cycles asleep in WFI (benchmarks/firmware_capture_profile.py maps them to the ELF's functions).
// --usb-frame-packets N (default 19, a full-speed link's most; 0 = no limit, as rp2040js alone) lets the
// host take at most N bulk IN packets of 64 bytes per emulated 1 ms frame (lib/usb_host.mjs); at exit
// (SIGTERM) it prints {"event": "usb-bulk-in", "packets", "delayed", "fullFrames", "mostWaiting"}.
// --link usb serves the USB CDC-ACM data interface on the TCP port, --link vendor the vendor-specific
// bulk interface (pyusb's UsbTransport through hilbridge.firmware.harness_usb), --link uart the UART
// fallback (UART0); USB enumerates in every case, and a second port runs control transfers on the
// chip's EP0 (lib/usb_bridge.mjs). It prints one JSON object per line on stdout:
// {"event": "listening", "url": ..., "control": ...} first, then "booted" (the CPU reached the application's reset
// handler), "usb-connected" (with "descriptors": device, configuration and string descriptors as hex,
// read from the device by GET_DESCRIPTOR, and the pipes' endpoint numbers), with
// --link uart "uart-pins" (the function of the UART's GPIOs) when a client first sends, and with
// --boot-check a final {"event": "boot-check", "booted": true|false} before it exits. Commands on stdin
// (below) reset the chip in this process, so tests can share one harness without sharing a chip's state.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { ConsoleLogger, LogLevel, RP2040 } from 'rp2040js';
import { prepareBoot } from './lib/boot.mjs';
import { flashFromUf2 } from './lib/uf2.mjs';
import { UartBridge } from './lib/uart_bridge.mjs';
import { UsbBridge } from './lib/usb_bridge.mjs';

const CYCLE_NANOS = 8; // 125 MHz
const SLICE = 20000; // instructions between looks at the sockets
const DELIVER_EVERY = 256; // instructions between top-ups of the link's receive side (the UART FIFO is 32 bytes) and sends of what the chip wrote
const APP_START = 0x10000100;
const APP_END = 0x10200000;

const { values: options } = parseArgs({
  options: {
    uf2: { type: 'string' },
    bootrom: { type: 'string' },
    port: { type: 'string', default: '0' },
    link: { type: 'string', default: 'usb' },
    'cart-table': { type: 'string' },
    console: { type: 'string' },
    'console-slowdown': { type: 'string', default: '1' },
    'boot-check': { type: 'string' },
    'pc-profile': { type: 'string' },
    'cpu-slowdown': { type: 'string', default: '1' },
    'usb-frame-packets': { type: 'string', default: '19' },
    commands: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});

const events = {
  emit(object) {
    process.stdout.write(JSON.stringify(object) + '\n');
  },
};

function fail(message) {
  process.stderr.write(`harness: ${message}\n`);
  process.exit(2);
}

if (!options.uf2 || !options.bootrom) fail('--uf2 and --bootrom are required');
if (!['usb', 'vendor', 'uart'].includes(options.link)) fail('--link is usb, vendor or uart');
const bootromImage = new Uint8Array(fs.readFileSync(options.bootrom));
const flashBlocks = flashFromUf2(new Uint8Array(fs.readFileSync(options.uf2)));
let framePackets = Number(options['usb-frame-packets']);
const validFramePackets = (n) => Number.isInteger(n) && n >= 0;
if (!validFramePackets(framePackets)) fail('--usb-frame-packets is a whole number >= 0');
const cpuSlowdown = Number(options['cpu-slowdown']);
if (!(cpuSlowdown >= 1)) fail('--cpu-slowdown is a number >= 1');

let mcu, clock, core, plugins, usb, bridge;
let booted = false;
let cycles = 0;
let stretch = 0; // the fraction of a cycle --cpu-slowdown has not yet added
const pcCycles = new Map();

/** A chip at power-on: a new RP2040 with the boot ROM and flash, the bus plugins the options name, and
 * its USB controller given to the bridge. The TCP ports stay; the first start and every reset come here. */
async function powerOn() {
  const chip = new RP2040();
  chip.logger = new ConsoleLogger(options.verbose ? LogLevel.Debug : LogLevel.Error);
  prepareBoot(chip, bootromImage, flashBlocks);
  // PIO: rp2040js runs it from its own timer (and steps disabled machines); we step it ourselves.
  for (const pio of chip.pio) pio.run = () => {};
  let attached = [];
  if (options['cart-table'] || options.console) {
    const { attachBus } = await import('./lib/bus.mjs');
    attached = await attachBus(chip, options, events);
  }
  // From here on nothing waits: the loop never runs a slice on half of the old chip and half of the new.
  mcu = chip;
  plugins = attached;
  if (usb) usb.attach(mcu, framePackets);
  else usb = new UsbBridge(mcu, events, options.link === 'vendor' ? 'vendor' : 'cdc', framePackets);
  if (!bridge) bridge = options.link === 'uart' ? new UartBridge(mcu, events) : usb; // the one on the TCP port
  ({ clock, core } = mcu);
  booted = false;
  cycles = 0;
  stretch = 0;
  pcCycles.clear();
}
await powerOn();

// One PIO cycle per CPU cycle for each enabled machine. rp2040js executes an instruction per step and
// only counts its delay cycles; the machine sits out that debt here, so delays take their time.
function stepPio(count) {
  for (const pio of mcu.pio) {
    if (pio.stopped) continue;
    for (const machine of pio.machines) {
      if (!machine.enabled) continue;
      for (let i = 0; i < count; i++) {
        if (machine.delayDebt > 0) {
          machine.delayDebt--;
          continue;
        }
        const before = machine.cycles;
        machine.step();
        machine.delayDebt = machine.cycles - before - 1;
      }
    }
    pio.checkChangedPins();
  }
}

function runSlice() {
  bridge.deliver();
  bridge.flushToHost();
  const profiling = options['pc-profile'] && plugins.some((p) => p.busy);
  for (let i = 0; i < SLICE; i++) {
    if (core.waiting) {
      const nanos = clock.nanosToNextAlarm;
      const step = nanos > 0 && nanos < 1e6 ? nanos : 1000;
      clock.tick(step);
      cycles += step / CYCLE_NANOS;
      if (profiling) pcCycles.set(-1, (pcCycles.get(-1) || 0) + step / CYCLE_NANOS); // asleep (WFI)
      continue;
    }
    if (i % DELIVER_EVERY === 0) {
      bridge.deliver();
      bridge.flushToHost();
    }
    const pc = profiling ? core.PC : 0;
    let spent = core.executeInstruction();
    if (cpuSlowdown !== 1) {
      stretch += spent * cpuSlowdown;
      spent = Math.floor(stretch);
      stretch -= spent;
    }
    if (profiling) pcCycles.set(pc, (pcCycles.get(pc) || 0) + spent);
    cycles += spent;
    clock.tick(spent * CYCLE_NANOS);
    stepPio(spent);
    for (const plugin of plugins) plugin.afterInstruction(cycles);
  }
  bridge.flushToHost();
  if (!booted) {
    const pc = core.PC >>> 0;
    if (pc >= APP_START && pc < APP_END) {
      booted = true;
      events.emit({ event: 'booted', cycles });
    }
  }
}

if (options['boot-check']) {
  const limit = Number(options['boot-check']);
  while (cycles < limit && !booted) runSlice();
  events.emit({ event: 'boot-check', booted, cycles });
  process.exit(0);
}

const port = await bridge.listen(Number(options.port));
const controlPort = await usb.listenControl(0);
events.emit({ event: 'listening', url: `socket://127.0.0.1:${port}`, control: `socket://127.0.0.1:${controlPort}` });

// Run flat out while the chip boots or the host waits for something; once every request is answered
// and nothing has moved for a while, run a slice only every IDLE_PAUSE_MS (the firmware only polls
// then), and at once when the host sends on the link or the control port, or a command comes.
const IDLE_MS = 200;
const IDLE_PAUSE_MS = 20;
let seenIn = 0;
let seenOut = 0;
let lastIn = 0;
let lastOut = 0;
let idleTimer = null;
function loop() {
  idleTimer = null;
  runSlice();
  const now = Date.now();
  if (bridge.bytesIn !== seenIn) [seenIn, lastIn] = [bridge.bytesIn, now];
  if (bridge.bytesOut !== seenOut) [seenOut, lastOut] = [bridge.bytesOut, now];
  const answered = lastOut >= lastIn && !bridge.hostWaiting && !usb.controlWaiting;
  const quiet = answered && now - Math.max(lastIn, lastOut) > IDLE_MS;
  if (quiet && usb.connected && !plugins.some((p) => p.busy)) idleTimer = setTimeout(loop, IDLE_PAUSE_MS);
  else setImmediate(loop);
}
function wake() {
  if (idleTimer === null) return; // running flat out: the next slice comes anyway
  clearTimeout(idleTimer);
  idleTimer = null;
  setImmediate(loop);
}
bridge.onInput = wake;
usb.onInput = wake;
// With --commands (not by default: a harness started from a shell must not take its input), commands on
// stdin, one JSON object a line. {"command": "reset", "cart-table"?, "console"?,
// "console-slowdown"?, "usb-frame-packets"?} powers the chip off and on again, as a new harness process
// with those options would start it (options not given take their defaults), but in this process and on
// the same ports: it prints {"event": "reset", "usb-bulk-in": {...}} with the last chip's bulk IN counts, then
// "booted" and "usb-connected" as at start. {"command": "bulk-in"} prints the "usb-bulk-in" event
// SIGTERM prints, without ending the harness. A UART link keeps the first chip's UART: no reset there.
const BUS_OPTIONS = { 'cart-table': undefined, console: undefined, 'console-slowdown': '1' };
let commandText = '';
let resetting = Promise.resolve();
function received(data) {
  commandText += data;
  let end;
  while ((end = commandText.indexOf('\n')) >= 0) {
    const line = commandText.slice(0, end).trim();
    commandText = commandText.slice(end + 1);
    if (!line) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      events.emit({ event: 'error', message: `not a JSON command: ${line}` });
      continue;
    }
    resetting = resetting.then(() => command(request));
  }
  wake();
}
if (options.commands) {
  process.stdin.on('data', received);
  process.stdin.on('error', () => {});
}

async function command(request) {
  if (request.command === 'bulk-in') {
    events.emit({ event: 'usb-bulk-in', framePackets, ...usb.host.bulkIn });
    return;
  }
  if (request.command !== 'reset' || options.link === 'uart') {
    events.emit({ event: 'error', message: `cannot run ${JSON.stringify(request)}` });
    return;
  }
  const packets = Number(request['usb-frame-packets'] ?? '19');
  if (!validFramePackets(packets)) {
    events.emit({ event: 'error', message: 'usb-frame-packets is a whole number >= 0' });
    return;
  }
  events.emit({ event: 'reset', 'usb-bulk-in': { framePackets, ...usb.host.bulkIn } });
  for (const [name, fallback] of Object.entries(BUS_OPTIONS)) options[name] = request[name] ?? fallback;
  framePackets = packets;
  await powerOn();
}

process.on('SIGTERM', () => {
  events.emit({ event: 'usb-bulk-in', framePackets, ...usb.host.bulkIn });
  if (options['pc-profile']) fs.writeFileSync(options['pc-profile'], JSON.stringify([...pcCycles]));
  process.exit(0);
});
loop();
