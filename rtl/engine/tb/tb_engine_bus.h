/* SPDX-License-Identifier: Apache-2.0 */
// nf_engine's clock and its two PicoRV32-style ports (csr: the ENGINE registers as the
// firmware drives them; sys: the system port as the link and the CPU's adapter-memory
// window drive it). Shared by the engine testbench, the differential test against the
// C model and the engine micro-benchmark. Include after nf_layout.h (nf_layout_cxx.h).
#ifndef NF_TB_ENGINE_BUS_H
#define NF_TB_ENGINE_BUS_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "../../include/nf_tb_clock.h"   // relative: bench/ includes this header by path
#include "Vnf_engine.h"
#include "verilated.h"

struct EngineBus {
    Vnf_engine *m;
    uint64_t cyc = 0;
    uint64_t bus_timeout = 100;   // clocks an access may wait for ready
    int lat = 0;                  // clocks the last access waited for ready
    // Called when ready never comes (port name, address); the default ends the program.
    std::function<void(const char *, uint32_t)> on_hang = [](const char *port, uint32_t addr) {
        std::printf("# %s access hung at 0x%x\n", port, addr);
        std::exit(1);
    };

    explicit EngineBus(Vnf_engine *model) : m(model) {}
    void tick() { tb_tick(m, cyc); }
    // Reset for two clocks with both ports idle. The tables then clear themselves
    // (TBL_STATUS.BUSY) before the first table op or check runs.
    void reset()
    {
        m->clk = 0;
        m->csr_valid = 0;
        m->sys_valid = 0;
        tb_reset(m, 2, [this] { tick(); });
    }
    uint32_t csr(uint32_t off, uint32_t wdata, uint32_t wstrb)
    {
        return access("csr", m->csr_valid, m->csr_addr, m->csr_wdata, m->csr_wstrb, m->csr_ready, m->csr_rdata,
                      off, wdata, wstrb);
    }
    uint32_t sys(uint32_t addr, uint32_t wdata, uint32_t wstrb)
    {
        m->sys_head_addr = addr;   // the port's one master: its address is the head copy's
        return access("sys", m->sys_valid, m->sys_addr, m->sys_wdata, m->sys_wstrb, m->sys_ready, m->sys_rdata,
                      addr, wdata, wstrb);
    }
    void csr_wr(uint32_t off, uint32_t v) { csr(off, v, 0xF); }
    uint32_t csr_rd(uint32_t off) { return csr(off, 0, 0); }
    // Polls a STATUS_WORD register until BUSY drops; returns the last value read.
    uint32_t wait_status(uint32_t off)
    {
        uint32_t s;
        while ((s = csr_rd(off)) & NF_STATUS_WORD_BUSY_MASK) {}
        return s;
    }
    // Starts a table op on TBL_INDEX and returns its REFUSE code.
    uint32_t tbl(uint32_t op)
    {
        csr_wr(NF_ENGINE_TBL_CMD, op);
        return NF_STATUS_WORD_CODE_GET(wait_status(NF_ENGINE_TBL_STATUS));
    }

    // One side of a DMA: DMA_MODE, ACCESS (TOKEN mode), token, PD, address.
    struct DmaSide {
        uint32_t mode, access, token, pd;
        uint64_t addr;
    };
    // Writes both sides' registers and DMA_LEN; DMA_CTRL then starts the transfer.
    void dma_setup(const DmaSide &src, const DmaSide &dst, uint32_t len)
    {
        dma_side(NF_ENGINE_DMA_SRC_MODE, src);
        dma_side(NF_ENGINE_DMA_DST_MODE, dst);
        csr_wr(NF_ENGINE_DMA_LEN, len);
    }

private:
    // The SRC and DST register groups have the same layout from their MODE register on.
    static_assert(NF_ENGINE_DMA_DST_PD - NF_ENGINE_DMA_DST_MODE == NF_ENGINE_DMA_SRC_PD - NF_ENGINE_DMA_SRC_MODE &&
                      NF_ENGINE_DMA_DST_TOKEN - NF_ENGINE_DMA_DST_MODE == NF_ENGINE_DMA_SRC_TOKEN - NF_ENGINE_DMA_SRC_MODE &&
                      NF_ENGINE_DMA_DST_ADDR_LO - NF_ENGINE_DMA_DST_MODE ==
                          NF_ENGINE_DMA_SRC_ADDR_LO - NF_ENGINE_DMA_SRC_MODE &&
                      NF_ENGINE_DMA_DST_ADDR_HI - NF_ENGINE_DMA_DST_MODE ==
                          NF_ENGINE_DMA_SRC_ADDR_HI - NF_ENGINE_DMA_SRC_MODE,
                  "DMA side register groups differ");
    void dma_side(uint32_t mode_off, const DmaSide &x)
    {
        csr_wr(mode_off, NF_DMA_SIDE_MODE_MODE_PUT(x.mode) | NF_DMA_SIDE_MODE_ACCESS_PUT(x.access));
        csr_wr(mode_off + (NF_ENGINE_DMA_SRC_TOKEN - NF_ENGINE_DMA_SRC_MODE), x.token);
        csr_wr(mode_off + (NF_ENGINE_DMA_SRC_ADDR_LO - NF_ENGINE_DMA_SRC_MODE), (uint32_t)x.addr);
        csr_wr(mode_off + (NF_ENGINE_DMA_SRC_ADDR_HI - NF_ENGINE_DMA_SRC_MODE), (uint32_t)(x.addr >> 32));
        csr_wr(mode_off + (NF_ENGINE_DMA_SRC_PD - NF_ENGINE_DMA_SRC_MODE), x.pd);
    }

    // valid held until ready; a master starts its next access in the clock after ready,
    // not in it.
    template <class V, class A, class S, class R>
    uint32_t access(const char *port, V &valid, A &addr, R &wdata, S &wstrb, const V &ready, const R &rdata,
                    uint32_t a, uint32_t wd, uint32_t ws)
    {
        if (ready) tick();
        valid = 1;
        addr = (A)a;
        wdata = wd;
        wstrb = (S)ws;
        lat = 0;
        do {
            tick();
            lat++;
        } while (!ready && (uint64_t)lat < bus_timeout);
        valid = 0;
        if (!ready) on_hang(port, a);
        return rdata;
    }
};

#endif
