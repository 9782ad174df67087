/* SPDX-License-Identifier: Apache-2.0 */
// rtl/net testbench: the vectors of gen_net_vectors.py (scapy frames, zlib FCS, scapy ICRC)
// through the CRC at four widths, the MAC transmitter and receiver at several PHY rates,
// back to back, and the ICRC unit alone and behind the transmitter-to-receiver wire.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "Vnf_net_tb.h"
#include "nf_tb_clock.h"
#include "verilated.h"

extern "C" {
#include "tap.h"
}

namespace {

using Bytes = std::vector<uint8_t>;

struct Rec {
    std::string kind, name;
    std::vector<std::string> f;  // the fields after the name
};

Bytes unhex(const std::string &s)
{
    Bytes b;
    if (s == "-")
        return b;
    for (size_t i = 0; i + 1 < s.size(); i += 2)
        b.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
    return b;
}

std::vector<Rec> load(const char *path)
{
    std::vector<Rec> v;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        Rec r;
        ls >> r.kind >> r.name;
        std::string x;
        while (ls >> x)
            r.f.push_back(x);
        if (!r.kind.empty())
            v.push_back(r);
    }
    return v;
}

struct Bench {
    Vnf_net_tb top;
    uint64_t cycle = 0;
    Bench()
    {
        tb_reset(&top, 4, [this] { tick(); });
    }
    // Inputs are set; settle the combinational outputs (ready, ICRC field) before the edge.
    void settle()
    {
        top.clk = 0;
        top.eval();
    }
    void tick() { tb_tick(&top, cycle); }
};

// ---- CRC at 8, 16, 32 and 64 bits per clock -------------------------------------------
void test_crc(const Rec &r)
{
    Bytes d = unhex(r.f[0]);
    uint32_t want = static_cast<uint32_t>(std::stoul(r.f[1], nullptr, 16));
    Bench b;
    const int widths[4] = {8, 16, 32, 64};
    for (int wi = 0; wi < 4; wi++) {
        int w = widths[wi] / 8;
        b.top.crc_clear = 1;
        b.tick();
        b.top.crc_clear = 0;
        auto feed = [&](const Bytes &bytes) {
            for (size_t i = 0; i < bytes.size(); i += w) {
                uint64_t word = 0;
                for (int k = 0; k < w; k++)
                    word |= static_cast<uint64_t>(bytes[i + k]) << (8 * k);
                b.top.crc_data = word;
                b.top.crc_en8 = w == 1;
                b.top.crc_en16 = w == 2;
                b.top.crc_en32 = w == 4;
                b.top.crc_en64 = w == 8;
                b.tick();
                // A clock with en low between words changes nothing.
                b.top.crc_en8 = b.top.crc_en16 = b.top.crc_en32 = b.top.crc_en64 = 0;
                b.tick();
            }
        };
        feed(d);
        uint32_t got = wi == 0 ? b.top.crc_fcs8 : wi == 1 ? b.top.crc_fcs16 : wi == 2 ? b.top.crc_fcs32 : b.top.crc_fcs64;
        bool ok = got == want;
        bool res_ok = true;
        if (w <= 4) {  // the message followed by its FCS leaves the residue
            Bytes f = {static_cast<uint8_t>(got), static_cast<uint8_t>(got >> 8), static_cast<uint8_t>(got >> 16),
                       static_cast<uint8_t>(got >> 24)};
            feed(f);
            res_ok = (b.top.crc_residue_ok >> wi) & 1;
        }
        tap_ok(ok && res_ok, "crc %s at %d bits per clock: %08x (want %08x), residue %s", r.name.c_str(), 8 * w, got,
               want, res_ok ? "ok" : "wrong");
    }
}

// ---- MAC transmitter -----------------------------------------------------------------
struct TxFrame {
    std::string name;
    Bytes client, wire;
    bool tuser;
    int hole;  // byte index where the source stops offering (underflow), -1 none
};

struct Burst {
    Bytes d;
    std::vector<bool> er;
    int gap_before;  // idle PHY bytes before it
};

// Sends the frames back to back (or with idle clocks before each), returns the PHY bursts.
std::vector<Burst> run_tx(Bench &b, const std::vector<TxFrame> &fr, int div, bool idle_between, int *underflows)
{
    std::vector<Burst> out;
    size_t fi = 0, bi = 0;
    int idle = 0, gap = 0, wait = 0, hole_ces = 0;
    bool in_burst = false;
    *underflows = 0;
    while (true) {
        bool ce = (b.cycle % div) == 0;
        b.top.tx_phy_ce = ce;
        bool offer = fi < fr.size() && wait == 0;
        if (offer && fr[fi].hole >= 0 && static_cast<int>(bi) == fr[fi].hole && hole_ces < 1) {
            offer = false;
            if (ce)
                hole_ces++;
        }
        b.top.tx_tvalid = offer;
        if (offer) {
            b.top.tx_tdata = fr[fi].client[bi];
            b.top.tx_tlast = bi + 1 == fr[fi].client.size();
            b.top.tx_tuser = fr[fi].tuser && b.top.tx_tlast;
        }
        b.settle();
        bool fire = offer && b.top.tx_tready;
        b.tick();
        if (b.top.tx_underflow)
            (*underflows)++;
        if (wait > 0)
            wait--;
        if (fire && ++bi == fr[fi].client.size()) {
            fi++;
            bi = 0;
            hole_ces = 0;
            if (idle_between)
                wait = 37;
        }
        if (ce) {
            if (b.top.tx_en) {
                if (!in_burst) {
                    out.push_back(Burst{{}, {}, gap});
                    in_burst = true;
                }
                out.back().d.push_back(b.top.tx_txd);
                out.back().er.push_back(b.top.tx_er);
                gap = 0;
            } else {
                in_burst = false;
                gap++;
            }
        }
        if (fi == fr.size() && !b.top.tx_busy && ++idle > 40)
            break;
        if (b.cycle > 50000000)
            break;
    }
    return out;
}

void check_tx(const std::vector<TxFrame> &fr, const std::vector<Burst> &got, const char *mode, bool per_frame,
              bool back_to_back)
{
    int bad = 0;
    std::string first;
    for (size_t i = 0; i < fr.size(); i++) {
        bool ok = i < got.size() && got[i].d == fr[i].wire;
        size_t n = fr[i].wire.size();
        for (size_t k = 0; ok && k < n; k++) {
            bool want_er = fr[i].hole >= 0 ? k + 1 == n : fr[i].tuser && k + 4 >= n;
            ok = got[i].er[k] == want_er;
        }
        // Back to back, every frame after the first follows exactly IFG (12) idle bytes;
        // after an underflow the rest of the frame is drained first, so at least 12.
        if (ok && back_to_back && i > 0)
            ok = fr[i - 1].hole >= 0 ? got[i].gap_before >= 12 : got[i].gap_before == 12;
        if (ok && !back_to_back && i > 0)
            ok = got[i].gap_before >= 12;
        if (per_frame)
            tap_ok(ok, "mac tx %s %s: %zu client bytes -> %zu PHY bytes (got %zu, gap %d)", mode, fr[i].name.c_str(),
                   fr[i].client.size(), n, i < got.size() ? got[i].d.size() : 0, i < got.size() ? got[i].gap_before : -1);
        if (!ok && bad++ == 0)
            first = fr[i].name;
    }
    if (got.size() != fr.size())
        bad++;
    if (!per_frame)
        tap_ok(bad == 0, "mac tx %s: %zu frames (%zu bursts) equal to scapy/zlib%s%s", mode, fr.size(), got.size(),
               bad ? ", first wrong: " : "", first.c_str());
}

void test_tx(const std::vector<Rec> &recs)
{
    std::vector<TxFrame> fr;
    for (const Rec &r : recs)
        if (r.kind == "tx")
            fr.push_back(TxFrame{r.name, unhex(r.f[1]), unhex(r.f[2]), r.f[0] == "1", -1});
    int uf = 0;
    {
        Bench b;
        check_tx(fr, run_tx(b, fr, 1, false, &uf), "back-to-back", true, true);
    }
    for (int div : {4, 10}) {
        Bench b;
        char mode[64];
        snprintf(mode, sizeof mode, "phy_ce 1/%d back-to-back", div);
        check_tx(fr, run_tx(b, fr, div, false, &uf), mode, false, true);
    }
    {
        Bench b;
        check_tx(fr, run_tx(b, fr, 1, true, &uf), "idle between frames", false, false);
    }
    // Underflow: the source misses one PHY byte in the middle of a frame; the frame ends
    // there with tx_er, the rest of it is dropped, and the next frame goes out whole.
    {
        Bytes c(300);
        for (size_t i = 0; i < c.size(); i++)
            c[i] = static_cast<uint8_t>(tap_rnd32());
        TxFrame u{"underflow", c, {}, false, 100};
        for (int i = 0; i < 7; i++)
            u.wire.push_back(0x55);
        u.wire.push_back(0xD5);
        u.wire.insert(u.wire.end(), c.begin(), c.begin() + 100);
        u.wire.push_back(0x00);
        std::vector<TxFrame> two = {u, fr[fr.size() / 2]};
        Bench b;
        auto got = run_tx(b, two, 1, false, &uf);
        check_tx(two, got, "underflow then a good frame", false, true);
        tap_ok(uf == 1, "mac tx underflow reported once (%d)", uf);
    }
}

// ---- MAC receiver --------------------------------------------------------------------
struct RxOut {
    Bytes d;
    bool bad;
    bool fcs_error, runt;
};

struct RxFrame {
    std::string name;
    Bytes wire, out;
    int er_at;
    bool bad;
};

std::vector<RxOut> run_rx(Bench &b, const std::vector<RxFrame> &fr, int div, int gap, int *stray_tuser)
{
    *stray_tuser = 0;
    std::vector<RxOut> got;
    Bytes cur;
    int tail = 0;
    size_t fi = 0, bi = 0;
    int g = gap;
    while (tail < 200 + 12 * div) {
        bool ce = (b.cycle % div) == 0;
        b.top.rx_phy_ce = ce;
        if (ce) {
            if (fi < fr.size() && g == 0) {
                b.top.rx_dv = 1;
                b.top.rx_rxd = fr[fi].wire[bi];
                b.top.rx_er = static_cast<int>(bi) == fr[fi].er_at;
                if (++bi == fr[fi].wire.size()) {
                    fi++;
                    bi = 0;
                    g = gap;
                }
            } else {
                b.top.rx_dv = 0;
                b.top.rx_er = 0;
                b.top.rx_rxd = 0xAA;  // anything: not data while dv is low
                if (g > 0)
                    g--;
            }
        }
        b.tick();
        if (b.top.rx_tvalid) {
            if (b.top.rx_tuser && !b.top.rx_tlast)
                (*stray_tuser)++;
            cur.push_back(b.top.rx_tdata);
            if (b.top.rx_tlast) {
                got.push_back(RxOut{cur, b.top.rx_tuser != 0, b.top.rx_fcs_error != 0, b.top.rx_runt != 0});
                cur.clear();
            }
        }
        if (fi == fr.size())
            tail++;
    }
    if (!cur.empty())
        got.push_back(RxOut{cur, false, false, false});  // a frame without tlast: always wrong
    return got;
}

void test_rx(const std::vector<Rec> &recs)
{
    std::vector<RxFrame> fr;
    for (const Rec &r : recs)
        if (r.kind == "rx")
            fr.push_back(RxFrame{r.name, unhex(r.f[1]), unhex(r.f[2]), std::stoi(r.f[0]), r.f[3] == "1"});
    struct Mode {
        int div, gap;
        bool per_frame;
    } modes[] = {{1, 12, true}, {1, 1, false}, {4, 12, false}, {10, 3, false}};
    for (const Mode &m : modes) {
        Bench b;
        int stray = 0;
        auto got = run_rx(b, fr, m.div, m.gap, &stray);
        size_t gi = 0;
        int wrong = 0;
        std::string first;
        for (const RxFrame &f : fr) {
            bool ok;
            if (f.out.empty()) {
                ok = true;  // nothing expected: the sequence check below catches anything extra
            } else {
                ok = gi < got.size() && got[gi].d == f.out && got[gi].bad == f.bad;
                if (ok && f.name.rfind("flip", 0) == 0)
                    ok = got[gi].fcs_error;
                if (ok && f.name.rfind("runt", 0) == 0)
                    ok = got[gi].runt && !got[gi].fcs_error;
                gi++;
            }
            if (m.per_frame)
                tap_ok(ok, "mac rx %s: %zu PHY bytes -> %zu stream bytes, %s", f.name.c_str(), f.wire.size(),
                       f.out.size(), f.out.empty() ? "nothing" : f.bad ? "bad (tuser)" : "good");
            if (!ok && wrong++ == 0)
                first = f.name;
        }
        bool count_ok = gi == got.size();
        char mode[80];
        snprintf(mode, sizeof mode, "phy_ce 1/%d, %d idle bytes between frames", m.div, m.gap);
        tap_ok(wrong == 0 && count_ok && stray == 0, "mac rx %s: %zu frames in, %zu out (want %zu), tuser off the last beat %d times%s%s",
               mode, fr.size(), got.size(), gi, stray, wrong ? ", first wrong: " : "", first.c_str());
    }
}

// ---- ICRC ----------------------------------------------------------------------------
struct IcFrame {
    std::string name;
    bool roce, ok;
    bool check_value;
    uint32_t icrc;
    Bytes frame;
};

struct IcResult {
    bool roce, ok;
    uint32_t icrc;
    int field_beats, field_wrong;
};

// Streams the frames (with a clock of tvalid low now and then when gaps), one result each.
std::vector<IcResult> run_icrc(Bench &b, const std::vector<IcFrame> &fr, bool gaps)
{
    std::vector<IcResult> res;
    IcResult cur{false, false, 0, 0, 0};
    for (const IcFrame &f : fr) {
        for (size_t i = 0; i < f.frame.size(); i++) {
            while (gaps && (tap_rnd32() & 3) == 0) {
                b.top.ic_tvalid = 0;
                b.tick();
                if (b.top.ic_done)
                    res.push_back(IcResult{b.top.ic_roce != 0, b.top.ic_ok != 0, b.top.ic_icrc, cur.field_beats,
                                           cur.field_wrong}),
                        cur = IcResult{false, false, 0, 0, 0};
            }
            b.top.ic_tvalid = 1;
            b.top.ic_tdata = f.frame[i];
            b.top.ic_tlast = i + 1 == f.frame.size();
            b.settle();
            if (b.top.ic_field) {
                cur.field_beats++;
                if (b.top.ic_byte != f.frame[i] && f.ok)
                    cur.field_wrong++;
            }
            b.tick();
            if (b.top.ic_done)
                res.push_back(IcResult{b.top.ic_roce != 0, b.top.ic_ok != 0, b.top.ic_icrc, cur.field_beats,
                                       cur.field_wrong}),
                    cur = IcResult{false, false, 0, 0, 0};
        }
    }
    b.top.ic_tvalid = 0;
    for (int i = 0; i < 3; i++) {
        b.tick();
        if (b.top.ic_done)
            res.push_back(IcResult{b.top.ic_roce != 0, b.top.ic_ok != 0, b.top.ic_icrc, cur.field_beats,
                                   cur.field_wrong});
    }
    return res;
}

bool ic_match(const IcFrame &f, const IcResult &r)
{
    if (r.roce != f.roce || r.ok != f.ok)
        return false;
    if (f.check_value && r.icrc != f.icrc)
        return false;
    // A good RoCE frame shows its four ICRC beats, each with the computed byte.
    if (f.roce && f.ok && (r.field_beats != 4 || r.field_wrong != 0))
        return false;
    return true;
}

void test_icrc(const std::vector<Rec> &recs, std::vector<IcFrame> &fr)
{
    for (const Rec &r : recs)
        if (r.kind == "icrc")
            fr.push_back(IcFrame{r.name, r.f[0] == "1", r.f[1] == "1", r.f[2] != "-",
                                 r.f[2] != "-" ? static_cast<uint32_t>(std::stoul(r.f[2], nullptr, 16)) : 0u,
                                 unhex(r.f[3])});
    for (bool gaps : {false, true}) {
        Bench b;
        auto res = run_icrc(b, fr, gaps);
        int wrong = 0;
        std::string first;
        for (size_t i = 0; i < fr.size(); i++) {
            bool ok = i < res.size() && ic_match(fr[i], res[i]);
            if (!gaps)
                tap_ok(ok, "icrc %s: %zu bytes, roce %d ok %d icrc %08x (want roce %d ok %d icrc %s%08x)",
                       fr[i].name.c_str(), fr[i].frame.size(), i < res.size() ? res[i].roce : -1,
                       i < res.size() ? res[i].ok : -1, i < res.size() ? res[i].icrc : 0, fr[i].roce, fr[i].ok,
                       fr[i].check_value ? "" : "not compared, ", fr[i].icrc);
            if (!ok && wrong++ == 0)
                first = fr[i].name;
        }
        if (gaps)
            tap_ok(wrong == 0 && res.size() == fr.size(), "icrc with idle clocks between beats: %zu frames%s%s",
                   fr.size(), wrong ? ", first wrong: " : "", first.c_str());
    }
}

// ---- transmitter -> wire -> receiver -> ICRC -----------------------------------------
void test_chain(const std::vector<IcFrame> &ic)
{
    std::vector<TxFrame> fr;
    std::vector<uint32_t> icrc_of;
    for (const IcFrame &f : ic)
        if (f.roce && f.ok) {
            fr.push_back(TxFrame{f.name, f.frame, {}, false, -1});
            icrc_of.push_back(f.icrc);
        }
    for (int div : {1, 10}) {
        Bench b;
        size_t fi = 0, bi = 0, done = 0, good = 0;
        std::string first;
        int idle = 0;
        while (idle < 100 && b.cycle < 20000000) {
            bool ce = (b.cycle % div) == 0;
            b.top.tx_phy_ce = ce;
            b.top.rx_phy_ce = ce;
            // The wire: the receiver samples what the transmitter registered.
            b.top.rx_rxd = b.top.tx_txd;
            b.top.rx_dv = b.top.tx_en;
            b.top.rx_er = b.top.tx_er;
            // The receiver's stream feeds the ICRC unit.
            b.top.ic_tdata = b.top.rx_tdata;
            b.top.ic_tvalid = b.top.rx_tvalid;
            b.top.ic_tlast = b.top.rx_tlast;
            bool offer = fi < fr.size();
            b.top.tx_tvalid = offer;
            if (offer) {
                b.top.tx_tdata = fr[fi].client[bi];
                b.top.tx_tlast = bi + 1 == fr[fi].client.size();
                b.top.tx_tuser = 0;
            }
            b.settle();
            bool fire = offer && b.top.tx_tready;
            b.tick();
            if (fire && ++bi == fr[fi].client.size()) {
                fi++;
                bi = 0;
            }
            if (b.top.rx_tvalid && b.top.rx_tuser && first.empty())
                first = "a frame flagged bad by the receiver";
            if (b.top.ic_done) {
                // The n-th end of frame belongs to the n-th frame sent.
                bool ok = done < fr.size() && b.top.ic_roce && b.top.ic_ok && b.top.ic_icrc == icrc_of[done];
                if (ok)
                    good++;
                else if (first.empty())
                    first = done < fr.size() ? fr[done].name : "an extra frame";
                done++;
            }
            idle = (fi == fr.size() && !b.top.tx_busy) ? idle + 1 : 0;
        }
        tap_ok(good == fr.size() && first.empty(),
               "chain tx -> wire -> rx -> icrc at phy_ce 1/%d: %zu of %zu RoCE frames good with scapy's ICRC%s%s", div,
               good, fr.size(), first.empty() ? "" : ": ", first.c_str());
    }
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    if (argc < 2) {
        fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    std::vector<Rec> recs = load(argv[1]);
    for (const Rec &r : recs)
        if (r.kind == "crc")
            test_crc(r);
    test_tx(recs);
    test_rx(recs);
    std::vector<IcFrame> ic;
    test_icrc(recs, ic);
    test_chain(ic);
    return tap_done();
}
