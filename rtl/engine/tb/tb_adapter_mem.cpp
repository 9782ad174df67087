// nf_adapter_mem unit testbench: system port against engine traffic on both ports.
// The system port must win the port it needs in the cycle it asks (ready one clock
// later), the engine must see its grant withdrawn for exactly that cycle, and data
// written by either side must read back byte-exact.
#include <cstring>
#include <vector>

#include "Vnf_adapter_mem.h"
#include "verilated.h"
#include "tb_common.h"

#ifndef TB_MEM_BYTES
#error "TB_MEM_BYTES comes from engine.mk (the -G parameter of this build)"
#endif
static const uint32_t MEM = TB_MEM_BYTES;
static const uint32_t WORDS = MEM / 8;

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
    uint32_t eng_addr = 0, sys_reads = 0, eng_reads = 0;
    uint32_t sys_addr = 0;
    int sys_wait = -1;
    bool gnt_prev = false;          // a read granted in the cycle before the one just ended
    uint32_t addr_prev = 0;
    for (int c = 0; c < 20000 && ok; c++) {
        // Start a system read now and then (never in the cycle ready shows).
        if (sys_wait < 0 && !m->sys_ready && g.below(3) == 0) {
            sys_addr = 4 * g.below(MEM / 4);
            m->sys_valid = 1;
            m->sys_addr = sys_addr;
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
            worst = sys_wait > worst ? sys_wait : worst;
            m->sys_valid = 0;
            sys_wait = -1;
            sys_reads++;
        }
    }
    tb_ok(ok && sys_reads > 1000, "mem: %u system reads and %u engine reads interleaved, all data right", sys_reads,
          eng_reads);
    tb_ok(worst == 4, "mem: system read answered %d clocks after valid while the engine reads every clock", worst);
    tb_ok(eng_reads + sys_reads >= 19990, "mem: the read port is never idle (%u + %u of 20000 clocks)", eng_reads,
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
    m->sys_wstrb = 0;
    int n = 0;
    do { tick(); n++; } while (!m->sys_ready && n < 10);
    tb_ok(m->sys_ready && m->sys_rdata == 0, "mem: system read outside memory answers 0");
    m->final();
    delete m;
    return tb_done();
}
