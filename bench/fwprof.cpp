/* SPDX-License-Identifier: Apache-2.0 */
// Where the cycles of one work request go: runs nf_soc (the board's RTL with the real
// firmware image, UART at 3 MBd, exactly as nfsim does) under a small protocol driver,
// and follows the CPU's bus: every instruction fetch (attributed to the firmware
// function holding its address, from `nm` of the ELF), every adapter-memory window
// access and its wait, every read of RX_STAMP and CYCLE_LO. For a fast-register of
// 1, 16 and 256 pages and an invalidate it splits the firmware's measure
// (INFO.last_wr_cycles: RX stamp to the CYCLE_LO read after the CQE is written) into
// phases, in time order:
//   notice   RX stamp -> the firmware's first read of the slot (poll-loop latency)
//   link     -> first instruction of fw_msg_process (header, seq/ack, TX room check)
//   parse    -> first instruction of fw_wr_process (message walk, op dispatch)
//   validate -> the first ENGINE register access (WR fields, QP and MR lookups, the rules)
//   engine   -> the last ENGINE store before the wait (the engine's commands: a fast-register's
//            page-list load, its MPT entry staged and MPT_WRITE_LOADED; an invalidate's
//            MPT_INVALIDATE)
//   cqe      -> the first TBL_STATUS read (the CQE written ahead while the engine works)
//   wait     -> the answer of the last (what of the engine's work the CQE did not hide)
//   finish   -> the CYCLE_LO read that ends the measure (MR state, counters)
// and checks that the phases add up to the firmware's own last_wr_cycles (read back
// with INFO). Prints "phase ..." and "func ..." lines for bench/report.py.
// Usage: fwprof NM_FILE   (the output of `nm -S` of the firmware ELF); with FWPROF_TRACE=FILE
// it also appends every instruction fetch of each measure to FILE ("label cycle pc").
// Built with FWPROF_VEXRISCV (nf_soc's CPU "vexriscv", make bench-cores), the instructions
// are those the core retires (its last stage's PC, which VexRiscv makes public), not
// fetches: its fetches are cache refills, and it reaches the firmware RAM off the SoC bus.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "Vnf_soc.h"
#include "Vnf_soc___024root.h"
#ifdef FWPROF_VEXRISCV
#include "Vnf_soc_VexRiscv.h"
#include "Vnf_soc__Syms.h"
#include "Vnf_soc_nf_soc.h"
#endif
#include "nf_uart_bits.h"
#include "verilated.h"

extern "C" {
#include "nf_frame.h"
}

namespace {

struct Sym {
    uint32_t lo, hi;
    std::string name;
};
std::vector<Sym> syms;

const char *func_of(uint32_t pc)
{
    for (const Sym &s : syms)
        if (pc >= s.lo && pc < s.hi)
            return s.name.c_str();
    return "?";
}

Vnf_soc *top;
uint64_t cycle;
uint32_t period;
nfuart::Driver *drv;
nfuart::Sampler *smp;
nf_frame_decoder dec;
std::vector<std::vector<uint8_t>> frames_in;  // good frames from the board

// Profile state.
bool recording;
struct Fetch {
    uint64_t cycle;
    uint32_t pc;
};
std::vector<Fetch> fetches;
struct Read {
    uint64_t cycle;
    uint32_t addr, data;
};
std::vector<Read> reads;  // RX_STAMP and CYCLE_LO reads
struct Access {
    uint64_t cycle;
    uint32_t wait;  // cycles from valid to ready
    uint8_t kind;   // 0 RAM data, 1 window, 2 SYS, 3 LINK, 4 ENGINE
    uint32_t addr;
    bool write;
};
std::vector<Access> accesses;
uint64_t req_start;
bool in_req;

#ifdef FWPROF_VEXRISCV
// With VexRiscv (its PC public) Verilator keeps nf_soc a module of its own.
#define SOC(name) top->rootp->vlSymsp->TOP__nf_soc.name
#else
#define SOC(name) top->rootp->nf_soc__DOT__##name
#endif

void tick()
{
    top->uart_rx = (uint8_t)drv->level(cycle);
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    cycle++;
#ifdef FWPROF_VEXRISCV
    const Vnf_soc_VexRiscv &core = top->rootp->vlSymsp->TOP__nf_soc__g_cpu__DOT__u_cpu__u_core;
    // FWPROF_ALL=FILE: every instruction the core retires, the whole run ("cycle pc", hex
    // pc): what runs between requests, and so which lines of the cache it takes.
    static FILE *all = std::getenv("FWPROF_ALL") ? std::fopen(std::getenv("FWPROF_ALL"), "w") : nullptr;
    if (all && core.lastStageIsFiring)
        std::fprintf(all, "%llu %08x\n", (unsigned long long)cycle, core.lastStagePc);
    if (recording && core.lastStageIsFiring)
        fetches.push_back({cycle, core.lastStagePc});
#endif
    // The bus as the CPU sees it after this edge (ready lasts one cycle).
    bool valid = SOC(cpu_valid), ready = SOC(cpu_ready), instr = SOC(cpu_instr);
    uint32_t addr = SOC(cpu_addr);
    if (valid && !in_req) {
        in_req = true;
        req_start = cycle;
    }
    if (valid && ready) {
        in_req = false;
        if (recording) {
            if (instr) {
                fetches.push_back({cycle, addr});
            } else {
                uint8_t kind = addr < NF_MAP_SYS ? 0
                               : addr >= NF_MAP_ADAPTER_MEM ? 1
                               : addr >= NF_MAP_ENGINE ? 4
                               : addr >= NF_MAP_LINK ? 3
                                                       : 2;
                accesses.push_back({cycle, (uint32_t)(cycle - req_start), kind, addr, SOC(cpu_wstrb) != 0});
                if (SOC(cpu_wstrb) == 0 &&
                    (addr == NF_SYS_BASE + NF_SYS_CYCLE_LO ||
                     (addr >= NF_LINK_BASE + NF_LINK_RX_STAMP0 && addr < NF_LINK_BASE + NF_LINK_RX_STAMP0 + 64)))
                    reads.push_back({cycle, addr, SOC(cpu_rdata)});
            }
        }
    }
    // An RX head read answered in the core's request clock: a window read of no wait.
    if (recording && SOC(head_rd_now))
        accesses.push_back({cycle, 0u, 1, (uint32_t)(NF_MAP_ADAPTER_MEM + SOC(head_peek_off)), false});
    uint8_t b;
    if (smp->sample(cycle, top->uart_tx, &b) == 1) {
        if (nf_frame_decode_byte(&dec, b) == NF_FRAME_OK)
            frames_in.emplace_back(dec.buf, dec.buf + dec.len);
    }
}

uint8_t host_seq, board_expect;

void send_frame(uint8_t type, const std::vector<uint8_t> &payload, uint16_t rsvd)
{
    std::vector<uint8_t> raw(NF_LINK_HDR_SIZE + payload.size());
    nf_link_hdr h = {};
    h.type = type;
    h.seq = type == NF_LINK_TYPE_DATA ? host_seq++ : 0;
    h.ack = board_expect;
    h.len = (uint16_t)payload.size();
    h.rsvd = rsvd;
    std::memcpy(raw.data(), &h, sizeof(h));
    if (!payload.empty())
        std::memcpy(raw.data() + NF_LINK_HDR_SIZE, payload.data(), payload.size());
    std::vector<uint8_t> wire(2 * raw.size() + 32);
    size_t n = nf_frame_encode(raw.data(), raw.size(), wire.data(), wire.size());
    for (size_t i = 0; i < n; i++)
        drv->push(wire[i]);
}

std::vector<uint8_t> msg(uint16_t op, uint32_t tag, const std::vector<uint32_t> &words,
                         const std::vector<uint64_t> &quads = {})
{
    std::vector<uint8_t> m(NF_MSG_HDR_SIZE + 4 * words.size() + 8 * quads.size());
    nf_msg_hdr h = {};
    h.op = op;
    h.len = (uint16_t)m.size();
    h.tag = tag;
    std::memcpy(m.data(), &h, sizeof(h));
    std::memcpy(m.data() + NF_MSG_HDR_SIZE, words.data(), 4 * words.size());
    if (!quads.empty())
        std::memcpy(m.data() + NF_MSG_HDR_SIZE + 4 * words.size(), quads.data(), 8 * quads.size());
    return m;
}

// Run until a board frame carries a message with this op (tag matched for replies).
// Returns the message (header + body); empty on timeout.
std::vector<uint8_t> wait_msg(uint16_t op, uint32_t tag, uint64_t limit = 20000000)
{
    uint64_t end = cycle + limit;
    while (cycle < end) {
        tick();
        while (!frames_in.empty()) {
            std::vector<uint8_t> f = frames_in.front();
            frames_in.erase(frames_in.begin());
            nf_link_hdr h;
            std::memcpy(&h, f.data(), sizeof(h));
            if (h.type == NF_LINK_TYPE_RESET_ACK && op == 0)
                return f;
            if (h.type != NF_LINK_TYPE_DATA)
                continue;
            if (h.seq == board_expect)
                board_expect++;
            for (size_t off = NF_LINK_HDR_SIZE; off + NF_MSG_HDR_SIZE <= f.size();) {
                nf_msg_hdr m;
                std::memcpy(&m, f.data() + off, sizeof(m));
                if (m.len < NF_MSG_HDR_SIZE || off + m.len > f.size())
                    break;
                if (m.op == op && (op == NF_OP_CQE || m.tag == tag))
                    return std::vector<uint8_t>(f.begin() + off, f.begin() + off + m.len);
                off += m.len;
            }
        }
    }
    return {};
}

uint32_t tag_next = 1;
std::vector<uint8_t> request(uint16_t op, const std::vector<uint32_t> &words)
{
    uint32_t tag = tag_next++;
    send_frame(NF_LINK_TYPE_DATA, msg(op, tag, words), 0);
    return wait_msg(op | NF_OP_REPLY, tag);
}

uint32_t word(const std::vector<uint8_t> &m, size_t off)
{
    uint32_t v = 0;
    if (m.size() >= off + 4)
        std::memcpy(&v, m.data() + off, 4);
    return v;
}

int failures;
void check(bool c, const std::string &what)
{
    std::printf("%s - fwprof: %s\n", c ? "ok" : "not ok", what.c_str());
    if (!c)
        failures++;
}

const char *kPhases[] = {"notice", "link", "parse", "validate", "engine", "cqe", "wait", "finish"};
constexpr int kNPhases = 8;

// Profile one work request (message m) whose CQE we wait for; prints its phases.
void profile(const char *label, const std::vector<uint8_t> &m, bool fast_register)
{
    fetches.clear();
    reads.clear();
    accesses.clear();
    recording = true;
    send_frame(NF_LINK_TYPE_DATA, m, 0);
    std::vector<uint8_t> cqe = wait_msg(NF_OP_CQE, 0);
    recording = false;
    check(!cqe.empty() && word(cqe, NF_MSG_HDR_SIZE + NF_CQE_STATUS_OFF) == NF_STATUS_SUCCESS,
          std::string(label) + ": CQE with STATUS_SUCCESS");
    std::vector<uint8_t> info = request(NF_OP_INFO, {});
    uint32_t fw_total = word(info, NF_MSG_HDR_SIZE + NF_INFO_LAST_WR_CYCLES_OFF);
    uint32_t fw_own = word(info, NF_MSG_HDR_SIZE + NF_INFO_LAST_WR_FW_CYCLES_OFF);

    // The stamp the firmware read, and the CYCLE_LO read that ended its measure: the last
    // one made from fw_wr_process before the CQE left.
    uint32_t stamp = 0;
    bool have_stamp = false;
    for (const Read &r : reads)
        if (r.addr != NF_SYS_BASE + NF_SYS_CYCLE_LO && !have_stamp) {
            stamp = r.data;
            have_stamp = true;
        }
    // Map SoC counter values to our cycles with the first CYCLE_LO read.
    const Read *end_read = nullptr;
    int64_t offset = 0;
    bool have_off = false;
    for (const Read &r : reads) {
        if (r.addr != NF_SYS_BASE + NF_SYS_CYCLE_LO)
            continue;
        if (!have_off) {
            offset = (int64_t)r.cycle - (int64_t)r.data;
            have_off = true;
        }
        // the fetch just before this read tells who read it
        auto it = std::lower_bound(fetches.begin(), fetches.end(), r.cycle,
                                   [](const Fetch &f, uint64_t c) { return f.cycle < c; });
        if (it != fetches.begin() && std::strcmp(func_of((it - 1)->pc), "fw_wr_process") == 0)
            end_read = &r;
    }
    if (!have_stamp || !end_read || !have_off) {
        check(false, std::string(label) + ": found the RX stamp and the end of the measure on the bus");
        return;
    }
    uint64_t t_start = (uint64_t)((int64_t)stamp + offset);
    uint64_t t_end = (uint64_t)((int64_t)end_read->data + offset);
    uint64_t measured = t_end - t_start;
    check(measured == fw_total, std::string(label) + ": bus trace agrees with INFO.last_wr_cycles (" +
                                    std::to_string(measured) + " = " + std::to_string(fw_total) + ")");

    // Phase boundaries, in time order.
    uint64_t b[kNPhases + 1] = {0};
    b[0] = t_start;
    b[kNPhases] = t_end;
    for (const Access &a : accesses)
        if (a.kind == 1 && a.cycle >= t_start) {
            b[1] = a.cycle;
            break;
        }
    // The work request's first instruction, then bus events: the first ENGINE access
    // after it, and the wait (below).
    int phase = 1;
    std::map<std::string, uint64_t> per_func;
    uint64_t prev_cycle = t_start;
    std::string prev_func = "?";
    for (const Fetch &f : fetches) {
        if (f.cycle < t_start || f.cycle > t_end)
            continue;
        per_func[prev_func] += f.cycle - prev_cycle;
        prev_cycle = f.cycle;
        std::string fn = func_of(f.pc);
        prev_func = fn;
        if (phase == 1 && fn == "fw_msg_process" && f.cycle >= b[1]) {
            phase = 2;
            b[2] = f.cycle;
        } else if (phase == 2 && fn == "fw_wr_process") {
            phase = 3;
            b[3] = f.cycle;
            for (const Access &a : accesses)
                if (a.kind == 4 && a.cycle - a.wait >= b[3]) {
                    b[4] = a.cycle - a.wait;
                    break;
                }
        }
    }
    // The wait: from the first TBL_STATUS read after the engine's first command to the
    // answer of the last one before the end (a long load outlasts a held read: the
    // firmware then polls). The engine phase ends with the last ENGINE store before it
    // (the command that starts the engine's work); the CQE is written in between.
    if (phase == 3 && b[4]) {
        for (const Access &a : accesses)
            if (a.kind == 4 && !a.write && a.addr == NF_ENGINE_BASE + NF_ENGINE_TBL_STATUS && a.cycle > b[4] &&
                a.cycle <= t_end) {
                if (phase == 3)
                    b[6] = a.cycle - a.wait;
                b[7] = a.cycle;
                phase = 4;
            }
        for (const Access &a : accesses)
            if (phase == 4 && a.kind == 4 && a.write && a.cycle >= b[4] && a.cycle < b[6])
                b[5] = a.cycle;
        phase = b[5] ? 5 : phase;
    }
    per_func[prev_func] += t_end - prev_cycle;
    bool ordered = phase == 5;
    for (int i = 0; i < kNPhases; i++)
        ordered = ordered && b[i] <= b[i + 1];
    check(ordered, std::string(label) + ": every phase seen in order");
    if (!ordered)
        return;
    (void)fast_register;
    // Bus waits on the adapter-memory window and engine registers inside the window.
    uint64_t win_n = 0, win_wait = 0, eng_n = 0, eng_wait = 0, fetch_n = 0;
    for (const Access &a : accesses) {
        if (a.cycle < t_start || a.cycle > t_end)
            continue;
        if (a.kind == 1) {
            win_n++;
            win_wait += a.wait;
        } else if (a.kind == 4) {
            eng_n++;
            eng_wait += a.wait;
        }
    }
    for (const Fetch &f : fetches)
        if (f.cycle >= t_start && f.cycle <= t_end)
            fetch_n++;
    for (int i = 0; i < kNPhases; i++)
        std::printf("phase %s %s %llu\n", label, kPhases[i], (unsigned long long)(b[i + 1] - b[i]));
    std::printf("phase %s total %llu\n", label, (unsigned long long)measured);
    std::printf("phase %s fw_own %u\n", label, fw_own);
    std::printf("phase %s instructions %llu\n", label, (unsigned long long)fetch_n);
    // FWPROF_TRACE=FILE: every instruction fetch of the measure ("label cycle pc", hex pc),
    // to read against the firmware's disassembly.
    if (const char *path = std::getenv("FWPROF_TRACE")) {
        if (FILE *t = std::fopen(path, "a")) {
            for (const Fetch &f : fetches)
                if (f.cycle >= t_start && f.cycle <= t_end)
                    std::fprintf(t, "%s %llu %08x\n", label, (unsigned long long)(f.cycle - t_start), f.pc);
            std::fclose(t);
        }
    }
    std::printf("phase %s window_accesses %llu\n", label, (unsigned long long)win_n);
    std::printf("phase %s window_wait_cycles %llu\n", label, (unsigned long long)win_wait);
    std::printf("phase %s engine_accesses %llu\n", label, (unsigned long long)eng_n);
    std::printf("phase %s engine_wait_cycles %llu\n", label, (unsigned long long)eng_wait);
    for (auto &kv : per_func)
        std::printf("func %s %s %llu\n", label, kv.first.c_str(), (unsigned long long)kv.second);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: fwprof NM_FILE\n");
        return 2;
    }
    FILE *nm = std::fopen(argv[1], "r");
    if (!nm) {
        std::perror(argv[1]);
        return 2;
    }
    char line[256];
    while (std::fgets(line, sizeof(line), nm)) {
        unsigned lo, size;
        char type, name[200];
        if (std::sscanf(line, "%x %x %c %199s", &lo, &size, &type, name) == 4 && (type == 'T' || type == 't'))
            syms.push_back({lo, lo + size, name});
    }
    std::fclose(nm);
    for (Sym &s : syms) {  // local copies like "tx_flush.part.0" keep their base name
        size_t dot = s.name.find('.');
        if (dot != std::string::npos)
            s.name.resize(dot);
    }

    const char *args[] = {"fwprof"};
    Verilated::commandArgs(1, args);
    top = new Vnf_soc;
    period = nfuart::period_q4(NF_SOC_CPU_CLK_SIM_HZ, 3000000);
    top->uart_period = (uint16_t)period;
    nfuart::Driver d(period);
    nfuart::Sampler s(period);
    drv = &d;
    smp = &s;
    nf_frame_decoder_init(&dec);
    top->rst = 1;
    top->uart_rx = 1;
    for (int i = 0; i < 10; i++)
        tick();
    top->rst = 0;
    for (int i = 0; i < 20000; i++)
        tick();

    send_frame(NF_LINK_TYPE_RESET, {}, 0x1234);
    std::vector<uint8_t> ra = wait_msg(0, 0);
    check(!ra.empty(), "RESET_ACK from the firmware");
    if (ra.empty())
        return 1;
    nf_info info;
    std::memcpy(&info, ra.data() + NF_LINK_HDR_SIZE, sizeof(info));
    host_seq = 0;
    board_expect = 0;
    std::vector<uint8_t> r = request(NF_OP_QP_CREATE, {1, 8, 0, 0}); // QP_CREATE_REQ: pd, sq_depth, no receive queue
    uint32_t qpn = word(r, NF_MSG_HDR_SIZE);
    r = request(NF_OP_QP_CONNECT, {qpn, qpn});
    bool ok = word(r, NF_MSG_HDR_STATUS_OFF) == NF_STATUS_SUCCESS;
    r = request(NF_OP_MR_CREATE, {1, 1});
    uint32_t token = word(r, NF_MSG_HDR_SIZE);
    ok = ok && word(r, NF_MSG_HDR_STATUS_OFF) == NF_STATUS_SUCCESS;
    r = request(NF_OP_FRMR_INIT, {token, info.max_frmr_pages, 1, 0});
    ok = ok && word(r, NF_MSG_HDR_STATUS_OFF) == NF_STATUS_SUCCESS;
    check(ok, "QP connected, fast-register MR initialized");

    auto fast_register = [&](uint32_t n) {
        std::vector<uint64_t> tail;  // length, va, then the page list
        tail.push_back((uint64_t)n * NF_ADAPTER_PAGE_SIZE);
        tail.push_back(0x10000000ull);
        for (uint32_t i = 0; i < n; i++)
            tail.push_back(info.user_base + (uint64_t)i * NF_ADAPTER_PAGE_SIZE);
        return msg(NF_OP_WR_FAST_REGISTER, 0, {qpn, 100 + n, NF_NDK_OP_FLAG_ALLOW_REMOTE_WRITE, 0, token, n, 0, 0}, tail);
    };
    auto invalidate = [&](uint32_t n) { return msg(NF_OP_WR_INVALIDATE, 0, {qpn, 200 + n, 0, 0, token, 0}); };
#ifdef FWPROF_VEXRISCV
    // A core with caches is profiled warm, as bench_sim's repeated requests find it: a
    // fast-register of each profiled size and its invalidate first, unprofiled (a frame
    // with a long page list takes a path a one-page frame does not).
    for (const std::vector<uint8_t> &m : {fast_register(1), invalidate(1), fast_register(16), invalidate(16)}) {
        send_frame(NF_LINK_TYPE_DATA, m, 0);
        std::vector<uint8_t> cqe = wait_msg(NF_OP_CQE, 0);
        check(!cqe.empty() && word(cqe, NF_MSG_HDR_SIZE + NF_CQE_STATUS_OFF) == NF_STATUS_SUCCESS,
              "warm-up request: CQE with STATUS_SUCCESS");
    }
#endif
    const uint32_t counts[] = {1, 16, 256};
    for (uint32_t n : counts) {
        if (n > info.max_frmr_pages)
            continue;
        std::string label = "fastreg_" + std::to_string(n);
        profile(label.c_str(), fast_register(n), true);
        profile(n == 1 ? "invalidate" : ("invalidate_after_" + std::to_string(n)).c_str(), invalidate(n), false);
    }
    top->final();
    delete top;
    return failures ? 1 : 0;
}
