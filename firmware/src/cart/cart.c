#include "cart.h"

#include <stddef.h>

#define HIGH_WINDOW_START 0xC00u
#define P10 0x01u
#define P11 0x02u
#define P14 0x10u
#define LATCH_ADDRESS_BIT 0x80u

static bool same_text(const char *a, const char *b)
{
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

const hb_mapper_type *cart_type_by_name(const char *name)
{
    for (size_t i = 0; i < HB_MAPPER_TYPE_COUNT; i++)
        if (same_text(HB_MAPPER_TYPES[i].name, name)) return &HB_MAPPER_TYPES[i];
    return NULL;
}

const hb_mapper_type *cart_type_by_id(uint8_t protocol_id)
{
    for (size_t i = 0; protocol_id != 0 && i < HB_MAPPER_TYPE_COUNT; i++)
        if (HB_MAPPER_TYPES[i].protocol_id == protocol_id) return &HB_MAPPER_TYPES[i];
    return NULL;
}

bool cart_size_allowed(const hb_mapper_type *type, uint32_t size)
{
    for (size_t i = 0; i < type->size_count; i++)
        if (type->sizes[i] == size) return true;
    return false;
}

void cart_init(cart *cart, const hb_mapper_type *type, const uint8_t *image, uint32_t size)
{
    cart->type = type;
    cart->image = image;
    cart->size = size;
    cart->banks = size / type->bank_size ? size / type->bank_size : 1u;
    cart->latch = 0;
}

uint32_t cart_bank(const cart *cart, uint8_t p1)
{
    p1 &= HB_CART_P1_MASK;
    switch (cart->type->bank_select) {
    case HB_BANK_SELECT_P1_LOW_BITS:
        return p1 & (P10 | P11); /* the image wrap folds it onto the banks that exist */
    case HB_BANK_SELECT_LATCH_P10:
        return ((p1 & P10) ? 0xFFu : cart->latch) & (cart->banks - 1u);
    default:
        return 0;
    }
}

static uint32_t image_offset(const cart *cart, uint32_t address, uint32_t bank)
{
    address &= 0xFFFu;
    if (address >= HIGH_WINDOW_START && cart->type->high_window == HB_HIGH_WINDOW_MIRROR_800) address -= 0x400u;
    else if (address >= HIGH_WINDOW_START && cart->type->high_window == HB_HIGH_WINDOW_MIRROR_400)
        address -= 0x800u;
    /* Below 0x400 the offset goes negative, as in the Python model: wrap it the same way. */
    int32_t offset = (int32_t)(bank * cart->type->bank_size + cart->type->program_offset + address) -
                     (int32_t)HB_PROGRAM_START;
    if (cart->type->wrap == HB_WRAP_MASK) return (uint32_t)offset & (cart->size - 1u);
    int32_t rest = offset % (int32_t)cart->size;
    return (uint32_t)(rest < 0 ? rest + (int32_t)cart->size : rest);
}

uint8_t cart_fetch(const cart *cart, uint16_t address, uint8_t p1)
{
    return cart->image[image_offset(cart, address, cart_bank(cart, p1))];
}

uint8_t cart_movx_read(const cart *cart, uint16_t address, uint8_t p1, uint8_t p2)
{
    if (cart->type->data_area == HB_DATA_AREA_P11_P2_PAGE && (p1 & P11)) {
        uint32_t offset = ((uint32_t)(p2 & HB_CART_P2_MASK) << 8) | (address & 0xFFu);
        return cart->image[offset & (cart->size - 1u)];
    }
    return HB_NOT_DRIVEN;
}

void cart_movx_write(cart *cart, uint16_t address, uint8_t value, uint8_t p1)
{
    if (cart->type->bank_select == HB_BANK_SELECT_LATCH_P10 && (address & LATCH_ADDRESS_BIT) && !(p1 & P14))
        cart->latch = value;
}

void cart_program_view(const cart *cart, uint8_t p1, uint8_t out[CART_VIEW_SIZE])
{
    uint32_t bank = cart_bank(cart, p1);
    for (uint32_t a = 0; a < CART_VIEW_SIZE; a++) out[a] = cart->image[image_offset(cart, HB_PROGRAM_START + a, bank)];
}
