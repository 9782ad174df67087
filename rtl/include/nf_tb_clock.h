/* SPDX-License-Identifier: Apache-2.0 */
// Clock and reset of a Verilated model (a clk and an active-high rst input), for the C++
// testbenches and benchmarks of every RTL area.
#ifndef NF_TB_CLOCK_H
#define NF_TB_CLOCK_H

#include <cstdint>

// One rising clock edge.
template <class M> inline void tb_tick(M *m, uint64_t &cyc)
{
    m->clk = 0;
    m->eval();
    m->clk = 1;
    m->eval();
    cyc++;
}

// Reset held for n clocks of tick (the testbench's own, which may drive inputs too).
template <class M, class Tick> inline void tb_reset(M *m, int n, Tick tick)
{
    m->rst = 1;
    for (int i = 0; i < n; i++) tick();
    m->rst = 0;
}

#endif
