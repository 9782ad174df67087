// SPDX-License-Identifier: Apache-2.0
// nf_wire and nfwire without RTL: each endpoint's transmit pins are driven by a GMII
// generator and its receive pins watched by a checker, at one byte per phy_ce. Prints TAP
// lines. Cases (sim/tests/test_wire.sh starts the hub for each):
//   wire_test frames SOCK EXPECT   switch: lengths, gaps, bad frames, queue overflow,
//                                  learning; writes the good frames (hex) for the capture
//   wire_test hub SOCK             --hub: unicast floods even after learning
//   wire_test drop SOCK N P OUT L  N frames through --drop P; writes the sequence numbers
//   wire_test tap SOCK             ARP and ICMP echo with a Linux stack behind --tap
//   wire_test loopback             PHY loopback (no hub): a port's frames return to its own pins
#include "nf_wire.h"

#include "tap.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;

double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

Bytes with_fcs(const Bytes &f)
{
    Bytes o = f;
    uint32_t c = nf_wire_crc32(f.data(), f.size());
    for (int k = 0; k < 4; k++)
        o.push_back(uint8_t(c >> (8 * k)));
    return o;
}

// What a transmitting MAC puts on its pins for one frame.
struct TxFrame {
    Bytes frame;           // without FCS
    unsigned preamble = 7; // 0x55 bytes before the SFD
    bool sfd = true;       // false: a carrier of preamble bytes only
    bool bad_fcs = false;  // the FCS's first byte flipped
    long er_at = -1;       // tx_er on this byte after the SFD
};

// A GMII transmitter: preamble, SFD, frame, FCS, then 12 idle bytes, one per phy_ce.
class GmiiGen {
public:
    void push(const TxFrame &f) { q_.push_back(f); }
    bool busy() const { return !q_.empty() || !bytes_.empty() || gap_; }
    void next(uint8_t *d, bool *en, bool *er)
    {
        *d = 0;
        *en = *er = false;
        if (bytes_.empty() && !gap_ && !q_.empty())
            load();
        if (pos_ < bytes_.size()) {
            *d = bytes_[pos_];
            *en = true;
            *er = long(pos_) == er_pos_;
            if (++pos_ == bytes_.size()) {
                bytes_.clear();
                pos_ = 0;
                gap_ = 12;
            }
            return;
        }
        if (gap_)
            gap_--;
    }

private:
    void load()
    {
        TxFrame f = q_.front();
        q_.pop_front();
        bytes_.assign(f.preamble, 0x55);
        er_pos_ = -1;
        if (f.sfd) {
            bytes_.push_back(0xD5);
            Bytes w = with_fcs(f.frame);
            if (f.bad_fcs)
                w[f.frame.size()] ^= 0x01;
            if (f.er_at >= 0)
                er_pos_ = long(bytes_.size()) + f.er_at;
            bytes_.insert(bytes_.end(), w.begin(), w.end());
        }
        pos_ = 0;
    }
    std::deque<TxFrame> q_;
    Bytes bytes_;
    size_t pos_ = 0;
    long er_pos_ = -1;
    unsigned gap_ = 0;
};

// Watches receive pins: every frame must start with 7 x 0x55 and the SFD; the pins hold
// between phy_ce clocks; rx_er stays low. Records each frame (FCS included) and the idle
// phy_ce clocks before it.
struct RxFrame {
    Bytes bytes;
    unsigned gap;
};
class GmiiMon {
public:
    void sample(bool phy_ce, uint8_t d, bool dv, bool er)
    {
        if (er)
            errors++;
        if (!phy_ce) {
            if (d != last_d_ || dv != last_dv_)
                errors++;
            return;
        }
        last_d_ = d;
        last_dv_ = dv;
        if (!dv) {
            if (in_) {
                frames.push_back({cur_, idle_});
                in_ = false;
                idle_ = 0;
            }
            idle_++;
            return;
        }
        if (!in_) {
            in_ = true;
            pre_ = 0;
            cur_.clear();
            sfd_ = false;
        }
        if (!sfd_) {
            if (d == 0x55) {
                pre_++;
            } else if (d == 0xD5 && pre_ == 7) {
                sfd_ = true;
            } else {
                errors++;
            }
            return;
        }
        cur_.push_back(d);
    }
    std::vector<RxFrame> frames;
    unsigned errors = 0;  // a bad preamble, rx_er, or pins moving off phy_ce

private:
    bool in_ = false, sfd_ = false;
    unsigned pre_ = 0, idle_ = 1000;
    Bytes cur_;
    uint8_t last_d_ = 0;
    bool last_dv_ = false;
};

struct Endpoint {
    std::unique_ptr<NfWire> w;
    GmiiGen gen;
    GmiiMon mon;
    bool frozen = false;  // not clocked: frames pile up in its socket and queue
    uint8_t d = 0;        // the transmit pins, held between phy_ce clocks
    bool en = false, er = false;
};

class Bench {
public:
    Endpoint &add(const std::string &sock, const NfWire::Options &opt = NfWire::Options())
    {
        eps_.emplace_back(new Endpoint);
        Endpoint &e = *eps_.back();
        e.w.reset(new NfWire(opt));
        std::string err;
        if (!opt.loopback && !e.w->connect(sock, &err))
            std::fprintf(stderr, "%s\n", err.c_str());
        return e;
    }
    unsigned div = 1;  // phy_ce every div clocks

    void step()
    {
        bool ce = (cycle_++ % div) == 0;
        for (const auto &ep : eps_) {
            Endpoint &e = *ep;
            if (e.frozen)
                continue;
            if (ce)
                e.gen.next(&e.d, &e.en, &e.er);
            e.w->clock(ce, e.d, e.en, e.er);
            e.mon.sample(ce, e.w->rxd(), e.w->rx_dv(), e.w->rx_er());
        }
    }
    // Steps until pred() holds or the monotonic deadline passes; false on the deadline.
    template <class P> bool run_until(P pred, double seconds = 5.0)
    {
        double end = now_s() + seconds;
        for (;;) {
            for (int i = 0; i < 2000; i++) {
                if (pred())
                    return true;
                step();
            }
            if (now_s() > end)
                return pred();
        }
    }
    bool idle()
    {
        for (const auto &e : eps_)
            if (!e->frozen && (e->gen.busy() || e->w->tx_busy() || e->w->rx_busy()))
                return false;
        return true;
    }
    // Steps until every endpoint is idle and nothing more has arrived for `quiet` seconds.
    bool settle(double quiet = 0.05, double seconds = 10.0)
    {
        double end = now_s() + seconds, last = now_s();
        size_t seen = total();
        while (now_s() < end) {
            for (int i = 0; i < 2000; i++)
                step();
            if (total() != seen || !idle()) {
                seen = total();
                last = now_s();
            } else if (now_s() - last > quiet) {
                return true;
            }
        }
        return false;
    }

private:
    size_t total()
    {
        size_t n = 0;
        for (const auto &e : eps_)
            n += e->mon.frames.size() + e->w->stats().rx_frames;
        return n;
    }
    std::vector<std::unique_ptr<Endpoint>> eps_;
    uint64_t cycle_ = 0;
};

const uint8_t kMacA[6] = {0x02, 0, 0, 0, 0, 0x0a};
const uint8_t kMacB[6] = {0x02, 0, 0, 0, 0, 0x0b};
const uint8_t kBcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// A frame of len bytes: destination, source, EtherType 0x88B5 (local experimental), then
// pseudo-random bytes; shorter lengths cut the header.
Bytes make_frame(const uint8_t *dst, const uint8_t *src, size_t len, uint32_t tag = 0)
{
    Bytes f(dst, dst + 6);
    f.insert(f.end(), src, src + 6);
    f.push_back(0x88);
    f.push_back(0xB5);
    for (int k = 0; k < 4; k++)
        f.push_back(uint8_t(tag >> (8 * k)));
    while (f.size() < len)
        f.push_back(uint8_t(tap_rnd32()));
    f.resize(len);
    return f;
}

uint32_t tag_of(const Bytes &rx)
{
    return rx.size() >= 18 ? uint32_t(rx[14]) | uint32_t(rx[15]) << 8 | uint32_t(rx[16]) << 16 | uint32_t(rx[17]) << 24
                           : ~0u;
}

void write_hex(FILE *f, const Bytes &b)
{
    for (uint8_t x : b)
        std::fprintf(f, "%02x", x);
    std::fprintf(f, "\n");
}

// Sends one frame from `from` and steps until `to` has one frame more; returns it.
bool send_one(Bench &b, Endpoint &from, Endpoint &to, const TxFrame &tf, RxFrame *got, double seconds = 5.0)
{
    size_t before = to.mon.frames.size();
    from.gen.push(tf);
    if (!b.run_until([&] { return to.mon.frames.size() > before; }, seconds))
        return false;
    *got = to.mon.frames[before];
    return true;
}

int test_frames(const char *sock, const char *expect_path)
{
    Bench b;
    Endpoint &A = b.add(sock), &B = b.add(sock), &C = b.add(sock);
    NfWire::Options small;
    small.rx_queue = 4;
    Endpoint &D = b.add(sock, small);
    tap_ok(A.w->connected() && B.w->connected() && C.w->connected() && D.w->connected(),
           "connect: four endpoints join the hub's socket");
    FILE *expect = std::fopen(expect_path, "w");
    if (!expect)
        return 1;
    RxFrame got;

    // Learning: the switch knows nobody yet, so A's unicast to B floods; B's answer
    // teaches it B; after that A's unicast reaches B only. C's next frame is the marker.
    Bytes ab = make_frame(kMacB, kMacA, 64, 1);
    bool ok1 = send_one(b, A, B, {ab}, &got) && got.bytes == with_fcs(ab);
    write_hex(expect, ab);
    bool flooded = b.run_until([&] { return C.mon.frames.size() == 1; }, 2.0) && C.mon.frames[0].bytes == with_fcs(ab);
    tap_ok(ok1 && flooded, "switch: unicast to an unknown address floods to every other port");
    Bytes ba = make_frame(kMacA, kMacB, 64, 2);
    bool ok2 = send_one(b, B, A, {ba}, &got) && got.bytes == with_fcs(ba);
    write_hex(expect, ba);
    Bytes ab2 = make_frame(kMacB, kMacA, 80, 3);
    bool ok3 = send_one(b, A, B, {ab2}, &got) && got.bytes == with_fcs(ab2);
    write_hex(expect, ab2);
    Bytes mark = make_frame(kBcast, kMacA, 60, 4);
    bool ok4 = send_one(b, A, C, {mark}, &got) && got.bytes == with_fcs(mark);
    write_hex(expect, mark);
    b.settle();
    tap_ok(ok2 && ok3 && ok4 && C.mon.frames.size() == 2 && D.mon.frames.size() == 2,
           "switch: after learning, unicast goes to its port only (C and D see the flood and the broadcast, not the rest)");

    // Every length 1..1514 from A to B, at one byte per clock.
    unsigned bad_len = 0, bad_gap = 0;
    for (size_t len = 1; len <= 1514; len++) {
        Bytes f = make_frame(kMacB, kMacA, len, uint32_t(len));
        if (!send_one(b, A, B, {f}, &got) || got.bytes != with_fcs(f)) {
            if (!bad_len)
                std::printf("# length %zu: %s\n", len, got.bytes.empty() ? "not received" : "differs");
            bad_len++;
        }
        if (got.gap < 12)
            bad_gap++;
        write_hex(expect, f);
    }
    b.settle();
    tap_ok(bad_len == 0, "frames: every length 1..1514 arrives intact with its FCS (%u wrong)", bad_len);
    tap_ok(B.mon.errors == 0 && bad_gap == 0,
           "frames: 7 x 0x55 and the SFD before each, rx_er low, at least 12 idle bytes between frames");

    // Slower PHY byte clocks: the receive pins hold between phy_ce clocks.
    for (unsigned div : {4u, 10u}) {
        b.div = div;
        unsigned bad = 0;
        for (size_t len : {60, 64, 1514, 333}) {
            Bytes f = make_frame(kMacB, kMacA, len, uint32_t(len));
            if (!send_one(b, A, B, {f}, &got) || got.bytes != with_fcs(f))
                bad++;
            write_hex(expect, f);
        }
        tap_ok(bad == 0 && B.mon.errors == 0, "frames: phy_ce 1 clock in %u: intact, the pins held between bytes", div);
    }
    b.div = 1;

    // Back to back: B is not clocked until all five frames wait in its queue, so they
    // are fed with exactly the gap between them.
    B.frozen = true;
    size_t before = B.mon.frames.size();
    std::vector<Bytes> burst;
    for (size_t len : {64, 1514, 60, 100, 1000}) {
        burst.push_back(make_frame(kMacB, kMacA, len, uint32_t(0x100 + len)));
        A.gen.push({burst.back()});
        write_hex(expect, burst.back());
    }
    bool queued = b.run_until([&] { B.w->poll(); return B.w->rx_queued() == 5; });
    B.frozen = false;
    bool fed = b.run_until([&] { return B.mon.frames.size() == before + 5; });
    bool same = fed, gaps = fed;
    for (size_t i = 0; fed && i < 5; i++) {
        same &= B.mon.frames[before + i].bytes == with_fcs(burst[i]);
        if (i)
            gaps &= B.mon.frames[before + i].gap == 12;
    }
    tap_ok(queued && same, "queue: frames arriving while one is fed wait and come out in order");
    tap_ok(gaps, "queue: back-to-back frames are fed with exactly 12 idle bytes between them");

    // Bad frames travel bad: a wrong FCS verbatim, tx_er as an inverted FCS.
    NfWire::Stats s0 = A.w->stats();
    Bytes fb = make_frame(kMacB, kMacA, 100, 0x200);
    TxFrame tb{fb};
    tb.bad_fcs = true;
    Bytes want = with_fcs(fb);
    want[100] ^= 0x01;
    bool badok = send_one(b, A, B, tb, &got) && got.bytes == want && !nf_wire_fcs_ok(got.bytes.data(), got.bytes.size());
    tap_ok(badok && A.w->stats().tx_bad_fcs == s0.tx_bad_fcs + 1,
           "bad FCS: sent and counted (tx_bad_fcs); it arrives with the same wrong FCS");
    Bytes fe = make_frame(kMacB, kMacA, 100, 0x201);
    TxFrame te{fe};
    te.er_at = 20;
    want = with_fcs(fe);
    for (int k = 0; k < 4; k++)
        want[100 + k] ^= 0xFF;
    bool erok = send_one(b, A, B, te, &got) && got.bytes == want;
    tap_ok(erok && A.w->stats().tx_er == s0.tx_er + 1 && A.w->stats().tx_bad_fcs == s0.tx_bad_fcs + 1,
           "tx_er: the frame is counted and arrives with its FCS inverted (bad at the receiver)");
    // A carrier with no SFD sends nothing; a short preamble is fine. B's next frame must
    // be the one after the SFD-less carrier.
    TxFrame nosfd{make_frame(kMacB, kMacA, 64, 0x202)};
    nosfd.sfd = false;
    nosfd.preamble = 8;
    A.gen.push(nosfd);
    Bytes fs = make_frame(kMacB, kMacA, 64, 0x203);
    TxFrame ts{fs};
    ts.preamble = 1;
    bool sfdok = send_one(b, A, B, ts, &got) && got.bytes == with_fcs(fs);
    write_hex(expect, fs);
    tap_ok(sfdok && A.w->stats().tx_no_sfd == s0.tx_no_sfd + 1,
           "preamble: a carrier without an SFD is counted and not sent; a 1-byte preamble is taken");

    // Overflow: D holds 4 frames; the other 6 of a broadcast burst are dropped and counted.
    b.settle();
    D.frozen = true;
    size_t dbefore = D.mon.frames.size();
    uint64_t drx = D.w->stats().rx_frames;
    std::vector<Bytes> ten;
    for (uint32_t i = 0; i < 10; i++) {
        ten.push_back(make_frame(kBcast, kMacA, 64, 0x300 + i));
        A.gen.push({ten.back()});
        write_hex(expect, ten.back());
    }
    bool all = b.run_until([&] { D.w->poll(); return D.w->stats().rx_frames == drx + 10; });
    D.frozen = false;
    b.settle();
    bool first4 = D.mon.frames.size() == dbefore + 4;
    for (size_t i = 0; first4 && i < 4; i++)
        first4 &= D.mon.frames[dbefore + i].bytes == with_fcs(ten[i]);
    tap_ok(all && D.w->stats().rx_dropped == 6 && first4,
           "overflow: a queue of 4 keeps the first 4 of 10 frames and counts 6 dropped (%llu)",
           (unsigned long long)D.w->stats().rx_dropped);
    tap_ok(A.mon.errors + B.mon.errors + C.mon.errors + D.mon.errors == 0 && A.w->stats().tx_dropped == 0,
           "pins: no preamble error, rx_er or pin change off phy_ce anywhere; nothing dropped on send");
    std::fclose(expect);
    return tap_done();
}

int test_hub(const char *sock)
{
    Bench b;
    Endpoint &A = b.add(sock), &B = b.add(sock), &C = b.add(sock);
    RxFrame got;
    Bytes ab = make_frame(kMacB, kMacA, 64, 1), ba = make_frame(kMacA, kMacB, 64, 2);
    bool ok = send_one(b, A, B, {ab}, &got) && send_one(b, B, A, {ba}, &got) && send_one(b, A, B, {ab}, &got) &&
              b.run_until([&] { return C.mon.frames.size() >= 3; });
    b.settle();
    tap_ok(ok && C.mon.frames.size() == 3, "hub: every frame goes to every other port, learned or not (%zu at C)",
           C.mon.frames.size());
    return tap_done();
}

int test_drop(const char *sock, unsigned n, double p, const char *out, const char *label)
{
    Bench b;
    NfWire::Options big;
    big.rx_queue = 100000;
    Endpoint &A = b.add(sock), &B = b.add(sock, big);
    for (uint32_t i = 0; i < n; i++)
        A.gen.push({make_frame(kBcast, kMacA, 64, i)});
    // The segment takes A's frames in order: once an end marker arrives, every frame
    // before it has been forwarded or lost. A marker can be lost too: send until one comes.
    const uint32_t kEnd = 0xFFFFFFFFu;
    auto marked = [&] { return !B.mon.frames.empty() && tag_of(B.mon.frames.back().bytes) == kEnd; };
    bool done = b.run_until([&] { return !A.gen.busy() && !A.w->tx_busy(); }, 30.0);
    bool end = false;
    for (int tries = 0; tries < 100 && done && !end; tries++) {
        A.gen.push({make_frame(kBcast, kMacA, 64, kEnd)});
        end = b.run_until(marked, 0.5);
    }
    done &= end;
    size_t got = 0;
    FILE *f = std::fopen(out, "w");
    if (!f)
        return 1;
    for (const RxFrame &r : B.mon.frames)
        if (tag_of(r.bytes) != kEnd) {
            std::fprintf(f, "%u\n", tag_of(r.bytes));
            got++;
        }
    std::fclose(f);
    double share = 1.0 - double(got) / n;
    // Binomial: five standard deviations either side.
    double sd = std::sqrt(p * (1 - p) / n);
    tap_ok(done && B.w->stats().rx_dropped == 0 && std::fabs(share - p) <= 5 * sd + 1e-9,
           "drop %s: %u frames through --drop %.2f lose %.3f of them", label, n, p, share);
    return tap_done();
}

// ---- TAP: a Linux stack at 10.213.0.1 behind the hub; this endpoint is 10.213.0.2 ----
uint16_t csum(const uint8_t *p, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i + 1 < n; i += 2)
        s += uint32_t(p[i]) << 8 | p[i + 1];
    if (n & 1)
        s += uint32_t(p[n - 1]) << 8;
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    return uint16_t(~s);
}

// Waits for a frame at e that match() accepts, skipping others (the kernel also sends
// IPv6 neighbour discovery and the like when the link comes up).
template <class M> bool wait_for(Bench &b, Endpoint &e, size_t &seen, M match, Bytes *out, double seconds)
{
    return b.run_until(
        [&] {
            for (; seen < e.mon.frames.size(); seen++) {
                const Bytes &f = e.mon.frames[seen].bytes;
                if (nf_wire_fcs_ok(f.data(), f.size()) && match(f)) {
                    *out = f;
                    seen++;
                    return true;
                }
            }
            return false;
        },
        seconds);
}

int test_tap(const char *sock)
{
    Bench b;
    Endpoint &A = b.add(sock);
    const uint8_t me_ip[4] = {10, 213, 0, 2}, peer_ip[4] = {10, 213, 0, 1};
    size_t seen = 0;
    Bytes f(kBcast, kBcast + 6), reply;
    f.insert(f.end(), kMacA, kMacA + 6);
    const uint8_t arp_hdr[] = {0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 1};
    f.insert(f.end(), arp_hdr, arp_hdr + sizeof(arp_hdr));
    f.insert(f.end(), kMacA, kMacA + 6);
    f.insert(f.end(), me_ip, me_ip + 4);
    f.insert(f.end(), 6, 0);
    f.insert(f.end(), peer_ip, peer_ip + 4);
    f.resize(60, 0);
    A.gen.push({f});
    bool arp = wait_for(b, A, seen, [&](const Bytes &r) {
        return r.size() >= 42 + 4 && r[12] == 0x08 && r[13] == 0x06 && r[21] == 2 &&
               std::memcmp(&r[28], peer_ip, 4) == 0 && std::memcmp(&r[32], kMacA, 6) == 0;
    }, &reply, 10.0);
    tap_ok(arp, "tap: the kernel answers an ARP request sent from the endpoint's pins");
    uint8_t peer_mac[6] = {0};
    if (arp)
        std::memcpy(peer_mac, &reply[22], 6);

    Bytes p(peer_mac, peer_mac + 6);
    p.insert(p.end(), kMacA, kMacA + 6);
    p.push_back(0x08);
    p.push_back(0x00);
    const size_t ip0 = p.size(), payload = 56;
    uint16_t tot = uint16_t(20 + 8 + payload);
    const uint8_t iph[] = {0x45, 0, uint8_t(tot >> 8), uint8_t(tot), 0x12, 0x34, 0x40, 0, 64, 1, 0, 0};
    p.insert(p.end(), iph, iph + sizeof(iph));
    p.insert(p.end(), me_ip, me_ip + 4);
    p.insert(p.end(), peer_ip, peer_ip + 4);
    uint16_t hc = csum(&p[ip0], 20);
    p[ip0 + 10] = uint8_t(hc >> 8);
    p[ip0 + 11] = uint8_t(hc);
    const size_t ic0 = p.size();
    const uint8_t icmp[] = {8, 0, 0, 0, 0x4e, 0x46, 0, 1};  // echo request, id 0x4e46, seq 1
    p.insert(p.end(), icmp, icmp + sizeof(icmp));
    for (size_t i = 0; i < payload; i++)
        p.push_back(uint8_t(i * 7));
    uint16_t cc = csum(&p[ic0], 8 + payload);
    p[ic0 + 2] = uint8_t(cc >> 8);
    p[ic0 + 3] = uint8_t(cc);
    A.gen.push({p});
    bool echo = arp && wait_for(b, A, seen, [&](const Bytes &r) {
        return r.size() >= p.size() + 4 && r[12] == 0x08 && r[13] == 0x00 && r[ip0 + 9] == 1 &&
               std::memcmp(&r[ip0 + 12], peer_ip, 4) == 0 && r[ic0] == 0 &&
               std::memcmp(&r[ic0 + 4], &p[ic0 + 4], 4 + payload) == 0 && csum(&r[ic0], 8 + payload) == 0 &&
               csum(&r[ip0], 20) == 0;
    }, &reply, 10.0);
    tap_ok(echo, "tap: the kernel answers an ICMP echo request with the same id, sequence and data");
    return tap_done();
}

// PHY loopback: one endpoint, no hub; what it transmits comes back to its own receive
// pins, intact, with the preamble, the SFD and the gap, at each phy_ce rate.
int test_loopback()
{
    Bench b;
    NfWire::Options lo;
    lo.loopback = true;
    Endpoint &A = b.add("", lo);
    tap_ok(!A.w->connected(), "loopback: no socket");
    for (unsigned div : {1u, 4u}) {
        b.div = div;
        unsigned bad = 0;
        RxFrame got;
        for (size_t len : {60, 64, 1514, 333}) {
            Bytes f = make_frame(kMacA, kMacA, len, uint32_t(len));
            if (!send_one(b, A, A, {f}, &got) || got.bytes != with_fcs(f))
                bad++;
        }
        tap_ok(bad == 0 && A.mon.errors == 0, "loopback: phy_ce 1 clock in %u: frames return intact to the sender",
               div);
    }
    b.div = 1;
    size_t before = A.mon.frames.size();
    std::vector<Bytes> burst;
    for (size_t len : {64, 1514, 60}) {
        burst.push_back(make_frame(kBcast, kMacA, len, uint32_t(0x200 + len)));
        A.gen.push({burst.back()});
    }
    bool fed = b.run_until([&] { return A.mon.frames.size() == before + 3; });
    bool same = fed;
    for (size_t i = 0; fed && i < 3; i++)
        same &= A.mon.frames[before + i].bytes == with_fcs(burst[i]) && (i == 0 || A.mon.frames[before + i].gap == 12);
    tap_ok(same, "loopback: back-to-back frames return in order, 12 idle bytes apart");
    RxFrame got;
    Bytes f = make_frame(kMacA, kMacA, 100, 7);
    TxFrame tb{f};
    tb.bad_fcs = true;
    bool badok = send_one(b, A, A, tb, &got) && !nf_wire_fcs_ok(got.bytes.data(), got.bytes.size());
    b.settle();
    const NfWire::Stats &st = A.w->stats();
    tap_ok(badok && st.tx_bad_fcs == 1, "loopback: a frame sent bad returns bad");
    tap_ok(st.tx_frames == 12 && st.rx_frames == 12 && st.rx_fed == 12 && st.tx_dropped == 0 && st.rx_dropped == 0,
           "loopback: counts: %llu sent, %llu received, %llu fed", (unsigned long long)st.tx_frames,
           (unsigned long long)st.rx_frames, (unsigned long long)st.rx_fed);
    return tap_done();
}

}  // namespace

int main(int argc, char **argv)
{
    std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "frames" && argc == 4)
        return test_frames(argv[2], argv[3]);
    if (cmd == "hub" && argc == 3)
        return test_hub(argv[2]);
    if (cmd == "drop" && argc == 7)
        return test_drop(argv[2], unsigned(std::atoi(argv[3])), std::atof(argv[4]), argv[5], argv[6]);
    if (cmd == "tap" && argc == 3)
        return test_tap(argv[2]);
    if (cmd == "loopback" && argc == 2)
        return test_loopback();
    std::fprintf(stderr, "usage: wire_test frames SOCK EXPECT | hub SOCK | drop SOCK N P OUT LABEL | tap SOCK | loopback\n");
    return 2;
}
