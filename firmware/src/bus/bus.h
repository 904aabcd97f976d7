/* The bus engines on the RP2040: dump (console side isolated), serve and sniff, behind the
 * adapter_ops of firmware/src/core/adapter_core.h (docs/hardware.md describes the engines).
 * The platform's board code calls bus_board_ops once to fill the ops table, bus_board_start after
 * core_init, and bus_board_poll from its main loop (the engines need no interrupt: the serve path
 * is PIO + DMA only, the sniff events reach a RAM ring by DMA). */
#ifndef HILBRIDGE_BUS_H
#define HILBRIDGE_BUS_H

#include "adapter_core.h"

/* DMA channels the engines own. */
#define BUS_DMA_SERVE_ADDRESS 0u
#define BUS_DMA_SERVE_DATA 1u
#define BUS_DMA_AUX_ADDRESS 2u /* o2_4in1: MOVX data ROM lookup; o2_rally: latch to table base */
#define BUS_DMA_AUX_DATA 3u
#define BUS_DMA_SNIFF 4u

/* The sniff ring: 1024 events of two words, filled by DMA. */
#define BUS_SNIFF_RING_LOG2 13u
#define BUS_SNIFF_RING_WORDS ((1u << BUS_SNIFF_RING_LOG2) / 4u)

void bus_board_ops(adapter_ops *ops);
void bus_board_start(adapter_core *core);
void bus_board_poll(adapter_core *core);

#endif
