/* SPDX-License-Identifier: Apache-2.0 */
/* Adapter configuration and counters (fw_state.h), the INFO and STATS structs that
 * report them, and the state every layer shares: the transmit window's open frame
 * (fw_frame.h). The bottom layer: it calls only hal. */
#include "fw_state.h"
#include "fw_frame.h"
#include "hal.h"

#include <stddef.h>

struct fw_cfg fw_cfg;
struct fw_stats fw_stats;

/* The failure statuses STATS counts one by one, at their NF_STAT_STATUS_* index: the
 * one table from layout.toml's STAT_STATUS list. */
#define COUNTED_STATUS(name, index) [index] = NF_STATUS_##name,
static const uint32_t counted_status[NF_STAT_STATUS_COUNT] = {NF_STAT_STATUS_LIST(COUNTED_STATUS)};

void fw_stats_refused(uint32_t status)
{
    for (uint32_t i = 0; i < NF_STAT_STATUS_COUNT; i++) {
        if (counted_status[i] == status) {
            fw_stats.refused[i]++;
            return;
        }
    }
    fw_stats.refused_other++;
}

FW_COLD void fw_fault(uint32_t cause, uint32_t pc)
{
    fw_stats.faults++;
    fw_stats.fault_cause = cause;
    fw_stats.fault_pc = pc;
}

FW_COLD uint64_t fw_mul64(uint32_t a, uint32_t b)
{
    uint64_t acc = 0, x = a;
    for (; b; b >>= 1, x <<= 1)
        if (b & 1u)
            acc += x;
    return acc;
}

FW_HOT uint32_t fw_stats_wr_count(void)
{
    uint32_t n = 0;
    for (uint32_t i = NF_STAT_OP_WR_FAST_REGISTER; i <= NF_STAT_OP_WR_BIND; i++)
        n += fw_stats.ops[i];
    return n - fw_stats.wr_short;
}

/* INFO and STATS are written field by field straight into the reply (win_wr: one store
 * each), not built on the stack and copied: half the instructions and less code. */
#define PUT(w, type, field, v) win_wr(w, (uint32_t)offsetof(struct type, field), v)

/* The link hardware's frame counters both reports carry. */
#define PUT_LINK_COUNTS(w, type)                                     \
    do {                                                             \
        PUT(w, type, rx_ok, link_rd(NF_LINK_CNT_RX_OK));             \
        PUT(w, type, rx_bad, link_rd(NF_LINK_CNT_RX_BAD));           \
        PUT(w, type, rx_drop, link_rd(NF_LINK_CNT_RX_DROP));         \
        PUT(w, type, tx_frames, link_rd(NF_LINK_CNT_TX));            \
    } while (0)

/* Every field of INFO is written below; a field added to the layout changes the size
 * and stops the build here. */
_Static_assert(NF_INFO_SIZE == 28u * 4u, "fw_state_put_info sets each of INFO's 28 words");

FW_HOT void fw_state_put_info(uint32_t at)
{
    hal_win w = mem_win(at);
    PUT(w, nf_info, fw_version, NF_ADAPTER_FW_VERSION);
    PUT(w, nf_info, hw_version, sys_rd(NF_SYS_HW_VERSION));
    PUT(w, nf_info, layout_version, NF_LAYOUT_VERSION);
    PUT(w, nf_info, clk_hz, fw_cfg.clk_hz);
    PUT(w, nf_info, uart_period, fw_cfg.uart_period);
    PUT(w, nf_info, mem_bytes, fw_cfg.mem_bytes);
    PUT(w, nf_info, user_base, fw_cfg.user_base);
    PUT(w, nf_info, page_size, NF_ADAPTER_PAGE_SIZE);
    PUT(w, nf_info, mpt_entries, fw_cfg.mpt_entries);
    PUT(w, nf_info, mtt_entries, fw_cfg.mtt_entries);
    PUT(w, nf_info, max_frmr_pages, fw_cfg.max_frmr_pages);
    PUT(w, nf_info, max_qps, NF_ADAPTER_MAX_QPS);
    PUT(w, nf_info, max_sge, NF_ADAPTER_MAX_SGE);
    PUT(w, nf_info, rx_slots, fw_cfg.rx_slots);
    PUT(w, nf_info, tx_slots, fw_cfg.tx_slots);
    PUT(w, nf_info, max_payload, NF_LINK_MAX_PAYLOAD);
    PUT_LINK_COUNTS(w, nf_info);
    PUT(w, nf_info, retransmits, fw_stats.retransmits);
    PUT(w, nf_info, rx_dup, fw_stats.rx_dup);
    PUT(w, nf_info, wr_count, fw_stats_wr_count());
    PUT(w, nf_info, last_wr_op, fw_stats.last_wr_op);
    PUT(w, nf_info, last_wr_cycles, fw_stats.last_wr_cycles);
    PUT(w, nf_info, last_wr_fw_cycles, fw_stats.last_wr_fw_cycles);
    PUT(w, nf_info, cycle_lo, sys_rd(NF_SYS_CYCLE_LO));
    PUT(w, nf_info, cycle_hi, sys_rd(NF_SYS_CYCLE_HI)); /* latched by the CYCLE_LO read just before */
}

_Static_assert(NF_STATS_SIZE % 8u == 0u, "a STATS reply keeps messages 8-byte aligned");
_Static_assert(NF_STATS_SIZE == (35u + NF_STATS_OPS_COUNT + NF_STATS_REFUSED_COUNT + NF_STATS_REFUSE_CODES_COUNT) * 4u,
               "fw_state_put_stats sets each of STATS's words");

#define STATS_COUNTS (NF_STATS_OPS_COUNT + NF_STATS_REFUSED_COUNT + NF_STATS_REFUSE_CODES_COUNT)
_Static_assert(offsetof(struct fw_stats, refused) == offsetof(struct fw_stats, ops) + 4u * NF_STATS_OPS_COUNT &&
                   offsetof(struct fw_stats, refuse_codes) == offsetof(struct fw_stats, refused) + 4u * NF_STATS_REFUSED_COUNT &&
                   offsetof(struct nf_stats, refused) == offsetof(struct nf_stats, ops) + 4u * NF_STATS_OPS_COUNT &&
                   offsetof(struct nf_stats, refuse_codes) == offsetof(struct nf_stats, refused) + 4u * NF_STATS_REFUSED_COUNT,
               "the STATS counter arrays lie back to back, in the same order, in both structs");

#define TAIL_COUNTS 14u
_Static_assert(offsetof(struct fw_stats, cm_resends) == offsetof(struct fw_stats, tx_stalls) + 4u * (TAIL_COUNTS - 1u) &&
                   offsetof(struct nf_stats, cm_resends) == offsetof(struct nf_stats, tx_stalls) + 4u * (TAIL_COUNTS - 1u),
               "tx_stalls .. cm_resends lie back to back, in the same order, in both structs");

void fw_state_put_stats(uint32_t at)
{
    hal_win w = mem_win(at);
    PUT(w, nf_stats, profile, fw_cfg.profile);
    PUT_LINK_COUNTS(w, nf_stats);
    PUT(w, nf_stats, rx_dup, fw_stats.rx_dup);
    PUT(w, nf_stats, tx_reject, link_rd(NF_LINK_CNT_TX_REJECT));
    PUT(w, nf_stats, retransmits, fw_stats.retransmits);
    PUT(w, nf_stats, tx_overflow, fw_stats.tx_overflow);
    PUT(w, nf_stats, ops_unknown, fw_stats.ops_unknown);
    PUT(w, nf_stats, refused_other, fw_stats.refused_other);
    /* ops, refused and refuse_codes, back to back in both structs: one copy */
    const uint32_t *counts = (const uint32_t *)((const char *)&fw_stats + offsetof(struct fw_stats, ops));
    for (uint32_t i = 0; i < STATS_COUNTS; i++)
        win_wr(w, (uint32_t)offsetof(struct nf_stats, ops) + 4u * i, counts[i]);
    PUT(w, nf_stats, cycle_lo, sys_rd(NF_SYS_CYCLE_LO));
    PUT(w, nf_stats, cycle_hi, sys_rd(NF_SYS_CYCLE_HI)); /* latched by the CYCLE_LO read just before */
    /* tx_stalls .. cm_resends, in the same order in both structs: one copy */
    const uint32_t *tail = (const uint32_t *)((const char *)&fw_stats + offsetof(struct fw_stats, tx_stalls));
    for (uint32_t i = 0; i < TAIL_COUNTS; i++)
        win_wr(w, (uint32_t)offsetof(struct nf_stats, tx_stalls) + 4u * i, tail[i]);
    /* The port's own counters, where the build has one (its ID reads back) */
    if (hal_read32(NF_NET_BASE + NF_NET_ID) == NF_NET_HW_ID_VALUE) {
        PUT(w, nf_stats, port_rx_ok, hal_read32(NF_NET_BASE + NF_NET_CNT_RX_OK));
        PUT(w, nf_stats, port_drop_fcs, hal_read32(NF_NET_BASE + NF_NET_CNT_DROP_FCS));
        PUT(w, nf_stats, port_drop_addr, hal_read32(NF_NET_BASE + NF_NET_CNT_DROP_ADDR));
        PUT(w, nf_stats, port_drop_ip, hal_read32(NF_NET_BASE + NF_NET_CNT_DROP_IP));
        PUT(w, nf_stats, port_drop_icrc, hal_read32(NF_NET_BASE + NF_NET_CNT_DROP_ICRC));
        PUT(w, nf_stats, port_drop_room,
            hal_read32(NF_NET_BASE + NF_NET_CNT_DROP_SLOT) + hal_read32(NF_NET_BASE + NF_NET_CNT_DROP_FIFO));
        PUT(w, nf_stats, port_drop_long, hal_read32(NF_NET_BASE + NF_NET_CNT_DROP_LONG));
        PUT(w, nf_stats, port_tx, hal_read32(NF_NET_BASE + NF_NET_CNT_TX));
    }
}
