// The firmware's UART fallback link (UART0 on the pins UART_TX and UART_RX of firmware/board/pins.tsv)
// bridged to one TCP client at a time, in the USB bridge's place (`--link uart`).
//
// rp2040js's UART has no line timing: a byte the firmware writes to UARTDR reaches `onByte` at once,
// and `feedByte` pushes into the 32-entry receive FIFO (dropping what does not fit). The bridge keeps
// the host's bytes and tops the FIFO up from the simulation loop, so nothing is lost. It does not route
// the UART through the GPIOs; `pinFunctions` reports what the firmware selected on the two pins.
import { loadPins } from './pins.mjs';
import { SocketBridge } from './tcp_link.mjs';

const UART_FUNCTION = 2; // GPIO function select 2 = UART on GPIO 28/29 (RP2040 datasheet, 2.19.2)

export class UartBridge extends SocketBridge {
  constructor(mcu, events) {
    super();
    this.mcu = mcu;
    this.events = events;
    this.uart = mcu.uart[0];
    this.pins = loadPins();
    this.uart.onByte = (value) => this.toHost(Uint8Array.of(value));
  }

  /** GPIO function select of the TX and RX pins, and whether both are the UART's. */
  pinFunctions() {
    const tx = this.mcu.gpio[this.pins.UART_TX].functionSelect;
    const rx = this.mcu.gpio[this.pins.UART_RX].functionSelect;
    return { tx, rx, uart: tx === UART_FUNCTION && rx === UART_FUNCTION };
  }

  received(bytes, first) {
    if (first) this.events.emit({ event: 'uart-pins', ...this.pinFunctions() });
    super.received(bytes);
  }

  /** Move queued host bytes into the receive FIFO while it has room (called from the simulation loop). */
  deliver() {
    const fifo = this.uart.rxFIFO;
    for (const value of this.takeFromHost(fifo.size - fifo.itemCount)) this.uart.feedByte(value);
  }
}
