/* SPDX-License-Identifier: Apache-2.0 */
// nf_engine testbench (Verilator, C++): drives the ENGINE registers and the system
// port as the firmware and the link would, and checks table ops, every refusal reason,
// translation, the loader, the DMA (alignment, page splits, invalidation, throughput)
// and the system port's latency while the DMA runs.
#include <algorithm>
#include <cstring>
#include <vector>

#include "nf_layout_cxx.h"
#include "tb_common.h"
#include "tb_chk_regs.h"
#include "tb_engine_bus.h"

#ifndef TB_MEM_BYTES
#error "TB_MEM_BYTES, TB_MPT_ENTRIES, TB_MTT_ENTRIES, TB_USER_BASE come from engine.mk (the -G parameters)"
#endif

// Sizes of this build (one [[profile]] of proto/profiles.toml). The tests place their
// tables and pages relative to them, so every profile runs the same checks.
static const uint32_t MEM = TB_MEM_BYTES;
static const uint32_t MPT = TB_MPT_ENTRIES;
static const uint32_t MTT = TB_MTT_ENTRIES;
static const uint32_t USER = TB_USER_BASE;
static const uint32_t PAGE = NF_ADAPTER_PAGE_SIZE;
static const uint32_t PORT = NF_ENGINE_HW_MEM_PORT_BYTES;
static const uint32_t UP = USER / PAGE;               // first page of the user region
static const uint32_t NUP = (MEM - USER) / PAGE;      // pages in the user region
static const uint32_t HALF = NUP / 2;                 // DMA sources in the lower half, destinations in the upper

// User page k, wrapped so that three pages from it stay in the user region.
static uint32_t user_page(uint32_t k) { return UP + k % (NUP - 3); }

struct Tb : EngineBus {
    std::vector<uint8_t> shadow;   // what the testbench wrote into adapter memory
    std::vector<uint32_t> mtt;     // what the testbench expects in the MTT

    Tb() : EngineBus(new Vnf_engine), shadow(MEM, 0), mtt(MTT, 0)
    {
        reset();
        wait_status(NF_ENGINE_TBL_STATUS);   // the tables clear themselves after reset
    }
    ~Tb() { m->final(); delete m; }

    uint32_t sys(uint32_t addr, uint32_t wdata, uint32_t wstrb, int *latency = nullptr)
    {
        uint32_t r = EngineBus::sys(addr, wdata, wstrb);
        if (latency) *latency = lat;
        if (wstrb && addr < MEM)
            for (int b = 0; b < 4; b++)
                if (wstrb & (1u << b)) shadow[(addr & ~3u) + b] = (uint8_t)(wdata >> (8 * b));
        return r;
    }
    void fill(uint32_t addr, uint32_t len, Rng &rng)   // word aligned
    {
        for (uint32_t a = addr; a < addr + len; a += 4) sys(a, (uint32_t)rng.next(), 0xF);
    }
    bool mem_matches(uint32_t addr, uint32_t len)      // word aligned
    {
        for (uint32_t a = addr; a < addr + len; a += 4) {
            uint32_t v = sys(a, 0, 0), e;
            std::memcpy(&e, &shadow[a], 4);
            if (v != e) {
                std::printf("# mem[0x%x] = 0x%08x, expected 0x%08x\n", a, v, e);
                return false;
            }
        }
        return true;
    }

    uint32_t mpt_write(uint32_t index, const uint32_t w[7])
    {
        for (int i = 0; i < 7; i++) csr_wr(NF_ENGINE_ENT_W0 + 4 * i, w[i]);
        csr_wr(NF_ENGINE_TBL_INDEX, index);
        return tbl(NF_TBL_OP_MPT_WRITE);
    }
    uint32_t mpt_read(uint32_t index, uint32_t w[7])
    {
        csr_wr(NF_ENGINE_TBL_INDEX, index);
        uint32_t c = tbl(NF_TBL_OP_MPT_READ);
        for (int i = 0; i < 7; i++) w[i] = csr_rd(NF_ENGINE_ENT_W0 + 4 * i);
        return c;
    }
    uint32_t invalidate(uint32_t index)
    {
        csr_wr(NF_ENGINE_TBL_INDEX, index);
        return tbl(NF_TBL_OP_MPT_INVALIDATE);
    }
    uint32_t mtt_write(uint32_t index, uint32_t page)
    {
        csr_wr(NF_ENGINE_TBL_INDEX, index);
        csr_wr(NF_ENGINE_TBL_MTT_DATA, page);
        uint32_t c = tbl(NF_TBL_OP_MTT_WRITE);
        if (c == NF_REFUSE_OK) mtt[index] = page;
        return c;
    }
    uint32_t mtt_read(uint32_t index, uint32_t *page)
    {
        csr_wr(NF_ENGINE_TBL_INDEX, index);
        uint32_t c = tbl(NF_TBL_OP_MTT_READ);
        *page = csr_rd(NF_ENGINE_TBL_MTT_DATA);
        return c;
    }
    uint32_t check(uint32_t token, uint64_t va, uint32_t len, uint32_t access, uint32_t pd,
                   uint32_t *addr)
    {
        TB_CHK_STAGE(csr_wr, token, va, len, access, pd);
        csr_wr(NF_ENGINE_CHK_CTRL, 1);
        uint32_t s = wait_status(NF_ENGINE_CHK_STATUS);
        if (addr) *addr = csr_rd(NF_ENGINE_CHK_ADDR);
        return NF_STATUS_WORD_CODE_GET(s);
    }
};

// One key-table entry.
struct Mr {
    uint32_t index, key, state, kind, rights, pd, fbo, length, mtt_base, pages, parent;
    uint64_t base;
    uint32_t token() const { return NF_TOKEN_INDEX_PUT(index) | NF_TOKEN_KEY_PUT(key); }
    void words(uint32_t w[7]) const
    {
        w[0] = NF_MPT_W0_STATE_PUT(state) | NF_MPT_W0_KIND_PUT(kind) | rights | NF_MPT_W0_KEY_PUT(key);
        w[1] = NF_MPT_W1_PD_PUT(pd) | NF_MPT_W1_FBO_PUT(fbo);
        w[2] = (uint32_t)base;
        w[3] = (uint32_t)(base >> 32);
        w[4] = length;
        w[5] = NF_MPT_W5_MTT_BASE_PUT(mtt_base) | NF_MPT_W5_PAGE_CAP_PUT(pages);
        w[6] = NF_MPT_W6_PAGES_PUT(pages) | NF_MPT_W6_PARENT_PUT(parent);
    }
};

static const uint32_t ALL_RIGHTS = NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK |
                                   NF_MPT_W0_REMOTE_WRITE_MASK | NF_MPT_W0_REMOTE_EN_MASK;

static Mr make_mr(uint32_t index, uint32_t key, uint32_t pd, uint64_t base, uint32_t fbo,
                  uint32_t length, uint32_t mtt_base)
{
    Mr r{};
    r.index = index;
    r.key = key;
    r.state = NF_MPT_STATE_VALID;
    r.kind = NF_MPT_KIND_NORMAL;
    r.rights = ALL_RIGHTS;
    r.pd = pd;
    r.base = base;
    r.fbo = fbo;
    r.length = length;
    r.mtt_base = mtt_base;
    r.pages = (uint32_t)(((uint64_t)fbo + length + PAGE - 1) / PAGE);
    return r;
}

// A memory window over [p.base + off, + length) of p, written as firmware writes one:
// PD of the parent, MTT_BASE and FBO advanced to the window's first byte.
static Mr make_window(const Mr &p, uint32_t index, uint32_t key, uint32_t off, uint32_t length, uint32_t rights)
{
    uint64_t pos = (uint64_t)p.fbo + off;
    Mr r = make_mr(index, key, p.pd, p.base + off, (uint32_t)(pos % PAGE), length,
                   p.mtt_base + (uint32_t)(pos / PAGE));
    r.kind = NF_MPT_KIND_WINDOW;
    r.rights = rights;
    r.parent = p.index;
    return r;
}

// Adapter address of the byte at va, as docs/architecture.md defines the translation.
static uint32_t xlate(const Tb &t, const Mr &r, uint64_t va)
{
    uint64_t pos = (uint64_t)r.fbo + (va - r.base);
    return (uint32_t)((t.mtt[r.mtt_base + (pos >> NF_ADAPTER_PAGE_SHIFT)] << NF_ADAPTER_PAGE_SHIFT) |
                      (pos & (PAGE - 1)));
}

static void program_mr(Tb &t, const Mr &r)
{
    uint32_t w[7];
    r.words(w);
    t.mpt_write(r.index, w);
}

// ---------------------------------------------------------------------------------------
static void test_registers(Tb &t)
{
    tb_ok(t.csr_rd(NF_ENGINE_ID) == NF_ENGINE_HW_ID_VALUE, "regs: ID reads ENG1");
    tb_ok(t.csr_rd(NF_ENGINE_CFG_MPT) == MPT && t.csr_rd(NF_ENGINE_CFG_MTT) == MTT &&
          t.csr_rd(NF_ENGINE_CFG_MEM) == MEM && t.csr_rd(NF_ENGINE_CFG_USER) == USER,
          "regs: CFG_MPT/MTT/MEM/USER report the parameters");
    t.csr_wr(NF_ENGINE_DMA_LEN, 0x12345678);
    t.csr(NF_ENGINE_DMA_LEN, 0xAB000000, 0x8);
    tb_ok(t.csr_rd(NF_ENGINE_DMA_LEN) == 0xAB345678, "regs: byte strobes write only their lanes");
    tb_ok(t.csr_rd(NF_ENGINE_TBL_CMD) == 0 && t.csr_rd(0x3FC) == 0 && t.csr_rd(NF_ENGINE_ID + 2) == 0,
          "regs: write-only, unknown and unaligned offsets read 0");
}

static void test_sysport(Tb &t)
{
    int lat = 0;
    t.sys(USER, 0x11223344, 0xF);
    t.sys(USER + 4, 0x55667788, 0xF);
    t.sys(USER + 4, 0xAA0000BB, 0x9);
    uint32_t a = t.sys(USER, 0, 0, &lat), b = t.sys(USER + 4, 0, 0);
    tb_ok(a == 0x11223344 && b == 0xAA6677BB, "sysport: word and byte-strobe writes read back");
    tb_ok(lat == 4, "sysport: idle read ready %d clocks after valid", lat);
    tb_ok(t.sys(MEM, 0, 0) == 0 && t.sys(0xFFFFFFFC, 0, 0) == 0, "sysport: reads outside memory return 0");
    t.sys(MEM, 0xDEADBEEF, 0xF);
    tb_ok(t.sys(0, 0, 0) == t.sys(0, 0, 0) && t.mem_matches(0, 16), "sysport: writes outside memory change nothing");
}

static void test_tables(Tb &t)
{
    uint32_t w[7], r[7], page = 1;
    tb_ok(t.mpt_read(MPT - 1, r) == NF_REFUSE_OK &&
          !r[0] && !r[1] && !r[2] && !r[3] && !r[4] && !r[5] && !r[6],
          "tables: reset leaves every MPT entry FREE and zero");
    tb_ok(t.mtt_read(MTT - 1, &page) == NF_REFUSE_OK && page == 0, "tables: reset leaves the MTT zero");
    for (int i = 0; i < 7; i++) w[i] = 0x01010101u * (uint32_t)(i + 1) ^ 0xC0FFEE00u;
    tb_ok(t.mpt_write(5, w) == NF_REFUSE_OK && t.mpt_read(5, r) == NF_REFUSE_OK && !std::memcmp(w, r, sizeof w),
          "tables: MPT_WRITE then MPT_READ returns all seven words");
    tb_ok(t.mpt_write(MPT, w) == NF_REFUSE_BAD_INDEX && t.mpt_read(MPT, r) == NF_REFUSE_BAD_INDEX &&
          t.invalidate(0xFFFFFFFF) == NF_REFUSE_BAD_INDEX, "tables: MPT ops beyond the table -> BAD_INDEX");
    tb_ok(t.mtt_write(7, 0xABCDE) == NF_REFUSE_OK && t.mtt_read(7, &page) == NF_REFUSE_OK && page == 0xABCDE,
          "tables: MTT_WRITE then MTT_READ");
    t.csr_wr(NF_ENGINE_TBL_MTT_DATA, 0x5555);
    tb_ok(t.mtt_write(MTT, 1) == NF_REFUSE_BAD_MTT &&
          t.mtt_read(MTT, &page) == NF_REFUSE_BAD_MTT && page == 1,
          "tables: MTT ops beyond the table -> BAD_MTT, TBL_MTT_DATA unchanged");
    tb_ok(t.tbl(0) == NF_REFUSE_BAD_COMMAND && t.tbl(NF_TBL_OP_MPT_WRITE_LOADED + 1) == NF_REFUSE_BAD_COMMAND &&
          t.tbl(0x101) == NF_REFUSE_BAD_COMMAND, "tables: unknown op -> BAD_COMMAND");
    Mr m = make_mr(9, 0x5A, 3, 0x10000, 0, PAGE, 0);
    program_mr(t, m);
    tb_ok(t.invalidate(9) == NF_REFUSE_OK && t.mpt_read(9, r) == NF_REFUSE_OK &&
          NF_MPT_W0_STATE_GET(r[0]) == NF_MPT_STATE_INVALID, "tables: MPT_INVALIDATE VALID -> INVALID");
    m.words(w);
    w[0] = (w[0] & ~NF_MPT_W0_STATE_MASK) | NF_MPT_W0_STATE_PUT(NF_MPT_STATE_INVALID);
    tb_ok(t.invalidate(9) == NF_REFUSE_NOT_VALID && t.mpt_read(9, r) == NF_REFUSE_OK && !std::memcmp(w, r, sizeof w),
          "tables: MPT_INVALIDATE of a non-VALID entry -> NOT_VALID, entry unchanged");
}

static void test_checks(Tb &t)
{
    // MR: base VA 0x7000_0000_1234, FBO 0x234, 3 pages mapped non-contiguously.
    const uint32_t mb = 8;
    t.mtt_write(mb + 0, user_page(40));
    t.mtt_write(mb + 1, user_page(7));
    t.mtt_write(mb + 2, user_page(90));
    Mr m = make_mr(12, 0x77, 5, 0x700000001234ull, 0x234, 2 * PAGE + 100, mb);
    m.rights = NF_MPT_W0_REMOTE_READ_MASK;   // no local write, no remote write
    program_mr(t, m);
    uint32_t a = 0;
    uint64_t va = m.base + PAGE - 0x234 + 0x10;   // second page, offset 0x10
    uint32_t code = t.check(m.token(), va, 64, NF_ACCESS_REMOTE_READ, 5, &a);
    tb_ok(code == NF_REFUSE_OK && a == xlate(t, m, va) &&
          a == user_page(7) * PAGE + 0x10, "check: grant translates through the second MTT page (0x%x)", a);
    tb_ok(t.check(m.token(), m.base, 1, NF_ACCESS_LOCAL_READ, 5, &a) == NF_REFUSE_OK &&
          a == user_page(40) * PAGE + 0x234, "check: first byte lands at FBO in the first page");
    tb_ok(t.check(m.token(), m.base + 8, 0, NF_ACCESS_LOCAL_READ, 5, &a) == NF_REFUSE_OK && a == 0,
          "check: zero-length grant has CHK_ADDR 0");
    tb_ok(t.check(NF_TOKEN_INDEX_PUT(MPT) | 0x77, m.base, 1, 0, 5, &a) == NF_REFUSE_BAD_INDEX && a == 0,
          "check: BAD_INDEX (refusal leaves CHK_ADDR 0)");
    tb_ok(t.check(NF_ADAPTER_PRIVILEGED_TOKEN, m.base, 1, 0, 5, nullptr) == NF_REFUSE_BAD_INDEX,
          "check: the privileged token is no key-table index");
    tb_ok(t.check(m.token() ^ 1, m.base, 1, 0, 5, nullptr) == NF_REFUSE_BAD_KEY, "check: BAD_KEY");
    tb_ok(t.check(NF_TOKEN_INDEX_PUT(13), m.base, 1, 0, 0, nullptr) == NF_REFUSE_NOT_VALID,
          "check: NOT_VALID on a FREE entry (key 0)");
    tb_ok(t.check(m.token(), m.base, 1, 0, 6, nullptr) == NF_REFUSE_WRONG_PD, "check: WRONG_PD");
    tb_ok(t.check(m.token(), m.base, 1, 0, 5 | 0x10000, nullptr) == NF_REFUSE_WRONG_PD,
          "check: WRONG_PD when only bits above the 16-bit PD differ");
    tb_ok(t.check(m.token(), m.base, 1, NF_ACCESS_LOCAL_WRITE, 5, nullptr) == NF_REFUSE_NO_RIGHT,
          "check: NO_RIGHT (local write)");
    tb_ok(t.check(m.token(), m.base, 1, NF_ACCESS_REMOTE_WRITE, 5, nullptr) == NF_REFUSE_NO_RIGHT,
          "check: NO_RIGHT (remote write)");
    tb_ok(t.check(m.token(), m.base - 1, 1, 0, 5, nullptr) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: OUT_OF_BOUNDS (VA below base)");
    tb_ok(t.check(m.token(), m.base + m.length + 1, 0, 0, 5, nullptr) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: OUT_OF_BOUNDS (offset beyond length)");
    tb_ok(t.check(m.token(), m.base + 16, m.length - 15, 0, 5, nullptr) == NF_REFUSE_OUT_OF_BOUNDS &&
          t.check(m.token(), m.base + 16, m.length - 16, 0, 5, nullptr) == NF_REFUSE_OK,
          "check: OUT_OF_BOUNDS one byte past the end, granted up to the end");
    tb_ok(t.check(m.token(), m.base + m.length, 0, 0, 5, nullptr) == NF_REFUSE_OK,
          "check: zero length at the very end is granted");
    tb_ok(t.check(m.token(), m.base + 0x100000000ull, 0, 0, 5, nullptr) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: OUT_OF_BOUNDS when VA - base needs more than 32 bits");
    // Priority: key wrong and PD wrong -> BAD_KEY; PD wrong and no right -> WRONG_PD.
    tb_ok(t.check(m.token() ^ 2, m.base, 1, NF_ACCESS_LOCAL_WRITE, 9, nullptr) == NF_REFUSE_BAD_KEY &&
          t.check(m.token(), m.base - 1, 1, NF_ACCESS_LOCAL_WRITE, 9, nullptr) == NF_REFUSE_WRONG_PD &&
          t.check(m.token(), m.base - 1, 1, NF_ACCESS_LOCAL_WRITE, 5, nullptr) == NF_REFUSE_NO_RIGHT,
          "check: refusal priority BAD_KEY > WRONG_PD > NO_RIGHT > OUT_OF_BOUNDS");

    // Fast-register entry: remote access needs REMOTE_EN too.
    Mr f = make_mr(14, 0x21, 5, 0x4000, 0, PAGE, mb);
    f.kind = NF_MPT_KIND_FAST;
    f.rights = NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK;
    program_mr(t, f);
    bool no_en = t.check(f.token(), f.base, 4, NF_ACCESS_REMOTE_READ, 5, nullptr) == NF_REFUSE_NO_RIGHT &&
                 t.check(f.token(), f.base, 4, NF_ACCESS_REMOTE_WRITE, 5, nullptr) == NF_REFUSE_NO_RIGHT;
    f.rights |= NF_MPT_W0_REMOTE_EN_MASK;
    program_mr(t, f);
    tb_ok(no_en && t.check(f.token(), f.base, 4, NF_ACCESS_REMOTE_WRITE, 5, nullptr) == NF_REFUSE_OK,
          "check: FAST entry needs REMOTE_EN for remote access");

    // BAD_MTT: an MR whose pages run past the end of the MTT (last page decides).
    Mr b = make_mr(15, 0x31, 5, 0, 0, 2 * PAGE, MTT - 1);
    program_mr(t, b);
    tb_ok(t.check(b.token(), 0, PAGE, 0, 5, nullptr) == NF_REFUSE_OK &&
          t.check(b.token(), PAGE - 8, 16, 0, 5, nullptr) == NF_REFUSE_BAD_MTT &&
          t.check(b.token(), PAGE, 0, 0, 5, nullptr) == NF_REFUSE_OK,
          "check: BAD_MTT when a page of the range is beyond the MTT (zero length translates nothing)");

    // Invalidated entry.
    t.invalidate(m.index);
    tb_ok(t.check(m.token(), m.base, 1, NF_ACCESS_REMOTE_READ, 5, &a) == NF_REFUSE_NOT_VALID && a == 0,
          "check: NOT_VALID after MPT_INVALIDATE");

    // MR ending at the top of the 64-bit address space.
    Mr top = make_mr(16, 0x41, 5, 0xFFFFFFFFFFFFF000ull, 0, PAGE, mb);
    program_mr(t, top);
    tb_ok(t.check(top.token(), 0xFFFFFFFFFFFFFFF8ull, 8, 0, 5, &a) == NF_REFUSE_OK &&
          a == user_page(40) * PAGE + 0xFF8, "check: VA 0xFFFF_FFFF_FFFF_FFF8 len 8 granted at the top");
    tb_ok(t.check(top.token(), 0xFFFFFFFFFFFFFFF8ull, 16, 0, 5, &a) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: VA 0xFFFF_FFFF_FFFF_FFF8 len 16 refused (no wrap)");
    tb_ok(t.check(top.token(), 0xFFFFFFFFFFFFFFF8ull, 0xFFFFFFFF, 0, 5, nullptr) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: huge length at the top refused");
}

// Memory windows: the window's own bounds and rights, remote access only, and its
// parent MR VALID at the time of each check.
static void test_windows(Tb &t)
{
    const uint32_t mb = 8;   // test_checks' pages: user_page(40), (7), (90)
    Mr p = make_mr(MPT - 1, 0x61, 4, 0x5000000000ull + 0x80, 0x80, 3 * PAGE - 0x100, mb);
    program_mr(t, p);
    Mr w = make_window(p, MPT - 2, 0x62, PAGE - 0x80 + 0x30, PAGE + 0x40, NF_MPT_W0_REMOTE_READ_MASK);
    program_mr(t, w);
    uint32_t a = 0;
    uint64_t last = w.base + w.length - 4;
    bool in1 = t.check(w.token(), w.base, 16, NF_ACCESS_REMOTE_READ, 4, &a) == NF_REFUSE_OK &&
               a == xlate(t, p, w.base) && a == user_page(7) * PAGE + 0x30;
    tb_ok(in1 && t.check(w.token(), last, 4, NF_ACCESS_REMOTE_READ, 4, &a) == NF_REFUSE_OK &&
          a == xlate(t, p, last) && a == user_page(90) * PAGE + 0x6C,
          "window: remote read at both ends translates as through the parent (0x%x)", a);
    tb_ok(t.check(w.token(), w.base, 16, NF_ACCESS_REMOTE_WRITE, 4, nullptr) == NF_REFUSE_NO_RIGHT &&
          t.check(p.token(), w.base, 16, NF_ACCESS_REMOTE_WRITE, 4, nullptr) == NF_REFUSE_OK,
          "window: its own rights count (remote write refused, the parent has it)");
    tb_ok(t.check(w.token(), w.base, 1, NF_ACCESS_LOCAL_READ, 4, nullptr) == NF_REFUSE_NO_RIGHT &&
          t.check(w.token(), w.base, 1, NF_ACCESS_LOCAL_WRITE, 4, nullptr) == NF_REFUSE_NO_RIGHT,
          "window: local read and local write -> NO_RIGHT");
    tb_ok(t.check(w.token(), w.base - 1, 1, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_OUT_OF_BOUNDS &&
          t.check(w.token(), w.base + w.length, 1, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_OUT_OF_BOUNDS &&
          t.check(w.token(), last, 8, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_OUT_OF_BOUNDS,
          "window: below, above and straddling its end -> OUT_OF_BOUNDS (inside the parent)");
    tb_ok(t.invalidate(p.index) == NF_REFUSE_OK &&
          t.check(w.token(), w.base, 16, NF_ACCESS_REMOTE_READ, 4, &a) == NF_REFUSE_NOT_VALID && a == 0,
          "window: parent invalidated -> NOT_VALID");
    program_mr(t, p);
    tb_ok(t.check(w.token(), w.base, 16, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_OK,
          "window: parent VALID again -> granted (only the parent's state counts)");
    tb_ok(t.invalidate(w.index) == NF_REFUSE_OK &&
          t.check(w.token(), w.base, 16, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_NOT_VALID &&
          t.check(p.token(), w.base, 16, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_OK,
          "window: invalidated -> NOT_VALID, the parent still grants");
    Mr bad = w;
    bad.parent = MPT;
    program_mr(t, bad);
    bool outside = t.check(w.token(), w.base, 1, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_NOT_VALID;
    bad.parent = 13;   // FREE (test_checks' NOT_VALID case)
    program_mr(t, bad);
    tb_ok(outside && t.check(w.token(), w.base, 1, NF_ACCESS_REMOTE_READ, 4, nullptr) == NF_REFUSE_NOT_VALID,
          "window: parent outside the table or FREE -> NOT_VALID");
}

// ---------------------------------------------------------------------------------------
static uint32_t load(Tb &t, uint32_t src, uint32_t base, uint32_t count, uint64_t *cycles)
{
    t.csr_wr(NF_ENGINE_LD_SRC, src);
    t.csr_wr(NF_ENGINE_LD_MTT_BASE, base);
    t.csr_wr(NF_ENGINE_LD_COUNT, count);
    uint64_t c0 = t.cyc;
    t.csr_wr(NF_ENGINE_LD_CTRL, 1);
    uint32_t s = t.wait_status(NF_ENGINE_LD_STATUS);
    if (cycles) *cycles = t.cyc - c0;
    return s;
}

static void put64(Tb &t, uint32_t addr, uint64_t v)
{
    t.sys(addr, (uint32_t)v, 0xF);
    t.sys(addr + 4, (uint32_t)(v >> 32), 0xF);
}

static void test_loader(Tb &t)
{
    Rng rng(7);
    const uint32_t list = 0x200;          // RX slot 0, as the firmware would point it
    // MTT: the first list at [MTT/4, MTT/2), the refused one from MTT/2, the short ones at 3/4.
    const uint32_t n = std::min(256u, MTT / 4), base = MTT / 4, b3 = MTT / 4 * 3;
    std::vector<uint32_t> pages(n);
    for (uint32_t i = 0; i < n; i++) {
        pages[i] = USER / PAGE + rng.below((MEM - USER) / PAGE);
        put64(t, list + 8 * i, (uint64_t)pages[i] << NF_ADAPTER_PAGE_SHIFT);
    }
    uint64_t cyc = 0;
    uint32_t s = load(t, list, base, n, &cyc);
    bool all = NF_STATUS_WORD_CODE_GET(s) == NF_REFUSE_OK;
    for (uint32_t i = 0; i < n && all; i++) {
        uint32_t p = 0;
        all = t.mtt_read(base + i, &p) == NF_REFUSE_OK && p == pages[i];
        if (!all) std::printf("# MTT[%u] = 0x%x, expected 0x%x\n", base + i, p, pages[i]);
    }
    for (uint32_t i = 0; i < n; i++) t.mtt[base + i] = pages[i];
    tb_ok(all, "loader: %u entries land in the MTT as page numbers", n);
    double rate = (double)n / (double)cyc;
    std::printf("# loader: %u entries in %llu clocks (LD_CTRL write to BUSY=0 seen) = %.3f entries/clock\n",
                n, (unsigned long long)cyc, rate);
    tb_ok(rate >= 0.9, "loader: %.3f entries/clock >= 0.9 on %u entries", rate, n);

    // Entry bad unaligned: BAD_ADDRESS, INDEX bad, the entries before it written, it not.
    const uint32_t b2 = MTT / 2, n2 = std::min(64u, MTT / 8), bad_at = n2 * 37 / 64;
    for (uint32_t i = 0; i < n2; i++) put64(t, list + 8 * i, (uint64_t)user_page(1 + i) << NF_ADAPTER_PAGE_SHIFT);
    put64(t, list + 8 * bad_at, ((uint64_t)user_page(5) << NF_ADAPTER_PAGE_SHIFT) + 8);
    s = load(t, list, b2, n2, nullptr);
    uint32_t p_before = 0, p_bad = 1;
    t.mtt_read(b2 + bad_at - 1, &p_before);
    t.mtt_read(b2 + bad_at, &p_bad);
    tb_ok(NF_STATUS_WORD_CODE_GET(s) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_INDEX_GET(s) == bad_at &&
          p_before == user_page(bad_at) && p_bad == 0,
          "loader: unaligned entry %u -> BAD_ADDRESS INDEX %u, earlier entries written, it not", bad_at, bad_at);
    const struct { uint64_t a; const char *what; } bad[] = {
        {(uint64_t)(USER - PAGE), "below the user region"},
        {(uint64_t)MEM, "at MEM_BYTES"},
        {(1ull << 32) | USER, "with a nonzero high word"},
    };
    for (auto &bd : bad) {
        put64(t, list, (uint64_t)user_page(3) << NF_ADAPTER_PAGE_SHIFT);
        put64(t, list + 8, bd.a);
        s = load(t, list, b3, 2, nullptr);
        uint32_t p1 = 9;
        t.mtt_read(b3 + 1, &p1);
        tb_ok(NF_STATUS_WORD_CODE_GET(s) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_INDEX_GET(s) == 1 && p1 == 0,
              "loader: page %s -> BAD_ADDRESS INDEX 1", bd.what);
    }
    uint32_t before = 0, after = 0;
    t.mtt_read(MTT - 2, &before);
    s = load(t, list, MTT - 1, 2, nullptr);
    t.mtt_read(MTT - 1, &after);
    tb_ok(NF_STATUS_WORD_CODE_GET(s) == NF_REFUSE_BAD_MTT && after == 0, "loader: range past the MTT -> BAD_MTT, nothing written");
    s = load(t, list + 4, b3, 2, nullptr);
    uint32_t s2 = load(t, MEM - 8, b3, 2, nullptr);
    tb_ok(NF_STATUS_WORD_CODE_GET(s) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_CODE_GET(s2) == NF_REFUSE_BAD_ADDRESS,
          "loader: unaligned list or list past adapter memory -> BAD_ADDRESS");
    s = load(t, list, 0, 0, nullptr);
    tb_ok(s == 0, "loader: zero entries -> OK, nothing to do");
}

// MPT_WRITE_LOADED: the staged entry is written once the running load is in, and only
// if the load was not refused (then TBL_STATUS carries the load's code, the entry is as
// it was).
static void test_write_loaded(Tb &t)
{
    const uint32_t list = 0x200, n = std::min(256u, MTT / 4), base = MTT / 4, index = 5;
    for (uint32_t i = 0; i < n; i++) put64(t, list + 8 * i, (uint64_t)user_page(11 + i) << NF_ADAPTER_PAGE_SHIFT);
    const uint32_t w[7] = {NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KIND_PUT(NF_MPT_KIND_FAST) |
                               NF_MPT_W0_KEY_PUT(0x5A) | NF_MPT_W0_LOCAL_WRITE_MASK,
                           NF_MPT_W1_PD_PUT(2), 0x1000, 0, n * PAGE,
                           NF_MPT_W5_MTT_BASE_PUT(base) | NF_MPT_W5_PAGE_CAP_PUT(n), NF_MPT_W6_PAGES_PUT(n)};
    t.csr_wr(NF_ENGINE_LD_SRC, list);
    t.csr_wr(NF_ENGINE_LD_MTT_BASE, base);
    t.csr_wr(NF_ENGINE_LD_COUNT, n);
    uint64_t c0 = t.cyc;
    t.csr_wr(NF_ENGINE_LD_CTRL, 1);
    for (int i = 0; i < 7; i++) t.csr_wr(NF_ENGINE_ENT_W0 + 4 * i, w[i]);
    t.csr_wr(NF_ENGINE_TBL_INDEX, index);
    t.csr_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE_LOADED);
    uint32_t s = t.wait_status(NF_ENGINE_TBL_STATUS);
    uint64_t took = t.cyc - c0;
    uint32_t r[7] = {0}, p_last = 0;
    uint32_t rc = t.mpt_read(index, r);
    t.mtt_read(base + n - 1, &p_last);
    tb_ok(NF_STATUS_WORD_CODE_GET(s) == NF_REFUSE_OK && rc == NF_REFUSE_OK && std::equal(r, r + 7, w) &&
              p_last == user_page(11 + n - 1) && took >= n,
          "tables: MPT_WRITE_LOADED writes the entry after the %u-entry load (%llu clocks from LD_CTRL)", n,
          (unsigned long long)took);
    for (uint32_t i = 0; i < n; i++) t.mtt[base + i] = user_page(11 + i);

    // A refused load: the entry keeps what it had.
    put64(t, list + 8, ((uint64_t)user_page(3) << NF_ADAPTER_PAGE_SHIFT) + 8);
    t.csr_wr(NF_ENGINE_LD_SRC, list);
    t.csr_wr(NF_ENGINE_LD_MTT_BASE, base);
    t.csr_wr(NF_ENGINE_LD_COUNT, 2);
    t.csr_wr(NF_ENGINE_LD_CTRL, 1);
    for (int i = 0; i < 7; i++) t.csr_wr(NF_ENGINE_ENT_W0 + 4 * i, i == 4 ? 1u : w[i]);
    t.csr_wr(NF_ENGINE_TBL_INDEX, index);
    t.csr_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE_LOADED);
    s = t.wait_status(NF_ENGINE_TBL_STATUS);
    rc = t.mpt_read(index, r);
    tb_ok(NF_STATUS_WORD_CODE_GET(s) == NF_REFUSE_BAD_ADDRESS && rc == NF_REFUSE_OK && std::equal(r, r + 7, w),
          "tables: MPT_WRITE_LOADED after a refused load -> the load's BAD_ADDRESS, entry unchanged");
    t.invalidate(index);
}

// ---------------------------------------------------------------------------------------
typedef EngineBus::DmaSide Side;

static uint32_t dma(Tb &t, const Side &s, const Side &d, uint32_t len, uint64_t *cycles, uint32_t *bytes)
{
    t.dma_setup(s, d, len);
    uint64_t c0 = t.cyc;
    t.csr_wr(NF_ENGINE_DMA_CTRL, 1);
    uint32_t st = t.wait_status(NF_ENGINE_DMA_STATUS);
    if (cycles) *cycles = t.cyc - c0;
    if (bytes) *bytes = t.csr_rd(NF_ENGINE_DMA_BYTES);
    return st;
}

static Side tok(const Mr &m, uint64_t va, uint32_t access)
{
    return Side{NF_DMA_MODE_TOKEN, access, m.token(), m.pd, va};
}
static Side logical(uint32_t a) { return Side{NF_DMA_MODE_LOGICAL, 0, 0, 0, a}; }
static Side system_side(uint32_t a) { return Side{NF_DMA_MODE_SYSTEM, 0, 0, 0, a}; }

// Expected effect of a granted copy on the shadow.
static void shadow_copy(Tb &t, const std::vector<uint32_t> &src_pa, const std::vector<uint32_t> &dst_pa)
{
    std::vector<uint8_t> tmp(src_pa.size());
    for (size_t i = 0; i < src_pa.size(); i++) tmp[i] = t.shadow[src_pa[i]];
    for (size_t i = 0; i < dst_pa.size(); i++) t.shadow[dst_pa[i]] = tmp[i];
}

// Right after an invalidation's TBL BUSY dropped, for a DMA from a's base into d's:
// true when the DMA is no longer BUSY and ended STOPPED on SIDE 1. *bytes gets
// DMA_BYTES; the shadow takes those bytes, and *same says whether the n destination
// pages from MTT index first hold exactly them.
static bool stopped_dst(Tb &t, const Mr &a, const Mr &d, uint32_t first, uint32_t n, uint32_t *bytes, bool *same)
{
    uint32_t ds = t.csr_rd(NF_ENGINE_DMA_STATUS);
    *bytes = t.csr_rd(NF_ENGINE_DMA_BYTES);
    for (uint32_t i = 0; i < *bytes; i++) t.shadow[xlate(t, d, d.base + i)] = t.shadow[xlate(t, a, a.base + i)];
    *same = true;
    for (uint32_t i = 0; i < n && *same; i++) *same = t.mem_matches(t.mtt[first + i] * PAGE, PAGE);
    return !(ds & NF_STATUS_WORD_BUSY_MASK) && NF_STATUS_WORD_CODE_GET(ds) == NF_REFUSE_STOPPED &&
           NF_STATUS_WORD_SIDE_GET(ds) == 1;
}

static void test_dma(Tb &t)
{
    Rng rng(11);
    // Source MR: np pages, FBO 0x123, pages scattered (some repeat in small memories);
    // destination MR: np distinct pages, FBO 0xF00.
    const uint32_t np = std::min(20u, HALF / 2), smb = 16, dmb = smb + np;
    for (uint32_t i = 0; i < np; i++) {
        t.mtt_write(smb + i, UP + (100 + 3 * i + (i & 1) * 40) % HALF);
        t.mtt_write(dmb + i, UP + HALF + (400 + 2 * (np - i)) % HALF);
    }
    Mr sm = make_mr(20, 0x11, 7, 0x10000123ull, 0x123, np * PAGE - 0x123, smb);
    Mr dm = make_mr(21, 0x22, 8, 0xABC00000F00ull, 0xF00, np * PAGE - 0xF00, dmb);
    program_mr(t, sm);
    program_mr(t, dm);
    for (uint32_t i = 0; i < np; i++) {
        t.fill(t.mtt[smb + i] * PAGE, PAGE, rng);
        t.fill(t.mtt[dmb + i] * PAGE, PAGE, rng);
    }

    // Random alignments and lengths across page boundaries on both sides.
    bool all = true;
    const uint32_t max_len = std::min(3 * PAGE, dm.length);
    for (int it = 0; it < 24 && all; it++) {
        uint32_t len = 1 + rng.below(it < 12 ? 40 : max_len);
        uint64_t sva = sm.base + rng.below(sm.length - len + 1);
        uint64_t dva = dm.base + rng.below(dm.length - len + 1);
        std::vector<uint32_t> spa(len), dpa(len);
        for (uint32_t i = 0; i < len; i++) {
            spa[i] = xlate(t, sm, sva + i);
            dpa[i] = xlate(t, dm, dva + i);
        }
        uint32_t bytes = 0;
        uint32_t st = dma(t, tok(sm, sva, NF_ACCESS_LOCAL_READ), tok(dm, dva, NF_ACCESS_REMOTE_WRITE), len,
                          nullptr, &bytes);
        shadow_copy(t, spa, dpa);
        uint32_t lo = dpa[0] & ~(PAGE - 1);
        bool ok = st == 0 && bytes == len;
        for (uint32_t p = 0; p < np && ok; p++) ok = t.mem_matches(t.mtt[dmb + p] * PAGE, PAGE);
        if (!ok) std::printf("# iteration %d: len %u sva 0x%llx dva 0x%llx status 0x%x bytes %u (page 0x%x)\n", it,
                             len, (unsigned long long)sva, (unsigned long long)dva, st, bytes, lo);
        all = ok;
    }
    tb_ok(all, "dma: TOKEN->TOKEN byte-exact for random alignments, split on both sides' pages");

    // LOGICAL -> LOGICAL and SYSTEM -> LOGICAL (link slot to user region). The two 3-page
    // ranges are 4 user pages apart, so they never overlap whatever the profile's size.
    {
        uint32_t sa = user_page(0x30) * PAGE + 5, da = user_page(0x34) * PAGE + 3, len = 5000, bytes = 0;
        t.fill(sa & ~3u, len + 8, rng);
        uint32_t st = dma(t, logical(sa), logical(da), len, nullptr, &bytes);
        std::vector<uint32_t> spa(len), dpa(len);
        for (uint32_t i = 0; i < len; i++) { spa[i] = sa + i; dpa[i] = da + i; }
        shadow_copy(t, spa, dpa);
        tb_ok(st == 0 && bytes == len && t.mem_matches(da & ~(PAGE - 1), 3 * PAGE), "dma: LOGICAL->LOGICAL 5000 bytes");
        t.fill(0x100, 64, rng);
        const uint32_t sd = user_page(0x60) * PAGE;
        st = dma(t, system_side(0x104), logical(sd + 1), 51, nullptr, &bytes);
        for (uint32_t i = 0; i < 51; i++) t.shadow[sd + 1 + i] = t.shadow[0x104 + i];
        tb_ok(st == 0 && bytes == 51 && t.mem_matches(sd, 64), "dma: SYSTEM (link slot) -> LOGICAL");
    }

    // Overlapping ranges inside one page move like memmove, in both directions.
    {
        const uint32_t pg = user_page(0x70) * PAGE;
        t.fill(pg, 2 * PAGE, rng);
        const int32_t gaps[] = {1, 3, 7, 8, 9, 100, 1000, -1, -5, -8, -13, -700};
        bool ok = true;
        for (int32_t g : gaps) {
            uint32_t sa = pg + 0x400 + rng.below(8), len = 600 + rng.below(900);
            uint32_t da = (uint32_t)((int32_t)sa + g), bytes = 0;
            uint32_t st = dma(t, logical(sa), logical(da), len, nullptr, &bytes);
            std::memmove(&t.shadow[da], &t.shadow[sa], len);
            ok = ok && st == 0 && bytes == len && t.mem_matches(pg, 2 * PAGE);
            if (!ok) { std::printf("# overlap gap %d len %u failed\n", g, len); break; }
        }
        tb_ok(ok, "dma: overlapping source and destination (gaps -700..1000 bytes) act as memmove");
    }

    // Refusals write nothing.
    {
        uint32_t bytes = 1;
        uint32_t st = dma(t, tok(sm, sm.base, NF_ACCESS_LOCAL_READ), tok(dm, dm.base - 1, NF_ACCESS_REMOTE_WRITE), 64,
                          nullptr, &bytes);
        bool ok = NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_OUT_OF_BOUNDS && NF_STATUS_WORD_SIDE_GET(st) == 1 &&
                  bytes == 0;
        st = dma(t, tok(sm, sm.base, NF_ACCESS_LOCAL_READ), tok(dm, dm.base + dm.length - 8, NF_ACCESS_REMOTE_WRITE),
                 64, nullptr, &bytes);
        ok = ok && NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_OUT_OF_BOUNDS && NF_STATUS_WORD_SIDE_GET(st) == 1 &&
             bytes == 0;
        tb_ok(ok && t.mem_matches(t.mtt[dmb + np - 1] * PAGE, PAGE) && t.mem_matches(t.mtt[dmb] * PAGE, PAGE),
              "dma: destination refused (SIDE 1) for a range running past its end: nothing written");
        Side bad_pd = tok(sm, sm.base, NF_ACCESS_LOCAL_READ);
        bad_pd.pd = 99;
        st = dma(t, bad_pd, logical(USER), 64, nullptr, &bytes);
        tb_ok(NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_WRONG_PD && NF_STATUS_WORD_SIDE_GET(st) == 0 && bytes == 0 &&
              t.mem_matches(USER, 128), "dma: source refused (WRONG_PD, SIDE 0): nothing written");
        Mr ro = sm;
        ro.index = 22;
        ro.rights = NF_MPT_W0_REMOTE_READ_MASK;
        program_mr(t, ro);
        st = dma(t, logical(USER), tok(ro, ro.base, NF_ACCESS_LOCAL_WRITE), 8, nullptr, &bytes);
        uint32_t st_ok = dma(t, tok(ro, ro.base, NF_ACCESS_REMOTE_READ), logical(USER + 0x100), 8, nullptr, nullptr);
        for (uint32_t i = 0; i < 8; i++) t.shadow[USER + 0x100 + i] = t.shadow[xlate(t, ro, ro.base + i)];
        tb_ok(NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_NO_RIGHT && NF_STATUS_WORD_SIDE_GET(st) == 1 && bytes == 0 &&
              st_ok == 0 && t.mem_matches(USER, 512) && t.mem_matches(xlate(t, ro, ro.base) & ~(PAGE - 1), PAGE),
              "dma: access right checked per side (read-only MR: NO_RIGHT as destination, fine as source)");
        st = dma(t, logical(USER - 4), logical(USER + 0x1000), 8, nullptr, &bytes);
        uint32_t st2 = dma(t, logical(USER), logical(MEM - 4), 8, nullptr, &bytes);
        uint32_t st3 = dma(t, system_side(MEM - 8), logical(USER), 8, nullptr, &bytes);
        for (uint32_t i = 0; i < 8; i++) t.shadow[USER + i] = t.shadow[MEM - 8 + i];
        Side hi = logical(USER);
        hi.addr |= 1ull << 32;
        uint32_t st4 = dma(t, hi, logical(USER + 64), 8, nullptr, &bytes);
        Side m3 = logical(USER);
        m3.mode = 3;
        uint32_t st5 = dma(t, logical(USER), m3, 8, nullptr, &bytes);
        tb_ok(NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st) == 0 &&
              NF_STATUS_WORD_CODE_GET(st2) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st2) == 1 &&
              st3 == 0 && NF_STATUS_WORD_CODE_GET(st4) == NF_REFUSE_BAD_ADDRESS &&
              NF_STATUS_WORD_CODE_GET(st5) == NF_REFUSE_BAD_COMMAND && NF_STATUS_WORD_SIDE_GET(st5) == 1,
              "dma: LOGICAL/SYSTEM region rules (below USER_BASE, past MEM_BYTES, high word, bad mode)");
        st = dma(t, tok(sm, sm.base + sm.length + 1, 0), logical(USER), 0, nullptr, &bytes);
        st2 = dma(t, tok(sm, sm.base, 0), logical(USER), 0, nullptr, &bytes);
        tb_ok(NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_OUT_OF_BOUNDS && st2 == 0 && bytes == 0,
              "dma: LEN 0 runs the checks and moves nothing");
    }

    // An MTT page outside adapter memory (MTT_WRITE takes any value): that side is
    // refused BAD_ADDRESS and nothing moves.
    {
        t.mtt_write(12, MEM / PAGE + 5);
        Mr wild = make_mr(23, 0x55, 7, 0x5000, 0, PAGE, 12);
        program_mr(t, wild);
        uint32_t bytes = 1;
        uint32_t st = dma(t, logical(USER), tok(wild, wild.base, 0), 16, nullptr, &bytes);
        uint32_t st2 = dma(t, tok(wild, wild.base, 0), logical(USER), 16, nullptr, nullptr);
        tb_ok(NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st) == 1 && bytes == 0 &&
              NF_STATUS_WORD_CODE_GET(st2) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st2) == 0 &&
              t.mem_matches(USER, 64), "dma: MTT page outside adapter memory -> BAD_ADDRESS for that side, nothing moved");
    }

    // Throughput: 64 KiB (less where memory is small) through translated, non-contiguous
    // pages on both sides; the MTT ranges follow the loader's short lists.
    const uint32_t tp = std::min(17u, HALF), tsb = MTT / 4 * 3 + 4, tdb = tsb + tp;
    const uint32_t len = std::min(65536u, (tp - 1) * PAGE);
    {
        const uint32_t dstride = 3 * tp <= HALF ? 3 : 1;   // keeps the destination pages distinct
        for (uint32_t i = 0; i < tp; i++) {
            t.mtt_write(tsb + i, UP + (700 + 2 * i) % HALF);
            t.mtt_write(tdb + i, UP + HALF + (800 + dstride * (tp - i)) % HALF);
        }
        Mr a = make_mr(30, 0x31, 1, 0x40000000ull, 0, tp * PAGE, tsb);
        Mr b = make_mr(31, 0x32, 1, 0x80000000ull, 0, tp * PAGE, tdb);
        program_mr(t, a);
        program_mr(t, b);
        for (uint32_t i = 0; i + 1 < tp; i++) t.fill(t.mtt[tsb + i] * PAGE, PAGE, rng);
        struct { uint32_t soff, doff; } cases[] = {{0, 0}, {0x100, 0x800}, {3, 0xFFD}};
        for (auto &c : cases) {
            uint64_t cyc = 0;
            uint32_t bytes = 0;
            std::vector<uint32_t> spa(len), dpa(len);
            for (uint32_t i = 0; i < len; i++) {
                spa[i] = xlate(t, a, a.base + c.soff + i);
                dpa[i] = xlate(t, b, b.base + c.doff + i);
            }
            uint32_t st = dma(t, tok(a, a.base + c.soff, 0), tok(b, b.base + c.doff, NF_ACCESS_LOCAL_WRITE), len,
                              &cyc, &bytes);
            shadow_copy(t, spa, dpa);
            bool same = true;
            for (uint32_t i = 0; i < tp && same; i++) same = t.mem_matches(t.mtt[tdb + i] * PAGE, PAGE);
            double bpc = (double)len / (double)cyc;
            std::printf("# dma: %u KiB (src offset 0x%x, dst offset 0x%x) in %llu clocks = %.2f bytes/clock "
                        "(port %u bytes/clock, %.1f%%)\n", len / 1024, c.soff, c.doff, (unsigned long long)cyc, bpc,
                        PORT, 100.0 * bpc / PORT);
            tb_ok(st == 0 && bytes == len && same && bpc >= 0.9 * PORT,
                  "dma: %u KiB token->token (offsets 0x%x/0x%x) correct at %.2f bytes/clock >= %.1f", len / 1024,
                  c.soff, c.doff, bpc, 0.9 * PORT);
        }

        // System port while the DMA runs: reads complete in a couple of clocks.
        t.dma_setup(tok(a, a.base, 0), tok(b, b.base, NF_ACCESS_LOCAL_WRITE), len);
        t.csr_wr(NF_ENGINE_DMA_CTRL, 1);
        int worst = 0, n = 0;
        bool rd_ok = true;
        // The engine's idle output, not DMA_STATUS: a read of a busy unit's status is held.
        t.tick();
        while (!t.m->idle) {
            int lat = 0;
            uint32_t v = t.sys(0x100 + 4 * (n % 16), 0, 0, &lat);
            uint32_t e;
            std::memcpy(&e, &t.shadow[0x100 + 4 * (n % 16)], 4);
            rd_ok = rd_ok && v == e;
            worst = lat > worst ? lat : worst;
            n++;
        }
        uint32_t dst = t.csr_rd(NF_ENGINE_DMA_STATUS);
        tb_ok(rd_ok && worst <= 4 && n > 100 && !(dst & NF_STATUS_WORD_BUSY_MASK),
              "sysport: %d reads during a DMA, worst latency %d clocks", n, worst);

        // A status read of a busy unit is held until the unit finishes, STATUS_HOLD_CLOCKS at most:
        // a long DMA is answered BUSY after them; a table op's outcome comes at once.
        t.dma_setup(tok(a, a.base, 0), tok(b, b.base, NF_ACCESS_LOCAL_WRITE), len);
        t.csr_wr(NF_ENGINE_DMA_CTRL, 1);
        uint32_t s1 = t.csr_rd(NF_ENGINE_DMA_STATUS);
        int l1 = t.lat;
        uint32_t s2 = t.wait_status(NF_ENGINE_DMA_STATUS);
        tb_ok((s1 & NF_STATUS_WORD_BUSY_MASK) && l1 >= (int)NF_ENGINE_HW_STATUS_HOLD_CLOCKS &&
                  l1 <= (int)NF_ENGINE_HW_STATUS_HOLD_CLOCKS + 2 && NF_STATUS_WORD_CODE_GET(s2) == NF_REFUSE_OK,
              "regs: a status read of a unit busy for long is held %d clocks, then answered BUSY", l1);
        t.csr_wr(NF_ENGINE_TBL_INDEX, a.index);
        t.csr_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_READ);
        uint32_t s3 = t.csr_rd(NF_ENGINE_TBL_STATUS);
        int l3 = t.lat;
        tb_ok(!(s3 & NF_STATUS_WORD_BUSY_MASK) && NF_STATUS_WORD_CODE_GET(s3) == NF_REFUSE_OK && l3 < 16,
              "regs: a status read during a table op answers its outcome when it ends (%d clocks)", l3);
    }

    // Invalidation during a long transfer: STOPPED, bytes = whole chunks written before.
    {
        Mr a = make_mr(30, 0x31, 1, 0x40000000ull, 0, tp * PAGE, tsb);
        Mr b = make_mr(31, 0x32, 1, 0x80000000ull, 0, tp * PAGE, tdb);
        for (uint32_t i = 0; i + 1 < tp; i++) t.fill(t.mtt[tdb + i] * PAGE, PAGE, rng);   // fresh destination
        t.dma_setup(tok(a, a.base, 0), tok(b, b.base, NF_ACCESS_LOCAL_WRITE), len);
        t.csr_wr(NF_ENGINE_DMA_CTRL, 1);
        for (uint32_t i = 0; i < len / PORT / 4; i++) t.tick();   // a quarter into the transfer
        t.csr_wr(NF_ENGINE_TBL_INDEX, b.index);
        t.csr_wr(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
        t.csr_wr(NF_ENGINE_TBL_INDEX, 5);                 // while the op is BUSY: dropped
        t.csr_rd(NF_ENGINE_ID);
        int plain_lat = t.lat;
        // The op was still BUSY at the status read: answered BUSY, or held until it ended.
        bool busy = (t.csr_rd(NF_ENGINE_TBL_STATUS) & NF_STATUS_WORD_BUSY_MASK) || t.lat > plain_lat;
        bool held = busy && t.csr_rd(NF_ENGINE_TBL_INDEX) == b.index;
        uint32_t ts = t.wait_status(NF_ENGINE_TBL_STATUS);
        tb_ok(held, "regs: TBL_INDEX written while its table op is BUSY is dropped");
        uint32_t bytes = 0;
        bool same = false, stopped = stopped_dst(t, a, b, tdb, tp - 1, &bytes, &same);
        std::printf("# invalidate during DMA: stopped after %u bytes\n", bytes);
        tb_ok(NF_STATUS_WORD_CODE_GET(ts) == NF_REFUSE_OK && stopped,
              "dma: invalidating the destination mid-transfer stops it (STOPPED, SIDE 1) before TBL BUSY drops");
        tb_ok(bytes > 0 && bytes < len && bytes % PAGE == 0 && same,
              "dma: STOPPED reports the %u bytes written; nothing after them changed", bytes);
        uint32_t st = dma(t, tok(a, a.base, 0), tok(b, b.base, NF_ACCESS_LOCAL_WRITE), 8, nullptr, &bytes);
        tb_ok(NF_STATUS_WORD_CODE_GET(st) == NF_REFUSE_NOT_VALID && bytes == 0,
              "dma: a later transfer through the invalidated entry is refused NOT_VALID");
    }

    // The same through a window over the destination: invalidating the parent MR stops
    // the transfer, and the invalidation completes only after it stopped.
    {
        Mr a = make_mr(30, 0x31, 1, 0x40000000ull, 0, tp * PAGE, tsb);
        Mr b = make_mr(31, 0x32, 1, 0x80000000ull, 0, tp * PAGE, tdb);
        program_mr(t, b);
        Mr w = make_window(b, 32, 0x33, 0x10, len, NF_MPT_W0_REMOTE_WRITE_MASK);
        program_mr(t, w);
        for (uint32_t i = 0; i + 1 < tp; i++) t.fill(t.mtt[tdb + i] * PAGE, PAGE, rng);
        t.dma_setup(tok(a, a.base, 0), tok(w, w.base, NF_ACCESS_REMOTE_WRITE), len);
        t.csr_wr(NF_ENGINE_DMA_CTRL, 1);
        for (uint32_t i = 0; i < len / PORT / 4; i++) t.tick();
        uint32_t ts = t.invalidate(b.index);
        uint32_t bytes = 0;
        bool same = false, stopped = stopped_dst(t, a, w, tdb, tp - 1, &bytes, &same);
        std::printf("# parent invalidated during a DMA through a window: stopped after %u bytes\n", bytes);
        tb_ok(ts == NF_REFUSE_OK && stopped,
              "dma: invalidating a window's parent mid-transfer stops it (STOPPED, SIDE 1) before TBL BUSY drops");
        tb_ok(bytes > 0 && bytes < len && same, "dma: window STOPPED after %u bytes; nothing after them changed",
              bytes);
    }
}

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    Tb t;
    test_registers(t);
    test_sysport(t);
    test_tables(t);
    test_checks(t);
    test_windows(t);
    test_loader(t);
    test_write_loaded(t);
    test_dma(t);
    std::printf("# %llu clocks simulated\n", (unsigned long long)t.cyc);
    return tb_done();
}
