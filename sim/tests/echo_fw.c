/* SPDX-License-Identifier: Apache-2.0 */
/* Test firmware for nfsim's own tests (not the product firmware): echoes every
 * received frame back unchanged. It copies the frame word by word through the
 * adapter-memory window, which is fine for a test program; the product firmware
 * never touches bytes. Built with rtl/soc/tb/smoke_start.S and smoke.ld. */
#include <stdint.h>

#include "nf_layout.h"

#define LINK(off) (*(volatile uint32_t *)(uintptr_t)(NF_MAP_LINK + (off)))
#define RX_SLOTS NF_PROFILE_SIM_RX_SLOTS
#define TX_SLOTS NF_PROFILE_SIM_TX_SLOTS
#define SLOT_WORDS (NF_LINK_SLOT_BYTES / 4u)

int main(void)
{
    volatile uint32_t *mem = (volatile uint32_t *)(uintptr_t)NF_MAP_ADAPTER_MEM;
    uint32_t next_rx = 0, next_tx = 0;
    for (;;) {
        if (!(LINK(NF_LINK_RX_READY) & (1u << next_rx)))
            continue;
        const volatile uint32_t *src = mem + next_rx * SLOT_WORDS;
        /* LINK_HDR.len is the low half of the header's second word. */
        uint32_t len = NF_LINK_HDR_SIZE + (src[NF_LINK_HDR_LEN_OFF / 4] & 0xFFFFu);
        while (LINK(NF_LINK_TX_BUSY) & (1u << next_tx)) {
        }
        volatile uint32_t *dst = mem + (RX_SLOTS + next_tx) * SLOT_WORDS;
        for (uint32_t i = 0; i < (len + 3) / 4; i++)
            dst[i] = src[i];
        LINK(NF_LINK_TX_POST) = NF_TX_POST_SLOT_PUT(next_tx) | NF_TX_POST_LEN_PUT(len);
        LINK(NF_LINK_RX_RELEASE) = 1u << next_rx;
        next_rx = (next_rx + 1) % RX_SLOTS;
        next_tx = (next_tx + 1) % TX_SLOTS;
    }
}
