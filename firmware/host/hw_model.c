/* SPDX-License-Identifier: Apache-2.0 */
/* The firmware's host HAL: SYS registers, a model of nf_link, a model of nf_net, and the
 * engine C model. */
#include "hw_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/fw_state.h"
#include "../src/hal.h"
#include "nf_frame.h"

#define BLOCK_BYTES 0x1000u
#define SYS_ID_VALUE NF_SYS_HW_ID_VALUE
#define CYCLE_HI_SHIFT 32u

static struct {
    struct nf_hw_cfg cfg;
    struct nfm_engine *eng;
    uint64_t cycle, accesses;
    int engine_hung; /* tests: the engine's status registers read BUSY (a hardware fault) */
    int tx_hung;     /* tests: LINK.TX_BUSY reads every slot busy (a hardware fault) */
    uint32_t cycle_hi_latch, leds, scratch, wake_at, wake_rx;
    /* link */
    struct nf_frame_decoder dec;
    uint32_t rx_ready, rx_wp, stamp[NF_LINK_MAX_SLOTS];
    struct nf_hw_link_counters cnt;
    uint8_t *out;
    size_t out_len, out_cap;
    /* network port (nf_net): its slots after the link's, before the user region, as in nf_soc */
    struct {
        uint32_t rx_slots, tx_slots, slot_base, seed, ctrl, mac_lo, mac_hi, rx_ready, rx_wp, tx_busy;
        uint32_t cnt_rx_ok, cnt_drop_addr, cnt_drop_long, cnt_drop_ip, cnt_drop_slot, cnt_tx, cnt_tx_reject;
        uint8_t tx[NF_HW_NET_TX_QUEUE][NF_NET_MAX_FRAME];
        size_t tx_len[NF_HW_NET_TX_QUEUE];
        unsigned tx_head, tx_count;
    } net;
} hw;

int nf_hw_profile(const char *name, uint32_t baud, struct nf_hw_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    if (!strcmp(name, "sim")) {
        *cfg = (struct nf_hw_cfg){NF_PROFILE_SIM_MEM_BYTES, NF_PROFILE_SIM_MPT_ENTRIES, NF_PROFILE_SIM_MTT_ENTRIES,
                                  NF_PROFILE_SIM_RX_SLOTS, NF_PROFILE_SIM_TX_SLOTS, 0, 0,
                                  NF_PROFILE_SIM_FW_RAM_BYTES};
    } else if (!strcmp(name, "ulx3s_85k")) {
        *cfg = (struct nf_hw_cfg){NF_PROFILE_ULX3S_85K_MEM_BYTES, NF_PROFILE_ULX3S_85K_MPT_ENTRIES,
                                  NF_PROFILE_ULX3S_85K_MTT_ENTRIES, NF_PROFILE_ULX3S_85K_RX_SLOTS,
                                  NF_PROFILE_ULX3S_85K_TX_SLOTS, 0, 0, NF_PROFILE_ULX3S_85K_FW_RAM_BYTES};
    } else if (!strcmp(name, "ulx3s_25k")) {
        *cfg = (struct nf_hw_cfg){NF_PROFILE_ULX3S_25K_MEM_BYTES, NF_PROFILE_ULX3S_25K_MPT_ENTRIES,
                                  NF_PROFILE_ULX3S_25K_MTT_ENTRIES, NF_PROFILE_ULX3S_25K_RX_SLOTS,
                                  NF_PROFILE_ULX3S_25K_TX_SLOTS, 0, 0, NF_PROFILE_ULX3S_25K_FW_RAM_BYTES};
    } else {
        return -1;
    }
    cfg->clk_hz = NF_SOC_CPU_CLK_SIM_HZ;
    if (baud == 0)
        return -1;
    cfg->uart_period = (uint32_t)(((uint64_t)cfg->clk_hz << NF_SOC_UART_PERIOD_FRAC) / baud);
    return 0;
}

int nf_hw_init(const struct nf_hw_cfg *cfg)
{
    nf_hw_free();
    if (cfg->rx_slots < 1 || cfg->rx_slots > NF_LINK_MAX_SLOTS || cfg->tx_slots < 1 ||
        cfg->tx_slots > NF_LINK_MAX_SLOTS)
        return -1;
    struct nfm_engine_cfg ec = {cfg->mem_bytes, cfg->mpt_entries, cfg->mtt_entries,
                                NF_PROFILE_USER_BASE(cfg->rx_slots, cfg->tx_slots, NF_HW_NET_RX_SLOTS, NF_HW_NET_TX_SLOTS)};
    hw.eng = nfm_engine_new(&ec);
    if (!hw.eng)
        return -1;
    hw.cfg = *cfg;
    nf_frame_decoder_init(&hw.dec);
    hw.net.rx_slots = NF_HW_NET_RX_SLOTS;
    hw.net.tx_slots = NF_HW_NET_TX_SLOTS;
    hw.net.slot_base = NF_PROFILE_NET_BASE(cfg->rx_slots, cfg->tx_slots);
    return 0;
}

void nf_hw_free(void)
{
    nfm_engine_free(hw.eng);
    free(hw.out);
    memset(&hw, 0, sizeof(hw));
}

struct nfm_engine *nf_hw_engine(void) { return hw.eng; }
const struct nf_hw_cfg *nf_hw_cfg(void) { return &hw.cfg; }
void nf_hw_advance(uint64_t cycles) { hw.cycle += cycles; }
void nf_hw_engine_hang(int hung) { hw.engine_hung = hung; }
void nf_hw_tx_hang(int hung) { hw.tx_hung = hung; }
uint64_t nf_hw_cycles(void) { return hw.cycle; }
uint64_t nf_hw_accesses(void) { return hw.accesses; }
struct nf_hw_link_counters nf_hw_link_counters(void) { return hw.cnt; }
size_t nf_hw_tx_pending(void) { return hw.out_len; }

static void out_append(const uint8_t *b, size_t n)
{
    if (hw.out_len + n > hw.out_cap) {
        size_t cap = hw.out_cap ? hw.out_cap : 4096;
        while (cap < hw.out_len + n)
            cap *= 2;
        uint8_t *p = realloc(hw.out, cap);
        if (!p) {
            fprintf(stderr, "hw_model: out of memory\n");
            abort();
        }
        hw.out = p;
        hw.out_cap = cap;
    }
    memcpy(hw.out + hw.out_len, b, n);
    hw.out_len += n;
}

size_t nf_hw_tx_take(uint8_t *buf, size_t cap)
{
    size_t n = hw.out_len < cap ? hw.out_len : cap;
    if (n == 0)
        return 0; /* nothing sent yet: hw.out may still be NULL */
    memcpy(buf, hw.out, n);
    memmove(hw.out, hw.out + n, hw.out_len - n);
    hw.out_len -= n;
    return n;
}

/* nf_link's transmitter: CRC and stuffing of a raw frame onto the wire. */
static void send_raw(const uint8_t *raw, size_t len)
{
    static uint8_t wire[NF_FRAME_MAX_WIRE];
    size_t n = nf_frame_encode(raw, len, wire, sizeof(wire));
    if (n == 0)
        return; /* a length the hardware would refuse to send */
    out_append(wire, n);
    hw.cnt.tx++;
}

void nf_hw_rx_bytes(const uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        enum nf_frame_result r = nf_frame_decode_byte(&hw.dec, buf[i]);
        if (r == NF_FRAME_BAD) {
            hw.cnt.rx_bad++;
        } else if (r == NF_FRAME_OK) {
            /* Slots fill in ring order; a good frame with no free slot is dropped. */
            uint32_t slot = hw.rx_wp;
            if (hw.rx_ready & (1u << slot)) {
                hw.cnt.rx_drop++;
                continue;
            }
            memcpy(nfm_mem(hw.eng) + slot * NF_LINK_SLOT_BYTES, hw.dec.buf, hw.dec.len);
            hw.rx_ready |= 1u << slot;
            hw.stamp[slot] = (uint32_t)hw.cycle;
            hw.rx_wp = (slot + 1u) % hw.cfg.rx_slots;
            hw.cnt.rx_ok++;
        }
    }
}

static void bad_access(const char *what, uint32_t addr)
{
    fprintf(stderr, "hw_model: firmware %s at unmapped or unaligned address 0x%08x\n", what, addr);
    abort();
}

static uint32_t sys_read(uint32_t off)
{
    switch (off) {
    case NF_SYS_ID: return SYS_ID_VALUE;
    case NF_SYS_HW_VERSION: return NF_ADAPTER_HW_VERSION;
    case NF_SYS_CLK_HZ: return hw.cfg.clk_hz;
    case NF_SYS_CYCLE_LO:
        hw.cycle_hi_latch = (uint32_t)(hw.cycle >> CYCLE_HI_SHIFT);
        return (uint32_t)hw.cycle;
    case NF_SYS_CYCLE_HI: return hw.cycle_hi_latch;
    case NF_SYS_LEDS: return hw.leds;
    case NF_SYS_FW_RAM_BYTES: return hw.cfg.fw_ram_bytes;
    case NF_SYS_UART_PERIOD: return hw.cfg.uart_period;
    case NF_SYS_SCRATCH: return hw.scratch;
    /* The model cannot wait: SLEEP answers at once (the host build's idle loop returns
     * after one look, fw_link_poll). */
    case NF_SYS_SLEEP: return hw.rx_ready;
    case NF_SYS_WAKE_AT: return hw.wake_at;
    case NF_SYS_WAKE_RX: return hw.wake_rx;
    default: return 0;
    }
}

static uint32_t link_read(uint32_t off)
{
    if (off >= NF_LINK_RX_STAMP0 && off < NF_LINK_RX_STAMP0 + 4u * hw.cfg.rx_slots)
        return hw.stamp[(off - NF_LINK_RX_STAMP0) / 4u];
    switch (off) {
    case NF_LINK_ID: return NF_LINK_HW_ID_VALUE;
    case NF_LINK_CFG: return NF_LINK_CFG_RX_SLOTS_PUT(hw.cfg.rx_slots) | NF_LINK_CFG_TX_SLOTS_PUT(hw.cfg.tx_slots);
    case NF_LINK_RX_READY: return hw.rx_ready;
    case NF_LINK_TX_BUSY: return hw.tx_hung ? (1u << hw.cfg.tx_slots) - 1u : 0u; /* the model sends at once */
    case NF_LINK_CNT_RX_OK: return hw.cnt.rx_ok;
    case NF_LINK_CNT_RX_BAD: return hw.cnt.rx_bad;
    case NF_LINK_CNT_RX_DROP: return hw.cnt.rx_drop;
    case NF_LINK_CNT_TX: return hw.cnt.tx;
    default: return 0;
    }
}

static void link_write(uint32_t off, uint32_t v)
{
    switch (off) {
    case NF_LINK_RX_RELEASE:
        hw.rx_ready &= ~v;
        break;
    case NF_LINK_TX_POST: {
        uint32_t slot = NF_TX_POST_SLOT_GET(v), len = NF_TX_POST_LEN_GET(v);
        if (slot >= hw.cfg.tx_slots || len < NF_LINK_HDR_SIZE || len > NF_LINK_HDR_SIZE + NF_LINK_MAX_PAYLOAD) {
            fprintf(stderr, "hw_model: bad TX_POST 0x%08x\n", v);
            abort();
        }
        send_raw(nfm_mem(hw.eng) + (hw.cfg.rx_slots + slot) * NF_LINK_SLOT_BYTES, len);
        break;
    }
    case NF_LINK_TX_ACK: {
        uint8_t raw[NF_LINK_HDR_SIZE] = {0};
        raw[NF_LINK_HDR_TYPE_OFF] = NF_LINK_TYPE_ACK;
        raw[NF_LINK_HDR_ACK_OFF] = (uint8_t)v;
        send_raw(raw, sizeof(raw));
        break;
    }
    default:
        break;
    }
}

/* ---- nf_net: the network port ---- */

void nf_hw_net_seed(uint32_t seed) { hw.net.seed = seed; }
void nf_hw_net_tx_busy(uint32_t mask) { hw.net.tx_busy = mask & ((1u << hw.net.tx_slots) - 1u); }
uint32_t nf_hw_net_slot_base(void) { return hw.net.slot_base; }
uint32_t nf_hw_net_rx_ready(void) { return hw.net.rx_ready; }

static uint32_t be16(const uint8_t *b) { return (uint32_t)b[0] << 8 | b[1]; }

/* Ones' complement sum of n bytes (n even), folded to 16 bits. */
static uint32_t ones_sum(const uint8_t *b, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += be16(b + i);
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    return sum;
}

static int is_ipv4(const uint8_t *f, size_t len)
{
    return len >= NF_HW_ETH_HDR + 20u && be16(f + 12) == 0x0800u;
}

/* nf_net_rx's checks in order (the ICRC is not modelled: a frame to UDP 4791 is taken as
 * good RoCE), then the next RX slot in ring order. */
int nf_hw_net_rx(const uint8_t *frame, size_t len)
{
    static const uint8_t bcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    if (!(hw.net.ctrl & NF_NET_CTRL_RX_EN_MASK))
        return NF_HW_NET_RX_IGNORED;
    uint8_t f[NF_NET_MAX_FRAME + 1u] = {0};
    if (len > NF_NET_MAX_FRAME) {
        hw.net.cnt_drop_long++;
        return NF_HW_NET_RX_DROPPED;
    }
    memcpy(f, frame, len);
    if (len < NF_HW_ETH_MIN)
        len = NF_HW_ETH_MIN; /* the sender's MAC padded it */
    uint8_t mac[6];
    for (unsigned i = 0; i < 4; i++)
        mac[i] = (uint8_t)(hw.net.mac_lo >> (8 * i));
    mac[4] = (uint8_t)hw.net.mac_hi;
    mac[5] = (uint8_t)(hw.net.mac_hi >> 8);
    int bc = !memcmp(f, bcast, 6), mine = !memcmp(f, mac, 6);
    uint32_t type = be16(f + 12);
    if (!mine && !(bc && type == 0x0806u) && !(hw.net.ctrl & NF_NET_CTRL_PROMISC_MASK)) {
        hw.net.cnt_drop_addr++;
        return NF_HW_NET_RX_DROPPED;
    }
    uint32_t kind = type == 0x0806u ? NF_NET_KIND_ARP : NF_NET_KIND_OTHER;
    if (type == 0x0800u) {
        if (!is_ipv4(f, len) || f[14] != 0x45u || ones_sum(f + 14, 20) != 0xFFFFu) {
            hw.net.cnt_drop_ip++;
            return NF_HW_NET_RX_DROPPED;
        }
        kind = f[23] == 17u && be16(f + 36) == NF_NET_ROCE_PORT ? NF_NET_KIND_ROCE : NF_NET_KIND_IPV4;
    }
    uint32_t slot = hw.net.rx_wp;
    if (hw.net.rx_ready & (1u << slot)) {
        hw.net.cnt_drop_slot++;
        return NF_HW_NET_RX_DROPPED;
    }
    uint8_t *s = nfm_mem(hw.eng) + hw.net.slot_base + slot * NF_NET_SLOT_BYTES;
    uint32_t flags = bc ? NF_NET_RX_FLAG_BCAST : !mine ? NF_NET_RX_FLAG_PROMISC : 0u;
    struct nf_net_rx_hdr h = {(uint16_t)len, (uint8_t)kind, (uint8_t)flags, (uint32_t)hw.cycle};
    memcpy(s + NF_NET_FRAME_OFF, f, len);
    memcpy(s, &h, sizeof(h));
    hw.net.rx_ready |= 1u << slot;
    hw.net.rx_wp = (slot + 1u) % hw.net.rx_slots;
    hw.net.cnt_rx_ok++;
    return NF_HW_NET_RX_PLACED;
}

/* nf_net_tx: the slot read whole, the IPv4 total length and header checksum put in place
 * (the ICRC is not modelled), padded to 60 as the MAC does. */
static void net_post(uint32_t v)
{
    uint32_t slot = NF_NET_TX_POST_SLOT_GET(v), len = NF_NET_TX_POST_LEN_GET(v);
    if (slot >= hw.net.tx_slots || (hw.net.tx_busy & (1u << slot)) || len < NF_NET_MIN_FRAME ||
        len > NF_NET_MAX_FRAME || hw.net.tx_count == NF_HW_NET_TX_QUEUE) {
        hw.net.cnt_tx_reject++;
        return;
    }
    unsigned q = (hw.net.tx_head + hw.net.tx_count++) % NF_HW_NET_TX_QUEUE;
    uint8_t *f = hw.net.tx[q];
    memset(f, 0, NF_NET_MAX_FRAME);
    memcpy(f, nfm_mem(hw.eng) + hw.net.slot_base + (hw.net.rx_slots + slot) * NF_NET_SLOT_BYTES + NF_NET_FRAME_OFF,
           len);
    if (len >= NF_HW_ETH_HDR + 20u && is_ipv4(f, len) && f[14] == 0x45u) {
        uint32_t total = len - NF_HW_ETH_HDR;
        f[16] = (uint8_t)(total >> 8);
        f[17] = (uint8_t)total;
        f[24] = f[25] = 0;
        uint32_t c = ~ones_sum(f + 14, 20) & 0xFFFFu;
        f[24] = (uint8_t)(c >> 8);
        f[25] = (uint8_t)c;
    }
    hw.net.tx_len[q] = len < NF_HW_ETH_MIN ? NF_HW_ETH_MIN : len;
    hw.net.cnt_tx++;
}

size_t nf_hw_net_tx_take(uint8_t *buf, size_t cap)
{
    if (hw.net.tx_count == 0)
        return 0;
    unsigned q = hw.net.tx_head;
    size_t n = hw.net.tx_len[q] < cap ? hw.net.tx_len[q] : cap;
    memcpy(buf, hw.net.tx[q], n);
    hw.net.tx_head = (q + 1u) % NF_HW_NET_TX_QUEUE;
    hw.net.tx_count--;
    return n;
}

static uint32_t net_read(uint32_t off)
{
    switch (off) {
    case NF_NET_ID: return NF_NET_HW_ID_VALUE;
    case NF_NET_CFG: return NF_NET_CFG_RX_SLOTS_PUT(hw.net.rx_slots) | NF_NET_CFG_TX_SLOTS_PUT(hw.net.tx_slots);
    case NF_NET_SLOT_BASE: return hw.net.slot_base;
    case NF_NET_CTRL: return hw.net.ctrl;
    case NF_NET_MAC_LO: return hw.net.mac_lo;
    case NF_NET_MAC_HI: return hw.net.mac_hi;
    case NF_NET_RX_READY: return hw.net.rx_ready;
    case NF_NET_TX_BUSY: return hw.net.tx_busy; /* the model sends at once */
    case NF_NET_MAC_SEED: return hw.net.seed;
    case NF_NET_CNT_RX_OK: return hw.net.cnt_rx_ok;
    case NF_NET_CNT_DROP_ADDR: return hw.net.cnt_drop_addr;
    case NF_NET_CNT_DROP_LONG: return hw.net.cnt_drop_long;
    case NF_NET_CNT_DROP_IP: return hw.net.cnt_drop_ip;
    case NF_NET_CNT_DROP_SLOT: return hw.net.cnt_drop_slot;
    case NF_NET_CNT_TX: return hw.net.cnt_tx;
    case NF_NET_CNT_TX_REJECT: return hw.net.cnt_tx_reject;
    default: return 0;
    }
}

static void net_write(uint32_t off, uint32_t v)
{
    switch (off) {
    case NF_NET_CTRL: hw.net.ctrl = v & (NF_NET_CTRL_RX_EN_MASK | NF_NET_CTRL_PROMISC_MASK); break;
    case NF_NET_MAC_LO: hw.net.mac_lo = v; break;
    case NF_NET_MAC_HI: hw.net.mac_hi = v & 0xFFFFu; break;
    case NF_NET_RX_RELEASE: hw.net.rx_ready &= ~v; break;
    case NF_NET_TX_POST: net_post(v); break;
    default: break;
    }
}

/* The CPU's trap on an illegal instruction, as the target's handler records it (the
 * faulting address is not modelled: 0). */
#define MCAUSE_ILLEGAL_INSTRUCTION 2u
void hal_illegal_instruction(void)
{
    fw_fault(MCAUSE_ILLEGAL_INSTRUCTION, 0);
}

uint32_t hal_read32(uint32_t addr)
{
    hw.accesses++;
    hw.cycle += NF_HW_CYCLES_PER_ACCESS;
    if (addr & 3u)
        bad_access("read", addr);
    if (addr >= NF_MAP_ADAPTER_MEM && addr - NF_MAP_ADAPTER_MEM < hw.cfg.mem_bytes)
        return nfm_sys_read(hw.eng, addr - NF_MAP_ADAPTER_MEM);
    if (addr >= NF_SYS_BASE && addr < NF_SYS_BASE + BLOCK_BYTES)
        return sys_read(addr - NF_SYS_BASE);
    if (addr >= NF_LINK_BASE && addr < NF_LINK_BASE + BLOCK_BYTES)
        return link_read(addr - NF_LINK_BASE);
    if (addr >= NF_NET_BASE && addr < NF_NET_BASE + BLOCK_BYTES)
        return net_read(addr - NF_NET_BASE);
    if (addr >= NF_ENGINE_BASE && addr < NF_ENGINE_BASE + BLOCK_BYTES) {
        uint32_t off = addr - NF_ENGINE_BASE, v = nfm_csr_read(hw.eng, off);
        if (hw.engine_hung && (off == NF_ENGINE_TBL_STATUS || off == NF_ENGINE_LD_STATUS || off == NF_ENGINE_DMA_STATUS))
            v |= NF_STATUS_WORD_BUSY_MASK;
        return v;
    }
    bad_access("read", addr);
    return 0;
}

void hal_write32(uint32_t addr, uint32_t value)
{
    hw.accesses++;
    hw.cycle += NF_HW_CYCLES_PER_ACCESS;
    if (addr & 3u)
        bad_access("write", addr);
    if (addr >= NF_MAP_ADAPTER_MEM && addr - NF_MAP_ADAPTER_MEM < hw.cfg.mem_bytes) {
        nfm_sys_write(hw.eng, addr - NF_MAP_ADAPTER_MEM, value, 0xFu);
        return;
    }
    if (addr >= NF_SYS_BASE && addr < NF_SYS_BASE + BLOCK_BYTES) {
        if (addr - NF_SYS_BASE == NF_SYS_LEDS)
            hw.leds = value & 0xFFu;
        else if (addr - NF_SYS_BASE == NF_SYS_SCRATCH)
            hw.scratch = value;
        else if (addr - NF_SYS_BASE == NF_SYS_WAKE_AT)
            hw.wake_at = value;
        else if (addr - NF_SYS_BASE == NF_SYS_WAKE_RX)
            hw.wake_rx = value & ((1u << hw.cfg.rx_slots) - 1u);
        return;
    }
    if (addr >= NF_LINK_BASE && addr < NF_LINK_BASE + BLOCK_BYTES) {
        link_write(addr - NF_LINK_BASE, value);
        return;
    }
    if (addr >= NF_NET_BASE && addr < NF_NET_BASE + BLOCK_BYTES) {
        net_write(addr - NF_NET_BASE, value);
        return;
    }
    if (addr >= NF_ENGINE_BASE && addr < NF_ENGINE_BASE + BLOCK_BYTES) {
        nfm_csr_write(hw.eng, addr - NF_ENGINE_BASE, value);
        return;
    }
    bad_access("write", addr);
}
