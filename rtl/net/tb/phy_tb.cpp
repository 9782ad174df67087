/* SPDX-License-Identifier: Apache-2.0 */
// rtl/net PHY ports testbench: nf_phy_rgmii (built with -DPHY_RGMII) or nf_phy_rmii
// (-DPHY_RMII) with its clocks run by an event scheduler, each at its own period in ps,
// asynchronous to the others. Frames go into the PHY pins and must come out on the
// GMII-style side byte for byte, and the other way; a frame the FIFO cannot hold must be
// missing and counted, and every other frame intact. The GMII-style side moves only on the
// port's phy_ce clocks (built with -DCE_DIV=n for the port's CE_DIV): they must be at least
// CE_DIV clocks apart, the RX outputs must hold between them, and phy_ce may stay low longer
// only while the TX FIFO is full, which then never drops a frame.
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "verilated.h"
#ifdef PHY_RGMII
#include "Vnf_phy_rgmii.h"
using Model = Vnf_phy_rgmii;
#else
#include "Vnf_phy_rmii.h"
using Model = Vnf_phy_rmii;
#endif

extern "C" {
#include "tap.h"
}

#ifndef CE_DIV
#error "build with -DCE_DIV=<the port's CE_DIV>"
#endif

namespace {

using Bytes = std::vector<uint8_t>;

// One byte time on a GMII-style interface.
struct Beat {
    bool dv, er;
    uint8_t d;
};

struct Clock {
    uint8_t *pin;
    uint64_t half, next;
};

// Frames as a stream of byte times: each frame's bytes, then `gap` idle byte times.
void append(std::deque<Beat> &s, const Bytes &f, size_t gap)
{
    for (uint8_t b : f)
        s.push_back({true, false, b});
    for (size_t i = 0; i < gap; i++)
        s.push_back({false, false, 0});
}

// Collects frames from byte times (runs of dv) and the shortest gap between two.
struct Collector {
    std::vector<Bytes> frames;
    Bytes cur;
    bool in = false;
    bool er = false;
    size_t idle = 0, min_gap = SIZE_MAX;
    void beat(bool dv, bool e, uint8_t d)
    {
        if (dv) {
            if (!in && !frames.empty() && idle < min_gap)
                min_gap = idle;
            in = true;
            cur.push_back(d);
            er |= e;
        } else {
            if (in) {
                frames.push_back(cur);
                cur.clear();
            }
            in = false;
            idle++;
            return;
        }
        idle = 0;
    }
};

Bytes random_frame(size_t len)
{
    Bytes f;
    for (size_t i = 0; i < len; i++)
        f.push_back(static_cast<uint8_t>(tap_rnd32()));
    return f;
}

// Preamble, SFD and a frame (len bytes with its FCS place) as a MAC sends it.
Bytes mac_frame(size_t len)
{
    Bytes f(7, 0x55);
    f.push_back(0xD5);
    Bytes b = random_frame(len);
    f.insert(f.end(), b.begin(), b.end());
    return f;
}

// `got` must be `sent` with some frames missing, each counted in `drops`.
bool same_but_dropped(const std::vector<Bytes> &sent, const std::vector<Bytes> &got, uint64_t drops, std::string *why)
{
    size_t j = 0, missing = 0;
    for (const Bytes &g : got) {
        while (j < sent.size() && sent[j] != g) {
            j++;
            missing++;
        }
        if (j == sent.size()) {
            *why = "a frame out that was never sent (or changed)";
            return false;
        }
        j++;
    }
    missing += sent.size() - j;
    if (missing != drops) {
        *why = std::to_string(missing) + " frames missing, " + std::to_string(drops) + " drops counted";
        return false;
    }
    return true;
}

struct Bench {
    std::unique_ptr<VerilatedContext> ctx = std::make_unique<VerilatedContext>();
    std::unique_ptr<Model> m = std::make_unique<Model>(ctx.get());
    std::vector<Clock> clk;   // [0] the system clock, then the PHY's
    std::deque<Beat> rx_in;   // byte times into the PHY's receive pins
    std::deque<Beat> tx_in;   // byte times into the GMII TX side, one per phy_ce
    Collector rx_out, tx_out;
    uint64_t rx_drops = 0, tx_drops = 0, sys_cycles = 0;
    bool tx_clk_ok = true;
    // phy_ce: at the clock being run, its last clock, the fewest clocks between two; clocks
    // it stayed low past CE_DIV and the fewest TX FIFO bytes (in minus on the pins) then;
    // the most ever; RX outputs that moved on a clock without it.
    bool ce = false;
    uint64_t last_ce = 0, min_ce_gap = UINT64_MAX, paused = 0, tx_fifo_in = 0, tx_pin_bytes = 0;
    uint64_t min_fill_paused = UINT64_MAX, max_fill = 0, rx_moved = 0;
    Beat rx_was = {false, false, 0};

    explicit Bench(uint64_t sys_ps, const std::vector<uint64_t> &phy_ps)
    {
        clk.push_back({&m->clk, sys_ps / 2, sys_ps / 2});
#ifdef PHY_RGMII
        uint8_t *pins[] = {&m->rgmii_rx_clk, &m->clk_tx, &m->clk_tx90};
        uint64_t phase[] = {1000, 3000, 3000 + phy_ps[1] / 4};
        for (size_t i = 0; i < 3; i++)
            clk.push_back({pins[i], phy_ps[i] / 2, phase[i]});
#else
        clk.push_back({&m->rmii_ref_clk, phy_ps[0] / 2, 1500});
#endif
        m->rst = 1;
        m->eval();
    }

    // Before the system clock's rising edge: the MAC samples RX on a phy_ce clock (the TX
    // byte on the pins is the one this byte time takes).
    void before_sys()
    {
        ce = m->phy_ce;
        rx_was = {static_cast<bool>(m->gmii_rx_dv), static_cast<bool>(m->gmii_rx_er), m->gmii_rxd};
        uint64_t fill = tx_fifo_in > tx_pin_bytes ? tx_fifo_in - tx_pin_bytes : 0;
        if (fill > max_fill)
            max_fill = fill;
        if (sys_cycles < 24)
            return;  // reset and the FIFO's first w_room
        if (ce) {
            if (last_ce && sys_cycles - last_ce < min_ce_gap)
                min_ce_gap = sys_cycles - last_ce;
            last_ce = sys_cycles;
            rx_out.beat(rx_was.dv, rx_was.er, rx_was.d);
            tx_fifo_in += m->gmii_tx_en;
        } else if (last_ce && sys_cycles - last_ce >= CE_DIV) {
            paused++;
            if (fill < min_fill_paused)
                min_fill_paused = fill;
        }
    }
    // After it: the MAC's next TX byte once this one was taken.
    void after_sys()
    {
        sys_cycles++;
        if (!ce && sys_cycles > 24 && (m->gmii_rx_dv != rx_was.dv || m->gmii_rx_er != rx_was.er || m->gmii_rxd != rx_was.d))
            rx_moved++;
        rx_drops += m->rx_drop;
        tx_drops += m->tx_drop;
        if (sys_cycles == 20)
            m->rst = 0;
        if (ce || m->rst) {
            Beat b = {false, false, 0};
            if (!tx_in.empty() && m->rst == 0) {
                b = tx_in.front();
                tx_in.pop_front();
            }
            m->gmii_tx_en = b.dv;
            m->gmii_tx_er = b.er;
            m->gmii_txd = b.d;
        }
    }
    // The pacing checks of a case: `want_pause`, whether the TX FIFO must have filled.
    void pace_check(const char *name, bool want_pause)
    {
        bool gap_ok = min_ce_gap >= CE_DIV && min_ce_gap != UINT64_MAX;
        // Paused only when full: the bench's count includes the FIFO's hold byte and the
        // bytes between its read port and the pins.
        bool full_ok = paused == 0 || min_fill_paused + 16 >= 2048;
        tap_ok(gap_ok && full_ok && rx_moved == 0 && max_fill <= 2048 + 4 && (paused > 0) == want_pause,
               "%s: CE_DIV %d: phy_ce at least %llu clocks apart, RX outputs moved off it %llu times, "
               "low past CE_DIV on %llu clocks (TX FIFO then at least %llu bytes, at most %llu ever)",
               name, CE_DIV, static_cast<unsigned long long>(min_ce_gap), static_cast<unsigned long long>(rx_moved),
               static_cast<unsigned long long>(paused),
               static_cast<unsigned long long>(paused ? min_fill_paused : 0), static_cast<unsigned long long>(max_fill));
    }

#ifdef PHY_RGMII
    Beat rx_cur = {false, false, 0};
    Beat tx_cur = {false, false, 0};
    // Before an edge of clock i to `level`; after it.
    void before(size_t i, int level)
    {
        if (i == 0 && level)
            before_sys();
        if (i == 1) {
            if (level) {
                rx_cur = {false, false, 0};
                if (!rx_in.empty() && sys_cycles > 40) {
                    rx_cur = rx_in.front();
                    rx_in.pop_front();
                }
                m->rgmii_rxd = rx_cur.d & 15;
                m->rgmii_rx_ctl = rx_cur.dv;
            } else {
                m->rgmii_rxd = rx_cur.d >> 4;
                m->rgmii_rx_ctl = rx_cur.dv ^ rx_cur.er;
            }
        }
    }
    void after(size_t i, int level)
    {
        if (i == 0 && level)
            after_sys();
        if (i == 2) {
            if (level) {
                tx_cur.d = m->rgmii_txd;
                tx_cur.dv = m->rgmii_tx_ctl;
                if (!m->rgmii_tx_clk)
                    tx_clk_ok = false;
            } else {
                tx_cur.d |= static_cast<uint8_t>(m->rgmii_txd << 4);
                tx_cur.er = tx_cur.dv ^ m->rgmii_tx_ctl;
                tx_out.beat(tx_cur.dv, tx_cur.er, tx_cur.d);
                tx_pin_bytes += tx_cur.dv && sys_cycles > 24;
                if (m->rgmii_tx_clk)
                    tx_clk_ok = false;
            }
        }
    }
#else
    // RMII receive: one dibit and CRS_DV per reference clock.
    struct Dibit {
        bool crs;
        uint8_t d;
    };
    std::deque<Dibit> rx_dib;
    uint8_t tx_byte = 0;
    int tx_n = 0;
    bool tx_en_was = false;
    size_t tx_idle = 0;
    void before(size_t i, int level)
    {
        if (i == 0 && level)
            before_sys();
        if (i == 1 && level) {
            Dibit d = {false, 0};
            if (!rx_dib.empty() && sys_cycles > 40) {
                d = rx_dib.front();
                rx_dib.pop_front();
            }
            m->rmii_crs_dv = d.crs;
            m->rmii_rxd = d.d;
        }
    }
    void after(size_t i, int level)
    {
        if (i == 0 && level)
            after_sys();
        if (i == 1 && level) {
            // Bytes LSB dibit first; a frame starts at tx_en's rise.
            if (m->rmii_tx_en) {
                if (!tx_en_was)
                    tx_n = 0;
                tx_byte = static_cast<uint8_t>(tx_byte >> 2 | m->rmii_txd << 6);
                if (++tx_n == 4) {
                    tx_out.beat(true, false, tx_byte);
                    tx_pin_bytes += sys_cycles > 24;
                    tx_n = 0;
                }
                tx_idle = 0;
            } else if (++tx_idle % 4 == 0) {
                tx_out.beat(false, false, 0);
            }
            tx_en_was = m->rmii_tx_en;
        }
    }
    // A frame on the RMII receive pins: optional 00 dibits before the preamble, 7 x 0x55 and
    // the SFD, the frame, CRS_DV toggling on its last `toggle` bytes, then `gap` idle dibits.
    void rmii_frame(const Bytes &f, int lead, size_t toggle, size_t gap)
    {
        for (int i = 0; i < lead; i++)
            rx_dib.push_back({true, 0});
        Bytes all(7, 0x55);
        all.push_back(0xD5);
        all.insert(all.end(), f.begin(), f.end());
        for (size_t k = 0; k < all.size(); k++) {
            bool tog = k >= all.size() - toggle;
            for (int j = 0; j < 4; j++)
                rx_dib.push_back({!tog || (j & 1), static_cast<uint8_t>(all[k] >> (2 * j) & 3)});
        }
        for (size_t i = 0; i < gap; i++)
            rx_dib.push_back({false, 0});
    }
#endif

    bool busy() const
    {
#ifdef PHY_RGMII
        return !rx_in.empty() || !tx_in.empty();
#else
        return !rx_dib.empty() || !tx_in.empty();
#endif
    }

    // Runs until the stimulus is used up and then for `tail_ps` more.
    void run(uint64_t tail_ps)
    {
        uint64_t end = UINT64_MAX, now = 0;
        while (now < end) {
            size_t i = 0;
            for (size_t k = 1; k < clk.size(); k++)
                if (clk[k].next < clk[i].next)
                    i = k;
            now = clk[i].next;
            int level = !*clk[i].pin;
            before(i, level);
            *clk[i].pin = static_cast<uint8_t>(level);
            m->eval();
            after(i, level);
            clk[i].next += clk[i].half;
            if (end == UINT64_MAX && !busy() && m->rst == 0)
                end = now + tail_ps;
        }
        rx_out.beat(false, false, 0);
        tx_out.beat(false, false, 0);
    }
};

// Frames of random lengths 60..1514 + FCS.
size_t rnd_len() { return 64 + tap_rnd32() % (1518 - 64 + 1); }

#ifdef PHY_RGMII
// RX: frames into the RGMII pins at 125 MHz, out at the system clock; TX the other way.
// `byte_ps`: a byte time on the system side (the system clock CE_DIV times faster);
// `rx_gap_mul`: idle byte times after each received frame, times its length (0: the MAC's
// 12; -1: no RX frames); `tx_gap_mul` likewise in byte times; `expect_drops`: whether RX
// drops must happen (else none may); `want_pause`: whether the TX FIFO must fill.
void rgmii_case(const char *name, uint64_t byte_ps, int frames, int rx_gap_mul, int tx_gap_mul, bool expect_drops,
                bool want_pause, bool shifted)
{
    Bench b(byte_ps / CE_DIV, {8000, 7992, 7992});
    std::vector<Bytes> rx_sent, tx_sent;
    for (int i = 0; i < frames; i++) {
        if (rx_gap_mul >= 0) {
            Bytes f = mac_frame(rnd_len());
            rx_sent.push_back(f);
            append(b.rx_in, f, rx_gap_mul ? f.size() * rx_gap_mul : 12);
        }
        Bytes t = mac_frame(rnd_len());
        tx_sent.push_back(t);
        append(b.tx_in, t, tx_gap_mul ? t.size() * tx_gap_mul : 12);
    }
    b.run(100000000);
    std::string why;
    bool rx_ok = same_but_dropped(rx_sent, b.rx_out.frames, b.rx_drops, &why);
    bool drops_ok = expect_drops ? b.rx_drops > 0 : b.rx_drops == 0;
    tap_ok(rx_ok && drops_ok && !b.rx_out.er && (rx_sent.size() < 2 || b.rx_out.min_gap >= 2),
           "rgmii %s: rx %zu frames in, %zu out, %llu dropped, shortest gap %zu%s%s", name, rx_sent.size(),
           b.rx_out.frames.size(), static_cast<unsigned long long>(b.rx_drops), b.rx_out.min_gap, rx_ok ? "" : ": ",
           why.c_str());
    why.clear();
    bool tx_ok = same_but_dropped(tx_sent, b.tx_out.frames, b.tx_drops, &why);
    tap_ok(tx_ok && b.tx_drops == 0 && !b.tx_out.er && b.tx_out.min_gap >= 12 && (shifted || b.tx_clk_ok),
           "rgmii %s: tx %d frames in, %zu on the pins, %llu dropped, shortest gap %zu, TXC %s%s%s", name, frames,
           b.tx_out.frames.size(), static_cast<unsigned long long>(b.tx_drops), b.tx_out.min_gap,
           shifted ? "shifted" : (b.tx_clk_ok ? "with the data" : "wrong"), tx_ok ? "" : ": ", why.c_str());
    b.pace_check((std::string("rgmii ") + name).c_str(), want_pause);
}
#else
// `byte_ps`: a byte time on the system side (the system clock CE_DIV times faster);
// `tx_gap_mul`: idle byte times after each frame to send, times its length (0: 12);
// `want_pause`: whether the TX FIFO must fill (the MAC paused, no frame dropped).
void rmii_case(const char *name, uint64_t byte_ps, int frames, bool toggles, int tx_gap_mul, bool want_pause)
{
    Bench b(byte_ps / CE_DIV, {20000});
    std::vector<Bytes> rx_want, tx_sent;
    for (int i = 0; i < frames; i++) {
        Bytes f = random_frame(rnd_len());
        Bytes w = {0x55, 0x55, 0xD5};
        w.insert(w.end(), f.begin(), f.end());
        rx_want.push_back(w);
        size_t tog = toggles ? 1 + tap_rnd32() % 4 : 0;
        b.rmii_frame(f, toggles ? static_cast<int>(tap_rnd32() % 8) : 0, tog, 48);
        Bytes t = mac_frame(rnd_len());
        tx_sent.push_back(t);
        append(b.tx_in, t, tx_gap_mul ? t.size() * tx_gap_mul : 12);
    }
    b.run(1000000000);
    std::string why;
    bool rx_ok = same_but_dropped(rx_want, b.rx_out.frames, b.rx_drops, &why);
    tap_ok(rx_ok && b.rx_drops == 0 && !b.rx_out.er && b.rx_out.min_gap >= 2,
           "rmii %s: rx %d frames in%s, %zu out, %llu dropped, shortest gap %zu%s%s", name, frames,
           toggles ? " (CRS_DV toggling at their ends)" : "", b.rx_out.frames.size(),
           static_cast<unsigned long long>(b.rx_drops), b.rx_out.min_gap, rx_ok ? "" : ": ", why.c_str());
    why.clear();
    bool tx_ok = same_but_dropped(tx_sent, b.tx_out.frames, b.tx_drops, &why);
    tap_ok(tx_ok && b.tx_drops == 0 && b.tx_out.frames.size() == tx_sent.size() && b.tx_out.min_gap >= 12,
           "rmii %s: tx %d frames in, %zu on the pins, %llu dropped, shortest gap %zu bytes%s%s", name, frames,
           b.tx_out.frames.size(), static_cast<unsigned long long>(b.tx_drops), b.tx_out.min_gap, tx_ok ? "" : ": ",
           why.c_str());
    b.pace_check((std::string("rmii ") + name).c_str(), want_pause);
}
#endif

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
#ifdef PHY_RGMII
    bool shifted = argc > 1 && std::string(argv[1]) == "shifted";
    // Byte times at half the PHY's rate, so received frames need gaps as long as themselves.
    rgmii_case("bytes at 62.5 MHz, gaps", 16000, 24, 1, 0, false, false, shifted);
    // Byte times faster than the PHY's: back to back both ways; TX fills its FIFO and pauses.
    rgmii_case("bytes at 143 MHz, back to back", 7000, 24, 0, 0, false, true, shifted);
    // The same with nothing received: the pauses alone.
    rgmii_case("bytes at 143 MHz, tx only", 7000, 24, -1, 0, false, true, shifted);
    // 25 MHz: long frames back to back overrun the RX FIFO; the ones that fit are intact.
    rgmii_case("bytes at 25 MHz, overrun", 40000, 12, 0, 0, true, false, shifted);
#else
    rmii_case("bytes at 75 MHz", 13333, 16, false, 6, false);
    rmii_case("bytes at 75 MHz", 13333, 24, true, 6, false);
    rmii_case("bytes at 62.5 MHz", 16000, 16, true, 5, false);
    // The MAC's frames back to back, far faster than 100 Mb/s: the MAC waits for the FIFO.
    rmii_case("bytes at 75 MHz, tx back to back", 13333, 8, false, 0, true);
#endif
    return tap_done();
}
