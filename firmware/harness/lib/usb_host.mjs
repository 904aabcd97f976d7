// The USB host side of rp2040js's device-mode controller: enumerates the firmware through real control
// transfers, routes its bulk endpoints to pipes and runs the control transfers of a host program.
//
// rp2040js ships a host only as USBCDC, which reads the configuration descriptor alone and knows one
// CDC data interface. This host asks what a PC's would: SET_ADDRESS, GET_DESCRIPTOR for the device, the
// configuration (9 bytes, then wTotalLength) and every string the device descriptor names, then
// SET_CONFIGURATION and, when there is a CDC-ACM function, SET_CONTROL_LINE_STATE (DTR and RTS). The
// bulk endpoint pair of the CDC data interface (class 0Ah) becomes pipe "cdc", that of the first
// vendor-specific interface (class FFh) pipe "vendor". Once configured it calls onConfigured with the
// raw descriptors (what a test parses) and the endpoint numbers. After that, `control` runs any
// request (IN or OUT data stage) on EP0 in turn with the enumeration's.
//
// rp2040js has no STALL handshake in device mode: the firmware arms one (EP_STALL_ARM and the STALL bit
// of an EP0 buffer control word) and nothing answers the host. The host watches for those writes and
// ends the request it is running as stalled, as a host controller would on the STALL token, and clears
// EP_STALL_ARM with each SETUP, as the chip does (RP2040 datasheet, EP_STALL_ARM).
//
// rp2040js completes a bulk IN packet as soon as the firmware arms it, so any stream fits its link.
// A real full-speed host polls bulk IN at most 19 times per 1 ms frame (64 bytes each: 1.216 MB/s;
// USB 2.0 §5.8.4 leaves less on a shared bus), so with `framePackets` N > 0 the host takes at most N
// bulk IN packets per emulated 1 ms frame: a packet armed past that waits (the firmware sees its
// buffer busy, as on a NAKed endpoint) until the next frame's budget. `bulkIn` counts what happened.
const GET_DESCRIPTOR = 0x06;
const SET_ADDRESS = 0x05;
const SET_CONFIGURATION = 0x09;
const CDC_SET_CONTROL_LINE_STATE = 0x22;
const CDC_DTR_RTS = 0x03;
const DESCRIPTOR_DEVICE = 1;
const DESCRIPTOR_CONFIGURATION = 2;
const DESCRIPTOR_STRING = 3;
const DESCRIPTOR_INTERFACE = 4;
const DESCRIPTOR_ENDPOINT = 5;
const CLASS_CDC_COMMUNICATION = 0x02;
const CLASS_CDC_DATA = 0x0a;
const CLASS_VENDOR = 0xff;
const ENDPOINT_BULK = 2;
const LANGUAGE_EN_US = 0x0409;
const DEVICE_ADDRESS = 1;
const EP0_PACKET = 64;
const REQUEST_GAP_NANOS = 20000; // between a status stage and the next SETUP, as a host leaves
const EP0_IN_BUFFER_CONTROL = 0x80; // DPRAM offsets of EP0's buffer control words
const EP0_OUT_BUFFER_CONTROL = 0x84;
const BUFFER_CONTROL_STALL = 1 << 11;
const STALL_ARM = { [EP0_IN_BUFFER_CONTROL]: 1, [EP0_OUT_BUFFER_CONTROL]: 2 }; // EP_STALL_ARM's bits
const BUFFER_CONTROL_AVAILABLE = 1 << 10;
const EP15_OUT_BUFFER_CONTROL = 0xfc;
const FRAME_NANOS = 1e6; // a full-speed USB frame: 1 ms

function setupPacket(requestType, request, value, index, length) {
  return Uint8Array.of(requestType, request, value & 0xff, value >> 8, index & 0xff, index >> 8, length & 0xff, length >> 8);
}

/** Interfaces and endpoints of a configuration descriptor: the bulk pairs by class, the CDC control interface. */
export function parseConfiguration(bytes) {
  const pipes = {};
  let interfaceClass = null;
  let controlInterface = null;
  for (let at = 0; at + 2 <= bytes.length && bytes[at] >= 2; at += bytes[at]) {
    const type = bytes[at + 1];
    if (type === DESCRIPTOR_INTERFACE) {
      interfaceClass = bytes[at + 5];
      if (interfaceClass === CLASS_CDC_COMMUNICATION && controlInterface === null) controlInterface = bytes[at + 2];
    } else if (type === DESCRIPTOR_ENDPOINT && (bytes[at + 3] & 3) === ENDPOINT_BULK) {
      const name = { [CLASS_CDC_DATA]: 'cdc', [CLASS_VENDOR]: 'vendor' }[interfaceClass];
      if (!name) continue;
      const pipe = (pipes[name] ??= { in: -1, out: -1 });
      const address = bytes[at + 2];
      if (address & 0x80) {
        if (pipe.in < 0) pipe.in = address & 0x0f;
      } else if (pipe.out < 0) pipe.out = address & 0x0f;
    }
  }
  return { pipes, controlInterface };
}

const hex = (bytes) => Buffer.from(bytes).toString('hex');

export class UsbHost {
  constructor(mcu, framePackets = 0) {
    this.usb = mcu.usbCtrl;
    this.clock = mcu.clock;
    this.framePackets = framePackets;
    this.frame = -1; // the frame whose bulk IN packets `taken` counts
    this.taken = 0;
    this.waiting = []; // armed bulk IN buffers past the frame's budget: [offset, value]
    this.nextFrame = mcu.clock.createAlarm(() => this.releaseWaiting());
    // packets: bulk IN packets taken; delayed: packets that waited for a later frame; fullFrames: frames
    // whose budget ran out; mostWaiting: most packets waiting at once
    this.bulkIn = { packets: 0, delayed: 0, fullFrames: 0, mostWaiting: 0 };
    this.gap = mcu.clock.createAlarm(() => this.nextRequest());
    this.pipes = {};
    this.onConfigured = null;
    this.onPipeData = null; // (name, bytes) for IN packets of a pipe
    this.onPipeRead = null; // (name, size) when the device arms a pipe's OUT endpoint
    this.usb.onUSBEnabled = () => this.usb.resetDevice();
    this.usb.onResetReceived = () => this.enumerate();
    this.usb.onEndpointWrite = (endpoint, buffer) => {
      if (endpoint === 0) this.controlIn(buffer);
      else {
        const name = this.pipeOf(endpoint, 'in');
        if (name) this.onPipeData?.(name, buffer);
      }
    };
    this.usb.onEndpointRead = (endpoint, size) => {
      if (endpoint === 0) this.controlOutArmed();
      else {
        const name = this.pipeOf(endpoint, 'out');
        if (name) this.onPipeRead?.(name, size);
      }
    };
    const dpramUpdated = this.usb.DPRAMUpdated.bind(this.usb);
    this.dpramUpdated = dpramUpdated;
    this.usb.DPRAMUpdated = (offset, value) => {
      if (this.framePackets > 0 && this.isBulkInArmed(offset, value)) {
        this.armBulkIn(offset, value);
        return;
      }
      dpramUpdated(offset, value);
      if (value & BUFFER_CONTROL_STALL && this.usb.epStallArm & STALL_ARM[offset]) this.stalled();
    };
    this.queue = [];
    this.current = null;
  }

  /** An IN buffer control word of endpoint 1-15 made available: a bulk IN packet for the host. */
  isBulkInArmed(offset, value) {
    return offset > EP0_OUT_BUFFER_CONTROL && offset <= EP15_OUT_BUFFER_CONTROL && !(offset & 4) && !!(value & BUFFER_CONTROL_AVAILABLE);
  }

  /** Count the packet against the current frame's budget, or keep it for a later frame's. */
  takeBulkIn(offset, value) {
    const frame = Math.floor(this.clock.nanos / FRAME_NANOS);
    if (frame !== this.frame) [this.frame, this.taken] = [frame, 0];
    if (this.taken >= this.framePackets) return false;
    this.taken++;
    this.bulkIn.packets++;
    if (this.taken === this.framePackets) this.bulkIn.fullFrames++;
    this.dpramUpdated(offset, value);
    return true;
  }

  armBulkIn(offset, value) {
    if (!this.waiting.length && this.takeBulkIn(offset, value)) return;
    this.waiting.push([offset, value]);
    this.bulkIn.delayed++;
    this.bulkIn.mostWaiting = Math.max(this.bulkIn.mostWaiting, this.waiting.length);
    if (this.waiting.length === 1) this.scheduleNextFrame();
  }

  scheduleNextFrame() {
    const nanos = this.clock.nanos;
    this.nextFrame.schedule((Math.floor(nanos / FRAME_NANOS) + 1) * FRAME_NANOS - nanos);
  }

  releaseWaiting() {
    while (this.waiting.length && this.takeBulkIn(...this.waiting[0])) this.waiting.shift();
    if (this.waiting.length) this.scheduleNextFrame();
  }

  /** Whether a control transfer is running or waiting. */
  get busy() {
    return this.current !== null || this.queue.length > 0;
  }

  /** Queue one control transfer (SETUP packet, OUT data stage); done(inData, stalled) once it ended. */
  control(setup, outData, done) {
    this.request(setup, done, outData);
    if (!this.current) this.gap.schedule(REQUEST_GAP_NANOS);
  }

  pipeOf(endpoint, direction) {
    return Object.keys(this.pipes).find((name) => this.pipes[name][direction] === endpoint);
  }

  /** Complete a pipe's armed OUT endpoint with these bytes. */
  send(name, bytes) {
    this.usb.endpointReadDone(this.pipes[name].out, bytes);
  }

  enumerate() {
    this.queue = [];
    this.current = null;
    this.ep0OutArmed = false;
    this.descriptors = { device: null, configuration: null, strings: {} };
    this.request(setupPacket(0x00, SET_ADDRESS, DEVICE_ADDRESS, 0, 0));
    this.getDescriptor(DESCRIPTOR_DEVICE, 0, 0, 18, (device) => {
      this.descriptors.device = device;
      this.getDescriptor(DESCRIPTOR_CONFIGURATION, 0, 0, 9, (head) => {
        this.getDescriptor(DESCRIPTOR_CONFIGURATION, 0, 0, head[2] | (head[3] << 8), (configuration) => {
          this.descriptors.configuration = configuration;
          this.readStrings(device, () => this.configure(configuration));
        });
      });
    });
    this.nextRequest();
  }

  readStrings(device, then) {
    const indices = [device[14], device[15], device[16]].filter((index) => index !== 0);
    if (!indices.length) return then();
    this.getDescriptor(DESCRIPTOR_STRING, 0, 0, 255, (languages) => {
      this.descriptors.strings[0] = languages;
      indices.forEach((index, position) => {
        this.getDescriptor(DESCRIPTOR_STRING, index, LANGUAGE_EN_US, 255, (text, stalled) => {
          if (!stalled) this.descriptors.strings[index] = text;
          if (position === indices.length - 1) then();
        });
      });
    });
  }

  configure(configuration) {
    const { pipes, controlInterface } = parseConfiguration(configuration);
    this.pipes = pipes; // before SET_CONFIGURATION: the device arms its OUT endpoints while handling it
    this.request(setupPacket(0x00, SET_CONFIGURATION, configuration[5], 0, 0), () => {
      const connected = () => this.onConfigured?.(this.report());
      if (controlInterface === null) return connected();
      this.request(setupPacket(0x21, CDC_SET_CONTROL_LINE_STATE, CDC_DTR_RTS, controlInterface, 0), connected);
    });
  }

  /** The raw descriptors as hex (strings keyed by index, 0 = the language list) and the pipes' endpoints. */
  report() {
    const strings = {};
    for (const [index, bytes] of Object.entries(this.descriptors.strings)) strings[index] = hex(bytes);
    return {
      device: hex(this.descriptors.device),
      configuration: hex(this.descriptors.configuration),
      strings,
      pipes: this.pipes,
    };
  }

  getDescriptor(type, index, language, length, done) {
    this.request(setupPacket(0x80, GET_DESCRIPTOR, (type << 8) | index, language, length), done);
  }

  request(setup, done = () => {}, outData = new Uint8Array(0)) {
    const length = setup[6] | (setup[7] << 8);
    const deviceToHost = !!(setup[0] & 0x80);
    this.queue.push({ setup, deviceToHost, length, data: [], out: outData, sent: 0, done });
  }

  nextRequest() {
    if (this.current || !this.queue.length) return;
    this.current = this.queue.shift();
    this.ep0OutArmed = false;
    this.usb.epStallArm = 0; // the chip clears it when a SETUP arrives
    this.usb.sendSetupPacket(this.current.setup);
  }

  controlIn(buffer) {
    const request = this.current;
    if (!request) return;
    if (!request.deviceToHost) {
      if (buffer.length === 0) this.finish(); // the status stage of a request without data, or after it
      return;
    }
    request.data.push(...buffer);
    if (request.data.length >= request.length || buffer.length < EP0_PACKET) {
      request.dataDone = true;
      this.statusOut();
    }
  }

  controlOutArmed() {
    const request = this.current;
    if (request && !request.deviceToHost && request.sent < request.out.length) {
      const packet = request.out.subarray(request.sent, request.sent + EP0_PACKET); // the OUT data stage
      request.sent += packet.length;
      this.usb.endpointReadDone(0, packet);
      return;
    }
    this.ep0OutArmed = true;
    this.statusOut();
  }

  /** The host's zero-length OUT status packet, once the data stage is in and the device listens. */
  statusOut() {
    const request = this.current;
    if (!request || !request.dataDone || !this.ep0OutArmed) return;
    this.ep0OutArmed = false;
    this.usb.endpointReadDone(0, new Uint8Array(0));
    this.finish();
  }

  /** The firmware armed a STALL on EP0: the host's next token there gets it, ending the request. */
  stalled() {
    if (this.current) this.finish(true);
  }

  finish(stalled = false) {
    const request = this.current;
    this.current = null;
    request.done(Uint8Array.from(request.data), stalled);
    if (this.queue.length) this.gap.schedule(REQUEST_GAP_NANOS);
  }
}
