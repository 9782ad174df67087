/* SPDX-License-Identifier: Apache-2.0 */
/* What bench_sim.c (the link, requests, CQE counts, TAP lines) and bench_rc.c (RC
 * throughput on one adapter in PHY loopback) share. One link, one thread posting. */
#ifndef BENCH_SIM_H
#define BENCH_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "nf_layout.h"
#include "link/nf_link.h"

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
/* hook sees every CQE as it arrives (on the link's thread, under the CQE lock). */
void bench_on_cqe(void (*hook)(const struct nf_cqe *c));
/* A TAP line "ok - sim: what" or "not ok - ..."; a failure makes the exit status 1. */
void check(int cond, const char *what);

/* bench_rc.c: the words after --rc; adds --wire-loopback (and --phy-div N when given) to
 * $NDKFPGA_SIM_ARGS for the nfsim the link starts. 0 on a bad argument (usage printed). */
int bench_rc_sim_args(int argc, char **argv);
/* The RC benchmark on the open link; the number of failed checks. */
int bench_rc(struct nf_link *l, const struct nf_info *info);

#endif
