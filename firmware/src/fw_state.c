/* Adapter configuration and counters (fw_state.h), and the INFO and STATS structs that
 * report them. The bottom layer: it calls only hal. */
#include "fw_state.h"
#include "hal.h"

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

FW_COLD uint64_t fw_mul64(uint32_t a, uint32_t b)
{
    uint64_t acc = 0, x = a;
    for (; b; b >>= 1, x <<= 1)
        if (b & 1u)
            acc += x;
    return acc;
}

uint32_t fw_stats_wr_count(void)
{
    uint32_t n = 0;
    for (uint32_t i = NF_STAT_OP_WR_FAST_REGISTER; i <= NF_STAT_OP_WR_BIND; i++)
        n += fw_stats.ops[i];
    return n - fw_stats.wr_short;
}

/* A fixed struct of n words, not data: word writes through the window. */
static void put_words(uint32_t at, const uint32_t *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        mem_wr(at + 4u * i, w[i]);
}

/* The link hardware's frame counters both reports carry. */
static void link_counts(uint32_t *rx_ok, uint32_t *rx_bad, uint32_t *rx_drop, uint32_t *tx)
{
    *rx_ok = link_rd(NF_LINK_CNT_RX_OK);
    *rx_bad = link_rd(NF_LINK_CNT_RX_BAD);
    *rx_drop = link_rd(NF_LINK_CNT_RX_DROP);
    *tx = link_rd(NF_LINK_CNT_TX);
}

/* Every field of INFO is set below, so the struct is not zeroed first (that was a call
 * of the C library's byte-wise memset, ~450 instructions a reply); a field added to the
 * layout changes the size and stops the build here. */
_Static_assert(NF_INFO_SIZE == 28u * 4u, "fw_state_put_info sets each of INFO's 28 words");

void fw_state_put_info(uint32_t at)
{
    struct nf_info info;
    info.fw_version = NF_ADAPTER_FW_VERSION;
    info.hw_version = sys_rd(NF_SYS_HW_VERSION);
    info.layout_version = NF_LAYOUT_VERSION;
    info.clk_hz = fw_cfg.clk_hz;
    info.uart_period = fw_cfg.uart_period;
    info.mem_bytes = fw_cfg.mem_bytes;
    info.user_base = fw_cfg.user_base;
    info.page_size = NF_ADAPTER_PAGE_SIZE;
    info.mpt_entries = fw_cfg.mpt_entries;
    info.mtt_entries = fw_cfg.mtt_entries;
    info.max_frmr_pages = fw_cfg.max_frmr_pages;
    info.max_qps = NF_ADAPTER_MAX_QPS;
    info.max_sge = NF_ADAPTER_MAX_SGE;
    info.rx_slots = fw_cfg.rx_slots;
    info.tx_slots = fw_cfg.tx_slots;
    info.max_payload = NF_LINK_MAX_PAYLOAD;
    link_counts(&info.rx_ok, &info.rx_bad, &info.rx_drop, &info.tx_frames);
    info.retransmits = fw_stats.retransmits;
    info.rx_dup = fw_stats.rx_dup;
    info.wr_count = fw_stats_wr_count();
    info.last_wr_op = fw_stats.last_wr_op;
    info.last_wr_cycles = fw_stats.last_wr_cycles;
    info.last_wr_fw_cycles = fw_stats.last_wr_fw_cycles;
    info.cycle_lo = sys_rd(NF_SYS_CYCLE_LO);
    info.cycle_hi = sys_rd(NF_SYS_CYCLE_HI); /* latched by the CYCLE_LO read just before */
    put_words(at, (const uint32_t *)&info, NF_INFO_SIZE / 4u);
}

_Static_assert(NF_STATS_SIZE % 8u == 0u, "a STATS reply keeps messages 8-byte aligned");

void fw_state_put_stats(uint32_t at)
{
    struct nf_stats st;
    st.profile = fw_cfg.profile;
    link_counts(&st.rx_ok, &st.rx_bad, &st.rx_drop, &st.tx_frames);
    st.rx_dup = fw_stats.rx_dup;
    st.tx_reject = link_rd(NF_LINK_CNT_TX_REJECT);
    st.retransmits = fw_stats.retransmits;
    st.tx_overflow = fw_stats.tx_overflow;
    st.ops_unknown = fw_stats.ops_unknown;
    st.refused_other = fw_stats.refused_other;
    for (uint32_t i = 0; i < NF_STATS_OPS_COUNT; i++)
        st.ops[i] = fw_stats.ops[i];
    for (uint32_t i = 0; i < NF_STATS_REFUSED_COUNT; i++)
        st.refused[i] = fw_stats.refused[i];
    for (uint32_t i = 0; i < NF_STATS_REFUSE_CODES_COUNT; i++)
        st.refuse_codes[i] = fw_stats.refuse_codes[i];
    st.cycle_lo = sys_rd(NF_SYS_CYCLE_LO);
    st.cycle_hi = sys_rd(NF_SYS_CYCLE_HI); /* latched by the CYCLE_LO read just before */
    st.tx_stalls = fw_stats.tx_stalls;
    st.wait_timeouts = fw_stats.wait_timeouts;
    put_words(at, (const uint32_t *)&st, NF_STATS_SIZE / 4u);
}
