/* The board without bus engines yet: an adapter that speaks the protocol, reports an empty slot and
 * announces no cartridge, emulation or capture capability (the core answers NOT_SUPPORTED). */
#include "board.h"

static bool no_cartridge(void *context)
{
    (void)context;
    return false;
}

void board_ops(adapter_ops *ops)
{
    ops->context = 0;
    ops->capabilities = 0;
    ops->cart_present = no_cartridge;
}

void board_start(adapter_core *core)
{
    (void)core;
}

void board_poll(adapter_core *core)
{
    (void)core;
}
