/* SPDX-License-Identifier: Apache-2.0 */
// nf_adapter_mem unit testbench: system port against engine traffic on both ports.
// The system port must win the port it needs in the cycle it asks (ready one clock
// later), the engine must see its grant withdrawn for exactly that cycle, and data
// written by either side must read back byte-exact. A read of a link slot's head is
// answered from the heads' copy in 1 clock, without the read port, and sees every write
// that landed before it, from either side; so does the copy's peek, in its own clock.
#include <cstring>
#include <vector>

#include "Vnf_adapter_mem.h"
#include "verilated.h"
#include "nf_layout_cxx.h"
#include "tb_common.h"

#ifndef TB_MEM_BYTES
#error "TB_MEM_BYTES comes from engine.mk (the -G parameter of this build)"
#endif
#ifndef TB_HEAD_SLOTS
#error "TB_HEAD_SLOTS comes from engine.mk (the -G parameter of this build)"
#endif
static const uint32_t MEM = TB_MEM_BYTES;
static const uint32_t WORDS = MEM / 8;
static const uint32_t HEAD_SLOTS = TB_HEAD_SLOTS;
static const uint32_t HEAD_BYTES = NF_ENGINE_HW_RX_HEAD_BYTES; // nf_adapter_mem's default
static const uint32_t SLOT_BYTES = NF_LINK_SLOT_BYTES;

static bool in_head(uint32_t a) { return a / SLOT_BYTES < HEAD_SLOTS && a % SLOT_BYTES < HEAD_BYTES; }
// A random word-aligned byte address in a head (HEAD_SLOTS > 0).
static uint32_t head_addr(Rng &g) { return g.below(HEAD_SLOTS) * SLOT_BYTES + 4 * g.below(HEAD_BYTES / 4); }

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    Vnf_adapter_mem *m = new Vnf_adapter_mem;
    std::vector<uint8_t> ref(MEM, 0);
    Rng g(5);
    uint64_t cyc = 0;
    auto tick = [&]() { m->clk = 0; m->eval(); m->clk = 1; m->eval(); cyc++; };
    m->rst = 1;
    m->sys_valid = 0;
    m->eng_rd_req = 0;
    m->eng_wr_req = 0;
    tick();
    m->rst = 0;

    // Engine writes every word (byte enables all set), then the system port reads some back.
    for (uint32_t w = 0; w < WORDS; w++) {
        uint64_t v = g.next();
        m->eng_wr_req = 1;
        m->eng_wr_addr = w;
        m->eng_wr_data = v;
        m->eng_wr_be = 0xFF;
        m->eval();
        if (!m->eng_wr_gnt) { tb_ok(false, "mem: idle write port granted"); return tb_done(); }
        tick();
        std::memcpy(&ref[8 * w], &v, 8);
    }
    m->eng_wr_req = 0;
    bool ok = true;
    int worst = 0;
    // System reads while the engine streams reads every cycle: both must be right.
    uint32_t eng_addr = 0, sys_reads = 0, eng_reads = 0, head_reads = 0;
    uint32_t sys_addr = 0;
    int sys_wait = -1;
    bool latency_ok = true;
    bool gnt_prev = false;          // a read granted in the cycle before the one just ended
    uint32_t addr_prev = 0;
    for (int c = 0; c < 20000 && ok; c++) {
        // Start a system read now and then (never in the cycle ready shows).
        if (sys_wait < 0 && !m->sys_ready && g.below(3) == 0) {
            sys_addr = HEAD_SLOTS && g.below(4) == 0 ? head_addr(g) : 4 * g.below(MEM / 4);
            m->sys_valid = 1;
            m->sys_addr = sys_addr;
            m->sys_head_addr = m->sys_addr;
            m->sys_wstrb = 0;
            sys_wait = 0;
        }
        m->eng_rd_req = 1;
        m->eng_rd_addr = eng_addr;
        m->eval();
        bool gnt = m->eng_rd_gnt;
        tick();
        if (sys_wait >= 0) sys_wait++;
        // Data of a read granted in the cycle before the one just ended is valid now.
        if (gnt_prev) {
            uint64_t e;
            std::memcpy(&e, &ref[8 * addr_prev], 8);
            ok = ok && m->eng_rd_valid && m->eng_rd_data == e;
        } else {
            ok = ok && !m->eng_rd_valid;
        }
        gnt_prev = gnt;
        addr_prev = eng_addr;
        if (gnt) {
            eng_reads++;
            eng_addr = (eng_addr + 1) % WORDS;
        }
        if (sys_wait >= 0 && m->sys_ready) {
            uint32_t e;
            std::memcpy(&e, &ref[sys_addr], 4);
            ok = ok && m->sys_rdata == e;
            bool head = in_head(sys_addr);
            latency_ok = latency_ok && sys_wait == (head ? 1 : 4);
            if (!head) worst = sys_wait > worst ? sys_wait : worst;
            m->sys_valid = 0;
            sys_wait = -1;
            if (head) head_reads++;
            else sys_reads++;
        }
    }
    tb_ok(ok && sys_reads > 1000 && (HEAD_SLOTS == 0 || head_reads > 500),
          "mem: %u system reads (%u of them of slot heads) and %u engine reads interleaved, all data right",
          sys_reads + head_reads, head_reads, eng_reads);
    tb_ok(latency_ok && worst == 4,
          "mem: system read answered 4 clocks after valid, 1 in a slot head, while the engine reads every clock");
    tb_ok(eng_reads + sys_reads >= 19990,
          "mem: the read port is never idle, a head read leaves it to the engine (%u + %u of 20000 clocks)", eng_reads,
          sys_reads);

    // Finish the system read still in flight.
    m->eng_rd_req = 0;
    while (sys_wait >= 0 && !m->sys_ready) tick();
    m->sys_valid = 0;
    tick();

    // System byte writes against engine writes every cycle (different words): the
    // engine's write is refused in exactly the cycle after each system write starts.
    m->eng_rd_req = 0;
    ok = true;
    uint32_t sys_writes = 0, denied = 0;
    int wait = -1;
    uint32_t a = 0, wv = 0, strb = 0;
    // Runs on past 8000 clocks until the last write is answered, so its engine denial is counted.
    for (int c = 0; (c < 8000 || wait >= 0) && ok; c++) {
        if (c < 8000 && wait < 0 && !m->sys_ready && g.below(2) == 0) {
            a = 4 * g.below(MEM / 8);                // system side: lower half of memory
            wv = (uint32_t)g.next();
            strb = 1 + g.below(15);
            m->sys_valid = 1;
            m->sys_addr = a;
            m->sys_head_addr = m->sys_addr;
            m->sys_wdata = wv;
            m->sys_wstrb = strb;
            wait = 0;
        }
        uint32_t ew = WORDS / 2 + g.below(WORDS / 2);   // engine side: upper half
        uint64_t ev = g.next();
        uint8_t be = (uint8_t)g.next();
        m->eng_wr_req = 1;
        m->eng_wr_addr = ew;
        m->eng_wr_data = ev;
        m->eng_wr_be = be;
        m->eval();
        bool gnt = m->eng_wr_gnt;
        ok = ok && (gnt == !(wait == 1));            // the slot after the request is the system's
        if (!gnt) denied++;
        // the write is answered in that slot: ready shows in it, the handshake ends with it
        bool answered = wait >= 0 && m->sys_ready;
        ok = ok && (answered == (wait == 1));
        tick();
        if (gnt)
            for (int b = 0; b < 8; b++)
                if (be & (1u << b)) ref[8 * ew + b] = (uint8_t)(ev >> (8 * b));
        if (answered) {
            for (int b = 0; b < 4; b++)
                if (strb & (1u << b)) ref[a + b] = (uint8_t)(wv >> (8 * b));
            m->sys_valid = 0;
            wait = -1;
            sys_writes++;
        } else if (wait >= 0) {
            wait++;
        }
    }
    m->eng_wr_req = 0;
    if (wait >= 0) {   // finish the write still in flight
        while (!m->sys_ready) tick();
        for (int b = 0; b < 4; b++)
            if (strb & (1u << b)) ref[a + b] = (uint8_t)(wv >> (8 * b));
        m->sys_valid = 0;
        sys_writes++;
        tick();
    }
    tb_ok(ok && sys_writes > 1000 && denied == sys_writes,
          "mem: a system write takes the write port for exactly one cycle and is answered in it, 1 clock after valid (%u writes, %u engine denials)",
          sys_writes, denied);

    // The heads' copy against writes from both sides: the engine writes head words with
    // random byte enables whenever granted, the system port writes head words and reads
    // them back, often the word it has just written (its write then lands in the read's
    // clock). A read sees every write that landed before its request: the system's
    // answered ones and the engine's granted before the request's clock.
    if (HEAD_SLOTS) {
        ok = true;
        uint32_t head_rd = 0, head_wr = 0, eng_wr = 0, just_written = 0, peeks = 0, peeks_landing = 0;
        uint32_t landing = MEM;  // the head word whose system write lands in this clock, if any
        int hw = -1;            // clocks the system request has waited, -1: none
        bool hwrite = false;
        uint32_t ha = 0, hv = 0, hs = 0, expect = 0, last_wr = 0;
        for (int c = 0; (c < 12000 || hw >= 0) && ok; c++) {
            if (c < 12000 && hw < 0 && !m->sys_ready) {
                hwrite = g.below(2) == 0;
                ha = !hwrite && head_wr && g.below(2) == 0 ? last_wr : head_addr(g);
                hv = (uint32_t)g.next();
                hs = hwrite ? 1 + g.below(15) : 0;
                m->sys_valid = 1;
                m->sys_addr = ha;
                m->sys_head_addr = m->sys_addr;
                m->sys_wdata = hv;
                m->sys_wstrb = hs;
                std::memcpy(&expect, &ref[ha], 4);  // the writes landed before this clock
                if (!hwrite && ha == last_wr) just_written++;
                hw = 0;
            }
            uint32_t ea = head_addr(g) & ~7u;
            uint64_t ev = g.next();
            uint8_t be = (uint8_t)g.next();
            m->eng_wr_req = c < 12000;
            m->eng_wr_addr = ea / 8;
            m->eng_wr_data = ev;
            m->eng_wr_be = be;
            // The peek, anywhere in memory: in a head it reads the copy as of this clock
            // (every write answered or granted before it, the landing one included).
            uint32_t pa = g.below(4) == 0 ? 4 * g.below(MEM / 4) : g.below(2) == 0 ? landing : head_addr(g);
            pa = pa < MEM ? pa : head_addr(g);
            m->peek_addr = pa;
            m->eval();
            bool pin = in_head(pa);
            uint32_t pe;
            std::memcpy(&pe, &ref[pa], 4);
            ok = ok && m->peek_head == pin && (!pin || m->peek_rdata == pe);
            peeks += pin;
            peeks_landing += pin && (pa & ~7u) == (landing & ~7u);
            landing = MEM;
            bool gnt = m->eng_wr_gnt;
            bool answered = hw >= 0 && m->sys_ready;
            if (hw >= 0) ok = ok && answered == (hw == 1);
            if (answered && !hwrite) ok = ok && m->sys_rdata == expect;
            tick();
            if (gnt) {
                eng_wr++;
                for (int b = 0; b < 8; b++)
                    if (be & (1u << b)) ref[ea + b] = (uint8_t)(ev >> (8 * b));
            }
            if (answered) {
                if (hwrite) {
                    for (int b = 0; b < 4; b++)
                        if (hs & (1u << b)) ref[ha + b] = (uint8_t)(hv >> (8 * b));
                    last_wr = ha;
                    landing = ha;
                    head_wr++;
                } else {
                    head_rd++;
                }
                m->sys_valid = 0;
                hw = -1;
            } else if (hw >= 0) {
                hw++;
            }
        }
        m->eng_wr_req = 0;
        tick();
        // Every head word through the system port (the copy) equals the reference.
        for (uint32_t s = 0; s < HEAD_SLOTS && ok; s++)
            for (uint32_t o = 0; o < HEAD_BYTES && ok; o += 4) {
                m->sys_valid = 1;
                m->sys_addr = s * SLOT_BYTES + o;
                m->sys_head_addr = m->sys_addr;
                m->sys_wstrb = 0;
                tick();
                uint32_t e;
                std::memcpy(&e, &ref[s * SLOT_BYTES + o], 4);
                ok = m->sys_ready && m->sys_rdata == e;
                m->sys_valid = 0;
                m->peek_addr = s * SLOT_BYTES + o;
                tick();
                ok = ok && m->peek_head && m->peek_rdata == e;
            }
        tb_ok(ok && head_rd > 2000 && just_written > 500 && eng_wr > 5000,
              "mem: slot heads: %u reads (%u right after a write of their word) and %u writes by the system port against %u engine writes: every read sees the writes landed before it, in 1 clock",
              head_rd, just_written, head_wr, eng_wr);
        tb_ok(ok && peeks > 5000 && peeks_landing > 500,
              "mem: the heads' peek: %u reads in a head (%u of a word whose system write lands in their clock), others outside: each sees every write answered or granted before its clock",
              peeks, peeks_landing);
    }
    // Read everything back through the engine port.
    ok = true;
    for (uint32_t w = 0; w < WORDS && ok; w++) {
        m->eng_rd_req = 1;
        m->eng_rd_addr = w;
        tick();
        m->eng_rd_req = 0;    // the word arrives two clocks after its grant
        tick();
        uint64_t e;
        std::memcpy(&e, &ref[8 * w], 8);
        ok = m->eng_rd_valid && m->eng_rd_data == e;
        if (!ok) std::printf("# word %u: 0x%016llx, expected 0x%016llx\n", w, (unsigned long long)m->eng_rd_data,
                             (unsigned long long)e);
    }
    tb_ok(ok, "mem: every byte written by either port reads back (byte enables and strobes honoured)");
    m->eng_rd_req = 0;
    m->sys_valid = 1;
    m->sys_addr = MEM;
    m->sys_head_addr = m->sys_addr;
    m->sys_wstrb = 0;
    int n = 0;
    do { tick(); n++; } while (!m->sys_ready && n < 10);
    tb_ok(m->sys_ready && m->sys_rdata == 0, "mem: system read outside memory answers 0");
    m->final();
    delete m;
    return tb_done();
}
