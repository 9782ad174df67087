/* SPDX-License-Identifier: Apache-2.0 */
/* What bench_sim.c (the link, requests, CQE counts, TAP lines) and bench_rc.c (RC
 * throughput on one adapter in PHY loopback) share. One link, one thread posting. */
#ifndef BENCH_SIM_H
#define BENCH_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "nf_layout.h"
#include "link/nf_link.h"
#include "transport/nf_transport.h"

#define MAX_MSG NF_LINK_MAX_PAYLOAD

/* A message of op with body (blen bytes) into m, padded to 8; its length. */
size_t build(uint8_t *m, uint16_t op, uint32_t tag, const void *body, size_t blen);
/* One request, waits for its reply; returns the reply status, copies the payload. */
uint32_t request(struct nf_link *l, uint16_t op, const void *body, size_t blen, void *out, size_t out_cap);
int get_info(struct nf_link *l, struct nf_info *info);
uint64_t info_cycle(const struct nf_info *i);
/* Waits until `target` CQEs have arrived in total; 0 when the link died. */
int wait_cqes(uint64_t target);
uint64_t cqe_count(void);
/* CQEs received with a status other than SUCCESS. */
uint64_t cqe_failures(void);
/* hook sees every CQE as it arrives (on the link's thread, under the CQE lock). */
void bench_on_cqe(void (*hook)(const struct nf_cqe *c));
/* The median of v's n entries other than UINT64_MAX (runs that gave no value, sorted
 * last), the upper one of an even count; UINT64_MAX when there are none. Sorts v. */
uint64_t bench_median(uint64_t *v, int n);
/* A TAP line "ok - sim: what" or "not ok - ..."; a failure makes the exit status 1. */
void check(int cond, const char *what);

/* The link over transport t, its messages and CQEs seen by the functions above. */
NTSTATUS bench_link_open(struct nf_transport *t, const struct nf_link_config *cfg, struct nf_link **l,
                         struct nf_info *info);

/* A connected QP and a fast-register MR initialized for max_pages (user_base and
 * max_pages given, qpn and token filled in); 1 when every request succeeded. */
struct setup {
    uint32_t qpn, token, user_base, max_pages;
};
int setup_fastreg(struct nf_link *l, struct setup *s);
/* WR_FAST_REGISTER of npages from user page page0 on s's MR, and WR_INVALIDATE of it. */
size_t fr_msg(uint8_t *m, const struct setup *s, uint32_t wr_id, uint32_t npages, uint32_t page0);
size_t inv_msg(uint8_t *m, const struct setup *s, uint32_t wr_id);

/* bench_link.c: `bench_sim --host-link DEVICE NAME`: host-visible fast-register latency
 * and buffer write/read rate through DEVICE, keys named link_NAME_*. Exit status. */
int bench_link(int argc, char **argv);

/* bench_rc.c: the words after --rc; adds --wire-loopback (and --phy-div N when given) to
 * $NDKFPGA_SIM_ARGS for the nfsim the link starts. 0 on a bad argument (usage printed). */
int bench_rc_sim_args(int argc, char **argv);
/* The RC benchmark on the open link; the number of failed checks. */
int bench_rc(struct nf_link *l, const struct nf_info *info);

#endif
