/* SPDX-License-Identifier: Apache-2.0 */
// SoC smoke test: boots rtl/soc/tb/smoke.c on PicoRV32 inside nf_soc and follows
// the program's progress on the LEDs (see smoke.c): one line per check.
#include <cstdio>

#include "Vnf_soc.h"
#include "nf_tb_clock.h"
#include "verilated.h"

extern "C" {
#include "tap.h"
}

namespace {
constexpr int kSteps = 13;
constexpr unsigned kStepShift = 3, kFailed = 2, kDone = 1;
constexpr uint64_t kMaxCycles = 400000;
}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    Vnf_soc top;
    top.uart_rx = 1;
    top.uart_period = 16 << 4;
    uint64_t cycle = 0;
    auto tick = [&]() { tb_tick(&top, cycle); };
    tb_reset(&top, 8, tick);
    unsigned step = 0, leds = 0;  // no UART traffic: LED bits [2:0] are the program's
    while (cycle < kMaxCycles && !(leds & (kFailed | kDone)) && !top.trap) {
        tick();
        leds = top.leds;
        step = leds >> kStepShift;
    }
    bool done = leds & kDone;
    for (int i = 1; i <= kSteps; i++) {
        bool passed = done || (static_cast<int>(step) > i);
        tap_ok(passed, "soc: smoke check %d%s", i,
               passed ? "" : (static_cast<int>(step) == i ? (top.trap ? " (CPU trapped)" : " failed") : " not reached"));
    }
    tap_ok(done && !top.trap, "soc: program finished in %llu cycles, no trap", static_cast<unsigned long long>(cycle));
    return tap_done();
}
