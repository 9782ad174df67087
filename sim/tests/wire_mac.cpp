// SPDX-License-Identifier: Apache-2.0
// nf_wire against the RTL MACs: two adapters' ports (sim/tests/wire_mac_tb.v, rtl/net)
// joined by nf_wire endpoints on one nfwire segment. Frames given to one transmitter come
// out of the other's receiver intact; a frame sent bad (s_tuser) arrives bad. Prints TAP
// lines. usage: wire_mac SOCK
#include "Vwire_mac_tb.h"
#include "nf_wire.h"
#include "tap.h"
#include "verilated.h"

#include <cstdio>
#include <ctime>
#include <deque>
#include <memory>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;

double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

struct Out {
    Bytes bytes;
    bool bad;
};

struct Port {
    std::unique_ptr<Vwire_mac_tb> m;
    NfWire w;
    std::deque<std::pair<Bytes, bool>> src;  // frames to send, and whether sent bad
    size_t pos = 0;
    Bytes cur;
    std::vector<Out> got;
};

// One clock of one port: the stream source, the edge, then the wire with that edge's
// phy_ce and the pins after it; the receive pins go in for the next edge.
void clock(Port &p, bool ce)
{
    Vwire_mac_tb &m = *p.m;
    m.phy_ce = ce;
    m.s_tvalid = !p.src.empty();
    if (m.s_tvalid) {
        const Bytes &f = p.src.front().first;
        m.s_tdata = f[p.pos];
        m.s_tlast = p.pos + 1 == f.size();
        m.s_tuser = m.s_tlast && p.src.front().second;
    }
    m.clk = 0;
    m.eval();
    bool fire = m.s_tvalid && m.s_tready;
    m.clk = 1;
    m.eval();
    if (fire && ++p.pos == p.src.front().first.size()) {
        p.src.pop_front();
        p.pos = 0;
    }
    if (m.m_tvalid) {
        p.cur.push_back(m.m_tdata);
        if (m.m_tlast) {
            p.got.push_back({p.cur, bool(m.m_tuser)});
            p.cur.clear();
        }
    }
    p.w.clock(ce, m.gmii_txd, m.gmii_tx_en, m.gmii_tx_er);
    m.gmii_rxd = p.w.rxd();
    m.gmii_rx_dv = p.w.rx_dv();
    m.gmii_rx_er = p.w.rx_er();
}

Bytes frame(size_t len, uint8_t from, uint32_t tag)
{
    Bytes f = {0x02, 0, 0, 0, 0, uint8_t(from ^ 1), 0x02, 0, 0, 0, 0, from, 0x88, 0xB5};
    for (int k = 0; k < 4; k++)
        f.push_back(uint8_t(tag >> (8 * k)));
    while (f.size() < len)
        f.push_back(uint8_t(tap_rnd32()));
    f.resize(len);
    return f;
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    if (argc != 2) {
        std::fprintf(stderr, "usage: wire_mac SOCK\n");
        return 2;
    }
    Port a, b;
    Port *ports[2] = {&a, &b};
    std::string err;
    for (Port *p : ports) {
        p->m.reset(new Vwire_mac_tb);
        if (!p->w.connect(argv[1], &err))
            std::fprintf(stderr, "%s\n", err.c_str());
        p->m->rst = 1;
        for (int i = 0; i < 4; i++)
            clock(*p, true);
        p->m->rst = 0;
    }
    tap_ok(a.w.connected() && b.w.connected(), "mac: two RTL ports join the segment");
    for (unsigned div : {1u, 4u}) {
        // Both ways at once: A sends frames to B while B sends to A.
        std::vector<Bytes> ab, ba;
        for (size_t len : {60, 61, 64, 100, 1514, 77, 1000}) {
            ab.push_back(frame(len, 0, uint32_t(len)));
            ba.push_back(frame(len + 3, 1, uint32_t(len)));
            a.src.push_back({ab.back(), false});
            b.src.push_back({ba.back(), false});
        }
        a.got.clear();
        b.got.clear();
        double end = now_s() + 10;
        uint64_t cyc = 0;
        while ((b.got.size() < ab.size() || a.got.size() < ba.size()) && now_s() < end)
            for (int i = 0; i < 1000; i++, cyc++) {
                clock(a, cyc % div == 0);
                clock(b, cyc % div == 0);
            }
        bool same = b.got.size() == ab.size() && a.got.size() == ba.size();
        for (size_t i = 0; same && i < ab.size(); i++)
            same = b.got[i].bytes == ab[i] && !b.got[i].bad && a.got[i].bytes == ba[i] && !a.got[i].bad;
        tap_ok(same, "mac: phy_ce 1 in %u: frames from each transmitter leave the other receiver intact, FCS good",
               div);
    }
    // A frame the transmitter sends bad (s_tuser: inverted FCS, tx_er) is received bad;
    // the good frame after it is not.
    Bytes bad = frame(200, 0, 0xbad), good = frame(64, 0, 0x600d);
    a.src.push_back({bad, true});
    a.src.push_back({good, false});
    b.got.clear();
    double end = now_s() + 10;
    uint64_t cyc = 0;
    while (b.got.size() < 2 && now_s() < end)
        for (int i = 0; i < 1000; i++, cyc++) {
            clock(a, true);
            clock(b, true);
        }
    tap_ok(b.got.size() == 2 && b.got[0].bad && !b.got[1].bad && b.got[1].bytes == good &&
               a.w.stats().tx_er == 1,
           "mac: a frame sent bad (s_tuser) arrives flagged bad; the next one good");
    return tap_done();
}
