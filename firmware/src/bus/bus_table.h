/* The serve engines' lookup tables, built from the mapper logic of firmware/src/cart (fw-core):
 * byte = table[P11 P10 A11..A0] (16 KB), or for the latch mappers (o2_rally) one 8 KB table
 * table[P10 A11..A0] per latch bank. Below 0400h (never fetched from the slot: the BIOS is
 * internal) the entries hold the MOVX data ROM (o2_4in1: page A8-A11, read with P11 = 1), so one
 * table serves both engines. No hardware access: the tests build it on the host. */
#ifndef HILBRIDGE_BUS_TABLE_H
#define HILBRIDGE_BUS_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "cart.h"

#define BUS_TABLE_BYTES 65536u /* what the largest case needs: 8 latch banks x 8 KB */

/* 14 index bits (A0-A11, P10, P11) or 13 for a latch mapper (P11 left out). */
unsigned bus_table_index_bits(const cart *cart);
/* How many tables: the latch banks of a latch mapper, else 1. */
unsigned bus_table_count(const cart *cart);
/* Whether the mapper answers MOVX reads (the serve_movx engine is needed). */
bool bus_table_movx_data(const cart *cart);
/* Fill `tables` (bus_table_count tables of 1 << bus_table_index_bits bytes, back to back). */
void bus_table_build(uint8_t *tables, const cart *source);

#endif
