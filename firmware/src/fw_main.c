/* SPDX-License-Identifier: Apache-2.0 */
/* Boot-time configuration and the main loop step, shared by the target and host builds.
 * The top layer: fw_main -> fw_link (-> fw_link_rx -> fw_link_tx) -> fw_msg -> fw_cm -> fw_wr
 * (-> fw_send) -> fw_rc (-> fw_rc_tx) -> fw_net -> fw_wr_common -> fw_tables -> fw_state
 * -> hal; each calls only the ones to its right. */
#include "fw_link.h"
#include "fw_main.h"
#include "fw_net.h"
#include "fw_cm.h"
#include "fw_rc.h"
#include "fw_state.h"
#include "fw_tables.h"
#include "hal.h"

/* Largest page count a WR_FAST_REGISTER page list can have in one frame. */
#define FRAME_PAGE_LIMIT NF_FRAME_PAGES_FAST_REGISTER
/* NDK requires FRMRPageCount >= 16. */
#define NDK_MIN_FRMR_PAGES 16u
#define MTT_SHARE_PER_FRMR 16u

struct profile_sizes {
    uint32_t mem, mpt, mtt, max_frmr;
};

/* layout.toml's profiles in file order: the index is the profile number STATS reports. */
#define PROFILE_SIZES(name, index)                                                                  \
    [index] = {NF_PROFILE_##name##_MEM_BYTES, NF_PROFILE_##name##_MPT_ENTRIES,                     \
               NF_PROFILE_##name##_MTT_ENTRIES, NF_PROFILE_##name##_MAX_FRMR_PAGES},
static const struct profile_sizes profiles[NF_PROFILE_COUNT] = {NF_PROFILE_LIST(PROFILE_SIZES)};

/* The profile whose sizes the hardware has (the last one that matches), or NF_PROFILE_NONE. */
static uint32_t find_profile(void)
{
    uint32_t found = NF_PROFILE_NONE;
    for (uint32_t p = 0; p < NF_PROFILE_COUNT; p++)
        if (profiles[p].mem == fw_cfg.mem_bytes && profiles[p].mpt == fw_cfg.mpt_entries &&
            profiles[p].mtt == fw_cfg.mtt_entries)
            found = p;
    return found;
}

/* The hardware has no register for the fast-register page limit: take it from the
 * profile whose sizes match, else a sixteenth of the MTT (at least NDK's 16). */
static uint32_t max_frmr_pages(void)
{
    uint32_t n = fw_cfg.profile != NF_PROFILE_NONE ? profiles[fw_cfg.profile].max_frmr : 0;
    if (n == 0) {
        n = fw_cfg.mtt_entries / MTT_SHARE_PER_FRMR;
        if (n < NDK_MIN_FRMR_PAGES)
            n = NDK_MIN_FRMR_PAGES;
    }
    if (n > fw_cfg.mtt_entries)
        n = fw_cfg.mtt_entries;
    if (n > FRAME_PAGE_LIMIT)
        n = FRAME_PAGE_LIMIT;
    return n;
}

/* Bound of every engine wait, in cycles: the longest operation the engine can be
 * given is a DMA over the largest range a check can grant, at most
 * max(MEM_BYTES, MTT entries x PAGE_SIZE) bytes (a LOGICAL side lies in adapter
 * memory, a TOKEN side in an MR of at most that many pages; a load is one MTT entry per
 * clock, a table operation a few clocks). The engine moves 8 bytes per clock; the
 * bound allows 1 byte per clock (8x), plus ENG_WAIT_SLACK for checks per chunk. */
#define ENG_WAIT_SLACK 0x10000u
#define ENG_WAIT_CAP 0x7FFFFFFFu /* cycle differences are compared mod 2^32 */
static uint32_t eng_wait_max(void)
{
    uint64_t bytes = (uint64_t)fw_cfg.mtt_entries << NF_ADAPTER_PAGE_SHIFT;
    if (bytes < fw_cfg.mem_bytes)
        bytes = fw_cfg.mem_bytes;
    bytes += ENG_WAIT_SLACK;
    return bytes > ENG_WAIT_CAP ? ENG_WAIT_CAP : (uint32_t)bytes;
}

static uint32_t clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void fw_init(void)
{
    fw_cfg.clk_hz = sys_rd(NF_SYS_CLK_HZ);
    fw_cfg.uart_period = sys_rd(NF_SYS_UART_PERIOD);
    uint32_t link_cfg = link_rd(NF_LINK_CFG);
    fw_cfg.rx_slots = clamp(NF_LINK_CFG_RX_SLOTS_GET(link_cfg), 1, NF_LINK_MAX_SLOTS);
    fw_cfg.tx_slots = clamp(NF_LINK_CFG_TX_SLOTS_GET(link_cfg), 1, NF_LINK_MAX_SLOTS);
    fw_cfg.mem_bytes = eng_rd(NF_ENGINE_CFG_MEM);
    fw_cfg.user_base = eng_rd(NF_ENGINE_CFG_USER);
    fw_cfg.mpt_entries = clamp(eng_rd(NF_ENGINE_CFG_MPT), 0, fw_tables_place());
    fw_cfg.mtt_entries = clamp(eng_rd(NF_ENGINE_CFG_MTT), 0, NF_MPT_W5_MTT_BASE_MASK + 1u);
    fw_cfg.profile = find_profile();
    fw_cfg.eng_wait_max = eng_wait_max();
    fw_cfg.max_frmr_pages = max_frmr_pages();
    fw_cfg.recv_entries = fw_recv_place();
    fw_stats = (struct fw_stats){0};
    fw_rng_seed(hal_cycles());
    fw_tables_init();
    fw_link_init();
    fw_net_init();
#if FW_NET
    fw_cm_init(fw_link_events()); /* and the transport under it */
#endif
    fw_link_idle_max(fw_net_tick()); /* the port's timer pass runs at least that often */
}

#if FW_NET
int fw_port_turn(void)
{
    static uint32_t idle_max;
    int did = fw_cm_poll();
    uint32_t m = fw_rc_idle_max();
    if (m != idle_max) /* told again only when it changes: the idle turn stays short */
        fw_link_idle_max(idle_max = m);
    return did;
}
#endif
