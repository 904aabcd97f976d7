// One of the firmware's USB pipes (the CDC-ACM data interface, or the vendor-specific interface that
// pyusb's UsbTransport opens), enumerated by ./usb_host.mjs and bridged to one TCP client at a time,
// and its control endpoint on a second port. For "cdc" pyserial opens the pipe as
// socket://127.0.0.1:PORT; for "vendor" hilbridge.firmware.harness_usb does, as the bulk endpoints
// behind a pyusb backend, and sends its control transfers to the control port.
//
// The bridge holds a bulk OUT poll until the host has bytes (rp2040js's own USBCDC answers it at once
// with zero bytes and drops bytes past its 512-byte FIFO), so nothing is lost and an idle firmware is
// not woken every 10 us of simulated time. Once the device is configured it prints {"event":
// "usb-connected", "descriptors": {...}} with the raw descriptors it read from the device.
//
// The control port speaks JSON lines: {"id": N, "setup": HEX, "data": HEX} (the SETUP packet and the
// OUT data stage) runs as one control transfer on the chip, after those before it, and is answered
// {"id": N, "status": "ack" | "stall", "data": HEX} (the IN data stage) once the firmware has.
import { UsbHost } from './usb_host.mjs';
import { OneClientServer, SocketBridge } from './tcp_link.mjs';

const fromHex = (text) => Uint8Array.from(Buffer.from(text, 'hex'));

export class UsbBridge extends SocketBridge {
  constructor(mcu, events, pipe = 'cdc', framePackets = 0) {
    super();
    this.events = events;
    this.pipe = pipe;
    this.controlLines = '';
    this.controlPort = new OneClientServer((bytes) => this.controlReceived(bytes));
    this.attach(mcu, framePackets);
  }

  /** Plug a chip's USB controller into a new host (at start, and when the harness resets the chip):
   * nothing of the last chip's link is left, not even host bytes it had not taken yet. */
  attach(mcu, framePackets) {
    this.host = new UsbHost(mcu, framePackets);
    this.pendingRead = 0;
    this.connected = false;
    this.fromHost.clear();
    this.host.onConfigured = (report) => {
      this.connected = true;
      // One line: a reader that selects on a buffered pipe would not see a second line read with the first.
      this.events.emit({ event: 'usb-connected', pipe: this.pipe, bridged: this.pipe in report.pipes, descriptors: report });
    };
    this.host.onPipeData = (name, data) => {
      if (name === this.pipe) this.toHost(data);
    };
    this.host.onPipeRead = (name, size) => {
      if (name !== this.pipe) return; // the other pipe's host has nothing to send
      this.pendingRead = size;
      this.deliver();
    };
  }

  /** Hand queued host bytes to a waiting bulk OUT poll (called from the simulation loop). */
  deliver() {
    if (!this.pendingRead || this.fromHost.empty) return;
    const chunk = this.takeFromHost(this.pendingRead);
    this.pendingRead = 0;
    this.host.send(this.pipe, chunk);
  }

  /** Whether a control transfer from the control port is still running or queued. */
  get controlWaiting() {
    return this.host.busy;
  }

  listenControl(port) {
    return this.controlPort.listen(port);
  }

  controlReceived(bytes) {
    this.controlLines += Buffer.from(bytes).toString();
    let end;
    while ((end = this.controlLines.indexOf('\n')) >= 0) {
      const line = this.controlLines.slice(0, end);
      this.controlLines = this.controlLines.slice(end + 1);
      const { id, setup, data } = JSON.parse(line);
      this.host.control(fromHex(setup), fromHex(data), (answer, stalled) => {
        const reply = { id, status: stalled ? 'stall' : 'ack', data: Buffer.from(answer).toString('hex') };
        this.controlPort.write(JSON.stringify(reply) + '\n');
      });
    }
    this.onInput();
  }
}
