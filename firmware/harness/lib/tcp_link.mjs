// What the harness's TCP ports share: one client at a time on 127.0.0.1 (a new one replaces the old),
// the bytes it sent queued until the simulation takes them, and counts of the bytes moved each way
// (the main loop runs flat out while the host waits for something). The UART and USB bridges are
// SocketBridges; the USB control port uses the OneClientServer alone.
import net from 'node:net';

export class OneClientServer {
  /** onData(bytes, first): bytes from the client, first = the first bytes since it connected. */
  constructor(onData) {
    this.onData = onData;
    this.client = null;
    this.server = null;
  }

  /** Listen on 127.0.0.1:port (0: any free port); resolves the port. */
  listen(port) {
    return new Promise((resolve) => {
      this.server = net.createServer((socket) => {
        if (this.client) this.client.destroy();
        this.client = socket;
        socket.setNoDelay(true);
        let first = true;
        socket.on('data', (data) => {
          this.onData(new Uint8Array(data), first);
          first = false;
        });
        socket.on('close', () => {
          if (this.client === socket) this.client = null;
        });
        socket.on('error', () => {});
      });
      this.server.listen(port, '127.0.0.1', () => resolve(this.server.address().port));
    });
  }

  /** Send to the client, if one is connected (bytes for no one are dropped, as on an unopened port). */
  write(bytes) {
    if (this.client) this.client.write(bytes);
  }
}

/** Chunks of bytes in arrival order, taken out in pieces of any size. */
export class ByteQueue {
  constructor() {
    this.chunks = [];
  }

  push(bytes) {
    if (bytes.length) this.chunks.push(bytes);
  }

  get empty() {
    return this.chunks.length === 0;
  }

  clear() {
    this.chunks = [];
  }

  /** Up to `max` bytes from the front. */
  take(max) {
    const out = [];
    while (out.length < max && this.chunks.length) {
      const head = this.chunks[0];
      const count = Math.min(head.length, max - out.length);
      for (let i = 0; i < count; i++) out.push(head[i]);
      if (count === head.length) this.chunks.shift();
      else this.chunks[0] = head.subarray(count);
    }
    return Uint8Array.from(out);
  }
}

/** A device's byte stream on a TCP port: the host's bytes queued for `takeFromHost`, the device's
 * collected by `toHost` and sent together by `flushToHost` (the simulation loop calls it every few
 * hundred instructions: a UART hands over one byte at a time, and a socket write per byte cost more
 * than the firmware's work for it). `onInput` is called when the client sends. */
export class SocketBridge {
  constructor() {
    this.fromHost = new ByteQueue();
    this.toHostChunks = [];
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.onInput = () => {};
    this.port = new OneClientServer((bytes, first) => {
      this.received(bytes, first);
      this.onInput();
    });
  }

  /** The client's bytes (a subclass may look at them first). */
  received(bytes) {
    this.fromHost.push(bytes);
  }

  get hostWaiting() {
    return !this.fromHost.empty;
  }

  takeFromHost(max) {
    const bytes = this.fromHost.take(max);
    this.bytesIn += bytes.length;
    return bytes;
  }

  toHost(bytes) {
    this.bytesOut += bytes.length;
    this.toHostChunks.push(bytes);
  }

  /** Send what the device has written since the last call, in one write. */
  flushToHost() {
    const chunks = this.toHostChunks;
    if (!chunks.length) return;
    this.toHostChunks = [];
    this.port.write(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  }

  listen(port) {
    return this.port.listen(port);
  }
}
