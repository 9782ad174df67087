/* SPDX-License-Identifier: Apache-2.0 */
// Engine micro-benchmark through the ENGINE registers and the system port, as the
// firmware drives it: page-list load into the MTT (1 and 256 pages) and a 64 KiB DMA
// between two token-named regions whose pages are scattered. Cycle counts run from
// the clock the start register's write lands (one after its request) to the clock the unit's busy flag drops
// (read from the RTL, made visible by bench/eng_bench.vlt). Results are verified.
// Prints "key = value" lines for bench/report.py and "ok -"/"not ok -" lines.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "Vnf_engine.h"
#include "Vnf_engine___024root.h"
#include "nf_layout_cxx.h"
#define TB_CASE_PREFIX "engine: "
#include "../rtl/engine/tb/tb_common.h"
#include "../rtl/engine/tb/tb_engine_bus.h"

#ifndef BENCH_USER_BASE
#error "BENCH_USER_BASE, BENCH_MEM_BYTES come from bench.mk (the same as the -G parameters)"
#endif

namespace {

Vnf_engine *top;
EngineBus *bus;

void csr_wr(uint32_t off, uint32_t v) { bus->csr_wr(off, v); }
uint32_t csr_rd(uint32_t off) { return bus->csr_rd(off); }
uint32_t sys(uint32_t addr, uint32_t wdata, bool write) { return bus->sys(addr, wdata, write ? 0xF : 0); }

// Write the start register and count clocks until the unit is idle again.
template <typename Busy> uint64_t timed_start(uint32_t ctrl_off, Busy busy)
{
    if (top->csr_ready)  // the previous access's ready is still showing
        bus->tick();
    top->csr_valid = 1;
    top->csr_addr = ctrl_off;
    top->csr_wdata = 1;
    top->csr_wstrb = 0xF;
    bus->tick();             // the request's clock: the write lands in the next one
    top->csr_valid = 0;
    uint64_t t0 = bus->cyc;  // the start pulse is in this clock
    bus->tick();
    while (busy() && bus->cyc - t0 < 10000000)
        bus->tick();
    return bus->cyc - t0;
}

uint32_t tbl(uint32_t op, uint32_t index)
{
    csr_wr(NF_ENGINE_TBL_INDEX, index);
    return bus->tbl(op);
}

bool ld_busy() { return top->rootp->nf_engine__DOT__u_ld__DOT__busy; }
bool dma_busy() { return top->rootp->nf_engine__DOT__u_dma__DOT__busy; }

// Page list of n entries at list_addr naming pages from first_page on, in reverse order.
void write_page_list(uint32_t list_addr, uint32_t first_page_addr, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = first_page_addr + (n - 1 - i) * NF_ADAPTER_PAGE_SIZE;
        sys(list_addr + 8 * i, a, true);
        sys(list_addr + 8 * i + 4, 0, true);
    }
}

uint64_t load(uint32_t list_addr, uint32_t mtt_base, uint32_t n, uint32_t *code)
{
    csr_wr(NF_ENGINE_LD_SRC, list_addr);
    csr_wr(NF_ENGINE_LD_MTT_BASE, mtt_base);
    csr_wr(NF_ENGINE_LD_COUNT, n);
    uint64_t c = timed_start(NF_ENGINE_LD_CTRL, ld_busy);
    *code = NF_STATUS_WORD_CODE_GET(csr_rd(NF_ENGINE_LD_STATUS));
    return c;
}

void write_mpt(uint32_t index, uint32_t key, uint32_t pd, uint64_t va, uint32_t pages, uint32_t mtt_base)
{
    csr_wr(NF_ENGINE_ENT_W0, NF_MPT_STATE_VALID << NF_MPT_W0_STATE_LSB |
                                 NF_MPT_KIND_NORMAL << NF_MPT_W0_KIND_LSB | NF_MPT_W0_LOCAL_WRITE_MASK |
                                 key << NF_MPT_W0_KEY_LSB);
    csr_wr(NF_ENGINE_ENT_W1, pd << NF_MPT_W1_PD_LSB);
    csr_wr(NF_ENGINE_ENT_W2, (uint32_t)va);
    csr_wr(NF_ENGINE_ENT_W3, (uint32_t)(va >> 32));
    csr_wr(NF_ENGINE_ENT_W4, pages * NF_ADAPTER_PAGE_SIZE);
    csr_wr(NF_ENGINE_ENT_W5, mtt_base << NF_MPT_W5_MTT_BASE_LSB | pages << NF_MPT_W5_PAGE_CAP_LSB);
    csr_wr(NF_ENGINE_ENT_W6, pages);
    tbl(NF_TBL_OP_MPT_WRITE, index);
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    top = new Vnf_engine;
    bus = new EngineBus(top);
    bus->reset();
    bus->wait_status(NF_ENGINE_TBL_STATUS);  // tables clear after reset
    tb_ok(csr_rd(NF_ENGINE_ID) == NF_ENGINE_HW_ID_VALUE, "ENGINE.ID reads ENG1");

    const uint32_t user = BENCH_USER_BASE;
    const uint32_t list = user;                                  // page lists: 8 KiB
    const uint32_t pages_ld = user + 2 * NF_ADAPTER_PAGE_SIZE;   // loader targets (only named)
    const uint32_t src_pages = user + 0x110000;                 // 16 pages of DMA source
    const uint32_t dst_pages = user + 0x120000;                 // 16 pages of DMA destination

    // ---- page-list loader: 1 and 256 entries ----
    uint32_t code = 0;
    write_page_list(list, pages_ld, 256);
    uint64_t ld1 = load(list, 0, 1, &code);
    tb_ok(code == NF_REFUSE_OK, "loader: 1-entry list loaded");
    uint64_t ld256 = load(list, 0, 256, &code);
    tb_ok(code == NF_REFUSE_OK, "loader: 256-entry list loaded");
    bool mtt_ok = true;
    for (uint32_t i = 0; i < 256; i += 51) {
        tbl(NF_TBL_OP_MTT_READ, i);
        mtt_ok &= csr_rd(NF_ENGINE_TBL_MTT_DATA) == (pages_ld + (255 - i) * NF_ADAPTER_PAGE_SIZE) >> NF_ADAPTER_PAGE_SHIFT;
    }
    tb_ok(mtt_ok, "loader: MTT entries hold the listed page numbers");
    std::printf("mtt_load_clocks_1page = %llu\n", (unsigned long long)ld1);
    std::printf("mtt_load_clocks_256pages = %llu\n", (unsigned long long)ld256);
    std::printf("mtt_load_pages_per_clock = %.4f\n", 256.0 / (double)ld256);
    tb_ok(ld256 > ld1, "loader: 256 entries take longer than 1");
    if (ld256 > ld1)
        std::printf("mtt_load_pages_per_clock_incremental = %.4f\n", 255.0 / (double)(ld256 - ld1));

    // ---- DMA: 64 KiB, token to token, both through 16 scattered (reversed) pages ----
    const uint32_t n = 16, bytes = n * NF_ADAPTER_PAGE_SIZE, pd = 7;
    const uint64_t src_va = 0x7f0000001000ull, dst_va = 0x7f0000800000ull;
    write_page_list(list, src_pages, n);
    load(list, 512, n, &code);
    bool dma_setup = code == NF_REFUSE_OK;
    write_page_list(list + 0x1000, dst_pages, n);
    load(list + 0x1000, 528, n, &code);
    dma_setup &= code == NF_REFUSE_OK;
    write_mpt(1, 0x21, pd, src_va, n, 512);
    write_mpt(2, 0x22, pd, dst_va, n, 528);
    for (uint32_t w = 0; w < bytes / 4; w++) {
        sys(src_pages + 4 * w, 0x9E3779B9u * (w + 1), true);
        sys(dst_pages + 4 * w, 0, true);
    }
    tb_ok(dma_setup, "dma: two 16-page regions registered");
    bus->dma_setup({NF_DMA_MODE_TOKEN, NF_ACCESS_LOCAL_READ, 1u << NF_TOKEN_INDEX_LSB | 0x21, pd, src_va},
                   {NF_DMA_MODE_TOKEN, NF_ACCESS_LOCAL_WRITE, 2u << NF_TOKEN_INDEX_LSB | 0x22, pd, dst_va}, bytes);
    uint64_t dma = timed_start(NF_ENGINE_DMA_CTRL, dma_busy);
    uint32_t st = csr_rd(NF_ENGINE_DMA_STATUS);
    tb_ok(NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_OK && csr_rd(NF_ENGINE_DMA_BYTES) == bytes,
          "dma: 64 KiB moved without refusal");
    // Page i of the VA range is adapter page (n-1-i) on both sides, so data lands at the same offsets.
    bool data_ok = true;
    for (uint32_t w = 0; w < bytes / 4; w++)
        data_ok &= sys(dst_pages + 4 * w, 0, false) == 0x9E3779B9u * (w + 1);
    tb_ok(data_ok, "dma: every destination byte equals its source byte");
    std::printf("dma_clocks_64k = %llu\n", (unsigned long long)dma);
    std::printf("dma_bytes_per_clock = %.4f\n", (double)bytes / (double)dma);
    std::printf("dma_port_bytes_per_clock = %u\n", NF_ENGINE_HW_MEM_PORT_BYTES);
    top->final();
    delete bus;
    delete top;
    return tb_done();
}
