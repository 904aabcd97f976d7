/* Serve lookup tables: see bus_table.h. */
#include "bus_table.h"

#define P11 0x02u

unsigned bus_table_index_bits(const cart *cart)
{
    return cart->type->bank_select == HB_BANK_SELECT_LATCH_P10 ? 13u : 14u;
}

unsigned bus_table_count(const cart *cart)
{
    return cart->type->bank_select == HB_BANK_SELECT_LATCH_P10 ? cart->banks : 1u;
}

bool bus_table_movx_data(const cart *cart)
{
    return cart->type->data_area != HB_DATA_AREA_NONE;
}

void bus_table_build(uint8_t *tables, const cart *source)
{
    unsigned bits = bus_table_index_bits(source);
    uint32_t size = 1u << bits;
    cart banked = *source;
    for (unsigned table = 0; table < bus_table_count(source); table++) {
        banked.latch = (uint8_t)table;
        uint8_t *out = tables + table * size;
        for (uint32_t index = 0; index < size; index++) {
            uint16_t address = (uint16_t)(index & 0xFFFu);
            uint8_t p1 = (uint8_t)((index >> 12) & 3u);
            if (address >= HB_PROGRAM_START) {
                out[index] = cart_fetch(&banked, address, p1);
            } else {
                out[index] = cart_movx_read(&banked, address & 0xFFu, p1 | P11, (uint8_t)(address >> 8));
            }
        }
    }
}
