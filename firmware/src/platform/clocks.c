/* Clocks: 12 MHz crystal -> PLL_SYS 1500 MHz / 6 / 2 = 125 MHz clk_sys and clk_peri, PLL_USB
 * 480 MHz / 5 / 2 = 48 MHz clk_usb, clk_ref from the crystal; the watchdog tick gives the timer 1 us. */
#include "platform.h"
#include "regs.h"

#define REG(base, offset) REG32((base) + (offset))

void peripherals_reset(uint32_t bits)
{
    REG(RESETS_BASE + ALIAS_SET, RESETS_RESET) = bits;
}

void peripherals_unreset(uint32_t bits)
{
    REG(RESETS_BASE + ALIAS_CLR, RESETS_RESET) = bits;
    while ((REG(RESETS_BASE, RESETS_RESET_DONE) & bits) != bits) {
    }
}

static void pll_start(uint32_t base, uint32_t feedback, uint32_t post1, uint32_t post2)
{
    REG(base, PLL_CS) = 1; /* reference divider 1: 12 MHz into the VCO comparator */
    REG(base, PLL_FBDIV_INT) = feedback;
    REG(base + ALIAS_CLR, PLL_PWR) = PLL_PWR_PD | PLL_PWR_VCOPD;
    while (!(REG(base, PLL_CS) & PLL_CS_LOCK)) {
    }
    REG(base, PLL_PRIM) = (post1 << PLL_PRIM_POSTDIV1_LSB) | (post2 << PLL_PRIM_POSTDIV2_LSB);
    REG(base + ALIAS_CLR, PLL_PWR) = PLL_PWR_POSTDIVPD;
}

void clocks_init(void)
{
    REG(CLOCKS_BASE, CLK_SYS_RESUS_CTRL) = 0;
    REG(XOSC_BASE, XOSC_CTRL) = XOSC_CTRL_FREQ_1_15MHZ;
    REG(XOSC_BASE, XOSC_STARTUP) = (PLATFORM_XOSC_HZ / 1000u + 128u) / 256u; /* about 1 ms */
    REG(XOSC_BASE + ALIAS_SET, XOSC_CTRL) = XOSC_CTRL_ENABLE;
    while (!(REG(XOSC_BASE, XOSC_STATUS) & XOSC_STATUS_STABLE)) {
    }

    /* Run clk_sys from clk_ref and clk_ref from the ring oscillator while the PLLs restart. */
    REG(CLOCKS_BASE + ALIAS_CLR, CLK_SYS_CTRL) = 1u;
    while (REG(CLOCKS_BASE, CLK_SYS_SELECTED) != (1u << CLK_SYS_SRC_REF)) {
    }
    REG(CLOCKS_BASE + ALIAS_CLR, CLK_REF_CTRL) = 3u;
    while (REG(CLOCKS_BASE, CLK_REF_SELECTED) != (1u << CLK_REF_SRC_ROSC)) {
    }

    peripherals_reset(RESET_BIT_PLL_SYS | RESET_BIT_PLL_USB);
    peripherals_unreset(RESET_BIT_PLL_SYS | RESET_BIT_PLL_USB);
    pll_start(PLL_SYS_BASE, 125, 6, 2);
    pll_start(PLL_USB_BASE, 40, 5, 2);

    REG(CLOCKS_BASE, CLK_REF_DIV) = CLK_DIV_INT_1;
    REG(CLOCKS_BASE, CLK_REF_CTRL) = CLK_REF_SRC_XOSC;
    while (REG(CLOCKS_BASE, CLK_REF_SELECTED) != (1u << CLK_REF_SRC_XOSC)) {
    }
    REG(CLOCKS_BASE, CLK_SYS_DIV) = CLK_DIV_INT_1;
    REG(CLOCKS_BASE, CLK_SYS_CTRL) = (CLK_SYS_AUX_PLL_SYS << CLK_CTRL_AUXSRC_LSB);
    REG(CLOCKS_BASE, CLK_SYS_CTRL) = (CLK_SYS_AUX_PLL_SYS << CLK_CTRL_AUXSRC_LSB) | CLK_SYS_SRC_AUX;
    while (REG(CLOCKS_BASE, CLK_SYS_SELECTED) != (1u << CLK_SYS_SRC_AUX)) {
    }
    REG(CLOCKS_BASE, CLK_USB_DIV) = CLK_DIV_INT_1;
    REG(CLOCKS_BASE, CLK_USB_CTRL) = CLK_CTRL_ENABLE | (CLK_USB_AUX_PLL_USB << CLK_CTRL_AUXSRC_LSB);
    REG(CLOCKS_BASE, CLK_PERI_CTRL) = CLK_CTRL_ENABLE | (CLK_PERI_AUX_CLK_SYS << CLK_CTRL_AUXSRC_LSB);

    REG(WATCHDOG_BASE, WATCHDOG_TICK) = WATCHDOG_TICK_ENABLE | (PLATFORM_XOSC_HZ / 1000000u);
    peripherals_unreset(RESET_BIT_TIMER);
}

uint32_t platform_micros(void)
{
    return REG(TIMER_BASE, TIMER_TIMERAWL);
}

uint32_t platform_millis(void)
{
    return platform_micros() / 1000u;
}
