// The firmware's USB CDC-ACM function, enumerated by rp2040js's USBCDC host and bridged to one TCP
// client at a time (pyserial opens it as socket://127.0.0.1:PORT).
//
// USBCDC answers every bulk OUT poll at once, with zero bytes when it has none, and drops bytes past
// its 512-byte FIFO. The bridge holds the poll instead until the host has bytes, so nothing is lost
// and an idle firmware is not woken every 10 us of simulated time.
import net from 'node:net';
import { USBCDC } from 'rp2040js';

export class UsbBridge {
  constructor(mcu, events) {
    this.mcu = mcu;
    this.events = events;
    this.cdc = new USBCDC(mcu.usbCtrl);
    this.fromHost = [];
    this.pendingRead = 0;
    this.client = null;
    this.connected = false;
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.cdc.onDeviceConnected = () => {
      this.connected = true;
      this.events.emit({ event: 'usb-connected' });
    };
    this.cdc.onSerialData = (data) => {
      this.bytesOut += data.length;
      if (this.client) this.client.write(Buffer.from(data));
    };
    const usb = mcu.usbCtrl;
    const hostRead = usb.onEndpointRead;
    usb.onEndpointRead = (endpoint, size) => {
      if (endpoint !== this.cdc.outEndpoint) return hostRead(endpoint, size);
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
    this.mcu.usbCtrl.endpointReadDone(this.cdc.outEndpoint, new Uint8Array(chunk));
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
