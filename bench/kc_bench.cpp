/* SPDX-License-Identifier: Apache-2.0 */
// Key check + translation micro-benchmark: drives nf_keycheck directly (no register
// block in the way), measures the sustained rate of back-to-back checks and the
// latency of one check, and verifies every granted translation.
// Prints "key = value" lines for bench/report.py and "ok -"/"not ok -" lines.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "Vnf_keycheck.h"
#include "nf_layout_cxx.h"
#include "verilated.h"
#define TB_CASE_PREFIX "keycheck: "
#include "../rtl/engine/tb/tb_common.h"
#include "../rtl/engine/tb/tb_keycheck_io.h"

namespace {

constexpr uint32_t kIndex = 1;
constexpr uint32_t kKey = 0x5A;
constexpr uint32_t kPd = 3;
constexpr uint32_t kPages = 64;
constexpr uint64_t kBaseVa = 0x40000000ull;
constexpr uint32_t kFirstPage = 0x100;   // adapter page number of MTT[0]
constexpr int kChecks = 20000;

Vnf_keycheck *top;
uint64_t cycle;

void tick() { tb_tick(top, cycle); }

void idle_inputs() { kc_drive(top, nullptr); }

// Issue one table op and wait for its result.
uint32_t table_op(uint32_t op, uint32_t index, const uint32_t *entry, uint32_t mtt_data)
{
    KcOp o{};
    o.op = op;
    o.index = index;
    for (int w = 0; w < 7; w++)
        o.entry[w] = entry ? entry[w] : 0;
    o.mtt_data = mtt_data;
    kc_drive(top, &o);
    tick();
    idle_inputs();
    for (int i = 0; i < 16; i++) {
        top->eval();
        if (top->out_valid)
            return top->out_code;
        tick();
    }
    return 0xFF;
}

void set_tb_ok(uint64_t va, uint32_t len)
{
    KcOp o = kc_check_op(kIndex << NF_TOKEN_INDEX_LSB | kKey, va, len, NF_ACCESS_REMOTE_WRITE, kPd);
    o.tag = 3;
    kc_drive(top, &o);
}

uint32_t expected_addr(uint64_t va)
{
    uint64_t off = va - kBaseVa;
    return (kFirstPage + (uint32_t)(off >> NF_ADAPTER_PAGE_SHIFT)) << NF_ADAPTER_PAGE_SHIFT |
           (uint32_t)(off & (NF_ADAPTER_PAGE_SIZE - 1));
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    top = new Vnf_keycheck;
    top->rst = 1;
    idle_inputs();
    tick();
    tick();
    top->rst = 0;
    while (!top->ready)
        tick();

    uint32_t entry[7] = {0};
    entry[0] = NF_MPT_STATE_VALID << NF_MPT_W0_STATE_LSB | NF_MPT_KIND_NORMAL << NF_MPT_W0_KIND_LSB |
               NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK |
               kKey << NF_MPT_W0_KEY_LSB;
    entry[1] = kPd << NF_MPT_W1_PD_LSB;
    entry[2] = (uint32_t)kBaseVa;
    entry[3] = (uint32_t)(kBaseVa >> 32);
    entry[4] = kPages * NF_ADAPTER_PAGE_SIZE;
    entry[5] = 0u << NF_MPT_W5_MTT_BASE_LSB | kPages << NF_MPT_W5_PAGE_CAP_LSB;
    entry[6] = kPages;
    bool setup_ok = table_op(NF_TBL_OP_MPT_WRITE, kIndex, entry, 0) == NF_REFUSE_OK;
    for (uint32_t p = 0; p < kPages; p++)
        setup_ok &= table_op(NF_TBL_OP_MTT_WRITE, p, nullptr, kFirstPage + p) == NF_REFUSE_OK;
    tb_ok(setup_ok, "MPT entry and 64 MTT entries written");

    // Latency: one check alone, from the cycle it is presented to the cycle its result is out.
    for (int i = 0; i < 4; i++)
        tick();
    set_tb_ok(kBaseVa + 5 * NF_ADAPTER_PAGE_SIZE + 24, 8);
    uint64_t t_in = cycle;
    tick();
    idle_inputs();
    uint64_t latency = 0;
    for (int i = 0; i < 16; i++) {
        top->eval();
        if (top->out_valid) {
            latency = cycle - t_in;
            tb_ok(top->out_code == NF_REFUSE_OK && top->out_addr == expected_addr(kBaseVa + 5 * NF_ADAPTER_PAGE_SIZE + 24),
                  "single check granted with the right adapter address");
            break;
        }
        tick();
    }
    tb_ok(latency > 0, "single check produced a result");

    // Sustained: a new check every clock (while ready), results counted and verified.
    for (int i = 0; i < 4; i++)
        tick();
    std::vector<uint64_t> vas(kChecks);
    for (int i = 0; i < kChecks; i++)
        vas[i] = kBaseVa + (uint64_t)((i * 7919u) % (kPages * NF_ADAPTER_PAGE_SIZE - 64)) / 8 * 8;
    int issued = 0, done = 0, bad = 0;
    uint64_t first_in = 0, last_out = 0;
    while (done < kChecks && cycle < 10ull * kChecks + 1000) {
        if (issued < kChecks) {
            set_tb_ok(vas[issued], 64);
        } else {
            idle_inputs();
        }
        top->eval();
        bool taken = top->in_valid && top->ready;
        if (top->out_valid) {
            if (top->out_code != NF_REFUSE_OK || top->out_addr != expected_addr(vas[done]))
                bad++;
            done++;
            last_out = cycle;
        }
        if (taken) {
            if (issued == 0)
                first_in = cycle;
            issued++;
        }
        tick();
    }
    tb_ok(done == kChecks && bad == 0, "20000 back-to-back checks all granted with the right addresses");
    double per_clock = (double)kChecks / (double)(last_out - first_in + 1 - latency);
    std::printf("keycheck_per_clock = %.4f\n", per_clock);
    std::printf("keycheck_latency_clocks = %llu\n", (unsigned long long)latency);
    std::printf("keycheck_checks = %d\n", kChecks);
    std::printf("keycheck_window_clocks = %llu\n", (unsigned long long)(last_out - first_in + 1));
    top->final();
    delete top;
    return tb_done();
}
