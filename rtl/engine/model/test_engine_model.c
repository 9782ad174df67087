/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the engine C model, through its registers as the firmware drives it.
 * Argument 1 (optional) prefixes every case name, so the plain and the sanitizer build
 * report apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_engine_model.h"
#include "nf_layout.h"
#include "../../../tests/tap.h"
#include "../tb/tb_chk_regs.h"

#define MEM_BYTES (256u * 1024u)
#define MPT_ENTRIES 64u
#define MTT_ENTRIES 256u
#define USER_BASE (64u * 1024u)
#define PAGE NF_ADAPTER_PAGE_SIZE
#define PD_A 7u
#define PD_B 9u

static const char *prefix = "";
static struct nfm_engine *e;

#define CHECK(cond, ...) tap_okp((cond), prefix, __VA_ARGS__)

static void w(uint32_t off, uint32_t v) { nfm_csr_write(e, off, v); }
static uint32_t r(uint32_t off) { return nfm_csr_read(e, off); }
static uint32_t code_of(uint32_t status) { return NF_STATUS_WORD_CODE_GET(status); }

static uint32_t token_of(uint32_t index, uint32_t key)
{
    return NF_TOKEN_INDEX_PUT(index) | NF_TOKEN_KEY_PUT(key);
}

static uint32_t w0_of(uint32_t state, uint32_t kind, uint32_t rights, uint32_t key)
{
    return NF_MPT_W0_STATE_PUT(state) | NF_MPT_W0_KIND_PUT(kind) | rights | NF_MPT_W0_KEY_PUT(key);
}

/* Writes MPT[index] through ENT_W0..W6 + MPT_WRITE (W6 = PAGES | PARENT); returns the
 * TBL_STATUS code. */
static uint32_t mpt_write_p(uint32_t index, uint32_t w0, uint32_t pd, uint32_t fbo, uint64_t base,
                            uint32_t length, uint32_t mtt_base, uint32_t pages, uint32_t parent)
{
    w(NF_ENGINE_ENT_W0, w0);
    w(NF_ENGINE_ENT_W1, NF_MPT_W1_PD_PUT(pd) | NF_MPT_W1_FBO_PUT(fbo));
    w(NF_ENGINE_ENT_W2, (uint32_t)base);
    w(NF_ENGINE_ENT_W3, (uint32_t)(base >> 32));
    w(NF_ENGINE_ENT_W4, length);
    w(NF_ENGINE_ENT_W5, NF_MPT_W5_MTT_BASE_PUT(mtt_base) | NF_MPT_W5_PAGE_CAP_PUT(pages));
    w(NF_ENGINE_ENT_W6, NF_MPT_W6_PAGES_PUT(pages) | NF_MPT_W6_PARENT_PUT(parent));
    w(NF_ENGINE_TBL_INDEX, index);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE);
    return code_of(r(NF_ENGINE_TBL_STATUS));
}

static uint32_t mpt_write(uint32_t index, uint32_t w0, uint32_t pd, uint32_t fbo, uint64_t base,
                          uint32_t length, uint32_t mtt_base, uint32_t pages)
{
    return mpt_write_p(index, w0, pd, fbo, base, length, mtt_base, pages, 0);
}

static uint32_t invalidate(uint32_t index)
{
    w(NF_ENGINE_TBL_INDEX, index);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
    return code_of(r(NF_ENGINE_TBL_STATUS));
}

static uint32_t mtt_write(uint32_t index, uint32_t page)
{
    w(NF_ENGINE_TBL_INDEX, index);
    w(NF_ENGINE_TBL_MTT_DATA, page);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MTT_WRITE);
    return code_of(r(NF_ENGINE_TBL_STATUS));
}

/* Runs a check through the CHK_* registers; *addr gets CHK_ADDR. Returns the code and
 * also compares it with nfm_check() (the helper must say the same). */
static uint32_t chk(uint32_t token, uint64_t va, uint32_t len, uint32_t access, uint32_t pd,
                    uint32_t *addr)
{
    TB_CHK_STAGE(w, token, va, len, access, pd);
    w(NF_ENGINE_CHK_CTRL, 1);
    uint32_t status = r(NF_ENGINE_CHK_STATUS);
    uint32_t helper_addr = 0xDEADBEEFu;
    uint32_t helper = nfm_check(e, token, va, len, access, pd, &helper_addr);
    if (addr)
        *addr = r(NF_ENGINE_CHK_ADDR);
    if (helper != code_of(status) || helper_addr != r(NF_ENGINE_CHK_ADDR) ||
        NF_STATUS_WORD_BUSY_GET(status) != 0)
        return 0xFFu; /* no REFUSE code: makes the caller's comparison fail */
    return code_of(status);
}

struct side {
    uint32_t mode, access, token, pd;
    uint64_t addr;
};

static void set_side(uint32_t base_off, const struct side *s)
{
    /* DMA_SRC_* and DMA_DST_* have the same layout from their MODE register on. */
    uint32_t d = base_off - NF_ENGINE_DMA_SRC_MODE;
    w(NF_ENGINE_DMA_SRC_MODE + d,
      NF_DMA_SIDE_MODE_MODE_PUT(s->mode) | NF_DMA_SIDE_MODE_ACCESS_PUT(s->access));
    w(NF_ENGINE_DMA_SRC_TOKEN + d, s->token);
    w(NF_ENGINE_DMA_SRC_ADDR_LO + d, (uint32_t)s->addr);
    w(NF_ENGINE_DMA_SRC_ADDR_HI + d, (uint32_t)(s->addr >> 32));
    w(NF_ENGINE_DMA_SRC_PD + d, s->pd);
}

/* Returns DMA_STATUS. */
static uint32_t dma(const struct side *src, const struct side *dst, uint32_t len)
{
    set_side(NF_ENGINE_DMA_SRC_MODE, src);
    set_side(NF_ENGINE_DMA_DST_MODE, dst);
    w(NF_ENGINE_DMA_LEN, len);
    w(NF_ENGINE_DMA_CTRL, 1);
    return r(NF_ENGINE_DMA_STATUS);
}

static uint32_t load(uint32_t src, uint32_t mtt_base, uint32_t count)
{
    w(NF_ENGINE_LD_SRC, src);
    w(NF_ENGINE_LD_MTT_BASE, mtt_base);
    w(NF_ENGINE_LD_COUNT, count);
    w(NF_ENGINE_LD_CTRL, 1);
    return r(NF_ENGINE_LD_STATUS);
}

static void put_le64(uint32_t addr, uint64_t v)
{
    uint8_t *m = nfm_mem(e);
    for (unsigned i = 0; i < 8; i++)
        m[addr + i] = (uint8_t)(v >> (8 * i));
}

static void fill_pattern(uint32_t seed)
{
    uint8_t *m = nfm_mem(e);
    uint32_t x = seed | 1u;
    for (uint32_t i = 0; i < MEM_BYTES; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        m[i] = (uint8_t)x;
    }
}

static struct nfm_engine *fresh(void)
{
    struct nfm_engine_cfg cfg = {MEM_BYTES, MPT_ENTRIES, MTT_ENTRIES, USER_BASE};
    nfm_engine_free(e);
    e = nfm_engine_new(&cfg);
    if (!e) {
        printf("not ok - %snfm_engine_new of the test configuration\n", prefix);
        exit(1);
    }
    return e;
}

/* ---- cases -------------------------------------------------------------------------- */

static void test_config(void)
{
    const struct nfm_engine_cfg bad[] = {
        {0, MPT_ENTRIES, MTT_ENTRIES, 0},
        {MEM_BYTES + 1, MPT_ENTRIES, MTT_ENTRIES, USER_BASE},
        {MEM_BYTES, 0, MTT_ENTRIES, USER_BASE},
        {MEM_BYTES, (1u << 24) + 1, MTT_ENTRIES, USER_BASE},
        {MEM_BYTES, MPT_ENTRIES, 0, USER_BASE},
        {MEM_BYTES, MPT_ENTRIES, (1u << 16) + 1, USER_BASE},
        {MEM_BYTES, MPT_ENTRIES, MTT_ENTRIES, MEM_BYTES + PAGE},
        {MEM_BYTES, MPT_ENTRIES, MTT_ENTRIES, USER_BASE + 1},
    };
    int all_null = 1;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct nfm_engine *x = nfm_engine_new(&bad[i]);
        if (x)
            all_null = 0;
        nfm_engine_free(x);
    }
    CHECK(all_null && nfm_engine_new(NULL) == NULL, "config: impossible sizes are refused");
    fresh();
    struct nfm_engine_cfg got = nfm_engine_get_cfg(e);
    CHECK(got.mem_bytes == MEM_BYTES && got.user_base == USER_BASE, "config: kept as given");
}

static void test_reset_and_registers(void)
{
    fresh();
    CHECK(r(NF_ENGINE_ID) == NF_ENGINE_HW_ID_VALUE && r(NF_ENGINE_CFG_MPT) == MPT_ENTRIES &&
              r(NF_ENGINE_CFG_MTT) == MTT_ENTRIES && r(NF_ENGINE_CFG_MEM) == MEM_BYTES &&
              r(NF_ENGINE_CFG_USER) == USER_BASE,
          "registers: ID and CFG_*");
    const uint32_t rw[] = {
        NF_ENGINE_TBL_INDEX, NF_ENGINE_TBL_MTT_DATA, NF_ENGINE_ENT_W0, NF_ENGINE_ENT_W1,
        NF_ENGINE_ENT_W2, NF_ENGINE_ENT_W3, NF_ENGINE_ENT_W4, NF_ENGINE_ENT_W5, NF_ENGINE_ENT_W6,
        NF_ENGINE_LD_SRC, NF_ENGINE_LD_MTT_BASE, NF_ENGINE_LD_COUNT, NF_ENGINE_DMA_SRC_MODE,
        NF_ENGINE_DMA_SRC_TOKEN, NF_ENGINE_DMA_SRC_ADDR_LO, NF_ENGINE_DMA_SRC_ADDR_HI,
        NF_ENGINE_DMA_SRC_PD, NF_ENGINE_DMA_DST_MODE, NF_ENGINE_DMA_DST_TOKEN,
        NF_ENGINE_DMA_DST_ADDR_LO, NF_ENGINE_DMA_DST_ADDR_HI, NF_ENGINE_DMA_DST_PD,
        NF_ENGINE_DMA_LEN, NF_ENGINE_CHK_TOKEN, NF_ENGINE_CHK_VA_LO, NF_ENGINE_CHK_VA_HI,
        NF_ENGINE_CHK_LEN, NF_ENGINE_CHK_ACCESS, NF_ENGINE_CHK_PD,
    };
    const size_t n_rw = sizeof(rw) / sizeof(rw[0]);
    int zero = 1, back = 1;
    for (size_t i = 0; i < n_rw; i++)
        if (r(rw[i]) != 0)
            zero = 0;
    CHECK(zero, "reset: every read/write register reads 0");
    for (size_t i = 0; i < n_rw; i++)
        w(rw[i], 0xA5000000u + (uint32_t)i);
    for (size_t i = 0; i < n_rw; i++)
        if (r(rw[i]) != 0xA5000000u + (uint32_t)i)
            back = 0;
    CHECK(back, "registers: every read/write register reads back all 32 bits");

    const uint32_t wo[] = {NF_ENGINE_TBL_CMD, NF_ENGINE_LD_CTRL, NF_ENGINE_DMA_CTRL, NF_ENGINE_CHK_CTRL};
    int wo_zero = 1;
    for (size_t i = 0; i < sizeof(wo) / sizeof(wo[0]); i++)
        if (r(wo[i]) != 0)
            wo_zero = 0;
    CHECK(wo_zero, "registers: write-only registers read 0");

    /* Unknown and unaligned offsets: reads 0, writes change nothing anywhere. */
    uint32_t before[0x1000 / 4];
    for (uint32_t off = 0; off < 0x1000; off += 4)
        before[off / 4] = r(off);
    int unknown_ok = 1;
    for (uint32_t off = 0; off < 0x1100; off += 4) {
        int known = 0;
        for (size_t i = 0; i < n_rw; i++)
            known |= rw[i] == off;
        for (size_t i = 0; i < sizeof(wo) / sizeof(wo[0]); i++)
            known |= wo[i] == off;
        if (off == NF_ENGINE_ID || off == NF_ENGINE_CFG_MPT || off == NF_ENGINE_CFG_MTT ||
            off == NF_ENGINE_CFG_MEM || off == NF_ENGINE_CFG_USER || off == NF_ENGINE_TBL_STATUS ||
            off == NF_ENGINE_LD_STATUS || off == NF_ENGINE_DMA_STATUS || off == NF_ENGINE_DMA_BYTES ||
            off == NF_ENGINE_CHK_STATUS || off == NF_ENGINE_CHK_ADDR)
            continue; /* read-only: written below, must not change */
        if (known)
            continue;
        if (r(off) != 0)
            unknown_ok = 0;
        w(off, 0xFFFFFFFFu);
    }
    for (uint32_t off = 1; off < 0x200; off += 4)
        w(off, 0xFFFFFFFFu);
    for (uint32_t off = 0; off < 0x1000; off += 4) {
        if (off == NF_ENGINE_ID || off == NF_ENGINE_CFG_MPT || off == NF_ENGINE_CFG_MTT ||
            off == NF_ENGINE_CFG_MEM || off == NF_ENGINE_CFG_USER || off == NF_ENGINE_TBL_STATUS ||
            off == NF_ENGINE_LD_STATUS || off == NF_ENGINE_DMA_STATUS || off == NF_ENGINE_DMA_BYTES ||
            off == NF_ENGINE_CHK_STATUS || off == NF_ENGINE_CHK_ADDR)
            w(off, 0x5A5A5A5Au);
    }
    for (uint32_t off = 0; off < 0x1000; off += 4)
        if (r(off) != before[off / 4])
            unknown_ok = 0;
    CHECK(unknown_ok && r(0x1000) == 0 && r(NF_ENGINE_ID + 1) == 0,
          "registers: unknown/unaligned offsets read 0, writes to them and to read-only registers change nothing");

    /* Table state after reset: every MPT entry FREE and zero, every MTT entry 0. */
    w(NF_ENGINE_TBL_INDEX, 3);
    w(NF_ENGINE_TBL_MTT_DATA, 0x55);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MTT_WRITE);
    mpt_write(5, 0xFFFFFFFFu, 1, 1, 1, 1, 1, 1);
    nfm_engine_reset(e);
    int tables_zero = 1;
    for (uint32_t i = 0; i < MPT_ENTRIES; i++) {
        w(NF_ENGINE_TBL_INDEX, i);
        w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_READ);
        for (uint32_t k = 0; k < NFM_MPT_WORDS; k++)
            if (r(NF_ENGINE_ENT_W0 + 4 * k) != 0)
                tables_zero = 0;
    }
    for (uint32_t i = 0; i < MTT_ENTRIES; i++) {
        w(NF_ENGINE_TBL_INDEX, i);
        w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MTT_READ);
        if (r(NF_ENGINE_TBL_MTT_DATA) != 0 || code_of(r(NF_ENGINE_TBL_STATUS)) != NF_REFUSE_OK)
            tables_zero = 0;
    }
    CHECK(tables_zero, "reset: every MPT entry FREE with W0..W6 = 0, every MTT entry 0");
    nfm_engine_reset(e);
    CHECK(r(NF_ENGINE_TBL_INDEX) == 0 && r(NF_ENGINE_TBL_STATUS) == 0 && r(NF_ENGINE_CHK_ADDR) == 0,
          "reset: registers back to 0");
}

static void test_table_ops(void)
{
    fresh();
    uint32_t w0 = w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_NORMAL, NF_MPT_W0_LOCAL_WRITE_MASK, 0x42);
    CHECK(mpt_write(MPT_ENTRIES - 1, w0, PD_A, 0x123, 0x1122334455667788ull, 0x9999, 17, 3) == NF_REFUSE_OK,
          "table: MPT_WRITE on the last entry");
    for (uint32_t k = 0; k < NFM_MPT_WORDS; k++)
        w(NF_ENGINE_ENT_W0 + 4 * k, 0);
    w(NF_ENGINE_TBL_INDEX, MPT_ENTRIES - 1);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_READ);
    uint32_t words[NFM_MPT_WORDS];
    nfm_mpt_get(e, MPT_ENTRIES - 1, words);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_OK && r(NF_ENGINE_ENT_W0) == w0 &&
              r(NF_ENGINE_ENT_W2) == 0x55667788u && r(NF_ENGINE_ENT_W3) == 0x11223344u &&
              r(NF_ENGINE_ENT_W4) == 0x9999 && words[0] == w0 && words[4] == 0x9999,
          "table: MPT_READ returns every word written");

    w(NF_ENGINE_ENT_W0, 0x12345678u);
    w(NF_ENGINE_TBL_INDEX, MPT_ENTRIES);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_BAD_INDEX, "table: MPT_WRITE index = entries -> BAD_INDEX");
    w(NF_ENGINE_TBL_INDEX, 0xFFFFFFFFu);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_READ);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_BAD_INDEX && r(NF_ENGINE_ENT_W0) == 0x12345678u,
          "table: MPT_READ index 0xFFFFFFFF -> BAD_INDEX, staging unchanged");
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_BAD_INDEX, "table: MPT_INVALIDATE bad index -> BAD_INDEX");

    /* Invalidate: VALID -> INVALID keeping every other bit; again -> NOT_VALID, no change. */
    w(NF_ENGINE_TBL_INDEX, MPT_ENTRIES - 1);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
    nfm_mpt_get(e, MPT_ENTRIES - 1, words);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_OK &&
              words[0] == ((w0 & ~NF_MPT_W0_STATE_MASK) | NF_MPT_W0_STATE_PUT(NF_MPT_STATE_INVALID)),
          "table: MPT_INVALIDATE VALID -> INVALID, other bits kept");
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
    uint32_t again[NFM_MPT_WORDS];
    nfm_mpt_get(e, MPT_ENTRIES - 1, again);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_NOT_VALID && memcmp(words, again, sizeof(words)) == 0,
          "table: MPT_INVALIDATE on INVALID -> NOT_VALID, entry unchanged");
    w(NF_ENGINE_TBL_INDEX, 0);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
    nfm_mpt_get(e, 0, again);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_NOT_VALID && again[0] == 0,
          "table: MPT_INVALIDATE on FREE -> NOT_VALID, entry unchanged");

    CHECK(mtt_write(MTT_ENTRIES - 1, 0xABCDE) == NF_REFUSE_OK, "table: MTT_WRITE last entry");
    w(NF_ENGINE_TBL_MTT_DATA, 0);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MTT_READ);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_OK && r(NF_ENGINE_TBL_MTT_DATA) == 0xABCDE,
          "table: MTT_READ returns the entry");
    uint32_t before = 0, after = 0;
    nfm_mtt_get(e, 0, &before);
    CHECK(mtt_write(MTT_ENTRIES, 7) == NF_REFUSE_BAD_MTT, "table: MTT_WRITE index = entries -> BAD_MTT");
    w(NF_ENGINE_TBL_MTT_DATA, 0x77);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MTT_READ);
    nfm_mtt_get(e, 0, &after);
    CHECK(code_of(r(NF_ENGINE_TBL_STATUS)) == NF_REFUSE_BAD_MTT && r(NF_ENGINE_TBL_MTT_DATA) == 0x77 &&
              before == after,
          "table: MTT_READ bad index -> BAD_MTT, nothing changes");
    const uint32_t unknown_ops[] = {0, NF_TBL_OP_MPT_WRITE_LOADED + 1, 8, 0x101, 0xFFFFFFFFu};
    int all_bad = 1;
    for (size_t i = 0; i < sizeof(unknown_ops) / sizeof(unknown_ops[0]); i++) {
        w(NF_ENGINE_TBL_CMD, unknown_ops[i]);
        if (r(NF_ENGINE_TBL_STATUS) != NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_COMMAND))
            all_bad = 0;
    }
    CHECK(all_bad, "table: unknown op (0, 7, 8, 0x101, ~0) -> BAD_COMMAND");
    w(NF_ENGINE_TBL_INDEX, 1);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_READ);
    CHECK(r(NF_ENGINE_TBL_STATUS) == 0, "table: success clears the status word");
}

/* Entry 3 (key 0x33, PD_A): base VA, length, pages MTT[10..] = 20, 5, 31, 12 (not
 * contiguous), FBO 0x345. */
#define E3 3u
#define E3_KEY 0x33u
#define E3_BASE 0x00007F0012340000ull
#define E3_FBO 0x345u
#define E3_LEN (4u * PAGE - E3_FBO - 0x10u)
#define E3_MTT 10u
static const uint32_t e3_pages[4] = {20, 5, 31, 12};

static void setup_e3(uint32_t rights, uint32_t kind)
{
    for (uint32_t i = 0; i < 4; i++)
        mtt_write(E3_MTT + i, USER_BASE / PAGE + e3_pages[i]);
    mpt_write(E3, w0_of(NF_MPT_STATE_VALID, kind, rights, E3_KEY), PD_A, E3_FBO, E3_BASE, E3_LEN,
              E3_MTT, 4);
}

static uint32_t e3_addr(uint64_t off)
{
    uint64_t p = E3_FBO + off;
    return USER_BASE + e3_pages[p / PAGE] * PAGE + (uint32_t)(p % PAGE);
}

static void test_check_refusals(void)
{
    fresh();
    uint32_t all = NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK;
    setup_e3(all, NF_MPT_KIND_NORMAL);
    uint32_t tok = token_of(E3, E3_KEY);
    uint32_t addr = 1;
    CHECK(chk(tok, E3_BASE, 16, NF_ACCESS_LOCAL_READ, PD_A, &addr) == NF_REFUSE_OK &&
              addr == e3_addr(0),
          "check: grant at base translates with FBO");
    CHECK(chk(token_of(MPT_ENTRIES, E3_KEY), E3_BASE, 1, 0, PD_A, &addr) == NF_REFUSE_BAD_INDEX && addr == 0,
          "check: index = entries -> BAD_INDEX, CHK_ADDR 0");
    CHECK(chk(NF_ADAPTER_PRIVILEGED_TOKEN, 0, 1, 0, PD_A, NULL) == NF_REFUSE_BAD_INDEX,
          "check: privileged token through the key table -> BAD_INDEX");
    CHECK(chk(token_of(E3, E3_KEY + 1), E3_BASE, 1, 0, PD_A, NULL) == NF_REFUSE_BAD_KEY, "check: wrong key -> BAD_KEY");
    CHECK(chk(token_of(E3, 0), E3_BASE, 1, 0, PD_A, NULL) == NF_REFUSE_BAD_KEY, "check: key 0 on a keyed entry -> BAD_KEY");
    CHECK(chk(token_of(0, 0), 0, 0, 0, 0, NULL) == NF_REFUSE_NOT_VALID, "check: token 0 on a FREE entry -> NOT_VALID");
    CHECK(chk(tok, E3_BASE, 1, 0, PD_B, NULL) == NF_REFUSE_WRONG_PD, "check: other PD -> WRONG_PD");
    CHECK(chk(tok, E3_BASE, 1, 0, PD_A | 0x10000u, NULL) == NF_REFUSE_WRONG_PD,
          "check: PD with bits above the entry's 16 -> WRONG_PD");
    CHECK(chk(tok, E3_BASE, 1, 4 | NF_ACCESS_LOCAL_READ, PD_A, NULL) == NF_REFUSE_OK,
          "check: CHK_ACCESS uses bits [1:0] only (4 = LOCAL_READ)");
    CHECK(chk(tok, E3_BASE - 1, 1, 0, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS, "check: VA < base -> OUT_OF_BOUNDS");
    CHECK(chk(tok, E3_BASE + E3_LEN + 1, 0, 0, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: off > length (zero len) -> OUT_OF_BOUNDS");
    CHECK(chk(tok, E3_BASE + E3_LEN, 0, 0, PD_A, &addr) == NF_REFUSE_OK && addr == 0,
          "check: zero length at the end -> granted, CHK_ADDR 0");
    CHECK(chk(tok, E3_BASE + E3_LEN - 4, 5, 0, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: len > length - off -> OUT_OF_BOUNDS");
    CHECK(chk(tok, E3_BASE + E3_LEN - 4, 4, 0, PD_A, &addr) == NF_REFUSE_OK && addr == e3_addr(E3_LEN - 4),
          "check: last bytes granted");
    CHECK(chk(tok, E3_BASE + 8, 0xFFFFFFFFu, 0, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: huge length -> OUT_OF_BOUNDS");
    CHECK(chk(tok, 0xFFFFFFFFFFFFFFFFull, 2, 0, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "check: VA at 2^64-1 -> OUT_OF_BOUNDS (no wrap)");

    /* Every state that is not VALID. */
    mpt_write(4, w0_of(NF_MPT_STATE_INVALID, 0, all, 0x44), PD_A, 0, 0, PAGE, 0, 1);
    CHECK(chk(token_of(4, 0x44), 0, 1, 0, PD_A, NULL) == NF_REFUSE_NOT_VALID, "check: INVALID entry -> NOT_VALID");
    mpt_write(4, w0_of(3, 0, all, 0x44), PD_A, 0, 0, PAGE, 0, 1);
    CHECK(chk(token_of(4, 0x44), 0, 1, 0, PD_A, NULL) == NF_REFUSE_NOT_VALID, "check: state 3 -> NOT_VALID");
    mpt_write(4, w0_of(NF_MPT_STATE_FREE, 0, all, 0x44), PD_A, 0, 0, PAGE, 0, 1);
    CHECK(chk(token_of(4, 0x44), 0, 1, 0, PD_A, NULL) == NF_REFUSE_NOT_VALID, "check: FREE entry -> NOT_VALID");

    /* Rights. */
    mpt_write(5, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_NORMAL, 0, 0x55), PD_A, 0, 0, PAGE, 0, 1);
    uint32_t t5 = token_of(5, 0x55);
    CHECK(chk(t5, 0, 1, NF_ACCESS_LOCAL_READ, PD_A, NULL) == NF_REFUSE_OK, "rights: LOCAL_READ always");
    CHECK(chk(t5, 0, 1, NF_ACCESS_LOCAL_WRITE, PD_A, NULL) == NF_REFUSE_NO_RIGHT, "rights: LOCAL_WRITE needs its bit");
    CHECK(chk(t5, 0, 1, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NO_RIGHT, "rights: REMOTE_READ needs its bit");
    CHECK(chk(t5, 0, 1, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_NO_RIGHT, "rights: REMOTE_WRITE needs its bit");
    mpt_write(5, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_FAST, all, 0x55), PD_A, 0, 0, PAGE, 0, 1);
    CHECK(chk(t5, 0, 1, NF_ACCESS_LOCAL_WRITE, PD_A, NULL) == NF_REFUSE_OK &&
              chk(t5, 0, 1, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NO_RIGHT &&
              chk(t5, 0, 1, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_NO_RIGHT,
          "rights: FAST entry without REMOTE_EN refuses remote access");
    mpt_write(5, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_FAST, all | NF_MPT_W0_REMOTE_EN_MASK, 0x55), PD_A, 0, 0, PAGE, 0, 1);
    CHECK(chk(t5, 0, 1, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OK &&
              chk(t5, 0, 1, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_OK,
          "rights: FAST entry with REMOTE_EN grants remote access");
    mpt_write(5, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_FAST, NF_MPT_W0_REMOTE_EN_MASK, 0x55), PD_A, 0, 0, PAGE, 0, 1);
    CHECK(chk(t5, 0, 1, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NO_RIGHT,
          "rights: REMOTE_EN alone grants nothing");
    mpt_write_p(5, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_WINDOW, NF_MPT_W0_REMOTE_READ_MASK, 0x55), PD_A, 0, 0,
                PAGE, 0, 1, E3);
    CHECK(chk(t5, 0, 1, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OK,
          "rights: REMOTE_EN only matters on FAST entries (a window over a VALID parent)");

    /* BAD_MTT: the range's last page lies beyond the MTT. */
    mpt_write(6, w0_of(NF_MPT_STATE_VALID, 0, 0, 0x66), PD_A, 0x800, 0x1000, 2 * PAGE, MTT_ENTRIES - 2, 2);
    uint32_t t6 = token_of(6, 0x66);
    CHECK(chk(t6, 0x1000, PAGE + 0x800, 0, PD_A, NULL) == NF_REFUSE_OK, "check: range ending in the last MTT entry granted");
    CHECK(chk(t6, 0x1000, PAGE + 0x801, 0, PD_A, NULL) == NF_REFUSE_BAD_MTT, "check: one byte into MTT[entries] -> BAD_MTT");
    CHECK(chk(t6, 0x1000 + 2 * PAGE, 0, 0, PD_A, NULL) == NF_REFUSE_OK, "check: zero length past the MTT is not translated");
    mpt_write(6, w0_of(NF_MPT_STATE_VALID, 0, 0, 0x66), PD_A, 0, 0, 1, MTT_ENTRIES, 1);
    CHECK(chk(t6, 0, 1, 0, PD_A, NULL) == NF_REFUSE_BAD_MTT, "check: MTT_BASE = entries -> BAD_MTT");

    /* Priority: everything wrong at once reports the first in the documented order. */
    mpt_write(7, w0_of(NF_MPT_STATE_INVALID, NF_MPT_KIND_FAST, NF_MPT_W0_REMOTE_READ_MASK, 0x77), PD_A, 0, 0x5000, 16, MTT_ENTRIES, 1);
    uint32_t t7 = token_of(7, 0x77);
    CHECK(chk(token_of(7, 0x78), 0, 99, NF_ACCESS_REMOTE_READ, PD_B, NULL) == NF_REFUSE_BAD_KEY,
          "priority: BAD_KEY before NOT_VALID, WRONG_PD, NO_RIGHT, OUT_OF_BOUNDS, BAD_MTT");
    CHECK(chk(t7, 0, 99, NF_ACCESS_REMOTE_READ, PD_B, NULL) == NF_REFUSE_NOT_VALID, "priority: NOT_VALID before WRONG_PD");
    mpt_write(7, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_FAST, NF_MPT_W0_REMOTE_READ_MASK, 0x77), PD_A, 0, 0x5000, 16, MTT_ENTRIES, 1);
    CHECK(chk(t7, 0, 99, NF_ACCESS_REMOTE_READ, PD_B, NULL) == NF_REFUSE_WRONG_PD, "priority: WRONG_PD before NO_RIGHT");
    CHECK(chk(t7, 0, 99, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NO_RIGHT, "priority: NO_RIGHT before OUT_OF_BOUNDS");
    CHECK(chk(t7, 0, 99, NF_ACCESS_LOCAL_READ, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS, "priority: OUT_OF_BOUNDS before BAD_MTT");
    CHECK(chk(t7, 0x5000, 16, NF_ACCESS_LOCAL_READ, PD_A, NULL) == NF_REFUSE_BAD_MTT, "priority: BAD_MTT last");
    CHECK(chk(token_of(7, 0x77), 0, 99, 4 | NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NO_RIGHT,
          "priority: ACCESS bits above [1:0] ignored (6 = REMOTE_READ)");
}

static void test_top_of_address_space(void)
{
    fresh();
    /* base + length = 2^64 exactly. */
    const uint32_t len = 2 * PAGE;
    const uint64_t base = 0ull - len;
    mtt_write(0, USER_BASE / PAGE);
    mtt_write(1, USER_BASE / PAGE + 7);
    mpt_write(1, w0_of(NF_MPT_STATE_VALID, 0, 0, 0x11), PD_A, 0, base, len, 0, 2);
    uint32_t tok = token_of(1, 0x11), addr = 0;
    CHECK(chk(tok, 0xFFFFFFFFFFFFFFF8ull, 8, 0, PD_A, &addr) == NF_REFUSE_OK &&
              addr == USER_BASE + 7 * PAGE + PAGE - 8,
          "top: VA 0xFFFFFFFFFFFFFFF8 len 8 granted in an MR ending at 2^64");
    CHECK(chk(tok, 0xFFFFFFFFFFFFFFF8ull, 16, 0, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "top: VA 0xFFFFFFFFFFFFFFF8 len 16 -> OUT_OF_BOUNDS");
    CHECK(chk(tok, base, len, 0, PD_A, &addr) == NF_REFUSE_OK && addr == USER_BASE,
          "top: the whole MR granted");
    CHECK(chk(tok, 0, 1, 0, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS, "top: VA 0 (wrapped) -> OUT_OF_BOUNDS");
    CHECK(chk(tok, 0xFFFFFFFFFFFFFFFFull, 0, 0, PD_A, &addr) == NF_REFUSE_OK && addr == 0,
          "top: zero length at 2^64-1 granted");
    /* Maximum length MR: base 2^64 - (2^32 - 1). */
    mpt_write(2, w0_of(NF_MPT_STATE_VALID, 0, 0, 0x22), PD_A, 0xFFF, 0ull - 0xFFFFFFFFull, 0xFFFFFFFFu, 0, 2);
    CHECK(chk(token_of(2, 0x22), 0ull - 0xFFFFFFFFull, 0xFFFFFFFFu, 0, PD_A, NULL) == NF_REFUSE_BAD_MTT,
          "top: 4 GiB MR with FBO 0xFFF: last page beyond the MTT -> BAD_MTT (no wrap)");
}

static void test_translation_pages(void)
{
    fresh();
    setup_e3(0, NF_MPT_KIND_NORMAL);
    uint32_t tok = token_of(E3, E3_KEY);
    int all = 1;
    /* Every byte offset around each page boundary, and a sweep. */
    for (uint64_t off = 0; off < E3_LEN; off += (off % 97) + 1) {
        uint32_t addr = 0;
        if (chk(tok, E3_BASE + off, 1, 0, PD_A, &addr) != NF_REFUSE_OK || addr != e3_addr(off))
            all = 0;
    }
    for (uint32_t pg = 1; pg < 4; pg++) {
        uint64_t boundary = (uint64_t)pg * PAGE - E3_FBO;
        for (uint64_t off = boundary - 2; off < boundary + 2; off++) {
            uint32_t addr = 0;
            if (chk(tok, E3_BASE + off, 3, 0, PD_A, &addr) != NF_REFUSE_OK || addr != e3_addr(off))
                all = 0;
        }
    }
    CHECK(all, "translation: non-contiguous pages with FBO 0x345, every page boundary");
}

static void test_dma(void)
{
    fresh();
    uint32_t all = NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK;
    setup_e3(all, NF_MPT_KIND_NORMAL);
    /* Entry 8: destination over MTT[40..42] = pages 2, 40, 9 with FBO 0xFF1. */
    const uint32_t d_pages[3] = {2, 40, 9};
    for (uint32_t i = 0; i < 3; i++)
        mtt_write(40 + i, USER_BASE / PAGE + d_pages[i]);
    const uint64_t d_base = 0x500000000ull;
    const uint32_t d_fbo = 0xFF1, d_len = 2 * PAGE + 5;
    mpt_write(8, w0_of(NF_MPT_STATE_VALID, 0, all, 0x88), PD_B, d_fbo, d_base, d_len, 40, 3);
    fill_pattern(12345);
    uint8_t *ref = malloc(MEM_BYTES);
    if (!ref)
        exit(1);
    memcpy(ref, nfm_mem(e), MEM_BYTES);

    /* 6001 bytes from E3 offset 0x777 (odd, crosses two source pages) to entry 8 offset
     * 3 (crosses two destination pages; FBO makes chunk boundaries differ per side). */
    const uint32_t len = 6001, s_off = 0x777, d_off = 3;
    struct side s = {NF_DMA_MODE_TOKEN, NF_ACCESS_REMOTE_READ, token_of(E3, E3_KEY), PD_A, E3_BASE + s_off};
    struct side d = {NF_DMA_MODE_TOKEN, NF_ACCESS_LOCAL_WRITE, token_of(8, 0x88), PD_B, d_base + d_off};
    uint32_t st = dma(&s, &d, len);
    for (uint32_t i = 0; i < len; i++) {
        uint64_t dp = d_fbo + d_off + i;
        ref[USER_BASE + d_pages[dp / PAGE] * PAGE + dp % PAGE] = ref[e3_addr(s_off + i)];
    }
    CHECK(st == 0 && r(NF_ENGINE_DMA_BYTES) == len && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: token to token, odd alignments, crossing pages on both sides, byte-exact, nothing else touched");

    /* Refusals move nothing, and say which side. */
    memcpy(ref, nfm_mem(e), MEM_BYTES);
    struct side bad_s = s;
    bad_s.pd = PD_B;
    st = dma(&bad_s, &d, 10);
    CHECK(code_of(st) == NF_REFUSE_WRONG_PD && NF_STATUS_WORD_SIDE_GET(st) == 0 &&
              r(NF_ENGINE_DMA_BYTES) == 0 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: source refused (WRONG_PD) -> SIDE 0, nothing written");
    struct side bad_d = d;
    st = dma(&s, &bad_d, d_len - d_off + 1);
    CHECK(code_of(st) == NF_REFUSE_OUT_OF_BOUNDS && NF_STATUS_WORD_SIDE_GET(st) == 1 &&
              r(NF_ENGINE_DMA_BYTES) == 0 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: destination one byte too long -> OUT_OF_BOUNDS SIDE 1, nothing written");
    bad_d.access = NF_ACCESS_REMOTE_WRITE;
    mpt_write(8, w0_of(NF_MPT_STATE_VALID, 0, NF_MPT_W0_LOCAL_WRITE_MASK, 0x88), PD_B, d_fbo, d_base, d_len, 40, 3);
    st = dma(&s, &bad_d, 8);
    CHECK(code_of(st) == NF_REFUSE_NO_RIGHT && NF_STATUS_WORD_SIDE_GET(st) == 1 &&
              memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: destination without the right -> NO_RIGHT SIDE 1, nothing written");
    mpt_write(8, w0_of(NF_MPT_STATE_VALID, 0, all, 0x88), PD_B, d_fbo, d_base, d_len, 40, 3);
    st = dma(&bad_s, &bad_d, 8);
    CHECK(code_of(st) == NF_REFUSE_WRONG_PD && NF_STATUS_WORD_SIDE_GET(st) == 0,
          "dma: both sides bad -> the source is reported");
    st = dma(&s, &d, 0);
    CHECK(st == 0 && r(NF_ENGINE_DMA_BYTES) == 0 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: length 0 granted, nothing moves");
    st = dma(&bad_s, &d, 0);
    CHECK(code_of(st) == NF_REFUSE_WRONG_PD, "dma: length 0 still runs the checks");
    struct side bad_mode = s;
    bad_mode.mode = 3;
    st = dma(&s, &bad_mode, 4);
    CHECK(code_of(st) == NF_REFUSE_BAD_COMMAND && NF_STATUS_WORD_SIDE_GET(st) == 1 &&
              memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: destination mode 3 -> BAD_COMMAND SIDE 1");

    /* LOGICAL and SYSTEM. */
    struct side lg = {NF_DMA_MODE_LOGICAL, 0, 0, 0, USER_BASE};
    struct side sy = {NF_DMA_MODE_SYSTEM, 0, 0, 0, 0x10};
    st = dma(&sy, &lg, 0x2345);
    memmove(ref + USER_BASE, ref + 0x10, 0x2345);
    CHECK(st == 0 && r(NF_ENGINE_DMA_BYTES) == 0x2345 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: SYSTEM slot to LOGICAL user region");
    struct side lg_low = {NF_DMA_MODE_LOGICAL, 0, 0, 0, USER_BASE - 4};
    st = dma(&sy, &lg_low, 4);
    CHECK(code_of(st) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st) == 1 &&
              memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: LOGICAL below USER_BASE -> BAD_ADDRESS");
    struct side lg_end = {NF_DMA_MODE_LOGICAL, 0, 0, 0, MEM_BYTES - 4};
    st = dma(&sy, &lg_end, 5);
    CHECK(code_of(st) == NF_REFUSE_BAD_ADDRESS && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: LOGICAL past MEM_BYTES -> BAD_ADDRESS");
    st = dma(&sy, &lg_end, 4);
    memmove(ref + MEM_BYTES - 4, ref + 0x10, 4);
    CHECK(st == 0 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0, "dma: LOGICAL last 4 bytes granted");
    struct side lg_hi = {NF_DMA_MODE_LOGICAL, 0, 0, 0, (1ull << 32) | USER_BASE};
    CHECK(code_of(dma(&lg_hi, &lg, 1)) == NF_REFUSE_BAD_ADDRESS, "dma: address high word nonzero -> BAD_ADDRESS");
    struct side sy_end = {NF_DMA_MODE_SYSTEM, 0, 0, 0, MEM_BYTES};
    CHECK(dma(&sy_end, &lg, 0) == 0 && code_of(dma(&sy_end, &lg, 1)) == NF_REFUSE_BAD_ADDRESS,
          "dma: SYSTEM at MEM_BYTES: length 0 granted, 1 refused");
    struct side sy_huge = {NF_DMA_MODE_SYSTEM, 0, 0, 0, 0xFFFFFFFFu};
    CHECK(code_of(dma(&sy_huge, &lg, 0xFFFFFFFFu)) == NF_REFUSE_BAD_ADDRESS && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: SYSTEM address and length near 2^32 -> BAD_ADDRESS (no wrap)");
    /* Overlap inside one page: behaves as a move. */
    struct side ov_s = {NF_DMA_MODE_SYSTEM, 0, 0, 0, USER_BASE + 0x100};
    struct side ov_d = {NF_DMA_MODE_SYSTEM, 0, 0, 0, USER_BASE + 0x103};
    st = dma(&ov_s, &ov_d, 0x200);
    memmove(ref + USER_BASE + 0x103, ref + USER_BASE + 0x100, 0x200);
    CHECK(st == 0 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0, "dma: overlapping range inside one page acts as a move");
    /* MTT_WRITE takes a page outside adapter memory; a DMA reaching it is refused
     * BAD_ADDRESS (that side) before that chunk moves; earlier chunks stay written. */
    mtt_write(60, MEM_BYTES / PAGE + 3);
    mtt_write(61, USER_BASE / PAGE + 45);
    mtt_write(62, MEM_BYTES / PAGE);
    mpt_write(9, w0_of(NF_MPT_STATE_VALID, 0, all, 0x99), PD_A, 0, 0x9000, 3 * PAGE, 60, 3);
    struct side out = {NF_DMA_MODE_TOKEN, NF_ACCESS_LOCAL_WRITE, token_of(9, 0x99), PD_A, 0x9000};
    struct side sys0 = {NF_DMA_MODE_SYSTEM, 0, 0, 0, 0x40};
    memcpy(ref, nfm_mem(e), MEM_BYTES);
    st = dma(&sys0, &out, 16);
    CHECK(code_of(st) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st) == 1 && r(NF_ENGINE_DMA_BYTES) == 0 &&
              memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: destination page outside memory (MTT_WRITE) -> BAD_ADDRESS SIDE 1, nothing moved");
    st = dma(&out, &sys0, 16);
    CHECK(code_of(st) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st) == 0 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: source page outside memory -> BAD_ADDRESS SIDE 0");
    out.addr = 0x9000 + PAGE + PAGE - 8;
    st = dma(&sys0, &out, 16);
    memmove(ref + USER_BASE + 45 * PAGE + PAGE - 8, ref + 0x40, 8);
    CHECK(code_of(st) == NF_REFUSE_BAD_ADDRESS && NF_STATUS_WORD_SIDE_GET(st) == 1 && r(NF_ENGINE_DMA_BYTES) == 8 &&
              memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: page at MEM_BYTES in the second chunk -> BAD_ADDRESS after the first chunk's 8 bytes");
    /* DMA_CTRL values other than 1 start nothing. */
    w(NF_ENGINE_DMA_CTRL, 3);
    CHECK(r(NF_ENGINE_DMA_STATUS) == st && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0,
          "dma: DMA_CTRL = 3 starts nothing");
    free(ref);
}

/* Every source and destination alignment within a 64-bit word, lengths that end
 * before, at and after page boundaries, TOKEN (FBO 0x345, scattered pages) on one
 * side and LOGICAL on the other, both directions: byte-exact against a byte loop. */
static void test_dma_alignment_sweep(void)
{
    fresh();
    uint32_t all = NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK;
    setup_e3(all, NF_MPT_KIND_NORMAL);
    fill_pattern(4242);
    uint8_t *ref = malloc(MEM_BYTES);
    if (!ref)
        exit(1);
    memcpy(ref, nfm_mem(e), MEM_BYTES);
    static const uint32_t lens[] = {1, 2, 7, 8, 9, 15, 17, 0x0CBB - 3, 0x0CBB, 0x0CBB + 1, PAGE, PAGE + 9, 2 * PAGE + 1};
    const uint32_t logical = USER_BASE + 40 * PAGE; /* away from E3's pages */
    int ok = 1, cases = 0;
    for (uint32_t dir = 0; dir < 2; dir++)
        for (uint32_t so = 0; so < 8; so++)
            for (uint32_t dof = 0; dof < 8; dof++)
                for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
                    uint32_t len = lens[li];
                    uint64_t t_off = so + (uint64_t)(PAGE - E3_FBO) - 16; /* near E3's first page end */
                    uint32_t l_addr = logical + PAGE - 16 + dof;        /* crosses a page too */
                    struct side tok = {NF_DMA_MODE_TOKEN, dir ? NF_ACCESS_LOCAL_WRITE : NF_ACCESS_REMOTE_READ,
                                       token_of(E3, E3_KEY), PD_A, E3_BASE + t_off};
                    struct side lg = {NF_DMA_MODE_LOGICAL, 0, 0, 0, l_addr};
                    uint32_t st = dir ? dma(&lg, &tok, len) : dma(&tok, &lg, len);
                    for (uint32_t i = 0; i < len; i++) {
                        if (dir)
                            ref[e3_addr(t_off + i)] = ref[l_addr + i];
                        else
                            ref[l_addr + i] = ref[e3_addr(t_off + i)];
                    }
                    if (st != 0 || r(NF_ENGINE_DMA_BYTES) != len || memcmp(ref, nfm_mem(e), MEM_BYTES) != 0)
                        ok = 0;
                    cases++;
                }
    CHECK(ok, "dma: %d alignment/length combinations, token<->logical both ways, byte-exact", cases);
    free(ref);
}

struct stop_ctx {
    uint32_t at_bytes, index, calls;
    uint32_t last_src, last_dst, last_len;
};

static void stop_hook(struct nfm_engine *x, uint32_t src_addr, uint32_t dst_addr, uint32_t len,
                      uint32_t bytes_done, void *ctx)
{
    struct stop_ctx *c = ctx;
    c->calls++;
    c->last_src = src_addr;
    c->last_dst = dst_addr;
    c->last_len = len;
    if (bytes_done >= c->at_bytes && c->index != 0xFFFFFFFFu) {
        nfm_csr_write(x, NF_ENGINE_TBL_INDEX, c->index);
        nfm_csr_write(x, NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_INVALIDATE);
        nfm_csr_write(x, NF_ENGINE_DMA_CTRL, 1); /* must be ignored inside a DMA */
        c->index = 0xFFFFFFFFu;
    }
}

/* A DMA from SYSTEM address src into d, which starts at byte off of E3 (directly or
 * through a window over it), with E3 invalidated after the first chunk: 1 when it
 * stopped there (STOPPED, SIDE 1, DMA_BYTES = that chunk) and only that chunk moved. */
static int dma_stopped_after_first_chunk(const struct side *d, uint32_t src, uint32_t off, uint32_t len,
                                         uint32_t seed)
{
    fill_pattern(seed);
    uint8_t *ref = malloc(MEM_BYTES);
    if (!ref)
        exit(1);
    memcpy(ref, nfm_mem(e), MEM_BYTES);
    struct stop_ctx ctx = {1, E3, 0, 0, 0, 0};
    nfm_set_chunk_hook(e, stop_hook, &ctx);
    struct side s = {NF_DMA_MODE_SYSTEM, 0, 0, 0, src};
    uint32_t st = dma(&s, d, len);
    uint32_t first = PAGE - (E3_FBO + off) % PAGE;
    memmove(ref + e3_addr(off), ref + src, first);
    int ok = code_of(st) == NF_REFUSE_STOPPED && NF_STATUS_WORD_SIDE_GET(st) == 1 &&
             r(NF_ENGINE_DMA_BYTES) == first && ctx.calls == 1 && memcmp(ref, nfm_mem(e), MEM_BYTES) == 0 &&
             ctx.last_src == src && ctx.last_dst == e3_addr(off) && ctx.last_len == first;
    nfm_set_chunk_hook(e, NULL, NULL);
    free(ref);
    return ok;
}

static void test_dma_stopped(void)
{
    fresh();
    setup_e3(NF_MPT_W0_LOCAL_WRITE_MASK, NF_MPT_KIND_NORMAL);
    /* Destination E3 from offset 0 (page offset FBO 0x345): first chunk = PAGE - 0x345
     * bytes, then the entry dies. */
    struct side d = {NF_DMA_MODE_TOKEN, NF_ACCESS_LOCAL_WRITE, token_of(E3, E3_KEY), PD_A, E3_BASE};
    CHECK(dma_stopped_after_first_chunk(&d, 0x20, 0, 3 * PAGE, 777),
          "dma: entry invalidated after the first chunk -> STOPPED, DMA_BYTES = bytes written before");
}

/* A window over E3: [E3_BASE + WIN_OFF, + WIN_LEN), which starts in E3's second page
 * and ends in its fourth. MTT_BASE and FBO are the parent's advanced to the window's
 * first byte, as the firmware computes them. */
#define WIN 5u
#define WIN_KEY 0x55u
#define WIN_OFF (PAGE - E3_FBO + 0x123u)
#define WIN_LEN (2u * PAGE)
#define WIN_RIGHTS (NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK)

static uint32_t setup_window(uint32_t state, uint32_t rights)
{
    uint32_t pos = E3_FBO + WIN_OFF;
    uint32_t first = pos / PAGE, last = (pos + WIN_LEN - 1u) / PAGE;
    return mpt_write_p(WIN, w0_of(state, NF_MPT_KIND_WINDOW, rights, WIN_KEY), PD_A, pos % PAGE,
                       E3_BASE + WIN_OFF, WIN_LEN, E3_MTT + first, last - first + 1u, E3);
}

static void test_window(void)
{
    fresh();
    uint32_t all = NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_READ_MASK | NF_MPT_W0_REMOTE_WRITE_MASK;
    setup_e3(all, NF_MPT_KIND_NORMAL);
    setup_window(NF_MPT_STATE_VALID, NF_MPT_W0_REMOTE_READ_MASK);
    uint32_t tok = token_of(WIN, WIN_KEY);
    uint64_t wb = E3_BASE + WIN_OFF;
    uint32_t addr = 1;
    CHECK(chk(tok, wb, 16, NF_ACCESS_REMOTE_READ, PD_A, &addr) == NF_REFUSE_OK && addr == e3_addr(WIN_OFF),
          "window: remote read at its base translates into the parent's pages");
    CHECK(chk(tok, wb + WIN_LEN - 8u, 8, NF_ACCESS_REMOTE_READ, PD_A, &addr) == NF_REFUSE_OK &&
              addr == e3_addr(WIN_OFF + WIN_LEN - 8u),
          "window: remote read of its last bytes (another page) translates");
    CHECK(chk(tok, wb, WIN_LEN, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OK,
          "window: its whole length is granted");
    CHECK(chk(tok, wb, 16, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_NO_RIGHT,
          "window: a right the window lacks (the parent has it) -> NO_RIGHT");
    CHECK(chk(tok, wb, 16, NF_ACCESS_LOCAL_READ, PD_A, NULL) == NF_REFUSE_NO_RIGHT &&
              chk(tok, wb, 16, NF_ACCESS_LOCAL_WRITE, PD_A, NULL) == NF_REFUSE_NO_RIGHT,
          "window: local read and local write through a window -> NO_RIGHT");
    CHECK(chk(tok, wb - 1u, 2, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS &&
              chk(tok, E3_BASE, 1, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "window: below the window (inside the parent) -> OUT_OF_BOUNDS");
    CHECK(chk(tok, wb + WIN_LEN, 1, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "window: above the window (inside the parent) -> OUT_OF_BOUNDS");
    CHECK(chk(tok, wb + WIN_LEN - 4u, 8, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OUT_OF_BOUNDS,
          "window: straddling its end -> OUT_OF_BOUNDS");
    CHECK(chk(tok, wb, 16, NF_ACCESS_REMOTE_READ, PD_B, NULL) == NF_REFUSE_WRONG_PD,
          "window: other PD -> WRONG_PD");
    CHECK(invalidate(WIN) == NF_REFUSE_OK &&
              chk(tok, wb, 16, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NOT_VALID &&
              chk(token_of(E3, E3_KEY), E3_BASE, 16, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OK,
          "window: invalidated -> NOT_VALID, its parent still grants");
    setup_window(NF_MPT_STATE_VALID, NF_MPT_W0_REMOTE_READ_MASK);
    CHECK(invalidate(E3) == NF_REFUSE_OK &&
              chk(tok, wb, 16, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NOT_VALID,
          "window: parent invalidated -> NOT_VALID through the (VALID) window");
    /* Only the parent's current state counts (firmware invalidates a parent's windows
     * with it): the parent made VALID again revives the window. */
    setup_e3(all, NF_MPT_KIND_NORMAL);
    CHECK(chk(tok, wb, 16, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_OK,
          "window: parent VALID again -> the window grants (the parent's state alone counts)");
    mpt_write_p(WIN, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_WINDOW, WIN_RIGHTS, WIN_KEY), PD_A, 0,
                wb, 16, E3_MTT, 1, MPT_ENTRIES);
    CHECK(chk(tok, wb, 16, NF_ACCESS_REMOTE_READ, PD_A, NULL) == NF_REFUSE_NOT_VALID,
          "window: parent index outside the table -> NOT_VALID");
    mpt_write_p(WIN, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_WINDOW, WIN_RIGHTS, WIN_KEY), PD_A, 0,
                wb, 16, E3_MTT, 1, 9);
    CHECK(chk(tok, wb, 16, NF_ACCESS_REMOTE_WRITE, PD_A, NULL) == NF_REFUSE_NOT_VALID,
          "window: parent entry FREE -> NOT_VALID");
}

static void test_window_dma_stopped(void)
{
    fresh();
    setup_e3(NF_MPT_W0_LOCAL_WRITE_MASK | NF_MPT_W0_REMOTE_WRITE_MASK, NF_MPT_KIND_NORMAL);
    setup_window(NF_MPT_STATE_VALID, NF_MPT_W0_REMOTE_WRITE_MASK);
    /* Destination: the window from its base; the parent dies after the first chunk. */
    struct side d = {NF_DMA_MODE_TOKEN, NF_ACCESS_REMOTE_WRITE, token_of(WIN, WIN_KEY), PD_A,
                     E3_BASE + WIN_OFF};
    CHECK(dma_stopped_after_first_chunk(&d, 0x40, WIN_OFF, WIN_LEN, 4242),
          "window dma: parent invalidated after the first chunk -> STOPPED, DMA_BYTES = bytes written");
}

static void test_loader(void)
{
    fresh();
    const uint32_t list = 0x808; /* in an RX slot, 8-byte aligned */
    const uint64_t pages[5] = {USER_BASE, MEM_BYTES - PAGE, USER_BASE + 5 * PAGE, USER_BASE + 3 * PAGE, USER_BASE + PAGE};
    for (uint32_t i = 0; i < 5; i++)
        put_le64(list + 8 * i, pages[i]);
    uint32_t st = load(list, 100, 5), v = 0;
    int ok = st == 0;
    for (uint32_t i = 0; i < 5; i++) {
        nfm_mtt_get(e, 100 + i, &v);
        ok &= v == pages[i] / PAGE;
    }
    CHECK(ok, "loader: 5 entries written as address >> 12");

    CHECK(load(list, MTT_ENTRIES - 4, 5) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_MTT),
          "loader: MTT_BASE + COUNT > entries -> BAD_MTT, INDEX 0");
    CHECK(load(list, 0xFFFFFFFFu, 2) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_MTT),
          "loader: MTT_BASE near 2^32 -> BAD_MTT (no wrap)");
    CHECK(load(list, MTT_ENTRIES - 5, 5) == 0, "loader: range ending at the last MTT entry");
    CHECK(load(list + 4, 0, 1) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS), "loader: unaligned list -> BAD_ADDRESS");
    CHECK(load(MEM_BYTES - 8, 0, 2) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS),
          "loader: list past the end of memory -> BAD_ADDRESS");
    CHECK(load(0xFFFFFFF8u, 0, 2) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS),
          "loader: list address near 2^32 -> BAD_ADDRESS (no wrap)");
    CHECK(load(0, 0, 0) == 0, "loader: count 0 succeeds");
    CHECK(load(MEM_BYTES, 0, 0) == 0, "loader: count 0 at the end of memory succeeds");
    CHECK(load(list, MTT_ENTRIES, 0) == 0, "loader: count 0 at MTT_BASE = entries succeeds");
    CHECK(load(list, MTT_ENTRIES - 4, 5) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_MTT) &&
              load(list + 4, MTT_ENTRIES - 4, 5) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_MTT),
          "loader: BAD_MTT before BAD_ADDRESS");

    /* Bad entries: the error names the first bad one, earlier entries are written. */
    const struct {
        uint64_t value;
        const char *what;
    } bad[] = {
        {USER_BASE + 1, "unaligned"},
        {USER_BASE - PAGE, "below USER_BASE"},
        {MEM_BYTES, "at MEM_BYTES"},
        {(1ull << 32) | USER_BASE, "high word nonzero"},
        {0xFFFFFFFFFFFFF000ull, "near 2^64"},
    };
    for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
        for (uint32_t i = 0; i < 4; i++)
            mtt_write(200 + i, 0);
        for (uint32_t i = 0; i < 4; i++)
            put_le64(list + 8 * i, USER_BASE + (i + 1) * PAGE);
        put_le64(list + 8 * 2, bad[b].value);
        st = load(list, 200, 4);
        uint32_t m0 = 1, m1 = 1, m2 = 1, m3 = 1;
        nfm_mtt_get(e, 200, &m0);
        nfm_mtt_get(e, 201, &m1);
        nfm_mtt_get(e, 202, &m2);
        nfm_mtt_get(e, 203, &m3);
        CHECK(st == (NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS) | NF_STATUS_WORD_INDEX_PUT(2)) &&
                  m0 == USER_BASE / PAGE + 1 && m1 == USER_BASE / PAGE + 2 && m2 == 0 && m3 == 0,
              "loader: entry 2 %s -> BAD_ADDRESS INDEX 2, entries 0 and 1 written, 2 and 3 not", bad[b].what);
    }
    put_le64(list, 3);
    CHECK(load(list, 0, 1) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS), "loader: bad entry 0 -> INDEX 0");
    w(NF_ENGINE_LD_CTRL, 2);
    CHECK(r(NF_ENGINE_LD_STATUS) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS), "loader: LD_CTRL = 2 starts nothing");
}

/* MPT_WRITE_LOADED: MPT_WRITE when the last load was not refused; else the load's code
 * and the entry unchanged. */
static void test_write_loaded(void)
{
    fresh();
    const uint32_t list = 0x808, index = 3;
    put_le64(list, USER_BASE);
    put_le64(list + 8, USER_BASE + 1); /* unaligned */
    uint32_t before[NFM_MPT_WORDS], after[NFM_MPT_WORDS];
    nfm_mpt_get(e, index, before);
    CHECK(load(list, 10, 2) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS) + NF_STATUS_WORD_INDEX_PUT(1), "write-loaded: the load refused");
    w(NF_ENGINE_ENT_W0, w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_FAST, 0, 7));
    w(NF_ENGINE_TBL_INDEX, index);
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE_LOADED);
    nfm_mpt_get(e, index, after);
    CHECK(r(NF_ENGINE_TBL_STATUS) == NF_STATUS_WORD_CODE_PUT(NF_REFUSE_BAD_ADDRESS) &&
              memcmp(before, after, sizeof(before)) == 0,
          "write-loaded: after a refused load -> its BAD_ADDRESS, the entry unchanged");
    CHECK(load(list, 10, 1) == 0, "write-loaded: the load ok");
    w(NF_ENGINE_TBL_CMD, NF_TBL_OP_MPT_WRITE_LOADED);
    nfm_mpt_get(e, index, after);
    CHECK(r(NF_ENGINE_TBL_STATUS) == 0 && after[0] == w0_of(NF_MPT_STATE_VALID, NF_MPT_KIND_FAST, 0, 7),
          "write-loaded: after a good load -> written");
}

static void test_sys_port(void)
{
    fresh();
    nfm_sys_write(e, 0x100, 0x11223344u, 0xF);
    nfm_sys_write(e, 0x100, 0xAABBCCDDu, 0x5);
    CHECK(nfm_sys_read(e, 0x100) == 0x11BB33DDu && nfm_mem(e)[0x100] == 0xDD && nfm_mem(e)[0x103] == 0x11,
          "sys: byte lanes by wstrb, little-endian");
    nfm_sys_write(e, 0x203, 0x01020304u, 0xF);
    CHECK(nfm_sys_read(e, 0x200) == 0x01020304u, "sys: low address bits ignored");
    nfm_sys_write(e, MEM_BYTES - 4, 0xCAFEF00Du, 0xF);
    nfm_sys_write(e, MEM_BYTES, 0xFFFFFFFFu, 0xF);
    nfm_sys_write(e, 0xFFFFFFFCu, 0xFFFFFFFFu, 0xF);
    CHECK(nfm_sys_read(e, MEM_BYTES - 4) == 0xCAFEF00Du && nfm_sys_read(e, MEM_BYTES) == 0 &&
              nfm_sys_read(e, 0xFFFFFFFFu) == 0,
          "sys: last word works, outside memory writes dropped and reads 0");
    nfm_sys_write(e, 0x300, 0x12345678u, 0);
    CHECK(nfm_sys_read(e, 0x300) == 0, "sys: wstrb 0 writes nothing");
}

/* Random register traffic: the model must neither crash nor break its invariants
 * (run under ASan/UBSan). */
static void test_fuzz(void)
{
    fresh();
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int ok = 1;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 7;
        x ^= x >> 9;
        uint32_t off = (uint32_t)(x >> 20) % 0x110 * 4u;
        uint32_t v;
        switch ((x >> 8) & 7) {
        case 0: v = (uint32_t)(x >> 32); break;
        case 1: v = (uint32_t)(x >> 40) & 0xFFFF; break;
        case 2: v = 1; break;
        case 3: v = (uint32_t)(x >> 33) % 64u << 8 | (uint32_t)(x >> 50) % 3u; break;
        default: v = (uint32_t)(x >> 36) & 0x3FFFF; break;
        }
        static const uint32_t start[] = {NF_ENGINE_TBL_CMD, NF_ENGINE_LD_CTRL, NF_ENGINE_DMA_CTRL,
                                         NF_ENGINE_CHK_CTRL};
        if ((x & 3) == 0)
            nfm_csr_write(e, start[(x >> 60) & 3], (x >> 58) & 1 ? 1u : (uint32_t)(x >> 61));
        nfm_csr_write(e, off, v);
        if (NF_STATUS_WORD_BUSY_GET(nfm_csr_read(e, off)) && (off == NF_ENGINE_TBL_STATUS ||
            off == NF_ENGINE_LD_STATUS || off == NF_ENGINE_DMA_STATUS || off == NF_ENGINE_CHK_STATUS))
            ok = 0;
        nfm_sys_write(e, (uint32_t)(x >> 16), (uint32_t)x, (uint32_t)(x >> 60));
        (void)nfm_sys_read(e, (uint32_t)(x >> 24));
    }
    CHECK(ok, "fuzz: 200000 random register writes, no crash, BUSY never set");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        prefix = argv[1];
    test_config();
    test_reset_and_registers();
    test_table_ops();
    test_check_refusals();
    test_top_of_address_space();
    test_translation_pages();
    test_dma();
    test_dma_alignment_sweep();
    test_dma_stopped();
    test_window();
    test_window_dma_stopped();
    test_loader();
    test_write_loaded();
    test_sys_port();
    test_fuzz();
    nfm_engine_free(e);
    return tap_done();
}
