/* SPDX-License-Identifier: Apache-2.0 */
// nf_link testbench (RX_SLOTS = TX_SLOTS = 4): frames go in and out through the UART
// pins bit by bit (sim/nf_uart_bits.h), encoded and decoded by the host codec
// (proto/c/nf_frame.c); the system port is served by a C++ memory with random
// latency; the LINK registers are read and written like the firmware does.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "nf_layout_cxx.h"
#include "nf_tb_clock.h"
#include "nf_uart_bits.h"
#include "Vnf_link.h"
#include "verilated.h"

extern "C" {
#include "nf_frame.h"
#include "tap.h"
}

namespace {

constexpr int kRxSlots = 4;
constexpr int kTxSlots = 4;
constexpr uint32_t kPeriod = 72;  // 4.5 clocks per bit: fractional and quick
constexpr uint8_t kSentinel = 0xCC;

uint32_t rng_state = 0x9E3779B9u;
uint32_t rnd()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

struct Bench {
    Vnf_link top;
    uint64_t cycle = 0;
    std::vector<uint8_t> mem = std::vector<uint8_t>((kRxSlots + kTxSlots) * NF_LINK_SLOT_BYTES, kSentinel);
    nfuart::Driver drv{kPeriod};
    nfuart::Sampler smp{kPeriod};
    nf_frame_decoder dec;
    std::vector<std::vector<uint8_t>> tx_frames;  // decoded frames from uart_tx
    int tx_bad = 0, framing = 0;
    int mem_wait = -1;     // cycles until the memory answers the current request
    bool mem_bad = false;  // a request outside the slots or misaligned
    uint64_t bad_char_at = ~0ull;  // cycle a character with a low stop bit starts

    Bench()
    {
        nf_frame_decoder_init(&dec);
        top.uart_period = kPeriod;
        top.uart_rx = 1;
        tb_reset(&top, 4, [this] { tick(); });
    }

    void tick()
    {
        top.cycle = static_cast<uint32_t>(cycle);
        top.uart_rx = static_cast<uint8_t>(drv.level(cycle) && bad_char_level());
        tb_tick(&top, cycle);
        // Memory: answer a held request after 0..3 cycles with a one-cycle ready.
        if (top.mem_ready) {
            top.mem_ready = 0;
        } else if (top.mem_valid) {
            if (mem_wait < 0)
                mem_wait = static_cast<int>(rnd() % 4);
            if (mem_wait-- == 0) {
                mem_wait = -1;
                uint32_t a = top.mem_addr;
                if ((a & 3) || a + 4 > mem.size()) {
                    mem_bad = true;
                    a = 0;
                }
                if (top.mem_wstrb) {
                    for (int i = 0; i < 4; i++)
                        if (top.mem_wstrb >> i & 1)
                            mem[a + i] = static_cast<uint8_t>(top.mem_wdata >> (8 * i));
                } else {
                    top.mem_rdata = static_cast<uint32_t>(mem[a]) | mem[a + 1] << 8 | mem[a + 2] << 16 |
                                    static_cast<uint32_t>(mem[a + 3]) << 24;
                }
                top.mem_ready = 1;
            }
        }
        uint8_t byte;
        int r = smp.sample(cycle, top.uart_tx, &byte);
        if (r < 0)
            framing++;
        if (r == 1) {
            enum nf_frame_result fr = nf_frame_decode_byte(&dec, byte);
            if (fr == NF_FRAME_OK)
                tx_frames.emplace_back(dec.buf, dec.buf + dec.len);
            else if (fr == NF_FRAME_BAD)
                tx_bad++;
        }
    }

    // A character whose stop bit is low for its first three quarters (sampled low in
    // the middle): the receiver must report a framing error and deliver no byte.
    int bad_char_level() const
    {
        if (cycle < bad_char_at)
            return 1;
        uint64_t t = (cycle - bad_char_at) * nfuart::kOneClock;
        if (t < kPeriod)
            return 0;
        if (t < 9 * kPeriod)
            return 1;
        return t < 9 * kPeriod + 3 * kPeriod / 4 ? 0 : 1;
    }

    uint32_t csr(uint32_t off, uint32_t wdata, bool write)
    {
        top.csr_valid = 1;
        top.csr_addr = static_cast<uint16_t>(off);
        top.csr_wdata = wdata;
        top.csr_wstrb = write ? 0xF : 0;
        int guard = 0;
        do {
            tick();
        } while (!top.csr_ready && ++guard < 100);
        uint32_t r = top.csr_rdata;
        top.csr_valid = 0;
        tick();
        return r;
    }
    uint32_t rd(uint32_t off) { return csr(off, 0, false); }
    void wr(uint32_t off, uint32_t v) { csr(off, v, true); }

    void run(uint64_t n)
    {
        for (uint64_t i = 0; i < n; i++)
            tick();
    }
    // Until the driver has sent everything and a few byte times passed.
    void drain()
    {
        while (!drv.idle())
            tick();
        run(30 * kPeriod / 16 + 50);
    }
    void send_wire(const std::vector<uint8_t> &w)
    {
        for (uint8_t b : w)
            drv.push(b);
    }
};

std::vector<uint8_t> make_raw(uint8_t type, uint8_t seq, size_t payload, int fill)
{
    std::vector<uint8_t> raw(NF_LINK_HDR_SIZE + payload);
    raw[NF_LINK_HDR_TYPE_OFF] = type;
    raw[NF_LINK_HDR_SEQ_OFF] = seq;
    raw[NF_LINK_HDR_ACK_OFF] = static_cast<uint8_t>(seq + 1);
    raw[NF_LINK_HDR_LEN_OFF] = static_cast<uint8_t>(payload);
    raw[NF_LINK_HDR_LEN_OFF + 1] = static_cast<uint8_t>(payload >> 8);
    for (size_t i = 0; i < payload; i++) {
        // fill < 0: random bytes; otherwise alternate FLAG/ESC to force escapes.
        raw[NF_LINK_HDR_SIZE + i] = fill < 0 ? static_cast<uint8_t>(rnd()) :
                                   (i & 1) ? NF_LINK_ESC : NF_LINK_FLAG;
    }
    return raw;
}

std::vector<uint8_t> encode(const std::vector<uint8_t> &raw)
{
    std::vector<uint8_t> w(NF_FRAME_MAX_WIRE);
    size_t n = nf_frame_encode(raw.data(), raw.size(), w.data(), w.size());
    w.resize(n);
    return w;
}

// Stuffing by hand for frames the codec refuses to build (oversized).
std::vector<uint8_t> encode_unchecked(const std::vector<uint8_t> &raw)
{
    std::vector<uint8_t> body = raw;
    uint32_t crc = nf_crc32(raw.data(), raw.size());
    for (int i = 0; i < 4; i++)
        body.push_back(static_cast<uint8_t>(crc >> (8 * i)));
    std::vector<uint8_t> w{NF_LINK_FLAG};
    for (uint8_t b : body) {
        if (b == NF_LINK_FLAG || b == NF_LINK_ESC) {
            w.push_back(NF_LINK_ESC);
            w.push_back(b ^ NF_LINK_ESC_XOR);
        } else {
            w.push_back(b);
        }
    }
    w.push_back(NF_LINK_FLAG);
    return w;
}

uint32_t stamp_off(int slot) { return NF_LINK_RX_STAMP0 + 4u * static_cast<uint32_t>(slot); }

bool slot_holds(Bench &b, int slot, const std::vector<uint8_t> &raw)
{
    const uint8_t *s = &b.mem[static_cast<size_t>(slot) * NF_LINK_SLOT_BYTES];
    if (memcmp(s, raw.data(), raw.size()) != 0)
        return false;
    // CRC stripped: the bytes after the frame up to the word boundary and beyond keep
    // the sentinel (the last partial word is written with byte strobes).
    for (size_t i = raw.size(); i < raw.size() + NF_LINK_CRC_BYTES; i++)
        if (s[i] != kSentinel)
            return false;
    return true;
}

void test_registers(Bench &b)
{
    tap_ok(b.rd(NF_LINK_ID) == NF_LINK_HW_ID_VALUE, "regs: ID reads LNK1");
    tap_ok(b.rd(NF_LINK_CFG) == (kRxSlots | kTxSlots << 8), "regs: CFG = RX_SLOTS | TX_SLOTS << 8");
    bool zero = b.rd(NF_LINK_RX_READY) == 0 && b.rd(NF_LINK_TX_BUSY) == 0 && b.rd(NF_LINK_CNT_RX_OK) == 0 &&
                b.rd(NF_LINK_CNT_RX_BAD) == 0 && b.rd(NF_LINK_CNT_RX_DROP) == 0 && b.rd(NF_LINK_CNT_TX) == 0;
    zero = zero && b.rd(NF_LINK_CNT_TX_REJECT) == 0;
    tap_ok(zero, "regs: bitmaps and counters are 0 after reset");
    b.wr(NF_LINK_CNT_RX_OK, 5);
    b.wr(NF_LINK_ID, 5);
    tap_ok(b.rd(NF_LINK_CNT_RX_OK) == 0 && b.rd(NF_LINK_ID) == NF_LINK_HW_ID_VALUE, "regs: read-only registers ignore writes");
    tap_ok(b.rd(0x34) == 0 && b.rd(0xFFC) == 0 && b.rd(stamp_off(kRxSlots)) == 0, "regs: unmapped offsets read 0");
}

void test_rx_good(Bench &b)
{
    // Payload sizes 0..3 cover every partial last word; slots fill 0,1,2,3 in order.
    size_t sizes[] = {0, 1, 2, 3};
    std::vector<std::vector<uint8_t>> raws;
    bool stamps_ok = true;
    for (int i = 0; i < 4; i++) {
        raws.push_back(make_raw(NF_LINK_TYPE_DATA, static_cast<uint8_t>(i), sizes[i], -1));
        uint64_t t0 = b.cycle;
        b.send_wire(encode(raws.back()));
        b.drain();
        uint32_t st = b.rd(stamp_off(i));
        // Ready after the closing flag's last bit, well before drain() ended.
        uint64_t wire_end = t0 + encode(raws.back()).size() * 10 * kPeriod / 16;
        if (st < wire_end - 10 * kPeriod / 16 || st > b.cycle)
            stamps_ok = false;
    }
    tap_ok(b.rd(NF_LINK_RX_READY) == 0xF, "rx: four good frames fill slots 0..3 (RX_READY = 0x%x)", b.rd(NF_LINK_RX_READY));
    bool all = true;
    for (int i = 0; i < 4; i++)
        all = all && slot_holds(b, i, raws[static_cast<size_t>(i)]);
    tap_ok(all, "rx: slots hold header + payload, little-endian words, CRC stripped, no byte past the frame written");
    tap_ok(stamps_ok, "rx: RX_STAMP[i] is the cycle slot i became ready");
    tap_ok(b.rd(NF_LINK_CNT_RX_OK) == 4 && b.rd(NF_LINK_CNT_RX_BAD) == 0, "rx: CNT_RX_OK counts 4 frames");

    // No free slot: a fifth good frame is dropped and counted, nothing overwritten.
    auto extra = make_raw(NF_LINK_TYPE_DATA, 9, 16, -1);
    b.send_wire(encode(extra));
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_DROP) == 1 && b.rd(NF_LINK_CNT_RX_OK) == 4 && slot_holds(b, 0, raws[0]),
           "rx: good frame with no free slot is dropped and counted in CNT_RX_DROP");

    // Release slots 0 and 1: the next frames go to slot 0, then slot 1 (wrap).
    b.wr(NF_LINK_RX_RELEASE, 0x3);
    tap_ok(b.rd(NF_LINK_RX_READY) == 0xC, "rx: RX_RELEASE clears the written bits only");
    auto esc = make_raw(NF_LINK_TYPE_DATA, 4, 5, 0);  // every payload byte needs escaping
    auto big = make_raw(NF_LINK_TYPE_DATA, 5, NF_LINK_MAX_PAYLOAD, -1);
    b.send_wire(encode(esc));
    b.send_wire(encode(big));  // back to back, sharing no flag
    b.drain();
    tap_ok(b.rd(NF_LINK_RX_READY) == 0xF && slot_holds(b, 0, esc), "rx: escaped FLAG/ESC bytes restored; slots wrap to 0");
    tap_ok(slot_holds(b, 1, big), "rx: largest frame (payload %d) received back to back", NF_LINK_MAX_PAYLOAD);
    tap_ok(!b.mem_bad, "rx: every memory access word aligned and inside the slots");
    b.wr(NF_LINK_RX_RELEASE, 0xF);
}

void test_rx_bad(Bench &b)
{
    uint32_t bad0 = b.rd(NF_LINK_CNT_RX_BAD), ok0 = b.rd(NF_LINK_CNT_RX_OK);
    auto raw = make_raw(NF_LINK_TYPE_DATA, 1, 40, -1);
    auto w = encode(raw);

    auto corrupt = w;
    corrupt[12] = static_cast<uint8_t>(corrupt[12] == 0x55 ? 0x56 : 0x55);
    b.send_wire(corrupt);
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 1 && b.rd(NF_LINK_RX_READY) == 0, "rx: bad CRC dropped, counted in CNT_RX_BAD");

    std::vector<uint8_t> trunc(w.begin(), w.begin() + 20);
    trunc.push_back(NF_LINK_FLAG);
    b.send_wire(trunc);
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 2 && b.rd(NF_LINK_RX_READY) == 0, "rx: truncated frame dropped and counted");

    std::vector<uint8_t> tiny{NF_LINK_FLAG, 1, 2, 3, NF_LINK_FLAG};
    b.send_wire(tiny);
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 3, "rx: frame shorter than header + CRC dropped and counted");

    auto badlen = raw;
    badlen[NF_LINK_HDR_LEN_OFF] = 41;
    b.send_wire(encode(badlen));
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 4 && b.rd(NF_LINK_RX_READY) == 0, "rx: LINK_HDR.len mismatch (good CRC) dropped and counted");

    auto over = make_raw(NF_LINK_TYPE_DATA, 2, NF_LINK_MAX_PAYLOAD + 1, -1);
    b.send_wire(encode_unchecked(over));
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 5 && b.rd(NF_LINK_RX_READY) == 0 && !b.mem_bad,
           "rx: oversized frame dropped and counted, nothing written past the slot");

    auto badesc = w;
    badesc.insert(badesc.end() - 1, NF_LINK_ESC);  // ESC right before the closing flag
    b.send_wire(badesc);
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 6, "rx: ESC before FLAG dropped and counted");

    // A framing error in the middle of a frame spoils that frame even though every
    // byte of it arrives intact.
    std::vector<uint8_t> head(w.begin(), w.begin() + 20);
    b.send_wire(head);
    while (!b.drv.idle())
        b.tick();
    b.run(2 * kPeriod / 16);
    b.bad_char_at = b.cycle;
    b.run(14 * kPeriod / 16);
    b.bad_char_at = ~0ull;
    std::vector<uint8_t> tail_part(w.begin() + 20, w.end());
    b.send_wire(tail_part);
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 7 && b.rd(NF_LINK_RX_READY) == 0,
           "rx: frame with a UART framing error inside dropped and counted");

    // Noise before the first flag, and empty frames (flag flag), are not frames.
    std::vector<uint8_t> noise{NF_LINK_FLAG, NF_LINK_FLAG, NF_LINK_FLAG};
    b.send_wire(noise);
    b.send_wire(w);
    b.drain();
    tap_ok(b.rd(NF_LINK_CNT_RX_BAD) == bad0 + 7 && b.rd(NF_LINK_CNT_RX_OK) == ok0 + 1 && b.rd(NF_LINK_RX_READY) != 0,
           "rx: empty frames ignored; a good frame after bad ones is received");
    b.wr(NF_LINK_RX_RELEASE, 0xF);
}

void put_tx_slot(Bench &b, int slot, const std::vector<uint8_t> &raw)
{
    memcpy(&b.mem[static_cast<size_t>(kRxSlots + slot) * NF_LINK_SLOT_BYTES], raw.data(), raw.size());
}

uint32_t post(int slot, size_t len) { return static_cast<uint32_t>(slot) | static_cast<uint32_t>(len) << 16; }

void test_tx(Bench &b)
{
    b.tx_frames.clear();
    auto raw = make_raw(NF_LINK_TYPE_DATA, 7, 33, -1);
    raw[NF_LINK_HDR_SIZE] = NF_LINK_FLAG;
    raw[NF_LINK_HDR_SIZE + 1] = NF_LINK_ESC;
    put_tx_slot(b, 2, raw);
    b.wr(NF_LINK_TX_POST, post(2, raw.size()));
    uint32_t busy = b.rd(NF_LINK_TX_BUSY);
    b.run(3 * encode(raw).size() * 10 * kPeriod / 16 / 2);
    tap_ok(busy == 0x4, "tx: TX_BUSY bit set while the slot is queued or sent");
    tap_ok(b.tx_frames.size() == 1 && b.tx_frames[0] == raw && b.tx_bad == 0 && b.framing == 0,
           "tx: posted slot sent as a frame the host codec decodes with a good CRC");
    tap_ok(b.rd(NF_LINK_TX_BUSY) == 0 && b.rd(NF_LINK_CNT_TX) == 1, "tx: TX_BUSY clears after sending, CNT_TX counts");

    // Queue every slot at once (including the largest frame): sent in post order, back to back.
    b.tx_frames.clear();
    std::vector<std::vector<uint8_t>> raws;
    size_t sizes[] = {NF_LINK_MAX_PAYLOAD, 0, 1, 7};
    size_t wire = 0;
    for (int i = 0; i < kTxSlots; i++) {
        raws.push_back(make_raw(NF_LINK_TYPE_DATA, static_cast<uint8_t>(i), sizes[i], -1));
        put_tx_slot(b, 3 - i, raws.back());
        wire += encode(raws.back()).size();
    }
    uint64_t t0 = b.cycle;
    for (int i = 0; i < kTxSlots; i++)
        b.wr(NF_LINK_TX_POST, post(3 - i, raws[static_cast<size_t>(i)].size()));
    tap_ok(b.rd(NF_LINK_TX_BUSY) == 0xF, "tx: four posts queue all four slots");
    while (b.tx_frames.size() < 4 && b.cycle < t0 + 2 * wire * 10 * kPeriod / 16)
        b.tick();
    uint64_t took = b.cycle - t0;
    uint64_t ideal = wire * 10 * kPeriod / 16;
    tap_ok(b.tx_frames.size() == 4 && b.tx_frames[0] == raws[0] && b.tx_frames[1] == raws[1] &&
           b.tx_frames[2] == raws[2] && b.tx_frames[3] == raws[3],
           "tx: queued frames sent in post order with good CRCs");
    tap_ok(took <= ideal + ideal / 100 + 200, "tx: UART kept busy: %llu cycles for %zu wire bytes (ideal %llu)",
           static_cast<unsigned long long>(took), wire, static_cast<unsigned long long>(ideal));

    // Pure ACK built in hardware; the latest TX_ACK value wins while one is pending.
    b.tx_frames.clear();
    put_tx_slot(b, 0, raw);
    b.wr(NF_LINK_TX_POST, post(0, raw.size()));
    b.wr(NF_LINK_TX_ACK, 0x11);
    b.wr(NF_LINK_TX_ACK, 0x7E);  // an ack number that needs stuffing
    b.run(3 * (encode(raw).size() + 40) * 10 * kPeriod / 16);
    std::vector<uint8_t> ack(NF_LINK_HDR_SIZE, 0);
    ack[NF_LINK_HDR_TYPE_OFF] = NF_LINK_TYPE_ACK;
    ack[NF_LINK_HDR_ACK_OFF] = 0x7E;
    tap_ok(b.tx_frames.size() == 2 && b.tx_frames[0] == raw && b.tx_frames[1] == ack,
           "tx: TX_ACK sends one pure ACK frame (type ACK, ack N, rest 0), latest value");

    // Bad posts change nothing: slot out of range, length out of range, busy slot.
    b.tx_frames.clear();
    uint32_t cnt = b.rd(NF_LINK_CNT_TX);
    b.wr(NF_LINK_TX_POST, post(kTxSlots, 16));
    b.wr(NF_LINK_TX_POST, post(1, NF_LINK_HDR_SIZE - 1));
    b.wr(NF_LINK_TX_POST, post(1, NF_LINK_HDR_SIZE + NF_LINK_MAX_PAYLOAD + 1));
    uint32_t busy_after = b.rd(NF_LINK_TX_BUSY);
    b.run(2000);
    tap_ok(busy_after == 0 && b.tx_frames.empty() && b.rd(NF_LINK_CNT_TX) == cnt && b.rd(NF_LINK_CNT_TX_REJECT) == 3,
           "tx: invalid posts (slot >= TX_SLOTS, len < header, len > max) are ignored and counted in CNT_TX_REJECT");
    // Posting a slot that is still queued is refused too; the frame goes out once.
    put_tx_slot(b, 1, raw);
    b.wr(NF_LINK_TX_POST, post(1, raw.size()));
    b.wr(NF_LINK_TX_POST, post(1, raw.size()));
    b.run(3 * encode(raw).size() * 10 * kPeriod / 16);
    tap_ok(b.tx_frames.size() == 1 && b.rd(NF_LINK_CNT_TX_REJECT) == 4 && b.rd(NF_LINK_TX_BUSY) == 0,
           "tx: posting a busy slot is refused and counted; the slot is sent once");
    tap_ok(b.tx_bad == 0 && b.framing == 0 && !b.mem_bad, "tx: no malformed byte or frame on the wire");
}

void test_full_duplex(Bench &b)
{
    // Receive and transmit at once: both share the memory port.
    b.tx_frames.clear();
    uint32_t ok0 = b.rd(NF_LINK_CNT_RX_OK);
    auto out = make_raw(NF_LINK_TYPE_DATA, 3, 1000, -1);
    put_tx_slot(b, 1, out);
    auto in = make_raw(NF_LINK_TYPE_DATA, 3, 1000, -1);
    uint32_t ready0 = b.rd(NF_LINK_RX_READY);
    b.wr(NF_LINK_TX_POST, post(1, out.size()));
    b.send_wire(encode(in));
    b.drain();
    b.run(2000);
    uint32_t ready = b.rd(NF_LINK_RX_READY) & ~ready0;
    int slot = ready ? __builtin_ctz(ready) : 0;
    tap_ok(b.tx_frames.size() == 1 && b.tx_frames[0] == out && b.rd(NF_LINK_CNT_RX_OK) == ok0 + 1 &&
           slot_holds(b, slot, in), "link: full duplex, RX writes and TX reads share the system port");
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    Bench b;
    test_registers(b);
    test_rx_good(b);
    test_rx_bad(b);
    test_tx(b);
    test_full_duplex(b);
    return tap_done();
}
