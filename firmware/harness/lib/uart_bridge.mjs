// The firmware's UART fallback link (UART0 on the pins UART_TX and UART_RX of firmware/board/pins.tsv)
// bridged to one TCP client at a time, in the USB bridge's place (`--link uart`).
//
// rp2040js's UART has no line timing: a byte the firmware writes to UARTDR reaches `onByte` at once,
// and `feedByte` pushes into the 32-entry receive FIFO (dropping what does not fit). The bridge keeps
// the host's bytes and tops the FIFO up from the simulation loop, so nothing is lost. It does not route
// the UART through the GPIOs; `pinFunctions` reports what the firmware selected on the two pins.
import net from 'node:net';
import { loadPins } from './pins.mjs';

const UART_FUNCTION = 2; // GPIO function select 2 = UART on GPIO 28/29 (RP2040 datasheet, 2.19.2)

export class UartBridge {
  constructor(mcu, events) {
    this.mcu = mcu;
    this.events = events;
    this.uart = mcu.uart[0];
    this.pins = loadPins();
    this.fromHost = [];
    this.client = null;
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.uart.onByte = (value) => {
      this.bytesOut++;
      if (this.client) this.client.write(Uint8Array.of(value));
    };
  }

  /** GPIO function select of the TX and RX pins, and whether both are the UART's. */
  pinFunctions() {
    const tx = this.mcu.gpio[this.pins.UART_TX].functionSelect;
    const rx = this.mcu.gpio[this.pins.UART_RX].functionSelect;
    return { tx, rx, uart: tx === UART_FUNCTION && rx === UART_FUNCTION };
  }

  /** Move queued host bytes into the receive FIFO while it has room (called from the simulation loop). */
  deliver() {
    const fifo = this.uart.rxFIFO;
    while (this.fromHost.length && fifo.itemCount < fifo.size) {
      const head = this.fromHost[0];
      const take = Math.min(head.length, fifo.size - fifo.itemCount);
      for (let i = 0; i < take; i++) this.uart.feedByte(head[i]);
      this.bytesIn += take;
      if (take === head.length) this.fromHost.shift();
      else this.fromHost[0] = head.subarray(take);
    }
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
        let first = true;
        socket.on('data', (data) => {
          if (first) this.events.emit({ event: 'uart-pins', ...this.pinFunctions() });
          first = false;
          this.fromHost.push(new Uint8Array(data));
        });
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
