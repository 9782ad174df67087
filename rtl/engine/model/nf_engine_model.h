/* SPDX-License-Identifier: Apache-2.0 */
/* C reference model of nf_engine (rtl/engine/nf_engine.v): key table (MPT), translation
 * table (MTT), key check and translation, page-list loader, DMA, table operations and
 * the adapter memory behind the system port. It follows docs/architecture.md ("Key
 * table, tokens, checks" and "Engine semantics") and must agree with the RTL bit for
 * bit; the differential test (rtl/engine/model/diff/) holds both to that.
 *
 * Every operation completes inside the call that starts it, so a status register
 * never reads BUSY. No input can make the model read or write outside its tables or
 * its memory: bad input is refused with a REFUSE code or ignored, as the RTL does. */
#ifndef NF_ENGINE_MODEL_H
#define NF_ENGINE_MODEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes of one engine instance (the nf_engine parameters). nfm_engine_new() refuses
 * (returns NULL) a configuration the RTL could not have: mem_bytes a nonzero multiple
 * of the page size, user_base a multiple of the page size and <= mem_bytes,
 * 1 <= mpt_entries <= 2^24 (TOKEN.INDEX), 1 <= mtt_entries <= 2^16 (MPT_W5.MTT_BASE). */
struct nfm_engine_cfg {
    uint32_t mem_bytes, mpt_entries, mtt_entries, user_base;
};

struct nfm_engine;

/* --- the API of docs/architecture.md ("C model API") --- */
struct nfm_engine *nfm_engine_new(const struct nfm_engine_cfg *cfg);
void nfm_engine_free(struct nfm_engine *e);                 /* NULL is fine */
/* The rst input: every register and table entry to its reset value; memory is kept
 * (adapter memory is unspecified after reset, like the block RAM it models). */
void nfm_engine_reset(struct nfm_engine *e);
/* ENGINE registers, offsets NF_ENGINE_*. A write to a read-only register, an unknown
 * or unaligned offset is ignored; such a read returns 0, as do write-only registers. */
void nfm_csr_write(struct nfm_engine *e, uint32_t off, uint32_t value);
uint32_t nfm_csr_read(struct nfm_engine *e, uint32_t off);
/* System port: byte address of a 32-bit word (the low two bits are ignored), byte lane
 * i of value written where wstrb bit i is set. Outside adapter memory: writes are
 * ignored and reads return 0. */
void nfm_sys_write(struct nfm_engine *e, uint32_t addr, uint32_t value, uint32_t wstrb);
uint32_t nfm_sys_read(struct nfm_engine *e, uint32_t addr);
uint8_t *nfm_mem(struct nfm_engine *e);                     /* cfg.mem_bytes bytes */

/* --- extra helpers (tests, the firmware's host build, nfmodel) --- */

/* Number of MPT_W words of one key-table entry (W0..W6). */
#define NFM_MPT_WORDS 7u

/* The configuration the engine was built with. */
struct nfm_engine_cfg nfm_engine_get_cfg(const struct nfm_engine *e);

/* One key check exactly as CHK_CTRL runs it, without touching any register: returns
 * the REFUSE code; *addr (may be NULL) receives the adapter address of the first byte
 * when granted (0 for a zero-length grant and on refusal). */
uint32_t nfm_check(const struct nfm_engine *e, uint32_t token, uint64_t va, uint32_t len,
                   uint32_t access, uint32_t pd, uint32_t *addr);

/* Direct table access for tests: copy out (returns 0) or 0 on a bad index (returns -1,
 * words zeroed). */
int nfm_mpt_get(const struct nfm_engine *e, uint32_t index, uint32_t w[NFM_MPT_WORDS]);
int nfm_mtt_get(const struct nfm_engine *e, uint32_t index, uint32_t *page);

/* Called after every DMA chunk has been written: len bytes from adapter address
 * src_addr to dst_addr, bytes_done = bytes written so far (this chunk included). It
 * may change the tables through nfm_csr_write (e.g. invalidate an entry) to model an
 * operation racing the transfer; the next chunk's fresh check then sees it. A
 * DMA_CTRL write inside it is ignored. NULL removes the hook. */
typedef void (*nfm_chunk_hook)(struct nfm_engine *e, uint32_t src_addr, uint32_t dst_addr,
                               uint32_t len, uint32_t bytes_done, void *ctx);
void nfm_set_chunk_hook(struct nfm_engine *e, nfm_chunk_hook hook, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
