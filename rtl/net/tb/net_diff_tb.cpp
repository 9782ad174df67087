/* SPDX-License-Identifier: Apache-2.0 */
// Differential test of the network port: the RTL nf_net (net_port_bench.h) and its C
// model (firmware/host/hw_net_model.c) take the same seeded random stream of wire frames
// (good, bad FCS, runts, other MACs, broadcast, bad IPv4 headers, RoCE with good and bad
// ICRCs, long, truncated), releases, CTRL changes and TX posts (valid and refused). After
// each step their RX slots (headers and the bytes every frame left), RX_READY, TX_BUSY
// and every counter must be equal, and a sent frame equal byte for byte, FCS included.
// Usage: Vnf_net [--seed N] [--ops N] [--trace]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "net_port_bench.h"
#include "verilated.h"

extern "C" {
#include "hw_net_model.h"
#include "tap.h"
}

namespace {

constexpr unsigned MAX_REPORT = 10;  // mismatches printed before the rest are only counted
constexpr size_t SHORT_MSG = 4;      // wire messages this short carry no frame (the MAC emits nothing)

struct Model {
    nf_net_port port{};
    Bytes mem;
    std::vector<Bytes> sent;
};

void model_sent(void *ctx, const uint8_t *wire, size_t len)
{
    static_cast<Model *>(ctx)->sent.emplace_back(wire, wire + len);
}

uint32_t mac_word_lo(const Bytes &m) { return m[0] | m[1] << 8 | m[2] << 16 | static_cast<uint32_t>(m[3]) << 24; }
uint32_t mac_word_hi(const Bytes &m) { return m[4] | m[5] << 8; }

void put16(Bytes &f, size_t at, uint32_t v)
{
    f[at] = static_cast<uint8_t>(v >> 8);
    f[at + 1] = static_cast<uint8_t>(v);
}

void ip_csum(Bytes &f)
{
    f[24] = f[25] = 0;
    uint32_t s = 0;
    for (int i = 14; i < 34; i += 2)
        s += static_cast<uint32_t>(f[i]) << 8 | f[i + 1];
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    put16(f, 24, ~s & 0xFFFF);
}

struct Gen {
    std::mt19937 rng;
    Bytes mac;
    explicit Gen(uint32_t seed) : rng(seed) {}
    uint32_t r(uint32_t n) { return n ? static_cast<uint32_t>(rng() % n) : 0; }
    Bytes bytes(size_t n)
    {
        Bytes b(n);
        for (auto &x : b)
            x = static_cast<uint8_t>(rng());
        return b;
    }
    Bytes eth(const Bytes &dst, uint32_t type, size_t len)
    {
        Bytes f = bytes(len < 14 ? 14 : len);
        std::copy(dst.begin(), dst.end(), f.begin());
        f[6] = 0x02;  // a unicast source
        put16(f, 12, type);
        return f;
    }
    // IPv4 (IHL 5, good checksum) of proto to UDP port dport, len frame bytes.
    Bytes ipv4(const Bytes &dst, uint32_t proto, uint32_t dport, size_t len)
    {
        Bytes f = eth(dst, 0x0800, len < 42 ? 42 : len);
        f[14] = 0x45;
        put16(f, 16, static_cast<uint32_t>(f.size() - 14));
        put16(f, 20, r(4) == 0 ? 0x4000 : 0);  // DF or nothing: not a fragment
        f[23] = static_cast<uint8_t>(proto);
        put16(f, 36, dport);
        put16(f, 38, static_cast<uint32_t>(f.size() - 34));
        ip_csum(f);
        return f;
    }
    // A RoCEv2 packet with its ICRC (from the C model's unit: the RTL judges it itself),
    // and Ethernet padding after it now and then.
    Bytes roce(const Bytes &dst)
    {
        size_t body = 12 + r(4) * 4 + r(3) * r(400);
        size_t len = 34 + 8 + body + 4;
        Bytes f = ipv4(dst, 0x11, NF_NET_ROCE_PORT, len);
        put16(f, 38, static_cast<uint32_t>(8 + body + 4));
        if (r(3) == 0 && f.size() < 60) {
            put16(f, 16, static_cast<uint32_t>(f.size() - 14));
            ip_csum(f);
            f.resize(60, 0);
        }
        uint32_t icrc = 0;
        nf_net_icrc(f.data(), f.size(), &icrc);
        size_t at = 34 + 8 + body;
        for (int i = 0; i < 4; i++)
            f[at + i] = static_cast<uint8_t>(icrc >> (8 * i));
        return f;
    }
    Bytes frame(std::string &what)
    {
        static const Bytes bcast(6, 0xFF);
        Bytes other = bytes(6);
        other[0] &= 0xFE;
        size_t n = 60 + r(4) * r(500);
        switch (r(16)) {
        case 0: what = "udp"; return ipv4(mac, 0x11, r(65536), n);
        case 1: what = "icmp"; return ipv4(mac, 0x01, r(65536), n);
        case 2: case 3: what = "roce"; return roce(mac);
        case 4: { what = "arp-bcast"; Bytes f = eth(bcast, 0x0806, 60); return f; }
        case 5: what = "bcast-ipv4"; return ipv4(bcast, 0x11, 53, n);
        case 6: what = "other-mac"; return ipv4(other, 0x11, 53, n);
        case 7: { what = "bad-ip-csum"; Bytes f = ipv4(mac, 0x11, 53, n); f[24] ^= static_cast<uint8_t>(1 + r(255)); return f; }
        case 8: { what = "bad-icrc"; Bytes f = roce(mac); size_t i = 42 + r(static_cast<uint32_t>(f.size() - 42)); f[i] ^= static_cast<uint8_t>(1 + r(255)); return f; }
        case 9: what = "long"; return ipv4(mac, 0x11, 53, NF_NET_MAX_FRAME - 2 + r(80));
        case 10: { what = "options-or-version"; Bytes f = ipv4(mac, 0x11, 53, n); f[14] = static_cast<uint8_t>(r(2) ? 0x46 : 0x55); ip_csum(f); return f; }
        case 11: { what = "roce-fragment"; Bytes f = roce(mac); put16(f, 20, r(2) ? 0x2000 : 0x0001 + r(0x1FFF)); ip_csum(f); return f; }
        case 12: { what = "roce-udp-len"; Bytes f = roce(mac); put16(f, 38, r(2) ? r(64) : r(65536)); return f; }
        case 13: what = "other-type"; return eth(r(2) ? mac : bcast, r(2) ? 0x86DD : r(65536), n);
        case 14: { what = "roce-masked"; Bytes f = roce(mac); f[15] ^= 0xFF; f[22] ^= 0x11; f[40] ^= 0x5A; f[46] ^= 0x0F; ip_csum(f); return f; }
        default: { what = "random"; Bytes f = bytes(1 + r(200)); if (r(2)) std::copy(mac.begin(), mac.end(), f.begin()); return f; }
        }
    }
};

struct Diff {
    Bench rtl;
    Model mdl;
    Gen gen;
    unsigned mismatches = 0;
    bool trace = false;  // --trace: every step's operation, for a mismatch's history
    uint64_t steps = 0, rx_frames = 0, tx_frames = 0;

    explicit Diff(uint32_t seed) : gen(seed)
    {
        rtl.ready_pct = 100;  // a system port that keeps up: no FIFO overruns, which the model has no cause for
        mdl.mem.assign(rtl.mem.size(), 0xEE);
        if (nf_net_port_init(&mdl.port, rtl.rx_slots, rtl.tx_slots, rtl.slot_base, 0, mdl.mem.data(), mdl.mem.size(),
                             model_sent, &mdl) != 0) {
            fprintf(stderr, "net_diff: the model refused the RTL's sizes\n");
            exit(2);
        }
        gen.mac = gen.bytes(6);
        gen.mac[0] = static_cast<uint8_t>((gen.mac[0] & 0xFE) | 0x02);
        wr(NF_NET_MAC_LO, mac_word_lo(gen.mac));
        wr(NF_NET_MAC_HI, mac_word_hi(gen.mac));
        wr(NF_NET_CTRL, NF_NET_CTRL_RX_EN_MASK);
    }

    void wr(uint32_t off, uint32_t v)
    {
        rtl.wr(off, v);
        nf_net_port_write(&mdl.port, off, v, 0xF);
    }

    void bad(const std::string &what)
    {
        if (++mismatches <= MAX_REPORT)
            printf("# step %llu: %s\n", static_cast<unsigned long long>(steps), what.c_str());
    }

    // Registers and RX slots equal (the arrival stamps aside: the two clocks differ).
    void compare(const std::string &op)
    {
        if (trace)
            printf("# %llu %s ready %x next %u ctrl %x slot0[10] %02x/%02x\n", static_cast<unsigned long long>(steps),
                   op.c_str(), rtl.rd(NF_NET_RX_READY), mdl.port.rx_next, mdl.port.ctrl, rtl.mem[rtl.rx_addr(0) + 10],
                   mdl.mem[rtl.rx_addr(0) + 10]);
        for (int i = 0; i < C_N; i++) {
            uint32_t a = rtl.rd(CNT_OFF[i]), b = nf_net_port_read(&mdl.port, CNT_OFF[i]);
            if (a != b)
                bad(op + ": counter " + CNT_NAME[i] + " RTL " + std::to_string(a) + " model " + std::to_string(b));
        }
        for (uint32_t off : {NF_NET_RX_READY, NF_NET_TX_BUSY, NF_NET_CTRL, NF_NET_MAC_LO, NF_NET_MAC_HI, NF_NET_CFG,
                             NF_NET_SLOT_BASE, NF_NET_ID}) {
            uint32_t a = rtl.rd(off), b = nf_net_port_read(&mdl.port, off);
            if (a != b)
                bad(op + ": register 0x" + std::to_string(off) + " RTL " + std::to_string(a) + " model " +
                    std::to_string(b));
        }
        for (uint32_t s = 0; s < rtl.rx_slots; s++) {
            uint32_t base = rtl.rx_addr(s);
            for (uint32_t i = 0; i < NF_NET_SLOT_BYTES; i++) {
                if (i >= NF_NET_RX_HDR_CYCLE_OFF && i < NF_NET_RX_HDR_CYCLE_OFF + 4)
                    continue;
                if (rtl.mem[base + i] != mdl.mem[base + i]) {
                    char b[160];
                    snprintf(b, sizeof b, "%s: RX slot %u byte %u RTL %02x model %02x", op.c_str(), s, i,
                             rtl.mem[base + i], mdl.mem[base + i]);
                    bad(b);
                    break;
                }
            }
        }
    }

    void rx()
    {
        std::string what;
        Bytes f = gen.frame(what);
        Bytes fcs(4);
        uint32_t c = nf_net_crc32(f.data(), f.size());
        for (int i = 0; i < 4; i++)
            fcs[i] = static_cast<uint8_t>(c >> (8 * i));
        uint32_t how = gen.r(20);
        if (how == 0) {
            what += "+bad-fcs";
            fcs[gen.r(4)] ^= static_cast<uint8_t>(1 + gen.r(255));
        } else if (how == 1) {
            what += "+flipped-bit";
            f[gen.r(static_cast<uint32_t>(f.size()))] ^= static_cast<uint8_t>(1u << gen.r(8));
        } else if (how == 2) {  // a runt or a message too short to be a frame, FCS good
            what = "runt";
            f.resize(gen.r(2) ? gen.r(SHORT_MSG + 1) : 1 + gen.r(59));
            c = nf_net_crc32(f.data(), f.size());
            for (int i = 0; i < 4; i++)
                fcs[i] = static_cast<uint8_t>(c >> (8 * i));
        }
        Bytes wire = f;
        wire.insert(wire.end(), fcs.begin(), fcs.end());
        if (how == 2 && gen.r(2)) {  // a message of 1..4 bytes: the MAC emits nothing
            what = "tiny";
            wire.resize(1 + gen.r(SHORT_MSG));
        }
        // The bench's send takes the bytes after the SFD as frame + trailer.
        Bytes head(wire.begin(), wire.end() - std::min<size_t>(4, wire.size()));
        Bytes tail(wire.end() - std::min<size_t>(4, wire.size()), wire.end());
        rtl.send(head, tail);
        rtl.settle();
        nf_net_port_rx(&mdl.port, wire.data(), wire.size(), static_cast<uint32_t>(rtl.cycle));
        rx_frames++;
        compare("rx " + what + " (" + std::to_string(wire.size()) + " bytes)");
    }

    void tx()
    {
        uint32_t slot = gen.r(rtl.tx_slots + 1);  // one past the last: refused
        std::string what;
        Bytes f = gen.frame(what);
        if (gen.r(4) == 0) {  // the port fills these: leave them zero or wrong
            if (f.size() >= 34) {
                put16(f, 16, gen.r(65536));
                put16(f, 24, gen.r(2) ? 0 : gen.r(65536));
            }
        }
        uint32_t len = static_cast<uint32_t>(f.size());
        if (gen.r(10) == 0)
            len = gen.r(2) ? gen.r(NF_NET_MIN_FRAME) : NF_NET_MAX_FRAME + 1 + gen.r(100);  // refused
        len = std::min<uint32_t>(len, 0xFFFF);
        if (slot < rtl.tx_slots) {
            Bytes junk = gen.bytes(NF_NET_SLOT_BYTES);  // what lies past the frame is not sent
            std::copy(f.begin(), f.begin() + std::min<size_t>(f.size(), NF_NET_SLOT_BYTES - NF_NET_FRAME_OFF),
                      junk.begin() + NF_NET_FRAME_OFF);
            uint32_t a = rtl.tx_addr(slot);
            std::copy(junk.begin(), junk.end(), rtl.mem.begin() + a);
            std::copy(junk.begin(), junk.end(), mdl.mem.begin() + a);
        }
        rtl.txframes.clear();
        rtl.tx_er_seen = false;
        mdl.sent.clear();
        uint32_t post = len << NF_NET_TX_POST_LEN_LSB | (slot & NF_NET_TX_POST_SLOT_MASK);
        rtl.wr(NF_NET_TX_POST, post);
        nf_net_port_write(&mdl.port, NF_NET_TX_POST, post, 0xF);
        bool refused = slot >= rtl.tx_slots || len < NF_NET_MIN_FRAME || len > NF_NET_MAX_FRAME;
        if (!refused)
            wait_tx(rtl, 1);
        rtl.settle();
        std::string op = "tx " + what + " slot " + std::to_string(slot) + " len " + std::to_string(len);
        if (rtl.txframes.size() != mdl.sent.size()) {
            bad(op + ": RTL sent " + std::to_string(rtl.txframes.size()) + " model " + std::to_string(mdl.sent.size()));
        } else if (!rtl.txframes.empty()) {
            Bytes a = strip_preamble(rtl.txframes[0]);
            const Bytes &b = mdl.sent[0];
            size_t i = 0;
            while (i < a.size() && i < b.size() && a[i] == b[i])
                i++;
            if (a != b || rtl.tx_er_seen)
                bad(op + ": frames differ at byte " + std::to_string(i) + " of " + std::to_string(a.size()) + "/" +
                    std::to_string(b.size()));
            tx_frames++;
        }
        compare(op);
    }

    void step()
    {
        steps++;
        uint32_t k = gen.r(100);
        if (k < 60) {
            rx();
        } else if (k < 80) {
            tx();
        } else if (k < 95) {
            uint32_t ready = rtl.rd(NF_NET_RX_READY);
            uint32_t mask = gen.r(3) == 0 ? 0xFFFFFFFFu : ready & static_cast<uint32_t>(gen.rng());
            wr(NF_NET_RX_RELEASE, mask);
            compare("release");
        } else {
            // RX_EN mostly on; PROMISC now and then; a new MAC rarely.
            uint32_t ctrl = (gen.r(6) ? NF_NET_CTRL_RX_EN_MASK : 0) | (gen.r(4) ? 0 : NF_NET_CTRL_PROMISC_MASK);
            wr(NF_NET_CTRL, ctrl);
            if (gen.r(8) == 0) {
                gen.mac = gen.bytes(6);
                gen.mac[0] &= 0xFE;
                wr(NF_NET_MAC_LO, mac_word_lo(gen.mac));
                wr(NF_NET_MAC_HI, mac_word_hi(gen.mac));
            }
            compare("ctrl");
        }
    }
};

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    uint32_t seed = 1;
    unsigned long ops = 1500;
    bool trace = false;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--trace"))
            trace = true;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed"))
            seed = static_cast<uint32_t>(strtoul(argv[i + 1], nullptr, 0));
        else if (!strcmp(argv[i], "--ops"))
            ops = strtoul(argv[i + 1], nullptr, 0);
    }
    Diff d(seed);
    d.trace = trace;
    for (unsigned long i = 0; i < ops; i++)
        d.step();
    auto c = d.rtl.counters();
    bool varied = c[C_OK] > 0 && c[C_FCS] > 0 && c[C_ADDR] > 0 && c[C_LONG] > 0 && c[C_IP] > 0 && c[C_ICRC] > 0 &&
                  c[C_SLOT] > 0 && c[C_TX] > 0 && c[C_REJECT] > 0;
    tap_ok(varied, "net-diff seed %u: the stream reached every check (ok %u fcs %u addr %u long %u ip %u icrc %u "
           "slot %u tx %u reject %u)", seed, c[C_OK], c[C_FCS], c[C_ADDR], c[C_LONG], c[C_IP], c[C_ICRC], c[C_SLOT],
           c[C_TX], c[C_REJECT]);
    tap_ok(d.mismatches == 0 && d.rtl.bad_access == 0,
           "net-diff seed %u: RTL nf_net and the C model agree over %lu steps (%llu frames in, %llu out): slots, "
           "headers, RX_READY, counters, sent frames (%u mismatches)", seed, ops,
           static_cast<unsigned long long>(d.rx_frames), static_cast<unsigned long long>(d.tx_frames), d.mismatches);
    return tap_done();
}
