/* SPDX-License-Identifier: Apache-2.0 */
/* What the firmware unit tests share (fw_test.c): requests sent through the test bench,
 * snapshots of the tables and memory, and the test cases main runs. */
#ifndef FW_TEST_H
#define FW_TEST_H

#include "tb.h"

#define OK(cond, ...) tb_ok((cond), __VA_ARGS__)
#define NO_REPLY 0xFFFFFFFFu
#define PAGE NF_ADAPTER_PAGE_SIZE
#define PD_A 7u
#define PD_B 9u

/* Everything a refused request must leave alone. */
struct snap {
    uint32_t *mpt, *mtt;
    uint8_t *mem;
    uint32_t nmpt, nmtt, mem_bytes;
};
void snap_take(struct snap *s);
void snap_free(struct snap *s);
/* Tables equal, and the user region equal (link slots change with every frame). */
int snap_same(const struct snap *a, const struct snap *b);

uint32_t user_base(void);
/* Requests, each in its own frame: the reply status (a token or qpn: 0 on failure). */
uint32_t mr_create(uint32_t pd, uint32_t fast);
uint32_t token_op(uint16_t op, uint32_t token);
/* MW_CREATE: the window's token, or 0 with the status in *st (st may be NULL). */
uint32_t mw_create(uint32_t pd, uint32_t *st);
uint32_t frmr_init(uint32_t token, uint32_t npages, uint32_t remote);
uint32_t qp_create(uint32_t pd);
uint32_t qp_connect(uint32_t qpn, uint32_t peer);
uint32_t qp_op(uint16_t op, uint32_t qpn);
uint32_t mem_write(uint32_t addr, const void *data, uint32_t len);
uint32_t mem_read(uint32_t addr, void *data, uint32_t len);
uint32_t mr_register(uint32_t token, uint32_t flags, uint64_t va, uint64_t length, uint32_t fbo,
                     const uint64_t *pages, uint32_t npages);
int info_get(struct nf_info *info);
int stats_get(struct nf_stats *st);
/* Work requests, each in its own frame: the CQE status, NO_REPLY when no CQE came
 * (silent success), NO_REPLY - 1 for a CQE naming another request. */
uint32_t fast_register(uint32_t qpn, uint32_t flags, uint32_t token, const uint64_t *pages, uint32_t npages,
                       uint32_t fbo, uint64_t length, uint64_t va, struct nf_cqe *out);
uint32_t invalidate(uint32_t qpn, uint32_t flags, uint32_t token);
uint32_t bind(uint32_t qpn, uint32_t flags, uint32_t mr, uint32_t mw, uint64_t va, uint64_t length);
uint32_t rdma(uint16_t op, uint32_t qpn, uint32_t flags, uint64_t remote_va, uint32_t remote_token,
              const struct nf_sge *sges, uint32_t nsge, struct nf_cqe *out);
/* Append a work request (header + body + optional page list) to buf. */
void put_wr(uint8_t *buf, size_t *len, uint16_t op, uint32_t qpn, uint32_t wr_id, uint32_t flags,
            const void *body, size_t blen, const uint64_t *pages, uint32_t npages);
void mpt_get(uint32_t token, uint32_t w[NFM_MPT_WORDS]);
uint32_t mpt_state(uint32_t token);
/* Page addresses in the user region, by page number. */
uint64_t page_at(uint32_t page_number);
void pages_at(uint64_t *pages, uint32_t n, const uint32_t *page_numbers);

/* A fresh adapter with connected QPs and fast-register MRs for work-request tests. */
struct wr_env {
    uint32_t qp, peer, qp_unconnected, fast, fast_local, normal, fast_other_pd;
};
void wr_env(struct wr_env *e);
uint32_t qp_state(uint32_t qpn);
/* An error completion breaks the QP (NDK); tests that go on with it after an expected
 * error disconnect and connect it again. */
void qp_reconnect(uint32_t qpn, uint32_t peer);
/* After a work request on qp that must be refused with want (s0: the snapshot taken
 * before it, freed here): the status, nothing changed, the QP broken; a broken e->qp is
 * then connected again. */
int refused_cleanly(const struct wr_env *e, uint32_t qp, uint32_t st, uint32_t want, struct snap *s0);

/* test_fw.c */
void test_reset_handshake(void);
void test_ping_info(void);
void test_malformed(void);
void test_sequence(void);
void test_batching(void);
void test_retransmit(void);
void test_window(void);
void test_tx_full_holds(void);
void test_overflowing_frame(void);
void test_random_traffic(void);
void test_mul64(void);
void test_mem(void);
/* test_fw_mr.c */
void test_mr_lifecycle(void);
void test_token_keys(void);
void test_register(void);
void test_frmr_init(void);
void test_qp(void);
void test_fast_register_rules(void);
void test_invalidate_rules(void);
/* test_fw_wr.c */
void test_error_breaks_qp(void);
void test_rdma(void);
void test_rdma_stopped(void);
void test_engine_timeout(void);
void test_tx_drain_timeout(void);
void test_qp_flush(void);
void test_cqe_exact(void);
void test_timing(void);
void test_adapter_reset(void);
void test_stats(void);
void test_fault(void);
/* test_fw_send.c */
void test_send_receive(void);
void test_send_invalidate(void);
void test_send_errors(void);
void test_receive_rules(void);
void test_recv_pool(void);
/* test_fw_mw.c */
void test_mw_create(void);
void test_bind_rules(void);
void test_bind_entry(void);
void test_mw_invalidate(void);
void test_mw_cascade(void);
/* Grants through a window: need the engine model that knows WINDOW entries. */
void test_mw_grants(void);
/* test_fw_net.c */
void test_net_config(void);
void test_net_arp(void);
void test_net_icmp(void);
void test_net_resolve(void);
void test_net_absent(void);
void test_net_neigh(void);

#endif
