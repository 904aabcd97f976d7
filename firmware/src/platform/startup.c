/* Vector table and reset handler: copy .data from flash, zero .bss, run main. Every exception and
 * interrupt the firmware does not use (it polls its peripherals) parks the core in a loop that a
 * debugger can find by name. */
#include <stdint.h>

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
int main(void);
void reset_handler(void);

void unexpected_exception(void);
void unexpected_exception(void)
{
    for (;;) {
    }
}

#define SYSTEM_VECTORS 16
#define IRQ_VECTORS 32

__attribute__((section(".vectors"), used)) static void (*const vectors[SYSTEM_VECTORS + IRQ_VECTORS])(void) = {
    [0] = (void (*)(void))(&__stack_top),
    [1] = reset_handler,
    [2 ... SYSTEM_VECTORS + IRQ_VECTORS - 1] = unexpected_exception,
};

#define ZERO_TURN_WORDS 8

/* Eight words a turn: .bss is about 200 KB, and a word at a time was a fifth of the instructions the
 * emulated chip runs from power-on to a configured USB device. */
static void zero_words(uint32_t *to, const uint32_t *end)
{
    for (; end - to >= ZERO_TURN_WORDS; to += ZERO_TURN_WORDS) {
        to[0] = to[1] = to[2] = to[3] = to[4] = to[5] = to[6] = to[7] = 0;
    }
    while (to < end) {
        *to++ = 0;
    }
}

void reset_handler(void)
{
    const uint32_t *from = &__data_load;
    for (uint32_t *to = &__data_start; to < &__data_end;) {
        *to++ = *from++;
    }
    zero_words(&__bss_start, &__bss_end);
    main();
    for (;;) {
    }
}
