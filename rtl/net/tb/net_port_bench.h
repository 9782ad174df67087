/* SPDX-License-Identifier: Apache-2.0 */
// The network port's Verilator bench: nf_net with a model of adapter memory on its system
// port (random stalls, or frozen), GMII bytes queued in with preamble and gap, GMII bytes
// out collected per frame, the NET registers through the CSR port. Shared by the port's
// testbench (net_port_tb.cpp) and the differential test against its C model
// (net_diff_tb.cpp); included by one source file per harness.
#ifndef NET_PORT_BENCH_H
#define NET_PORT_BENCH_H

#include <cstdint>
#include <cstdio>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "Vnf_net.h"
#include "nf_layout_cxx.h"
#include "nf_mii_phy.h"
#include "nf_tb_clock.h"

namespace {

using Bytes = std::vector<uint8_t>;

// Counter registers, in the order of the NET block.
enum Cnt { C_OK, C_FCS, C_ADDR, C_LONG, C_IP, C_ICRC, C_SLOT, C_FIFO, C_TX, C_REJECT, C_N };
const uint32_t CNT_OFF[C_N] = {NF_NET_CNT_RX_OK, NF_NET_CNT_DROP_FCS, NF_NET_CNT_DROP_ADDR, NF_NET_CNT_DROP_LONG,
                               NF_NET_CNT_DROP_IP, NF_NET_CNT_DROP_ICRC, NF_NET_CNT_DROP_SLOT, NF_NET_CNT_DROP_FIFO,
                               NF_NET_CNT_TX, NF_NET_CNT_TX_REJECT};
const char *CNT_NAME[C_N] = {"ok", "fcs", "addr", "long", "ip", "icrc", "slot", "fifo", "tx", "reject"};

struct Bench {
    Vnf_net top;
    uint64_t cycle = 0;
    std::mt19937 rng{4791};
    uint32_t rx_slots = 0, tx_slots = 0, slot_base = 0;
    Bytes mem;
    int stall = 0;           // clocks the current memory access still waits
    // The master leaves a clock between accesses, so a word takes 2 clocks and more: RX at
    // one byte a clock needs a word every 4 clocks, which these stalls leave on average.
    int ready_pct = 75;      // chance that an access is answered without waiting
    bool frozen = false;     // the system port answers nothing
    bool loopback = false;   // GMII TX drives GMII RX
    int ce_div = 1, ce_cnt = 0;
    std::deque<uint8_t> rxq;  // bytes to drive, preamble on; 0x100 = an idle byte
    std::deque<int> rxq_dv;
    Bytes txcur;
    std::vector<Bytes> txframes;
    bool tx_er_seen = false;
    int bad_access = 0;      // accesses outside the slots or of the wrong kind
    nf_mii_phy mii{};        // a clause-22 PHY on the MDIO pins (sim/nf_mii_phy.h)
    nf_mdio_slave mdio{};
    uint64_t mdc_rise = 0, mdc_rises = 0, mdc_min = ~0ull;  // MDC's rising edges: the last, how many, the shortest period
    int mdio_clash = 0;      // clocks the master and the PHY both drove MDIO

    Bench()
    {
        top.phy_ce = 1;
        top.mdio_i = 1;
        nf_mii_phy_init(&mii, NF_MII_PHY_GIGABIT, 1);
        tb_reset(&top, 4, [this] { tick(); });
        rx_slots = rd(NF_NET_CFG) & 0xFF;
        tx_slots = (rd(NF_NET_CFG) >> 8) & 0xFF;
        slot_base = rd(NF_NET_SLOT_BASE);
        mem.assign(slot_base + (rx_slots + tx_slots) * NF_NET_SLOT_BYTES, 0xEE);
    }

    void tick()
    {
        bool ce = ce_cnt == 0;
        ce_cnt = (ce_cnt + 1) % ce_div;
        top.phy_ce = ce;
        top.cycle = static_cast<uint32_t>(cycle);
        if (ce) {
            if (loopback) {
                top.gmii_rxd = top.gmii_txd;
                top.gmii_rx_dv = top.gmii_tx_en;
                top.gmii_rx_er = top.gmii_tx_er;
            } else if (!rxq.empty()) {
                top.gmii_rxd = rxq.front();
                top.gmii_rx_dv = rxq_dv.front();
                top.gmii_rx_er = 0;
                rxq.pop_front();
                rxq_dv.pop_front();
            } else {
                top.gmii_rx_dv = 0;
                top.gmii_rxd = 0;
                top.gmii_rx_er = 0;
            }
        }
        top.clk = 0;
        top.eval();
        top.mem_ready = 0;
        if (top.mem_valid && !frozen) {
            if (stall > 0) {
                stall--;
            } else {
                answer();
                // The next access waits 0..3 clocks now and then, 40 (10 RX words) rarely.
                stall = (rng() % 100 < static_cast<unsigned>(ready_pct)) ? 0 : (rng() % 64 == 0 ? 40 : rng() % 4);
            }
        }
        top.eval();
        tb_tick(&top, cycle);
        if (top.mdc && !mdio.mdc) {
            if (mdc_rises++ && cycle - mdc_rise < mdc_min)
                mdc_min = cycle - mdc_rise;
            mdc_rise = cycle;
        }
        mdio_clash += mdio.drive && top.mdio_oe;
        top.mdio_i = nf_mdio_slave_clock(&mdio, &mii, top.mdc, top.mdio_oe ? top.mdio_o : 1);
        if (ce) {
            if (top.gmii_tx_en) {
                txcur.push_back(top.gmii_txd);
                if (top.gmii_tx_er)
                    tx_er_seen = true;
            } else if (!txcur.empty()) {
                txframes.push_back(txcur);
                txcur.clear();
            }
        }
    }

    void answer()
    {
        uint32_t a = top.mem_addr;
        uint32_t rx_end = slot_base + rx_slots * NF_NET_SLOT_BYTES;
        bool write = top.mem_wstrb != 0;
        bool ok = (a & 3) == 0 && a >= slot_base && a + 4 <= mem.size() && (write ? a < rx_end : a >= rx_end);
        if (!ok) {
            bad_access++;
            top.mem_ready = 1;
            top.mem_rdata = 0;
            return;
        }
        if (write) {
            for (int k = 0; k < 4; k++)
                if ((top.mem_wstrb >> k) & 1)
                    mem[a + k] = static_cast<uint8_t>(top.mem_wdata >> (8 * k));
        } else {
            top.mem_rdata = mem[a] | mem[a + 1] << 8 | mem[a + 2] << 16 | static_cast<uint32_t>(mem[a + 3]) << 24;
        }
        top.mem_ready = 1;
    }

    uint32_t csr(uint32_t off, uint32_t data, uint32_t strb)
    {
        top.csr_valid = 1;
        top.csr_addr = off;
        top.csr_wdata = data;
        top.csr_wstrb = strb;
        tick();
        uint32_t v = top.csr_rdata;
        top.csr_valid = 0;
        top.csr_wstrb = 0;
        tick();
        return v;
    }
    uint32_t rd(uint32_t off) { return csr(off, 0, 0); }
    void wr(uint32_t off, uint32_t v) { csr(off, v, 0xF); }

    void run(int n)
    {
        for (int i = 0; i < n; i++)
            tick();
    }
    // Until the wire is quiet, the bytes queued are out and the port has nothing to do.
    void settle()
    {
        int quiet = 0;
        for (int i = 0; i < 200000 && quiet < 64; i++) {
            tick();
            bool busy = !rxq.empty() || top.mem_want || top.mem_valid || top.gmii_tx_en || top.gmii_rx_dv;
            quiet = busy ? 0 : quiet + 1;
        }
    }

    void send(const Bytes &frame, const Bytes &fcs, int idle = 12)
    {
        for (int i = 0; i < 7; i++) {
            rxq.push_back(0x55);
            rxq_dv.push_back(1);
        }
        rxq.push_back(0xD5);
        rxq_dv.push_back(1);
        for (uint8_t b : frame) {
            rxq.push_back(b);
            rxq_dv.push_back(1);
        }
        for (uint8_t b : fcs) {
            rxq.push_back(b);
            rxq_dv.push_back(1);
        }
        for (int i = 0; i < idle; i++) {
            rxq.push_back(0);
            rxq_dv.push_back(0);
        }
    }

    std::vector<uint32_t> counters()
    {
        std::vector<uint32_t> c(C_N);
        for (int i = 0; i < C_N; i++)
            c[i] = rd(CNT_OFF[i]);
        return c;
    }

    uint32_t rx_addr(uint32_t slot) const { return slot_base + slot * NF_NET_SLOT_BYTES; }
    uint32_t tx_addr(uint32_t slot) const { return slot_base + (rx_slots + slot) * NF_NET_SLOT_BYTES; }

    // The RX slot's header and frame against what should be there.
    bool check_slot(uint32_t slot, const Bytes &frame, int cls, int flags, std::string &why)
    {
        const uint8_t *h = &mem[rx_addr(slot)];
        uint32_t len = h[NF_NET_RX_HDR_LEN_OFF] | h[NF_NET_RX_HDR_LEN_OFF + 1] << 8;
        uint32_t stamp = h[4] | h[5] << 8 | h[6] << 16 | static_cast<uint32_t>(h[7]) << 24;
        char buf[160];
        if (len != frame.size() || h[NF_NET_RX_HDR_KIND_OFF] != cls || h[NF_NET_RX_HDR_FLAGS_OFF] != flags) {
            snprintf(buf, sizeof buf, "header len %u class %u flags %u, want %zu %d %d", len, h[2], h[3], frame.size(),
                     cls, flags);
            why = buf;
            return false;
        }
        if (stamp == 0 || stamp >= cycle) {
            snprintf(buf, sizeof buf, "stamp %u not before now %llu", stamp, static_cast<unsigned long long>(cycle));
            why = buf;
            return false;
        }
        for (size_t i = 0; i < frame.size(); i++)
            if (h[NF_NET_FRAME_OFF + i] != frame[i]) {
                snprintf(buf, sizeof buf, "frame byte %zu is %02x, want %02x", i, h[NF_NET_FRAME_OFF + i], frame[i]);
                why = buf;
                return false;
            }
        return true;
    }

    void put_tx(uint32_t slot, const Bytes &bytes)
    {
        uint32_t a = tx_addr(slot);
        for (uint32_t i = 0; i < NF_NET_SLOT_BYTES; i++)
            mem[a + i] = static_cast<uint8_t>(rng());  // what the port must not send
        for (size_t i = 0; i < bytes.size(); i++)
            mem[a + NF_NET_FRAME_OFF + i] = bytes[i];
    }
    void post(uint32_t slot, uint32_t len) { wr(NF_NET_TX_POST, len << NF_NET_TX_POST_LEN_LSB | slot); }
};

inline std::string diff(const std::vector<uint32_t> &a, const std::vector<uint32_t> &b)
{
    std::string s;
    for (int i = 0; i < C_N; i++)
        if (a[i] != b[i])
            s += std::string(" ") + CNT_NAME[i] + "+" + std::to_string(b[i] - a[i]);
    return s.empty() ? " none" : s;
}

inline bool wait_tx(Bench &b, size_t n)
{
    for (int i = 0; i < 2000000 && b.txframes.size() < n; i++)
        b.tick();
    b.settle();
    return b.txframes.size() == n;
}

inline Bytes strip_preamble(const Bytes &w)
{
    static const uint8_t pre[8] = {0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xD5};
    if (w.size() < 8)
        return {};
    for (int i = 0; i < 8; i++)
        if (w[i] != pre[i])
            return {};
    return Bytes(w.begin() + 8, w.end());
}

}  // namespace

#endif
