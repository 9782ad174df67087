/* SPDX-License-Identifier: Apache-2.0 */
/* The firmware's host HAL: SYS registers, a model of nf_link, the model of nf_net
 * (hw_net_model.c) wired to adapter memory, and the engine C model. */
#include "hw_model.h"
#include "hw_net_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/fw_state.h"
#include "../src/hal.h"
#include "nf_frame.h"
#include "nf_mii_phy.h"

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
    /* network port (nf_net, hw_net_model.c): its slots after the link's, before the user
     * region, as in nf_soc; absent when the profile has no NET slots */
    struct nf_net_port net;
    uint32_t wake_net;
    uint8_t *net_out; /* frames it sent: length word, wire bytes */
    size_t net_out_len, net_out_cap;
    struct nf_mii_phy phy; /* the PHY on the port's MDIO bus; its loopback turns frames around */
} hw;

static void net_sent(void *ctx, const uint8_t *wire, size_t len);
static uint32_t net_mdio(void *ctx, uint32_t cmd);

int nf_hw_profile(const char *name, uint32_t baud, struct nf_hw_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    if (!strcmp(name, "sim")) {
        *cfg = (struct nf_hw_cfg){NF_PROFILE_SIM_MEM_BYTES, NF_PROFILE_SIM_MPT_ENTRIES, NF_PROFILE_SIM_MTT_ENTRIES,
                                  NF_PROFILE_SIM_RX_SLOTS, NF_PROFILE_SIM_TX_SLOTS, 0, 0,
                                  NF_PROFILE_SIM_FW_RAM_BYTES,
                                  NF_PROFILE_SIM_NET_RX_SLOTS, NF_PROFILE_SIM_NET_TX_SLOTS};
    } else if (!strcmp(name, "ulx3s_85k")) {
        *cfg = (struct nf_hw_cfg){NF_PROFILE_ULX3S_85K_MEM_BYTES, NF_PROFILE_ULX3S_85K_MPT_ENTRIES,
                                  NF_PROFILE_ULX3S_85K_MTT_ENTRIES, NF_PROFILE_ULX3S_85K_RX_SLOTS,
                                  NF_PROFILE_ULX3S_85K_TX_SLOTS, 0, 0, NF_PROFILE_ULX3S_85K_FW_RAM_BYTES,
                                  NF_PROFILE_ULX3S_85K_NET_RX_SLOTS, NF_PROFILE_ULX3S_85K_NET_TX_SLOTS};
    } else if (!strcmp(name, "ulx3s_25k")) {
        *cfg = (struct nf_hw_cfg){NF_PROFILE_ULX3S_25K_MEM_BYTES, NF_PROFILE_ULX3S_25K_MPT_ENTRIES,
                                  NF_PROFILE_ULX3S_25K_MTT_ENTRIES, NF_PROFILE_ULX3S_25K_RX_SLOTS,
                                  NF_PROFILE_ULX3S_25K_TX_SLOTS, 0, 0, NF_PROFILE_ULX3S_25K_FW_RAM_BYTES,
                                  NF_PROFILE_ULX3S_25K_NET_RX_SLOTS, NF_PROFILE_ULX3S_25K_NET_TX_SLOTS};
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
                                NF_PROFILE_USER_BASE(cfg->rx_slots, cfg->tx_slots, cfg->net_rx_slots, cfg->net_tx_slots)};
    hw.eng = nfm_engine_new(&ec);
    if (!hw.eng)
        return -1;
    hw.cfg = *cfg;
    nf_frame_decoder_init(&hw.dec);
    if (cfg->net_rx_slots &&
        nf_net_port_init(&hw.net, cfg->net_rx_slots, cfg->net_tx_slots, NF_PROFILE_NET_BASE(cfg->rx_slots, cfg->tx_slots),
                         0, nfm_mem(hw.eng), cfg->mem_bytes, net_sent, NULL)) {
        nf_hw_free();
        return -1;
    }
    hw.net.mdio = net_mdio;
    nf_mii_phy_init(&hw.phy, NF_MII_PHY_GIGABIT, 0);
    return 0;
}

void nf_hw_free(void)
{
    nfm_engine_free(hw.eng);
    free(hw.out);
    free(hw.net_out);
    memset(&hw, 0, sizeof(hw));
}

struct nfm_engine *nf_hw_engine(void) { return hw.eng; }
uint32_t nf_hw_user_base(void)
{
    return NF_PROFILE_USER_BASE(hw.cfg.rx_slots, hw.cfg.tx_slots, hw.cfg.net_rx_slots, hw.cfg.net_tx_slots);
}
const struct nf_hw_cfg *nf_hw_cfg(void) { return &hw.cfg; }
void nf_hw_advance(uint64_t cycles) { hw.cycle += cycles; }
void nf_hw_engine_hang(int hung) { hw.engine_hung = hung; }
void nf_hw_tx_hang(int hung) { hw.tx_hung = hung; }
uint64_t nf_hw_cycles(void) { return hw.cycle; }
uint64_t nf_hw_accesses(void) { return hw.accesses; }
struct nf_hw_link_counters nf_hw_link_counters(void) { return hw.cnt; }
size_t nf_hw_tx_pending(void) { return hw.out_len; }

/* Appends n bytes to a growing buffer. */
static void grow(uint8_t **buf, size_t *len, size_t *cap, const uint8_t *b, size_t n)
{
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n)
            c *= 2;
        uint8_t *p = realloc(*buf, c);
        if (!p) {
            fprintf(stderr, "hw_model: out of memory\n");
            abort();
        }
        *buf = p;
        *cap = c;
    }
    memcpy(*buf + *len, b, n);
    *len += n;
}

static void out_append(const uint8_t *b, size_t n) { grow(&hw.out, &hw.out_len, &hw.out_cap, b, n); }

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
     * after one look, fw_link_poll); nfmodel waits between polls until nf_hw_wake_due. */
    case NF_SYS_SLEEP: return hw.rx_ready;
    case NF_SYS_WAKE_AT: return hw.wake_at;
    case NF_SYS_WAKE_RX: return hw.wake_rx;
    case NF_SYS_WAKE_NET: return hw.wake_net;
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

/* ---- nf_net: the network port (hw_net_model.c) ---- */

/* Frames the port sent, each as a length word and its wire bytes, until taken. */
static void net_sent(void *ctx, const uint8_t *wire, size_t len)
{
    (void)ctx;
    uint8_t n[sizeof(uint32_t)];
    memcpy(n, &(uint32_t){(uint32_t)len}, sizeof(n));
    grow(&hw.net_out, &hw.net_out_len, &hw.net_out_cap, n, sizeof(n));
    grow(&hw.net_out, &hw.net_out_len, &hw.net_out_cap, wire, len);
}

void nf_hw_net_seed(uint32_t seed) { hw.net.mac_seed = seed; }
struct nf_mii_phy *nf_hw_net_phy(void) { return hw.cfg.net_rx_slots ? &hw.phy : NULL; }

/* One MDIO frame to the PHY: a read of an address nobody answers gets the pull-up's ones. */
static uint32_t net_mdio(void *ctx, uint32_t cmd)
{
    (void)ctx;
    if (NF_NET_MDIO_CMD_PHY_GET(cmd) != hw.phy.addr)
        return 0xFFFFu;
    uint32_t reg = NF_NET_MDIO_CMD_REG_GET(cmd);
    if (NF_NET_MDIO_CMD_WRITE_GET(cmd)) {
        nf_mii_phy_write(&hw.phy, reg, (uint16_t)NF_NET_MDIO_CMD_DATA_GET(cmd));
        return 0xFFFFu;
    }
    return nf_mii_phy_read(&hw.phy, reg);
}
void nf_hw_net_tx_busy(uint32_t mask) { nf_net_port_force_tx_busy(&hw.net, mask); }
uint32_t nf_hw_net_slot_base(void) { return hw.net.slot_base; }
uint32_t nf_hw_net_rx_ready(void) { return hw.net.rx_ready; }
struct nf_net_port *nf_hw_net(void) { return hw.cfg.net_rx_slots ? &hw.net : NULL; }

int nf_hw_net_wire_rx(const uint8_t *wire, size_t len)
{
    if (!hw.cfg.net_rx_slots)
        return NF_HW_NET_RX_IGNORED;
    switch (nf_net_port_rx(&hw.net, wire, len, (uint32_t)hw.cycle)) {
    case NF_NET_PORT_PLACED: return NF_HW_NET_RX_PLACED;
    case NF_NET_PORT_DROPPED: return NF_HW_NET_RX_DROPPED;
    default: return NF_HW_NET_RX_IGNORED;
    }
}

int nf_hw_net_rx(const uint8_t *frame, size_t len)
{
    static uint8_t w[NF_HW_NET_WIRE_CAP];
    if (len + 4u > sizeof(w))
        return NF_HW_NET_RX_IGNORED;
    memcpy(w, frame, len);
    size_t n = len < NF_HW_ETH_MIN ? NF_HW_ETH_MIN : len;
    memset(w + len, 0, n - len);
    uint32_t fcs = nf_net_crc32(w, n);
    for (unsigned i = 0; i < 4u; i++)
        w[n + i] = (uint8_t)(fcs >> (8u * i));
    return nf_hw_net_wire_rx(w, n + 4u);
}

size_t nf_hw_net_wire_take(uint8_t *buf, size_t cap)
{
    uint32_t len;
    if (hw.net_out_len < sizeof(len))
        return 0;
    memcpy(&len, hw.net_out, sizeof(len));
    size_t rec = sizeof(len) + len, n = len < cap ? len : cap;
    memcpy(buf, hw.net_out + sizeof(len), n);
    memmove(hw.net_out, hw.net_out + rec, hw.net_out_len - rec);
    hw.net_out_len -= rec;
    return n;
}

size_t nf_hw_net_tx_take(uint8_t *buf, size_t cap)
{
    uint8_t w[NF_NET_PORT_WIRE_MAX];
    size_t n = nf_hw_net_wire_take(w, sizeof(w));
    if (n < 4u)
        return 0;
    n -= 4u; /* the FCS off */
    memcpy(buf, w, n < cap ? n : cap);
    return n < cap ? n : cap;
}

int nf_hw_wake_due(void)
{
    return (hw.wake_rx & hw.rx_ready) || (hw.wake_net && hw.net.rx_ready) ||
           (int32_t)((uint32_t)hw.cycle - hw.wake_at) >= 0;
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
        return hw.cfg.net_rx_slots ? nf_net_port_read(&hw.net, addr - NF_NET_BASE) : 0u;
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
        else if (addr - NF_SYS_BASE == NF_SYS_WAKE_NET)
            hw.wake_net = value & 1u;
        return;
    }
    if (addr >= NF_LINK_BASE && addr < NF_LINK_BASE + BLOCK_BYTES) {
        link_write(addr - NF_LINK_BASE, value);
        return;
    }
    if (addr >= NF_NET_BASE && addr < NF_NET_BASE + BLOCK_BYTES) {
        if (hw.cfg.net_rx_slots)
            nf_net_port_write(&hw.net, addr - NF_NET_BASE, value, 0xFu);
        return;
    }
    if (addr >= NF_ENGINE_BASE && addr < NF_ENGINE_BASE + BLOCK_BYTES) {
        nfm_csr_write(hw.eng, addr - NF_ENGINE_BASE, value);
        return;
    }
    bad_access("write", addr);
}
