/* The board: what the protocol core reaches through adapter_ops (the cartridge slot, the serve
 * engine, the bus sniffer), implemented with the bus engines of src/bus. */
#ifndef HILBRIDGE_BOARD_H
#define HILBRIDGE_BOARD_H
#include "adapter_core.h"

/* Fill the slot, emulation and capture operations (and capabilities) of `ops`. */
void board_ops(adapter_ops *ops);

/* Set the pins up; `core` receives the captured bus accesses. */
void board_start(adapter_core *core);

/* Called every main-loop turn: move captured accesses into the core, keep the engines fed. */
void board_poll(adapter_core *core);

#endif
