/* SPDX-License-Identifier: Apache-2.0 */
/* SoC smoke program: boots on PicoRV32 in nf_soc and checks the memory map. It
 * reports through SYS.LEDS: bits [7:3] = number of the check being run, bit 1 = that
 * check failed (then it stops), bit 0 = all checks passed. The testbench
 * (soc_tb.cpp) follows the LED values and prints one line per check. */
#include <stdint.h>

#include "nf_layout.h"

#define REG(base, off) (*(volatile uint32_t *)((uintptr_t)(base) + (off)))
#define SYS(off) REG(NF_MAP_SYS, off)
#define LINK(off) REG(NF_MAP_LINK, off)
#define ENGINE(off) REG(NF_MAP_ENGINE, off)
#define LED_STEP_SHIFT 3
#define LED_FAILED 2u
#define LED_DONE 1u

static void step(uint32_t n) { SYS(NF_SYS_LEDS) = n << LED_STEP_SHIFT; }

static void fail(uint32_t n)
{
    SYS(NF_SYS_LEDS) = n << LED_STEP_SHIFT | LED_FAILED;
    for (;;) {
    }
}

#define CHECK(n, cond) do { step(n); if (!(cond)) fail(n); } while (0)

/* Not inlined so the compiler cannot fold the arithmetic away. */
__attribute__((noinline)) static uint32_t muldiv(uint32_t a, uint32_t b, uint32_t c)
{
    return a * b / c + a % c;
}

int main(void)
{
    CHECK(1, SYS(NF_SYS_ID) == NF_SYS_HW_ID_VALUE);
    CHECK(2, SYS(NF_SYS_HW_VERSION) == NF_ADAPTER_HW_VERSION && SYS(NF_SYS_CLK_HZ) == SMOKE_CLK_HZ &&
                 SYS(NF_SYS_FW_RAM_BYTES) == SMOKE_FW_RAM_BYTES);
    SYS(NF_SYS_SCRATCH) = 0x12345678u;
    *(volatile uint8_t *)(NF_MAP_SYS + NF_SYS_SCRATCH + 2) = 0xAB;
    CHECK(3, SYS(NF_SYS_SCRATCH) == 0x12AB5678u);
    uint32_t c0 = SYS(NF_SYS_CYCLE_LO);
    uint32_t h0 = SYS(NF_SYS_CYCLE_HI);
    uint32_t c1 = SYS(NF_SYS_CYCLE_LO);
    CHECK(4, c1 > c0 && c1 - c0 < 1000 && h0 == 0);
    CHECK(5, LINK(NF_LINK_ID) == NF_LINK_HW_ID_VALUE && LINK(NF_LINK_CFG) == (SMOKE_RX_SLOTS | SMOKE_TX_SLOTS << 8));
    CHECK(6, ENGINE(NF_ENGINE_ID) == NF_ENGINE_HW_ID_VALUE && REG(NF_MAP_NET, NF_NET_ID) == NF_NET_HW_ID_VALUE);
    /* Adapter-memory window: words and a byte, in the user region. */
    volatile uint32_t *win = (volatile uint32_t *)(NF_MAP_ADAPTER_MEM + SMOKE_USER_BASE);
    win[0] = 0xCAFEF00Du;
    win[1] = 0x01020304u;
    *((volatile uint8_t *)win + 5) = 0xEE;
    CHECK(7, win[0] == 0xCAFEF00Du && win[1] == 0x0102EE04u);
    /* Unmapped addresses complete: reads give 0, writes vanish. */
    REG(NF_MAP_SYS, 0xFFC) = 1;
    CHECK(8, REG(0x30000000u, 0) == 0 && REG(NF_MAP_NET + 0x1000u, 0) == 0 && REG(NF_MAP_SYS, 0xFFC) == 0);
    CHECK(9, muldiv(123457u, 1000u, 7u) == 123457u * 1000u / 7u + 123457u % 7u);
    /* Posted stores: a burst of window stores (more than the write buffer holds), read
     * back at once, the last first; a byte store between them merges in order. */
    for (uint32_t i = 0; i < 8; i++)
        win[2 + i] = 0x5A000000u + i;
    *((volatile uint8_t *)win + 8 + 4 * 3 + 1) = 0x77;
    win[9] = 0xA5A5A5A5u;
    /* A load straight after a store to the same word (one instruction after the other:
     * the store is still in the buffer or on its way to adapter memory). */
    uint32_t back;
    __asm__ volatile("sw %2, 44(%1)\n\tlw %0, 44(%1)" : "=r"(back) : "r"(win), "r"(0x3C3C3C3Cu) : "memory");
    uint32_t ok = back == 0x3C3C3C3Cu && win[9] == 0xA5A5A5A5u && win[5] == 0x5A007703u;
    for (uint32_t i = 0; i < 7; i++)
        ok = ok && win[2 + i] == (i == 3 ? 0x5A007703u : 0x5A000000u + i);
    CHECK(10, ok);
    /* A posted engine register store followed at once by its read, by a window store
     * and a store to another register, each read back. */
    ENGINE(NF_ENGINE_CHK_TOKEN) = 0x1234ABCDu;
    uint32_t tok = ENGINE(NF_ENGINE_CHK_TOKEN);
    ENGINE(NF_ENGINE_CHK_VA_LO) = 0x0BADF00Du;
    win[10] = 0x600DCAFEu;
    ENGINE(NF_ENGINE_CHK_TOKEN) = 0x4321DCBAu;
    SYS(NF_SYS_SCRATCH) = win[10];
    CHECK(11, tok == 0x1234ABCDu && ENGINE(NF_ENGINE_CHK_VA_LO) == 0x0BADF00Du &&
                  ENGINE(NF_ENGINE_CHK_TOKEN) == 0x4321DCBAu && SYS(NF_SYS_SCRATCH) == 0x600DCAFEu);
    /* SLEEP: with no RX slot to wait for, a read answers once CYCLE_LO reaches WAKE_AT
     * (at most a few clocks late), and at once for a deadline already past; it returns
     * RX_READY (no frames here). The wake registers read back. */
    SYS(NF_SYS_WAKE_RX) = 0;
    uint32_t t0 = SYS(NF_SYS_CYCLE_LO);
    SYS(NF_SYS_WAKE_AT) = t0 + 2000u;
    uint32_t slept = SYS(NF_SYS_SLEEP);
    uint32_t t1 = SYS(NF_SYS_CYCLE_LO);
    SYS(NF_SYS_WAKE_AT) = t1 - 10u;
    uint32_t late = SYS(NF_SYS_SLEEP);
    uint32_t t2 = SYS(NF_SYS_CYCLE_LO);
    SYS(NF_SYS_WAKE_RX) = 0xFFFFFFFFu;
    uint32_t overslept = (t1 - t0) - 2000u; /* wraps to a large value when it woke early */
    CHECK(12, slept == 0 && late == 0 && overslept < 40u && t2 - t1 < 40u &&
                  SYS(NF_SYS_WAKE_AT) == t1 - 10u && SYS(NF_SYS_WAKE_RX) == (1u << SMOKE_RX_SLOTS) - 1u);
    /* An RX slot's head (read from the adapter memory's copy of the heads, in one clock
     * with VexRiscv): a store read back at once, a byte merged, the words beside it. */
    volatile uint32_t *head = (volatile uint32_t *)(NF_MAP_ADAPTER_MEM + (SMOKE_RX_SLOTS - 1u) * NF_LINK_SLOT_BYTES);
    head[0] = 0x11223344u;
    head[1] = 0x55667788u;
    __asm__ volatile("sw %2, 8(%1)\n\tlw %0, 8(%1)" : "=r"(back) : "r"(head), "r"(0x9ABCDEF0u) : "memory");
    *((volatile uint8_t *)head + 6) = 0x99;
    CHECK(13, back == 0x9ABCDEF0u && head[1] == 0x55997788u && head[0] == 0x11223344u && head[2] == 0x9ABCDEF0u);
    SYS(NF_SYS_LEDS) = 14u << LED_STEP_SHIFT | LED_DONE;
    for (;;) {
    }
}
