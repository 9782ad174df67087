/* SPDX-License-Identifier: Apache-2.0 */
/* RC throughput on the Verilator board (`bench_sim --rc`, make bench-rc): one nfsim whose
 * port is in PHY loopback (nfsim --wire-loopback), two of its QPs connected over the wire
 * to the adapter's own IPv4 address (QP_CONNECT_WIRE), so every packet goes through the
 * whole port: the firmware's RC transport, the packet engine, the MAC, the PHY's byte
 * timing and back.
 *
 * Each measure is one batch of work requests posted in ONE link frame (all but the last
 * SILENT_SUCCESS), so they share one arrival stamp: INFO.last_wr_cycles after the last
 * one completes is the batch's clocks from the frame's arrival to the last completion,
 * counted by the firmware (fw_rc.c), the same on every run whatever the host's speed.
 * Batches: RDMA Write, RDMA Read, Send, each of BIG_COUNT messages of BIG_BYTES and of
 * SMALL_COUNT messages of SMALL_BYTES (the firmware's SQ depth: all in flight at once).
 *
 * The data: S (a pattern written by MEM_WRITE) -> Write -> W (a registered MR) -> Read
 * -> R -> Send -> V (the receives). V read back equals S exactly when every transfer
 * moved every byte to its place, so each byte is checked once, at the end; on a
 * mismatch W and R are read too, to name the transfer that broke it.
 *
 * Prints "rc_* = N" lines for bench/report.py and TAP lines. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_sim.h"

#define RC_IP 0x01004D0Au   /* 10.77.0.1, first byte in [7:0] */
#define RC_MASK 0x00FFFFFFu /* 255.255.255.0 */
#define RC_PD 1u
#define PRIV NF_ADAPTER_PRIVILEGED_TOKEN
#define PATH_MTU (128u << NF_NET_MAX_PATH_MTU) /* payload bytes per packet: the connections' path MTU */
#define BIG_BYTES 65536u
#define BIG_COUNT 4u
#define SMALL_BYTES 1024u
#define SMALL_COUNT 16u /* fw_rc_int.h SQ_DEPTH: every request of the batch queued at once */
#define REGION (BIG_COUNT * BIG_BYTES + SMALL_COUNT * SMALL_BYTES)
_Static_assert(REGION % NF_ADAPTER_PAGE_SIZE == 0, "regions are whole pages");
#define MAX_BATCH SMALL_COUNT
/* Wall time the host leaves before each batch, so acks of earlier replies are in and
 * done with, and nothing but the batch is on the board while it runs. */
#define QUIET_MS 30
/* Bytes on the wire per packet besides its payload: preamble and SFD, Ethernet, IPv4,
 * UDP, BTH, ICRC, FCS, and the gap (a middle packet: no RETH or AETH). */
#define WIRE_OVERHEAD (8u + 14u + 20u + 8u + 12u + 4u + 4u + 12u)

static unsigned phy_div = 4; /* nfsim's default clocks per PHY byte */

int bench_rc_sim_args(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[0], "--phy-div") == 0) {
        char *end;
        unsigned long v = strtoul(argv[1], &end, 10);
        if (*end || v < 1 || v > 255) {
            fprintf(stderr, "bench_sim --rc: --phy-div takes 1..255\n");
            return 0;
        }
        phy_div = (unsigned)v;
    } else if (argc != 0) {
        fprintf(stderr, "usage: bench_sim --rc [--phy-div N]\n");
        return 0;
    }
    const char *old = getenv("NDKFPGA_SIM_ARGS");
    char args[512];
    snprintf(args, sizeof(args), "%s%s--wire-loopback --phy-div %u", old ? old : "", old && *old ? " " : "", phy_div);
    setenv("NDKFPGA_SIM_ARGS", args, 1);
    return 1;
}

/* The CQEs of the batch running: failures, and the last one's fields. */
static pthread_mutex_t cq_mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t cq_bad, cq_bad_status, cq_recv_bytes_bad, cq_recv, cq_last_id, cq_want_recv_bytes;

static void on_cqe(const struct nf_cqe *c)
{
    pthread_mutex_lock(&cq_mu);
    if (c->status != STATUS_SUCCESS) {
        cq_bad++;
        cq_bad_status = c->status;
    }
    if (c->op_type == NF_NDK_OP_RECEIVE) {
        cq_recv++;
        cq_recv_bytes_bad += c->bytes != cq_want_recv_bytes;
    } else {
        cq_last_id = c->wr_id;
    }
    pthread_mutex_unlock(&cq_mu);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Word k of the pattern: a mix of k, so a byte moved anywhere else shows. */
static uint32_t pattern(uint32_t k)
{
    k ^= k >> 16;
    k *= 0x7FEB352Du;
    k ^= k >> 15;
    k *= 0x846CA68Bu;
    return k ^ (k >> 16);
}

static void fill(uint8_t *p, uint32_t off, uint32_t n)
{
    for (uint32_t i = 0; i < n; i += 4) {
        uint32_t w = pattern((off + i) / 4u);
        memcpy(p + i, &w, 4);
    }
}

static int mem_write(struct nf_link *l, uint32_t addr, uint32_t n)
{
    static uint8_t body[MAX_MSG];
    const uint32_t chunk = (MAX_MSG - NF_MSG_HDR_SIZE - NF_MEM_WRITE_REQ_SIZE) & ~7u;
    for (uint32_t off = 0; off < n; off += chunk) {
        struct nf_mem_write_req q = {.addr = addr + off, .len = n - off < chunk ? n - off : chunk};
        memcpy(body, &q, sizeof(q));
        fill(body + sizeof(q), off, q.len);
        if (request(l, NF_OP_MEM_WRITE, body, sizeof(q) + q.len, NULL, 0) != STATUS_SUCCESS)
            return 0;
    }
    return 1;
}

/* Adapter memory [addr, addr + n) equals the pattern from offset 0; the first byte that
 * differs in *bad (n when none). 0 when a read failed. */
static int mem_check(struct nf_link *l, uint32_t addr, uint32_t n, uint32_t *bad)
{
    static uint8_t got[MAX_MSG], want[MAX_MSG];
    const uint32_t chunk = (MAX_MSG - NF_MSG_HDR_SIZE) & ~7u;
    *bad = n;
    for (uint32_t off = 0; off < n; off += chunk) {
        struct nf_mem_read_req q = {.addr = addr + off, .len = n - off < chunk ? n - off : chunk};
        if (request(l, NF_OP_MEM_READ, &q, sizeof(q), got, q.len) != STATUS_SUCCESS)
            return 0;
        fill(want, off, q.len);
        for (uint32_t i = 0; i < q.len; i++)
            if (got[i] != want[i]) {
                *bad = off + i;
                return 1;
            }
    }
    return 1;
}

static int get_stats(struct nf_link *l, struct nf_stats *s)
{
    memset(s, 0, sizeof(*s));
    return request(l, NF_OP_STATS, NULL, 0, s, sizeof(*s)) == STATUS_SUCCESS;
}

struct rc_setup {
    uint32_t qa, qb, token;     /* requester QP, responder QP, W's MR */
    uint32_t s, w, r, v;        /* the four regions' adapter addresses */
    struct nf_stats last;       /* the counters after the batch before */
};

/* Frames the port dropped between two STATS: FCS, no room, ICRC. */
static uint32_t port_drops(const struct nf_stats *a, const struct nf_stats *b)
{
    return (b->port_drop_fcs - a->port_drop_fcs) + (b->port_drop_room - a->port_drop_room) +
           (b->port_drop_icrc - a->port_drop_icrc);
}

/* One work request on qpn (op, flags): remote (va, token) for Read and Write, one local
 * SGE (addr, n) by the privileged token. Its message into m; the length. */
static size_t wr_msg(uint8_t *m, uint16_t op, uint32_t qpn, uint32_t wr_id, uint32_t flags, uint64_t va,
                     uint32_t token, uint32_t addr, uint32_t n)
{
    uint8_t body[NF_WR_HDR_SIZE + NF_WR_RDMA_SIZE + NF_SGE_SIZE];
    struct nf_wr_hdr h = {.qpn = qpn, .wr_id = wr_id, .flags = flags};
    struct nf_sge g = {.addr = addr, .len = n, .token = PRIV};
    size_t k = 0;
    memcpy(body, &h, sizeof(h));
    k += sizeof(h);
    if (op == NF_OP_WR_READ || op == NF_OP_WR_WRITE) {
        struct nf_wr_rdma r = {.remote_va = va, .remote_token = token, .nsge = 1};
        memcpy(body + k, &r, sizeof(r));
        k += sizeof(r);
    } else if (op == NF_OP_WR_SEND) {
        struct nf_wr_send s = {.inv_token = 0, .nsge = 1};
        memcpy(body + k, &s, sizeof(s));
        k += sizeof(s);
    } else {
        struct nf_wr_receive v = {.nsge = 1};
        memcpy(body + k, &v, sizeof(v));
        k += sizeof(v);
    }
    memcpy(body + k, &g, sizeof(g));
    return build(m, op, 0, body, k + sizeof(g));
}

/* count requests of op in one link frame: request i moves n bytes from src + i * n to
 * dst + i * n (Read: remote src, local dst; Write: local src, remote dst; Send: local
 * src into the receive at dst). 1 when every message was queued. */
static int post_batch(struct nf_link *l, const struct rc_setup *s, uint16_t op, uint32_t qpn, uint32_t count,
                      uint32_t n, uint32_t src, uint32_t dst, uint32_t wr_id0)
{
    static uint8_t m[MAX_BATCH][64];
    size_t len[MAX_BATCH];
    for (uint32_t i = 0; i < count; i++) {
        uint32_t flags = i + 1 < count && op != NF_OP_WR_RECEIVE ? NF_NDK_OP_FLAG_SILENT_SUCCESS : 0;
        uint32_t local = op == NF_OP_WR_READ || op == NF_OP_WR_RECEIVE ? dst : src;
        uint32_t remote = op == NF_OP_WR_READ ? src : dst;
        len[i] = wr_msg(m[i], op, qpn, wr_id0 + i, flags, remote + (uint64_t)i * n, s->token, local + i * n, n);
    }
    int ok = 1;
    for (uint32_t i = 0; i < count && ok; i++)
        ok = nf_link_send(l, m[i], len[i], i + 1 < count) == STATUS_SUCCESS;
    return ok;
}

static const char *op_name(uint16_t op)
{
    return op == NF_OP_WR_WRITE ? "write" : op == NF_OP_WR_READ ? "read" : "send";
}

/* Runs one batch and prints its rc_OP[_1k]_* lines; 0 on a failure (reported). */
static int batch(struct nf_link *l, struct rc_setup *s, uint16_t op, uint32_t count, uint32_t n, uint32_t src,
                 uint32_t dst, uint32_t wr_id0)
{
    char what[160], key[32];
    const char *name = op_name(op);
    snprintf(key, sizeof(key), "rc_%s%s", name, n == SMALL_BYTES ? "_1k" : "");
    uint32_t recvs = op == NF_OP_WR_SEND ? count : 0;
    pthread_mutex_lock(&cq_mu);
    cq_bad = cq_recv = cq_recv_bytes_bad = 0;
    cq_last_id = 0;
    cq_want_recv_bytes = n;
    pthread_mutex_unlock(&cq_mu);
    uint64_t base = cqe_count();
    nf_link_expect(l, (int)(1 + recvs));
    int ok = 1;
    if (recvs) /* the receives first, in a frame of their own: no CQE until filled */
        ok = post_batch(l, s, NF_OP_WR_RECEIVE, s->qb, count, n, 0, dst, wr_id0 + 1000);
    sleep_ms(QUIET_MS);
    struct nf_link_stats la, lb;
    nf_link_get_stats(l, &la);
    ok = ok && post_batch(l, s, op, s->qa, count, n, src, dst, wr_id0);
    ok = ok && wait_cqes(base + 1 + recvs);
    nf_link_expect(l, -(int)(1 + recvs));
    nf_link_get_stats(l, &lb);
    int one_frame = lb.data_tx == la.data_tx + 1 && lb.msgs_tx == la.msgs_tx + count;
    struct nf_info info;
    struct nf_stats st;
    ok = ok && get_info(l, &info) && get_stats(l, &st);
    pthread_mutex_lock(&cq_mu);
    int cq_ok = cq_bad == 0 && cq_recv == recvs && cq_recv_bytes_bad == 0 && cq_last_id == wr_id0 + count - 1;
    uint32_t bad_status = cq_bad ? cq_bad_status : 0;
    pthread_mutex_unlock(&cq_mu);
    uint32_t retx = ok ? st.rc_retransmits - s->last.rc_retransmits : 0;
    uint32_t drops = ok ? port_drops(&s->last, &st) : 0, frames = ok ? st.port_tx - s->last.port_tx : 0;
    if (ok) {
        printf("# %s port counters: drop fcs %u, room %u, icrc %u; rx_ok %u, tx %u; net_unhandled %u\n", key,
               st.port_drop_fcs - s->last.port_drop_fcs, st.port_drop_room - s->last.port_drop_room,
               st.port_drop_icrc - s->last.port_drop_icrc, st.port_rx_ok - s->last.port_rx_ok, frames,
               st.net_unhandled - s->last.net_unhandled);
        s->last = st;
    }
    ok = ok && cq_ok && one_frame && info.last_wr_op == op;
    snprintf(what, sizeof(what),
             "RC %s: %u x %u bytes posted in %s, every completion SUCCESS%s (status 0x%x), %u retransmissions",
             name, count, n, one_frame ? "one frame" : "MORE THAN ONE FRAME", recvs ? ", every receive filled whole" : "",
             bad_status, retx);
    check(ok && retx == 0, what);
    if (!ok)
        return 0;
    uint32_t pkts = count * ((n + PATH_MTU - 1) / PATH_MTU);
    printf("%s_clocks = %u\n%s_packets = %u\n%s_bytes = %u\n%s_retransmits = %u\n", key, info.last_wr_cycles, key,
           pkts, key, count * n, key, retx);
    printf("%s_firmware_clocks = %u\n%s_port_frames = %u\n%s_port_drops = %u\n", key, info.last_wr_fw_cycles, key,
           frames, key, drops);
    if (n == SMALL_BYTES)
        printf("%s_clocks_per_message = %.1f\n", key, (double)info.last_wr_cycles / count);
    else
        printf("%s_clocks_per_packet = %.1f\n", key, (double)info.last_wr_cycles / pkts);
    fflush(stdout);
    return 1;
}

/* The connection: the address, two QPs, each connected to the other at the adapter's own
 * address; the MR over W. 0 on a failure (said). */
static int setup(struct nf_link *l, const struct nf_info *info, struct rc_setup *s)
{
    struct nf_net_config_req nc = {.flags = NF_NET_CONFIG_FLAG_ADDR, .ipv4 = RC_IP, .netmask = RC_MASK};
    uint32_t rep[4] = {0};
    int ok = request(l, NF_OP_NET_CONFIG, &nc, sizeof(nc), rep, sizeof(rep)) == STATUS_SUCCESS && rep[0] == RC_IP;
    check(ok, "NET_CONFIG: the port has its address");
    struct nf_qp_create_req qc = {.pd = RC_PD, .sq_depth = SMALL_COUNT, .rq_depth = SMALL_COUNT, .max_recv_sge = 1};
    uint32_t q[2] = {0};
    ok = ok && request(l, NF_OP_QP_CREATE, &qc, sizeof(qc), q, sizeof(q)) == STATUS_SUCCESS;
    s->qa = q[0];
    ok = ok && request(l, NF_OP_QP_CREATE, &qc, sizeof(qc), q, sizeof(q)) == STATUS_SUCCESS;
    s->qb = q[0];
    /* the adapter's own address resolves to its own MAC at once: SUCCESS, never PENDING */
    struct nf_qp_connect_wire_req ca = {.qpn = s->qa, .peer_qpn = s->qb, .peer_ip = RC_IP, .sq_psn = 0xFFFFF8,
                                        .rq_psn = 0x000100, .mtu = NF_NET_MAX_PATH_MTU};
    struct nf_qp_connect_wire_req cb = {.qpn = s->qb, .peer_qpn = s->qa, .peer_ip = RC_IP, .sq_psn = 0x000100,
                                        .rq_psn = 0xFFFFF8, .mtu = NF_NET_MAX_PATH_MTU};
    uint32_t sa = ok ? request(l, NF_OP_QP_CONNECT_WIRE, &ca, sizeof(ca), NULL, 0) : 1u;
    uint32_t sb = ok ? request(l, NF_OP_QP_CONNECT_WIRE, &cb, sizeof(cb), NULL, 0) : 1u;
    char what[128];
    snprintf(what, sizeof(what), "two QPs connected over the wire to the adapter's own address (0x%x, 0x%x)", sa, sb);
    ok = ok && sa == STATUS_SUCCESS && sb == STATUS_SUCCESS;
    check(ok, what);

    s->s = (info->user_base + NF_ADAPTER_PAGE_SIZE - 1) & ~(NF_ADAPTER_PAGE_SIZE - 1);
    s->w = s->s + REGION;
    s->r = s->w + REGION;
    s->v = s->r + REGION;
    ok = ok && s->v + REGION <= info->mem_bytes;
    uint32_t mc[2] = {RC_PD, 0}, mr[2] = {0};
    ok = ok && request(l, NF_OP_MR_CREATE, mc, sizeof(mc), mr, sizeof(mr)) == STATUS_SUCCESS;
    s->token = mr[0];
    static uint8_t body[NF_MR_REGISTER_REQ_SIZE + 8u * (REGION / NF_ADAPTER_PAGE_SIZE)];
    struct nf_mr_register_req rq = {.token = s->token,
                                    .flags = NF_NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NF_NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                             NF_NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                                    .va = s->w, .length = REGION, .fbo = 0, .npages = REGION / NF_ADAPTER_PAGE_SIZE};
    memcpy(body, &rq, sizeof(rq));
    for (uint32_t i = 0; i < rq.npages; i++) {
        uint64_t a = s->w + (uint64_t)i * NF_ADAPTER_PAGE_SIZE;
        memcpy(body + sizeof(rq) + 8u * i, &a, 8);
    }
    ok = ok && request(l, NF_OP_MR_REGISTER, body, sizeof(body), NULL, 0) == STATUS_SUCCESS;
    ok = ok && mem_write(l, s->s, REGION);
    check(ok, "an MR over the Write target, the source pattern written");
    return ok;
}

int bench_rc(struct nf_link *l, const struct nf_info *info)
{
    struct rc_setup s = {0};
    struct nf_stats st0;
    bench_on_cqe(on_cqe);
    if (!setup(l, info, &s) || !get_stats(l, &st0))
        return 1;
    s.last = st0;
    printf("rc_phy_div = %u\nrc_path_mtu = %u\n", phy_div, PATH_MTU);
    printf("rc_port_clocks_per_packet = %u\n", phy_div * (PATH_MTU + WIRE_OVERHEAD));
    printf("rc_big_count = %u\nrc_big_bytes = %u\nrc_small_count = %u\nrc_small_bytes = %u\n", BIG_COUNT, BIG_BYTES,
           SMALL_COUNT, SMALL_BYTES);
    const uint32_t big = BIG_COUNT * BIG_BYTES;
    static const uint16_t ops[] = {NF_OP_WR_WRITE, NF_OP_WR_READ, NF_OP_WR_SEND};
    int ok = 1;
    for (uint32_t k = 0; k < 3 && ok; k++) {
        uint16_t op = ops[k];
        /* the chain S -> W -> R -> V: each transfer moves what the one before placed */
        uint32_t src = op == NF_OP_WR_WRITE ? s.s : op == NF_OP_WR_READ ? s.w : s.r;
        uint32_t dst = op == NF_OP_WR_WRITE ? s.w : op == NF_OP_WR_READ ? s.r : s.v;
        ok = batch(l, &s, op, BIG_COUNT, BIG_BYTES, src, dst, 100 * (k + 1)) &&
             batch(l, &s, op, SMALL_COUNT, SMALL_BYTES, src + big, dst + big, 100 * (k + 1) + 50);
    }
    uint32_t bad = 0;
    int read_ok = ok && mem_check(l, s.v, REGION, &bad);
    char what[200];
    if (read_ok && bad != REGION) {
        uint32_t bw = 0, br = 0;
        (void)(mem_check(l, s.w, REGION, &bw) && mem_check(l, s.r, REGION, &br));
        snprintf(what, sizeof(what), "the received bytes differ from the source at offset %u (Write's target first "
                 "differs at %u, Read's at %u; %u: none)", bad, bw, br, REGION);
    } else {
        snprintf(what, sizeof(what), "every byte moved (%u by each transfer) read back once and equal to the source",
                 REGION);
    }
    check(read_ok && bad == REGION, what);
    struct nf_stats st1;
    ok = ok && read_ok && bad == REGION && get_stats(l, &st1);
    if (ok) {
        printf("rc_retransmits = %u\n", st1.rc_retransmits - st0.rc_retransmits);
        printf("rc_port_drops = %u\n", port_drops(&st0, &st1));
        printf("rc_port_frames = %u\n", st1.port_tx - st0.port_tx);
    }
    bench_on_cqe(NULL);
    return ok ? 0 : 1;
}
