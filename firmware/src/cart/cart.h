/* Cartridge mappers in C, driven by the generated mapper table (the mapper registry hilbridge/machine/mappers.tsv):
 * the byte a cartridge drives for a /PSEN fetch or a MOVX read, and its bank latch. The same rules as
 * hilbridge/machine/cartridge.py, which the tests compare it with. No hardware access. */
#ifndef HILBRIDGE_CART_H
#define HILBRIDGE_CART_H

#include <stdbool.h>
#include <stdint.h>

#include "protocol_gen.h"

#define CART_VIEW_SIZE (HB_PROGRAM_END - HB_PROGRAM_START)

typedef struct cart {
    const hb_mapper_type *type;
    const uint8_t *image;
    uint32_t image_size;
    uint32_t size; /* of the bank space: the image, or the layout it is laid out in */
    uint32_t banks;
    uint8_t latch; /* o2_rally bank latch, 0 after reset */
} cart;

/* The mapper type of a name or protocol id (both columns of mappers.tsv); NULL if none. */
const hb_mapper_type *cart_type_by_name(const char *name);
const hb_mapper_type *cart_type_by_id(uint8_t protocol_id);
bool cart_size_allowed(const hb_mapper_type *type, uint32_t size);

/* `image` (of an allowed size) must stay valid while the cart is used. */
void cart_init(cart *cart, const hb_mapper_type *type, const uint8_t *image, uint32_t size);

/* The program bank P1 (and the latch) select. */
uint32_t cart_bank(const cart *cart, uint8_t p1);

/* /PSEN fetch of CPU `address` (0x400-0xFFF) with P1. */
uint8_t cart_fetch(const cart *cart, uint16_t address, uint8_t p1);

/* MOVX read (pin E): the data ROM where the mapper has one, else HB_NOT_DRIVEN. */
uint8_t cart_movx_read(const cart *cart, uint16_t address, uint8_t p1, uint8_t p2);

/* MOVX write (/WR): sets the bank latch where the mapper has one. */
void cart_movx_write(cart *cart, uint16_t address, uint8_t value, uint8_t p1);

/* CPU 0x400-0xFFF for the bank P1 (and the latch) select, e.g. for a serve engine's lookup table. */
void cart_program_view(const cart *cart, uint8_t p1, uint8_t out[CART_VIEW_SIZE]);

#endif
