// One of the firmware's USB pipes (the CDC-ACM data interface, or the vendor-specific interface that
// pyusb's UsbTransport opens), enumerated by ./usb_host.mjs and bridged to one TCP client at a time.
// For "cdc" pyserial opens it as socket://127.0.0.1:PORT; for "vendor" hilbridge.firmware.harness_usb
// does, as the bulk endpoints behind a pyusb backend.
//
// The bridge holds a bulk OUT poll until the host has bytes (rp2040js's own USBCDC answers it at once
// with zero bytes and drops bytes past its 512-byte FIFO), so nothing is lost and an idle firmware is
// not woken every 10 us of simulated time. Once the device is configured it prints {"event":
// "usb-connected", "descriptors": {...}} with the raw descriptors it read from the device.
import net from 'node:net';
import { UsbHost } from './usb_host.mjs';

export class UsbBridge {
  constructor(mcu, events, pipe = 'cdc') {
    this.mcu = mcu;
    this.events = events;
    this.pipe = pipe;
    this.host = new UsbHost(mcu);
    this.fromHost = [];
    this.pendingRead = 0;
    this.client = null;
    this.connected = false;
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.host.onConfigured = (report) => {
      this.connected = true;
      // One line: a reader that selects on a buffered pipe would not see a second line read with the first.
      this.events.emit({ event: 'usb-connected', pipe: this.pipe, bridged: pipe in report.pipes, descriptors: report });
    };
    this.host.onPipeData = (name, data) => {
      if (name !== this.pipe) return;
      this.bytesOut += data.length;
      if (this.client) this.client.write(Buffer.from(data));
    };
    this.host.onPipeRead = (name, size) => {
      if (name !== this.pipe) return; // the other pipe's host has nothing to send
      this.pendingRead = size;
      this.deliver();
    };
  }

  /** Hand queued host bytes to a waiting bulk OUT poll (called from the simulation loop). */
  deliver() {
    if (!this.pendingRead || !this.fromHost.length) return;
    const chunk = [];
    while (chunk.length < this.pendingRead && this.fromHost.length) {
      const head = this.fromHost[0];
      const take = Math.min(head.length, this.pendingRead - chunk.length);
      for (let i = 0; i < take; i++) chunk.push(head[i]);
      if (take === head.length) this.fromHost.shift();
      else this.fromHost[0] = head.subarray(take);
    }
    this.pendingRead = 0;
    this.bytesIn += chunk.length;
    this.host.send(this.pipe, new Uint8Array(chunk));
  }

  get hostWaiting() {
    return this.fromHost.length > 0;
  }

  listen(port) {
    return new Promise((resolve) => {
      const server = net.createServer((socket) => {
        if (this.client) this.client.destroy();
        this.client = socket;
        socket.setNoDelay(true);
        socket.on('data', (data) => this.fromHost.push(new Uint8Array(data)));
        socket.on('close', () => {
          if (this.client === socket) this.client = null;
        });
        socket.on('error', () => {});
      });
      server.listen(port, '127.0.0.1', () => resolve(server.address().port));
      this.server = server;
    });
  }
}
