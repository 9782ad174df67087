/* SPDX-License-Identifier: Apache-2.0 */
// nf_keycheck unit testbench: one op per clock into the pipeline, every result compared
// with the engine's C model (rtl/engine/model) applied in issue order, so read-after-write
// hazards one, two and three ops apart are covered; plus acceptance rate and latency.
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "Vnf_keycheck.h"
#include "nf_engine_model.h"
#include "nf_layout_cxx.h"
#include "tb_common.h"
#include "tb_keycheck_io.h"
#include "verilated.h"

#ifndef TB_MPT_ENTRIES
#error "TB_MPT_ENTRIES, TB_MTT_ENTRIES come from engine.mk (the -G parameters of this build)"
#endif
static const uint32_t MPT = TB_MPT_ENTRIES, MTT = TB_MTT_ENTRIES;

typedef KcOp Op;

struct Res {
    uint32_t op, code, addr, mtt_data, tag, index, window, parent;
    uint32_t entry[7];
};

// The reference is the engine's C model at this build's sizes: the unit's table ops are
// the engine's TBL_CMD operations and its check is CHK_CTRL's, so one model serves both.
struct Ref {
    nfm_engine *e;
    Ref()
    {
        const nfm_engine_cfg cfg = {TB_MEM_BYTES, MPT, MTT, TB_USER_BASE};
        e = nfm_engine_new(&cfg);
        if (!e) { std::printf("not ok - keycheck: the C model refuses these sizes\n"); std::exit(1); }
    }
    ~Ref() { nfm_engine_free(e); }
    Ref(const Ref &) = delete;
    Ref &operator=(const Ref &) = delete;
    // Entry i as the model holds it; zeros beyond the table.
    void entry(uint32_t i, uint32_t w[NFM_MPT_WORDS]) const { nfm_mpt_get(e, i, w); }
};

// Applies one op to the model in issue order, through the registers the firmware uses
// for a table op; returns what the unit must answer. Fields an op does not produce are 0.
static Res ref_apply(Ref &r, const Op &o)
{
    Res x{};
    x.op = o.op;
    x.tag = o.tag;
    if (o.op == KC_OP_CHECK) {
        uint32_t idx = NF_TOKEN_INDEX_GET(o.token), w[NFM_MPT_WORDS];
        x.index = idx;
        x.code = nfm_check(r.e, o.token, o.va, o.len, o.access, o.pd, &x.addr);
        r.entry(idx, w);
        x.window = NF_MPT_W0_KIND_GET(w[0]) == NF_MPT_KIND_WINDOW;
        x.parent = x.window ? NF_MPT_W6_PARENT_GET(w[6]) : 0;
        return x;
    }
    x.index = o.index;
    // nf_engine turns MPT_WRITE_LOADED into MPT_WRITE before the unit, so any op above
    // MTT_READ is unknown here, as TBL_CMD 0 (no TBL_OP) is to the model.
    uint32_t cmd = o.op <= NF_TBL_OP_MTT_READ ? o.op : 0;
    nfm_csr_write(r.e, NF_ENGINE_TBL_INDEX, o.index);
    if (cmd == NF_TBL_OP_MPT_WRITE)
        for (uint32_t i = 0; i < NFM_MPT_WORDS; i++) nfm_csr_write(r.e, NF_ENGINE_ENT_W0 + 4 * i, o.entry[i]);
    if (cmd == NF_TBL_OP_MTT_WRITE) nfm_csr_write(r.e, NF_ENGINE_TBL_MTT_DATA, o.mtt_data);
    nfm_csr_write(r.e, NF_ENGINE_TBL_CMD, cmd);
    x.code = NF_STATUS_WORD_CODE_GET(nfm_csr_read(r.e, NF_ENGINE_TBL_STATUS));
    if (x.code != NF_REFUSE_OK) return x;
    if (cmd == NF_TBL_OP_MPT_READ)
        for (uint32_t i = 0; i < NFM_MPT_WORDS; i++) x.entry[i] = nfm_csr_read(r.e, NF_ENGINE_ENT_W0 + 4 * i);
    if (cmd == NF_TBL_OP_MTT_READ) x.mtt_data = nfm_csr_read(r.e, NF_ENGINE_TBL_MTT_DATA);
    return x;
}

struct Tb {
    Vnf_keycheck *m = new Vnf_keycheck;
    uint64_t cyc = 0;
    std::deque<Res> outs;
    std::vector<uint64_t> out_cycles;
    void tick()
    {
        tb_tick(m, cyc);
        if (m->out_valid) {
            Res r{};
            r.op = m->out_op;
            r.index = m->out_index;
            r.code = m->out_code;
            r.addr = m->out_addr;
            r.mtt_data = m->out_mtt_data;
            r.tag = m->out_tag;
            r.window = m->out_window;
            r.parent = m->out_parent;
            for (int i = 0; i < 7; i++) r.entry[i] = m->out_entry[i];
            outs.push_back(r);
            out_cycles.push_back(cyc);
        }
    }
    void drive(const Op *o) { kc_drive(m, o); }
};

// An MTT index: mostly inside, near the end now and then, so BAD_MTT shows at every size.
static uint32_t random_mtt_index(Rng &g) { return g.below(8) ? g.below(MTT + 4) : MTT - 2 + g.below(4); }

// A random entry drawn from a small space so that every refusal reason shows up.
static Op random_op(Rng &g, const Ref &r)
{
    Op o{};
    o.tag = g.below(4);
    uint32_t pick = g.below(100);
    uint32_t idx = g.below(8) + (g.below(20) == 0 ? MPT - 4 + g.below(8) : 0);
    if (pick < 55) {
        uint32_t w[NFM_MPT_WORDS];
        r.entry(idx < MPT ? idx : 0, w);
        uint64_t base = (uint64_t)w[3] << 32 | w[2];
        uint32_t key = g.below(8) ? NF_MPT_W0_KEY_GET(w[0]) : g.below(256);
        uint32_t pd = g.below(8) ? NF_MPT_W1_PD_GET(w[1]) : g.below(4);
        uint64_t va = base + (uint64_t)(int64_t)((int32_t)g.below(3 * 4096) - 256);
        uint32_t len = g.below(4) ? g.below(2 * 4096) : g.below(16);
        // Now and then the range ends at the entry's end, one byte short of it or past it.
        uint64_t end = base + w[4] + g.below(3) - 1;
        if (g.below(8) == 0 && end >= va && end - va <= 2 * 4096) len = (uint32_t)(end - va);
        return kc_check_op(NF_TOKEN_INDEX_PUT(idx) | key, va, len, g.below(4), pd);
    }
    if (pick < 75) {
        o.op = NF_TBL_OP_MPT_WRITE;
        o.index = idx;
        uint32_t rights = (uint32_t)g.next() & (NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK |
                                                NF_MPT_W0_REMOTE_WRITE_MASK | NF_MPT_W0_REMOTE_EN_MASK);
        o.entry[0] = NF_MPT_W0_STATE_PUT(g.below(4) ? NF_MPT_STATE_VALID : g.below(3)) |
                     NF_MPT_W0_KIND_PUT(g.below(3)) | rights | NF_MPT_W0_KEY_PUT(1 + g.below(3));
        o.entry[1] = NF_MPT_W1_PD_PUT(g.below(3)) | NF_MPT_W1_FBO_PUT(g.below(4096));
        uint64_t base = g.below(4) ? (uint64_t)g.below(1u << 20) << 12 : ~0ull - g.below(3 * 4096);
        o.entry[2] = (uint32_t)base;
        o.entry[3] = (uint32_t)(base >> 32);
        o.entry[4] = g.below(4) ? g.below(3 * 4096) : (uint32_t)g.next();
        // MTT_BASE near the end of the MTT now and then, so BAD_MTT shows at every size.
        uint32_t mtt_base = g.below(8) ? g.below(MTT + 8) : MTT - 1 - g.below(4);
        o.entry[5] = NF_MPT_W5_MTT_BASE_PUT(mtt_base) | NF_MPT_W5_PAGE_CAP_PUT(g.below(8));
        // A window's parent: mostly one of the entries in use, now and then none.
        o.entry[6] = NF_MPT_W6_PAGES_PUT(g.below(8)) |
                     NF_MPT_W6_PARENT_PUT(g.below(16) ? g.below(8) : MPT + g.below(4));
        return o;
    }
    if (pick < 85) { o.op = NF_TBL_OP_MPT_INVALIDATE; o.index = idx; return o; }
    if (pick < 93) { o.op = NF_TBL_OP_MTT_WRITE; o.index = random_mtt_index(g); o.mtt_data = (uint32_t)g.next(); return o; }
    if (pick < 96) { o.op = NF_TBL_OP_MPT_READ; o.index = idx; return o; }
    if (pick < 99) { o.op = NF_TBL_OP_MTT_READ; o.index = random_mtt_index(g); return o; }
    o.op = 6 + g.below(2);
    return o;
}

static bool same(const Res &a, const Res &b)
{
    return a.op == b.op && a.code == b.code && a.addr == b.addr && a.mtt_data == b.mtt_data && a.tag == b.tag &&
           a.index == b.index && a.window == b.window && a.parent == b.parent &&
           !std::memcmp(a.entry, b.entry, sizeof a.entry);
}

// Issues seq on consecutive clocks; true when every result matches the reference
// (applied in issue order). The results stay in t.outs.
static bool run_back_to_back(Tb &t, Ref &ref, const std::vector<Op> &seq)
{
    std::vector<Res> exp;
    for (const auto &o : seq) exp.push_back(ref_apply(ref, o));
    t.outs.clear();
    for (auto &o : seq) { t.drive(&o); t.tick(); }
    t.drive(nullptr);
    for (int i = 0; i < 8; i++) t.tick();
    bool ok = t.outs.size() == seq.size();
    for (size_t i = 0; ok && i < seq.size(); i++) ok = same(t.outs[i], exp[i]);
    return ok;
}

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    Tb t;
    Ref ref;
    t.m->rst = 1;
    t.drive(nullptr);
    t.tick();
    t.m->rst = 0;
    uint64_t c0 = t.cyc;
    while (!t.m->ready && t.cyc < 10000) t.tick();
    tb_ok(t.m->ready && t.cyc - c0 <= MTT + 1, "keycheck: tables cleared %llu clocks after reset",
          (unsigned long long)(t.cyc - c0));

    // Back-to-back checks: one accepted every clock, results after a fixed latency.
    Op w{};
    w.op = NF_TBL_OP_MPT_WRITE;
    w.index = 3;
    w.entry[0] = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KEY_PUT(0x5A);
    w.entry[1] = NF_MPT_W1_PD_PUT(1);
    w.entry[4] = 1u << 20;
    w.entry[5] = NF_MPT_W5_MTT_BASE_PUT(10);
    std::vector<Op> ops;
    ops.push_back(w);
    for (uint32_t i = 0; i < 1000; i++) ops.push_back(kc_check_op(NF_TOKEN_INDEX_PUT(3) | 0x5A, i * 64, 64, 0, 1));
    std::vector<Res> want;
    for (const auto &o : ops) want.push_back(ref_apply(ref, o));
    t.outs.clear();
    t.out_cycles.clear();
    uint64_t first_in = t.cyc;   // the clock during which the first op is presented
    for (auto &o : ops) { t.drive(&o); t.tick(); }
    t.drive(nullptr);
    for (int i = 0; i < 8; i++) t.tick();
    bool ok = t.outs.size() == ops.size();
    for (size_t i = 0; ok && i < ops.size(); i++) ok = same(t.outs[i], want[i]);
    uint64_t span = t.out_cycles.back() - t.out_cycles[1] + 1;
    double rate = 1000.0 / (double)span;
    uint64_t latency = t.out_cycles[0] - first_in;   // clock during which out_valid shows
    std::printf("# keycheck: 1000 checks issued on 1000 consecutive clocks, results on %llu clocks "
                "(%.3f checks/clock), latency %llu clocks\n", (unsigned long long)span, rate,
                (unsigned long long)latency);
    tb_ok(ok && rate == 1.0, "keycheck: one check accepted and answered every clock");
    tb_ok(latency == 4, "keycheck: latency is 4 clocks (in_valid at t, out_valid at t+4)");

    // Hazards at distance 1: write/invalidate/MTT write immediately followed by a check.
    {
        Op mw{};
        mw.op = NF_TBL_OP_MTT_WRITE;
        mw.index = 10;
        mw.mtt_data = 0x123;
        Op c = kc_check_op(NF_TOKEN_INDEX_PUT(3) | 0x5A, 0x10, 8, 0, 1);
        Op inv{};
        inv.op = NF_TBL_OP_MPT_INVALIDATE;
        inv.index = 3;
        Op w2 = w;
        w2.entry[0] = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KEY_PUT(0x5B);
        Op c2 = kc_check_op(NF_TOKEN_INDEX_PUT(3) | 0x5B, 0x10, 8, 0, 1);
        std::vector<Op> seq = {mw, c, inv, c, c, w, c, w2, c2, c, inv, inv, c2};
        bool hz = run_back_to_back(t, ref, seq);
        tb_ok(hz && t.outs[1].addr == (0x123u << 12 | 0x10) && t.outs[3].code == NF_REFUSE_NOT_VALID &&
              t.outs[6].code == NF_REFUSE_OK && t.outs[8].code == NF_REFUSE_OK && t.outs[9].code == NF_REFUSE_BAD_KEY &&
              t.outs[11].code == NF_REFUSE_NOT_VALID && t.outs[12].code == NF_REFUSE_NOT_VALID,
              "keycheck: a check issued on the clock after a write, invalidate or MTT write sees it");
    }

    // Windows at distance 1: the parent's invalidate or rewrite on the clock before the
    // check through the window counts; the window's rights and bounds are its own.
    {
        Op p = w;                      // parent: entry 3 as the block above left it
        p.entry[0] = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KEY_PUT(0x5C) |
                     NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK | NF_MPT_W0_LOCAL_WRITE_MASK;
        Op win = w;
        win.index = 5;
        win.entry[0] = NF_MPT_W0_STATE_PUT(NF_MPT_STATE_VALID) | NF_MPT_W0_KIND_PUT(NF_MPT_KIND_WINDOW) |
                       NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_KEY_PUT(0x77);
        win.entry[2] = 0x1000;
        win.entry[4] = 0x100;
        win.entry[6] = NF_MPT_W6_PARENT_PUT(3);
        Op inv{};
        inv.op = NF_TBL_OP_MPT_INVALIDATE;
        inv.index = 3;
        uint32_t wt = NF_TOKEN_INDEX_PUT(5) | 0x77;
        Op in = kc_check_op(wt, 0x1080, 0x80, NF_ACCESS_REMOTE_READ, 1);
        Op past = kc_check_op(wt, 0x1080, 0x81, NF_ACCESS_REMOTE_READ, 1);
        Op below = kc_check_op(wt, 0xFFF, 2, NF_ACCESS_REMOTE_READ, 1);
        Op rw = kc_check_op(wt, 0x1000, 8, NF_ACCESS_REMOTE_WRITE, 1);
        Op lr = kc_check_op(wt, 0x1000, 8, NF_ACCESS_LOCAL_READ, 1);
        std::vector<Op> seq = {p, win, in, inv, in, p, in, past, below, rw, lr, inv, inv, in, p, in};
        bool hz = run_back_to_back(t, ref, seq);
        const uint32_t want[] = {0, 0, NF_REFUSE_OK, 0, NF_REFUSE_NOT_VALID, 0, NF_REFUSE_OK,
                                 NF_REFUSE_OUT_OF_BOUNDS, NF_REFUSE_OUT_OF_BOUNDS, NF_REFUSE_NO_RIGHT,
                                 NF_REFUSE_NO_RIGHT, 0, NF_REFUSE_NOT_VALID, NF_REFUSE_NOT_VALID, 0, NF_REFUSE_OK};
        for (size_t i = 0; hz && i < seq.size(); i++) hz = t.outs[i].code == want[i];
        tb_ok(hz && t.outs[2].window == 1 && t.outs[2].parent == 3,
              "keycheck: a check through a window sees its parent's invalidate or rewrite of the clock before; "
              "remote only, its own bounds and rights");
    }

    // Random mixed stream, every clock an op (with gaps now and then). $TB_SEED picks
    // another stream; the default one is the same every run.
    {
        const char *seed_env = std::getenv("TB_SEED");
        uint64_t seed = seed_env && *seed_env ? std::strtoull(seed_env, nullptr, 0) : 2024;
        Rng g(seed);
        size_t bad = 0, n = 0;
        uint32_t seen[16] = {0};
        uint32_t seen_tbl[8][16] = {{0}};   // table ops by op and result
        uint32_t edge_ok = 0, edge_past = 0;  // checks ending at the entry's last byte, one past it
        for (int round = 0; round < 40; round++) {
            std::vector<Op> seq;
            std::vector<Res> exp;
            for (int i = 0; i < 500; i++) {
                seq.push_back(random_op(g, ref));
                const Op &o = seq.back();
                uint32_t w[NFM_MPT_WORDS];
                ref.entry(NF_TOKEN_INDEX_GET(o.token), w);   // as the op finds it
                uint64_t end = ((uint64_t)w[3] << 32 | w[2]) + w[4];
                exp.push_back(ref_apply(ref, o));
                if (o.op == KC_OP_CHECK) {
                    uint32_t code = exp.back().code;
                    edge_ok += code == NF_REFUSE_OK && o.len && o.va + o.len == end;
                    edge_past += code == NF_REFUSE_OUT_OF_BOUNDS && o.va + o.len == end + 1;
                }
            }
            t.outs.clear();
            for (auto &o : seq) {
                t.drive(&o);
                t.tick();
                if (g.below(10) == 0) { t.drive(nullptr); t.tick(); }
            }
            t.drive(nullptr);
            for (int i = 0; i < 8; i++) t.tick();
            if (t.outs.size() != seq.size()) { bad++; break; }
            for (size_t i = 0; i < seq.size(); i++) {
                n++;
                if (seq[i].op == KC_OP_CHECK) seen[exp[i].code & 15]++;
                else seen_tbl[seq[i].op & 7][exp[i].code & 15]++;
                if (!same(t.outs[i], exp[i])) {
                    if (bad < 5)
                        std::printf("# op %zu (op %u idx %u): got code %u addr 0x%x index %u, want code %u addr "
                                    "0x%x index %u\n", i, seq[i].op, seq[i].index, t.outs[i].code, t.outs[i].addr,
                                    t.outs[i].index, exp[i].code, exp[i].addr, exp[i].index);
                    bad++;
                }
            }
        }
        std::printf("# random stream (seed %llu): %zu ops; checks by result:", (unsigned long long)seed, n);
        for (int c = 0; c < 16; c++)
            if (seen[c]) std::printf(" %d:%u", c, seen[c]);
        std::printf("; ending at the entry's last byte granted %u, one past refused %u\n", edge_ok, edge_past);
        bool every = edge_ok > 0 && edge_past > 0;
        const uint32_t reasons[] = {NF_REFUSE_OK, NF_REFUSE_BAD_INDEX, NF_REFUSE_BAD_KEY, NF_REFUSE_NOT_VALID,
                                    NF_REFUSE_WRONG_PD, NF_REFUSE_NO_RIGHT, NF_REFUSE_OUT_OF_BOUNDS,
                                    NF_REFUSE_BAD_MTT};
        for (uint32_t c : reasons) every = every && seen[c] > 0;
        tb_ok(bad == 0 && n == 20000, "keycheck: 20000 random ops (hazards included) match the reference model");
        tb_ok(every, "keycheck: the random stream hit the grant, every check refusal reason and both sides of an "
                     "entry's end");
        const uint32_t tbl_ops[] = {NF_TBL_OP_MPT_WRITE, NF_TBL_OP_MPT_READ, NF_TBL_OP_MPT_INVALIDATE,
                                    NF_TBL_OP_MTT_WRITE, NF_TBL_OP_MTT_READ};
        bool tbl = seen_tbl[NF_TBL_OP_MPT_INVALIDATE][NF_REFUSE_NOT_VALID] > 0 &&
                   seen_tbl[6][NF_REFUSE_BAD_COMMAND] > 0 && seen_tbl[7][NF_REFUSE_BAD_COMMAND] > 0;
        for (uint32_t op : tbl_ops) {
            uint32_t range = op >= NF_TBL_OP_MTT_WRITE ? NF_REFUSE_BAD_MTT : NF_REFUSE_BAD_INDEX;
            tbl = tbl && seen_tbl[op][NF_REFUSE_OK] > 0 && seen_tbl[op][range] > 0;
        }
        tb_ok(tbl, "keycheck: the random stream ran every table op granted and beyond its table, an invalidate of "
                   "an entry not VALID and unknown ops");
    }
    t.m->final();
    delete t.m;
    return tb_done();
}
