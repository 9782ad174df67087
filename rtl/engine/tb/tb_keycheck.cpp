/* SPDX-License-Identifier: Apache-2.0 */
// nf_keycheck unit testbench: one op per clock into the pipeline, every result compared
// with a reference model of docs/architecture.md "Engine semantics", applied in issue
// order (so read-after-write hazards one, two and three ops apart are covered), plus the
// measured acceptance rate and latency.
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "Vnf_keycheck.h"
#include "nf_layout_cxx.h"
#include "tb_common.h"
#include "tb_keycheck_io.h"
#include "verilated.h"

#ifndef TB_MPT_ENTRIES
#error "TB_MPT_ENTRIES, TB_MTT_ENTRIES come from engine.mk (the -G parameters of this build)"
#endif
static const uint32_t MPT = TB_MPT_ENTRIES, MTT = TB_MTT_ENTRIES;
struct Ref {
    uint32_t mpt[MPT][7];
    uint32_t mtt[MTT];
};

typedef KcOp Op;

struct Res {
    uint32_t code, addr, mtt_data, tag, window, parent;
    uint32_t entry[7];
};

static bool is_valid(const uint32_t *w) { return NF_MPT_W0_STATE_GET(w[0]) == NF_MPT_STATE_VALID; }

// A window (KIND WINDOW) grants remote access only, and only while its parent is VALID.
static uint32_t ref_check(const Ref &r, const Op &o, uint32_t *addr)
{
    *addr = 0;
    uint32_t idx = NF_TOKEN_INDEX_GET(o.token);
    if (idx >= MPT) return NF_REFUSE_BAD_INDEX;
    const uint32_t *w = r.mpt[idx];
    bool window = NF_MPT_W0_KIND_GET(w[0]) == NF_MPT_KIND_WINDOW;
    uint32_t parent = NF_MPT_W6_PARENT_GET(w[6]);
    if (NF_MPT_W0_KEY_GET(w[0]) != NF_TOKEN_KEY_GET(o.token)) return NF_REFUSE_BAD_KEY;
    if (!is_valid(w) || (window && (parent >= MPT || !is_valid(r.mpt[parent])))) return NF_REFUSE_NOT_VALID;
    if (NF_MPT_W1_PD_GET(w[1]) != o.pd) return NF_REFUSE_WRONG_PD;
    bool fast = NF_MPT_W0_KIND_GET(w[0]) == NF_MPT_KIND_FAST, en = NF_MPT_W0_REMOTE_EN_GET(w[0]);
    bool right = !window;
    switch (o.access) {
    case NF_ACCESS_LOCAL_WRITE: right = NF_MPT_W0_LOCAL_WRITE_GET(w[0]) && !window; break;
    case NF_ACCESS_REMOTE_READ: right = NF_MPT_W0_REMOTE_READ_GET(w[0]) && (!fast || en); break;
    case NF_ACCESS_REMOTE_WRITE: right = NF_MPT_W0_REMOTE_WRITE_GET(w[0]) && (!fast || en); break;
    default: break;
    }
    if (!right) return NF_REFUSE_NO_RIGHT;
    uint64_t base = (uint64_t)w[3] << 32 | w[2], length = w[4];
    if (o.va < base) return NF_REFUSE_OUT_OF_BOUNDS;
    uint64_t off = o.va - base;
    if (off > length || o.len > length - off) return NF_REFUSE_OUT_OF_BOUNDS;
    if (o.len == 0) return NF_REFUSE_OK;
    uint64_t pos = NF_MPT_W1_FBO_GET(w[1]) + off;
    uint64_t first = NF_MPT_W5_MTT_BASE_GET(w[5]) + (pos >> NF_ADAPTER_PAGE_SHIFT);
    uint64_t last = NF_MPT_W5_MTT_BASE_GET(w[5]) + ((pos + o.len - 1) >> NF_ADAPTER_PAGE_SHIFT);
    if (last >= MTT) return NF_REFUSE_BAD_MTT;
    *addr = (uint32_t)((uint64_t)r.mtt[first] << NF_ADAPTER_PAGE_SHIFT | (pos & (NF_ADAPTER_PAGE_SIZE - 1)));
    return NF_REFUSE_OK;
}

// Applies one op to the reference in issue order; returns its expected result.
static Res ref_apply(Ref &r, const Op &o)
{
    Res e{};
    e.tag = o.tag;
    switch (o.op) {
    case KC_OP_CHECK: {
        e.code = ref_check(r, o, &e.addr);
        uint32_t idx = NF_TOKEN_INDEX_GET(o.token);
        e.window = idx < MPT && NF_MPT_W0_KIND_GET(r.mpt[idx][0]) == NF_MPT_KIND_WINDOW;
        e.parent = e.window ? NF_MPT_W6_PARENT_GET(r.mpt[idx][6]) : 0;
        break;
    }
    case NF_TBL_OP_MPT_WRITE:
        if (o.index >= MPT) { e.code = NF_REFUSE_BAD_INDEX; break; }
        std::memcpy(r.mpt[o.index], o.entry, sizeof o.entry);
        break;
    case NF_TBL_OP_MPT_READ:
        if (o.index >= MPT) { e.code = NF_REFUSE_BAD_INDEX; break; }
        std::memcpy(e.entry, r.mpt[o.index], sizeof e.entry);
        break;
    case NF_TBL_OP_MPT_INVALIDATE:
        if (o.index >= MPT) { e.code = NF_REFUSE_BAD_INDEX; break; }
        if (NF_MPT_W0_STATE_GET(r.mpt[o.index][0]) != NF_MPT_STATE_VALID) { e.code = NF_REFUSE_NOT_VALID; break; }
        r.mpt[o.index][0] = (r.mpt[o.index][0] & ~NF_MPT_W0_STATE_MASK) | NF_MPT_W0_STATE_PUT(NF_MPT_STATE_INVALID);
        break;
    case NF_TBL_OP_MTT_WRITE:
        if (o.index >= MTT) { e.code = NF_REFUSE_BAD_MTT; break; }
        r.mtt[o.index] = o.mtt_data;
        break;
    case NF_TBL_OP_MTT_READ:
        if (o.index >= MTT) { e.code = NF_REFUSE_BAD_MTT; break; }
        e.mtt_data = r.mtt[o.index];
        break;
    default: e.code = NF_REFUSE_BAD_COMMAND; break;
    }
    return e;
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

// A random entry drawn from a small space so that every refusal reason shows up.
static Op random_op(Rng &g, const Ref &r)
{
    Op o{};
    o.tag = g.below(4);
    uint32_t pick = g.below(100);
    uint32_t idx = g.below(8) + (g.below(20) == 0 ? MPT - 4 + g.below(8) : 0);
    if (pick < 55) {
        uint32_t i = idx < MPT ? idx : 0;
        const uint32_t *w = r.mpt[i];
        uint64_t base = (uint64_t)w[3] << 32 | w[2];
        uint32_t key = g.below(8) ? NF_MPT_W0_KEY_GET(w[0]) : g.below(256);
        uint32_t pd = g.below(8) ? NF_MPT_W1_PD_GET(w[1]) : g.below(4);
        uint64_t va = base + (uint64_t)(int64_t)((int32_t)g.below(3 * 4096) - 256);
        uint32_t len = g.below(4) ? g.below(2 * 4096) : g.below(16);
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
    if (pick < 93) { o.op = NF_TBL_OP_MTT_WRITE; o.index = g.below(MTT + 4); o.mtt_data = (uint32_t)g.next(); return o; }
    if (pick < 96) { o.op = NF_TBL_OP_MPT_READ; o.index = idx; return o; }
    if (pick < 99) { o.op = NF_TBL_OP_MTT_READ; o.index = g.below(MTT + 4); return o; }
    o.op = 6 + g.below(2);
    return o;
}

static bool same(const Res &a, const Res &b)
{
    return a.code == b.code && a.addr == b.addr && a.mtt_data == b.mtt_data && a.tag == b.tag &&
           a.window == b.window && a.parent == b.parent &&
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
    std::memset(&ref, 0, sizeof ref);
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

    // Random mixed stream, every clock an op (with gaps now and then).
    {
        Rng g(2024);
        size_t bad = 0, n = 0;
        uint32_t seen[16] = {0};
        for (int round = 0; round < 40; round++) {
            std::vector<Op> seq;
            std::vector<Res> exp;
            for (int i = 0; i < 500; i++) {
                seq.push_back(random_op(g, ref));
                exp.push_back(ref_apply(ref, seq.back()));
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
                if (!same(t.outs[i], exp[i])) {
                    if (bad < 5)
                        std::printf("# op %zu (op %u idx %u): got code %u addr 0x%x, want code %u addr 0x%x\n", i,
                                    seq[i].op, seq[i].index, t.outs[i].code, t.outs[i].addr, exp[i].code,
                                    exp[i].addr);
                    bad++;
                }
            }
        }
        std::printf("# random stream: %zu ops; checks by result:", n);
        for (int c = 0; c < 16; c++)
            if (seen[c]) std::printf(" %d:%u", c, seen[c]);
        std::printf("\n");
        bool every = true;
        const uint32_t reasons[] = {NF_REFUSE_OK, NF_REFUSE_BAD_INDEX, NF_REFUSE_BAD_KEY, NF_REFUSE_NOT_VALID,
                                    NF_REFUSE_WRONG_PD, NF_REFUSE_NO_RIGHT, NF_REFUSE_OUT_OF_BOUNDS,
                                    NF_REFUSE_BAD_MTT};
        for (uint32_t c : reasons) every = every && seen[c] > 0;
        tb_ok(bad == 0 && n == 20000, "keycheck: 20000 random ops (hazards included) match the reference model");
        tb_ok(every, "keycheck: the random stream hit the grant and every check refusal reason");
    }
    t.m->final();
    delete t.m;
    return tb_done();
}
