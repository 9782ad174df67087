/* SPDX-License-Identifier: Apache-2.0 */
// Network port testbench: nf_net with a model of adapter memory on its system port
// (random stalls, and a frozen port for the overrun case), GMII bytes in from the vectors
// of gen_net_port_vectors.py (scapy frames), GMII bytes out compared byte for byte with
// scapy's, the NET registers through the CSR port, and the wire looped back (TX to RX).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "net_port_bench.h"
#include "verilated.h"

extern "C" {
#include "tap.h"
}

namespace {

Bytes unhex(const std::string &s)
{
    Bytes b;
    for (size_t i = 0; i + 1 < s.size(); i += 2)
        b.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
    return b;
}

struct RxVec {
    std::string name, verdict;
    int cls = 0, flags = 0;
    Bytes frame, fcs;
};
struct TxVec {
    std::string name;
    int cls = 0;
    Bytes slot, frame, wire;
};

Bytes g_mac;
std::vector<RxVec> g_rx;
std::vector<TxVec> g_tx;

void load(const char *path)
{
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string kind;
        ls >> kind;
        if (kind == "mac") {
            std::string m;
            ls >> m;
            g_mac = unhex(m);
        } else if (kind == "rx") {
            RxVec v;
            std::string f, c;
            ls >> v.name >> v.verdict >> v.cls >> v.flags >> f >> c;
            v.frame = unhex(f);
            v.fcs = unhex(c);
            g_rx.push_back(v);
        } else if (kind == "tx") {
            TxVec v;
            std::string s, f, w;
            ls >> v.name >> v.cls >> s >> f >> w;
            v.slot = unhex(s);
            v.frame = unhex(f);
            v.wire = unhex(w);
            g_tx.push_back(v);
        }
    }
}

Bytes padded(const Bytes &f)
{
    Bytes p = f;
    while (p.size() < 60)
        p.push_back(0);
    return p;
}

int verdict_cnt(const std::string &v)
{
    for (int i = 0; i < C_N; i++)
        if (v == CNT_NAME[i])
            return i;
    return -1;
}

uint32_t mac_lo() { return g_mac[0] | g_mac[1] << 8 | g_mac[2] << 16 | static_cast<uint32_t>(g_mac[3]) << 24; }
uint32_t mac_hi() { return g_mac[4] | g_mac[5] << 8; }

void test_regs(Bench &b, const char *tag)
{
    tap_ok(b.rd(NF_NET_ID) == NF_NET_HW_ID_VALUE, "%s: ID reads NET1", tag);
    b.wr(NF_NET_MAC_LO, mac_lo());
    b.wr(NF_NET_MAC_HI, 0xFFFF0000 | mac_hi());
    b.csr(NF_NET_CTRL, 0xFFFFFF01, 0x1);  // one byte lane: RX_EN only
    tap_ok(b.rd(NF_NET_MAC_LO) == mac_lo() && b.rd(NF_NET_MAC_HI) == mac_hi() && b.rd(NF_NET_CTRL) == 1,
           "%s: MAC_LO/MAC_HI/CTRL hold what was written (MAC_HI 16 bits, CTRL 2)", tag);
    tap_ok(b.rd(NF_NET_RX_READY) == 0 && b.rd(NF_NET_TX_BUSY) == 0, "%s: no slot ready or busy after reset", tag);
}

// One frame at a time: each lands in the next slot (ring order) or in its counter.
void test_rx_each(Bench &b, const char *tag, uint32_t &next)
{
    for (const RxVec &v : g_rx) {
        auto before = b.counters();
        b.send(v.frame, v.fcs);
        b.settle();
        auto after = b.counters();
        int c = verdict_cnt(v.verdict);
        auto want = before;
        want[c]++;
        bool ok = after == want;
        std::string why;
        if (ok && c == C_OK) {
            ok = b.rd(NF_NET_RX_READY) == (1u << next) && b.check_slot(next, v.frame, v.cls, v.flags, why);
            b.wr(NF_NET_RX_RELEASE, 1u << next);
            ok = ok && b.rd(NF_NET_RX_READY) == 0;
            next = (next + 1) % b.rx_slots;
        } else if (ok) {
            ok = b.rd(NF_NET_RX_READY) == 0;
        }
        tap_ok(ok && b.bad_access == 0, "%s: rx %s -> %s (counted:%s) %s", tag, v.name.c_str(), v.verdict.c_str(),
               diff(before, after).c_str(), why.c_str());
    }
}

// Good frames back to back (the 12-byte gap): the slots fill in ring order, then the
// frames that find no free slot are counted; releasing makes room again.
void test_rx_burst(Bench &b, const char *tag, uint32_t &next)
{
    std::vector<const RxVec *> good;
    for (const RxVec &v : g_rx)
        if (v.verdict == "ok")
            good.push_back(&v);
    uint32_t n = b.rx_slots + 2;
    auto before = b.counters();
    for (uint32_t i = 0; i < n; i++)
        b.send(good[i % good.size()]->frame, good[i % good.size()]->fcs);
    b.settle();
    auto after = b.counters();
    bool ok = after[C_OK] == before[C_OK] + b.rx_slots && after[C_SLOT] == before[C_SLOT] + 2 &&
              b.rd(NF_NET_RX_READY) == (1u << b.rx_slots) - 1;
    std::string why;
    for (uint32_t i = 0; ok && i < b.rx_slots; i++) {
        const RxVec *v = good[i % good.size()];
        ok = b.check_slot((next + i) % b.rx_slots, v->frame, v->cls, v->flags, why);
    }
    tap_ok(ok, "%s: %u frames back to back fill %u slots in ring order, 2 dropped no-slot (counted:%s) %s", tag, n,
           b.rx_slots, diff(before, after).c_str(), why.c_str());
    b.wr(NF_NET_RX_RELEASE, 0xFFFF);
    tap_ok(b.rd(NF_NET_RX_READY) == 0, "%s: RX_RELEASE frees every slot", tag);
    // Released as they land: a long burst of every good frame. A frame whose slot is not
    // released yet when it starts (the header waits for the FIFO to drain) is counted
    // no-slot; every other one lands whole, in order.
    before = b.counters();
    uint32_t slot = next;
    size_t total = good.size() * 2;
    for (size_t i = 0; i < total; i++)
        b.send(good[i % good.size()]->frame, good[i % good.size()]->fcs);
    size_t got = 0, want_i = 0, skipped = 0;
    ok = true;
    for (int guard = 0; guard < 4000000 && want_i < total && ok; guard++) {
        b.tick();
        if (b.top.rx_ready >> slot & 1) {
            size_t j = want_i;
            while (j < total && !b.check_slot(slot, good[j % good.size()]->frame, good[j % good.size()]->cls,
                                              good[j % good.size()]->flags, why))
                j++;
            ok = j < total;
            skipped += j - want_i;
            want_i = j + 1;
            b.wr(NF_NET_RX_RELEASE, 1u << slot);
            slot = (slot + 1) % b.rx_slots;
            got++;
        }
        if (b.rxq.empty() && !b.top.gmii_rx_dv && guard % 1024 == 0 && !b.top.mem_want && !b.top.mem_valid &&
            b.top.rx_ready == 0)
            break;
    }
    b.settle();
    after = b.counters();
    skipped += total - want_i;
    ok = ok && after[C_OK] - before[C_OK] == got && after[C_SLOT] - before[C_SLOT] == skipped &&
         got + skipped == total && got >= total / 2;
    tap_ok(ok, "%s: %zu frames back to back, released as they land: %zu placed whole in order, %zu no-slot (counted:%s)",
           tag, total, got, skipped, diff(before, after).c_str());
    next = slot;
}

void test_rx_modes(Bench &b, const char *tag, uint32_t &next)
{
    const RxVec *udp = nullptr, *other = nullptr, *big = nullptr;
    for (const RxVec &v : g_rx) {
        if (v.name == "udp53") udp = &v;
        if (v.name == "other_mac") other = &v;
        if (v.name == "len1514") big = &v;
    }
    // A frozen port: the FIFO overruns on a long frame; the slot is used by the next one.
    auto before = b.counters();
    b.frozen = true;
    b.send(big->frame, big->fcs);
    b.run(static_cast<int>(big->frame.size()) + 200);
    b.frozen = false;
    b.settle();
    auto after = b.counters();
    auto want = before;
    want[C_FIFO]++;
    tap_ok(after == want && b.rd(NF_NET_RX_READY) == 0, "%s: port frozen under a 1514-byte frame: FIFO overrun counted (counted:%s)",
           tag, diff(before, after).c_str());
    std::string why;
    b.send(udp->frame, udp->fcs);
    b.settle();
    bool ok = b.rd(NF_NET_RX_READY) == (1u << next) && b.check_slot(next, udp->frame, udp->cls, udp->flags, why);
    tap_ok(ok, "%s: the next frame takes the slot the overrun frame had %s", tag, why.c_str());
    b.wr(NF_NET_RX_RELEASE, 1u << next);
    next = (next + 1) % b.rx_slots;
    // RX_EN 0: frames are ignored, not counted.
    b.wr(NF_NET_CTRL, 0);
    before = b.counters();
    b.send(udp->frame, udp->fcs);
    b.send(other->frame, other->fcs);
    b.settle();
    tap_ok(b.counters() == before && b.rd(NF_NET_RX_READY) == 0, "%s: RX_EN 0 ignores frames", tag);
    // PROMISC: another unicast address is taken, flagged.
    b.wr(NF_NET_CTRL, 3);
    b.send(other->frame, other->fcs);
    b.settle();
    ok = b.rd(NF_NET_RX_READY) == (1u << next) &&
         b.check_slot(next, other->frame, other->cls, NF_NET_RX_FLAG_PROMISC, why);
    tap_ok(ok, "%s: PROMISC takes another MAC's frame with flag PROMISC %s", tag, why.c_str());
    b.wr(NF_NET_RX_RELEASE, 1u << next);
    next = (next + 1) % b.rx_slots;
    // A too-long frame leaves its bytes in the slot it is dropped from; the next frame,
    // whose first byte differs, lands there whole (its first byte too).
    const RxVec *toolong = nullptr, *bc = nullptr;
    for (const RxVec &v : g_rx) {
        if (v.name == "len1515") toolong = &v;
        if (v.name == "arp_request_bcast") bc = &v;
    }
    b.send(toolong->frame, toolong->fcs);
    b.send(bc->frame, bc->fcs);
    b.settle();
    ok = b.rd(NF_NET_RX_READY) == (1u << next) && b.check_slot(next, bc->frame, bc->cls, bc->flags, why);
    tap_ok(ok, "%s: after a too-long frame the next one lands whole in its slot %s", tag, why.c_str());
    b.wr(NF_NET_RX_RELEASE, 1u << next);
    next = (next + 1) % b.rx_slots;
    b.wr(NF_NET_CTRL, 1);
    // A 100 Mb/s PHY: one byte every 4 clocks.
    b.ce_div = 4;
    before = b.counters();
    for (const RxVec &v : g_rx)
        if (v.verdict == "ok" && v.frame.size() < 400) {
            b.send(v.frame, v.fcs);
            b.settle();
            ok = b.rd(NF_NET_RX_READY) == (1u << next) && b.check_slot(next, v.frame, v.cls, v.flags, why);
            b.wr(NF_NET_RX_RELEASE, 1u << next);
            next = (next + 1) % b.rx_slots;
            if (!ok)
                break;
        }
    b.ce_div = 1;
    tap_ok(ok, "%s: good frames at phy_ce 1/4 (counted:%s) %s", tag, diff(before, b.counters()).c_str(), why.c_str());
}

void test_tx(Bench &b, const char *tag)
{
    uint32_t slot = 0;
    for (const TxVec &v : g_tx) {
        b.txframes.clear();
        b.tx_er_seen = false;
        auto before = b.counters();
        b.put_tx(slot, v.slot);
        b.post(slot, static_cast<uint32_t>(v.slot.size()));
        bool sent = wait_tx(b, 1);
        auto after = b.counters();
        auto want = before;
        want[C_TX]++;
        Bytes got = sent ? strip_preamble(b.txframes[0]) : Bytes();
        size_t bad = 0;
        while (bad < got.size() && bad < v.wire.size() && got[bad] == v.wire[bad])
            bad++;
        tap_ok(sent && got == v.wire && !b.tx_er_seen && after == want && b.rd(NF_NET_TX_BUSY) == 0 && b.bad_access == 0,
               "%s: tx %s (%zu bytes from slot %u) equals scapy's frame%s (first difference at %zu of %zu/%zu; counted:%s)",
               tag, v.name.c_str(), v.slot.size(), slot, v.cls == 3 ? " with IPv4 fields and ICRC filled" :
               v.cls == 2 ? " with IPv4 fields filled" : "", bad, got.size(), v.wire.size(), diff(before, after).c_str());
        slot = (slot + 1) % b.tx_slots;
    }
    // Every TX slot posted at once: sent in post order, back to back.
    b.txframes.clear();
    for (uint32_t s = 0; s < b.tx_slots; s++)
        b.put_tx(s, g_tx[(s * 5 + 3) % g_tx.size()].slot);
    for (uint32_t s = 0; s < b.tx_slots; s++)
        b.post(b.tx_slots - 1 - s, static_cast<uint32_t>(g_tx[((b.tx_slots - 1 - s) * 5 + 3) % g_tx.size()].slot.size()));
    bool ok = wait_tx(b, b.tx_slots);
    for (uint32_t i = 0; ok && i < b.tx_slots; i++)
        ok = strip_preamble(b.txframes[i]) == g_tx[((b.tx_slots - 1 - i) * 5 + 3) % g_tx.size()].wire;
    tap_ok(ok, "%s: %u TX slots posted at once go out in post order", tag, b.tx_slots);
    // Refused posts: LEN out of range, a slot out of range, a busy slot, a full queue.
    auto before = b.counters();
    b.post(0, NF_NET_MIN_FRAME - 1);
    b.post(0, NF_NET_MAX_FRAME + 1);
    int want_rej = 2;
    if (b.tx_slots < 16) {
        b.post(b.tx_slots, 60);
        want_rej++;
    }
    b.txframes.clear();
    b.put_tx(0, g_tx.back().slot);
    b.post(0, static_cast<uint32_t>(g_tx.back().slot.size()));
    b.post(0, static_cast<uint32_t>(g_tx.back().slot.size()));  // busy: refused
    want_rej++;
    ok = wait_tx(b, 1) && strip_preamble(b.txframes[0]) == g_tx.back().wire;
    auto after = b.counters();
    tap_ok(ok && after[C_REJECT] == before[C_REJECT] + static_cast<uint32_t>(want_rej) && after[C_TX] == before[C_TX] + 1,
           "%s: %d refused posts counted, nothing of theirs sent (counted:%s)", tag, want_rej, diff(before, after).c_str());
}

// The wire looped back: what the transmitter fills in, the receiver's checks accept.
void test_loopback(Bench &b, const char *tag, uint32_t &next)
{
    // Both directions share the system port: at half the byte rate it carries them both.
    b.loopback = true;
    b.ce_div = 2;
    uint32_t slot = 0;
    bool all = true;
    for (const TxVec &v : g_tx) {
        auto before = b.counters();
        b.put_tx(slot, v.slot);
        b.post(slot, static_cast<uint32_t>(v.slot.size()));
        b.settle();
        auto after = b.counters();
        std::string why;
        bool ok = b.rd(NF_NET_RX_READY) == (1u << next) && b.check_slot(next, padded(v.frame), v.cls, 0, why) &&
                  after[C_OK] == before[C_OK] + 1 && after[C_TX] == before[C_TX] + 1;
        b.wr(NF_NET_RX_RELEASE, 1u << next);
        next = (next + 1) % b.rx_slots;
        slot = (slot + 1) % b.tx_slots;
        if (!ok) {
            tap_ok(false, "%s: loopback %s (counted:%s) %s", tag, v.name.c_str(), diff(before, after).c_str(), why.c_str());
            all = false;
        }
    }
    tap_ok(all, "%s: %zu frames TX -> wire -> RX: each received whole, checked and classed", tag, g_tx.size());
    // Both directions at once: every TX slot posted while the receiver fills.
    auto before = b.counters();
    for (uint32_t s = 0; s < b.tx_slots; s++) {
        b.put_tx(s, g_tx[s].slot);
        b.post(s, static_cast<uint32_t>(g_tx[s].slot.size()));
    }
    uint32_t got = 0;
    bool ok = true;
    std::string why;
    for (int guard = 0; guard < 2000000 && got < b.tx_slots && ok; guard++) {
        b.tick();
        if (b.top.rx_ready >> next & 1) {
            ok = b.check_slot(next, padded(g_tx[got].frame), g_tx[got].cls, 0, why);
            b.wr(NF_NET_RX_RELEASE, 1u << next);
            next = (next + 1) % b.rx_slots;
            got++;
        }
    }
    b.settle();
    tap_ok(ok && got == b.tx_slots, "%s: %u frames looped back to back (counted:%s) %s", tag, b.tx_slots,
           diff(before, b.counters()).c_str(), why.c_str());
    b.loopback = false;
    b.ce_div = 1;
}

}  // namespace

// PHY management: clause-22 frames against the PHY model at the pins (nf_mii_phy.h).
static uint32_t mdio(Bench &b, uint32_t phy, uint32_t reg, int write, uint32_t data, uint64_t *clocks)
{
    uint64_t t0 = b.cycle;
    b.wr(NF_NET_MDIO_CMD, NF_NET_MDIO_CMD_PHY_PUT(phy) | NF_NET_MDIO_CMD_REG_PUT(reg) |
                              (write ? NF_NET_MDIO_CMD_WRITE_MASK : 0u) | NF_NET_MDIO_CMD_DATA_PUT(data));
    uint32_t s;
    while ((s = b.rd(NF_NET_MDIO_STAT)) & NF_NET_MDIO_STAT_BUSY_MASK && b.cycle - t0 < 100000) {
    }
    if (clocks)
        *clocks = b.cycle - t0;
    return s;
}

static void test_mdio(Bench &b, const char *tag)
{
    tap_ok(!b.top.mdio_oe && !b.top.mdc && (b.rd(NF_NET_MDIO_STAT) & 0x1FFFFu) == 0xFFFFu,
           "%s: MDIO idle after reset: MDC low, bus released, DATA all ones, not busy", tag);
    uint64_t t;
    uint32_t id1 = mdio(b, NF_MII_PHY_ADDR, NF_MII_PHYID1, 0, 0, &t), id2 = mdio(b, NF_MII_PHY_ADDR, NF_MII_PHYID2, 0, 0, nullptr);
    tap_ok((id1 & 0xFFFFu) == NF_MII_PHY_ID_GIGABIT >> 16 && (id2 & 0xFFFFu) == (NF_MII_PHY_ID_GIGABIT & 0xFFFFu),
           "%s: MDIO reads PHYID1/2 of the PHY at address %u: 0x%04x%04x", tag, NF_MII_PHY_ADDR, id1 & 0xFFFFu,
           id2 & 0xFFFFu);
    // 64 bits of two MDC_DIV halves each, plus the register accesses around them
    tap_ok(b.mdc_min == 20 && t >= 64 * 20 && t < 64 * 20 + 40,
           "%s: MDC period 2 x MDC_DIV (10) clocks, a frame 64 periods (shortest %llu, frame %llu clocks)", tag,
           static_cast<unsigned long long>(b.mdc_min), static_cast<unsigned long long>(t));
    tap_ok((mdio(b, 5, NF_MII_PHYID1, 0, 0, nullptr) & 0xFFFFu) == NF_MII_NO_ANSWER,
           "%s: a read at an address no PHY answers gets the pull-up's 0xFFFF", tag);
    mdio(b, NF_MII_PHY_ADDR, NF_MII_BMCR, 1, NF_MII_BMCR_LOOPBACK | NF_MII_BMCR_FULLDPLX | NF_MII_BMCR_SPEED1000, nullptr);
    uint32_t bmcr = mdio(b, NF_MII_PHY_ADDR, NF_MII_BMCR, 0, 0, nullptr) & 0xFFFFu;
    tap_ok(nf_mii_phy_loopback(&b.mii) && bmcr == 0x4140u, "%s: MDIO write of BMCR loopback reaches the PHY, read back 0x%04x",
           tag, bmcr);
    mdio(b, 7, NF_MII_BMCR, 1, NF_MII_BMCR_RESET, nullptr);
    tap_ok(nf_mii_phy_loopback(&b.mii), "%s: a write to another address leaves the PHY alone", tag);
    // a command while busy is ignored: the frame in progress finishes as started
    b.wr(NF_NET_MDIO_CMD, NF_NET_MDIO_CMD_PHY_PUT(NF_MII_PHY_ADDR) | NF_NET_MDIO_CMD_REG_PUT(NF_MII_PHYID2));
    b.wr(NF_NET_MDIO_CMD, NF_NET_MDIO_CMD_PHY_PUT(NF_MII_PHY_ADDR) | NF_NET_MDIO_CMD_REG_PUT(NF_MII_BMCR) |
                              NF_NET_MDIO_CMD_WRITE_MASK | NF_MII_BMCR_RESET);
    uint32_t s = mdio(b, NF_MII_PHY_ADDR, NF_MII_PHYID1, 0, 0, nullptr);
    while (b.rd(NF_NET_MDIO_STAT) & NF_NET_MDIO_STAT_BUSY_MASK) {
    }
    tap_ok(nf_mii_phy_loopback(&b.mii) && (s & 0xFFFFu) == (NF_MII_PHY_ID_GIGABIT & 0xFFFFu),
           "%s: MDIO_CMD writes while busy are ignored (the first frame's read, 0x%04x, stands)", tag, s & 0xFFFFu);
    mdio(b, NF_MII_PHY_ADDR, NF_MII_BMCR, 1, NF_MII_BMCR_RESET, nullptr);
    tap_ok(!nf_mii_phy_loopback(&b.mii) && b.mdio_clash == 0,
           "%s: BMCR reset clears loopback; the master never drove MDIO while the PHY did (%d clocks)", tag,
           b.mdio_clash);
}

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    if (argc < 2) {
        fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    load(argv[1]);
    Bench b;
    char tag[64];
    snprintf(tag, sizeof tag, "rx%u/tx%u", b.rx_slots, b.tx_slots);
    tap_ok(g_rx.size() > 20 && g_tx.size() > 10 && g_mac.size() == 6, "%s: vectors loaded", tag);
    tap_ok(b.rd(NF_NET_SLOT_BASE) % 4 == 0, "%s: SLOT_BASE 0x%x", tag, b.slot_base);
    uint32_t next = 0;
    test_regs(b, tag);
    test_rx_each(b, tag, next);
    test_rx_burst(b, tag, next);
    test_rx_modes(b, tag, next);
    test_tx(b, tag);
    test_loopback(b, tag, next);
    test_mdio(b, tag);
    tap_ok(b.bad_access == 0, "%s: every memory access was a word write to an RX slot or a read of a TX slot (%d not)",
           tag, b.bad_access);
    printf("# %llu clocks\n", static_cast<unsigned long long>(b.cycle));
    return tap_done();
}
