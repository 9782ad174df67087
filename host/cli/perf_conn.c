/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga's perftest-style commands: one end of a test through NDKPI only. The adapter,
 * a CQ, a PD, one QP and a buffer of adapter memory registered for remote read and
 * write; the server listens and accepts one client, the client connects; the private
 * data of the connect and the accept carry each side's buffer (address, remote token,
 * length) and what the client asks for (perf.h). */
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "perf.h"

/* ---- private data: little-endian fields at fixed offsets, whatever the host ---- */

static void put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *b, uint64_t v)
{
    put32(b, (uint32_t)v);
    put32(b + 4, (uint32_t)(v >> 32));
}
static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static uint64_t get64(const uint8_t *b)
{
    return get32(b) | (uint64_t)get32(b + 4) << 32;
}

void perf_hello_put(uint8_t *b, const struct perf_hello *h)
{
    put32(b, PERF_MAGIC);
    put32(b + 4, PERF_VERSION);
    put32(b + 8, h->op);
    put32(b + 12, h->bw);
    put32(b + 16, h->iters);
    put32(b + 20, h->depth);
    put32(b + 24, h->min_size);
    put32(b + 28, h->max_size);
    put64(b + 32, h->addr);
    put32(b + 40, h->token);
    /* h->len is implied: the client's buffer holds max_size */
}
_Static_assert(PERF_HELLO_BYTES == 44u, "perf_hello_put writes 44 bytes");

int perf_hello_get(const uint8_t *b, ULONG len, struct perf_hello *h)
{
    if (len < PERF_HELLO_BYTES || get32(b) != PERF_MAGIC || get32(b + 4) != PERF_VERSION)
        return -1;
    h->op = get32(b + 8);
    h->bw = get32(b + 12);
    h->iters = get32(b + 16);
    h->depth = get32(b + 20);
    h->min_size = get32(b + 24);
    h->max_size = get32(b + 28);
    h->addr = get64(b + 32);
    h->token = get32(b + 40);
    h->len = h->max_size;
    return 0;
}

void perf_answer_put(uint8_t *b, const struct perf_answer *a)
{
    put32(b, PERF_MAGIC);
    put32(b + 4, a->status);
    put32(b + 8, a->max_size);
    put64(b + 12, a->addr);
    put32(b + 20, a->token);
    put32(b + 24, a->len);
    put32(b + 28, a->recv_slots);
    put32(b + 32, PERF_VERSION);
}
_Static_assert(PERF_ANSWER_BYTES == 36u, "perf_answer_put writes 36 bytes");

int perf_answer_get(const uint8_t *b, ULONG len, struct perf_answer *a)
{
    if (len < PERF_ANSWER_BYTES || get32(b) != PERF_MAGIC)
        return -1;
    a->status = get32(b + 4);
    a->max_size = get32(b + 8);
    a->addr = get64(b + 12);
    a->token = get32(b + 20);
    a->len = get32(b + 24);
    a->recv_slots = get32(b + 28);
    return 0;
}

/* ---- the end's objects ---- */

static int ok(struct perf_end *e)
{
    return !e->f.call;
}

static int check(struct perf_end *e, const char *what, NTSTATUS st)
{
    return cli_check(&e->f, what, st);
}

void perf_ip_string(const UCHAR ip[4], char out[16])
{
    snprintf(out, 16, "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
}

void perf_init(struct perf_end *e, const struct cli *c, const char *role, NDK_ADAPTER *a, int own)
{
    memset(e, 0, sizeof(*e));
    e->c = c;
    e->role = role;
    e->adapter = a;
    e->own_adapter = own;
    pthread_mutex_init(&e->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the waits' deadlines ignore wall-clock steps */
    pthread_cond_init(&e->cond, &ca);
    pthread_condattr_destroy(&ca);
    ULONG size = sizeof(e->info);
    e->info.Version.Major = NDKFPGA_NDK_VERSION_MAJOR;
    e->info.Version.Minor = NDKFPGA_NDK_VERSION_MINOR;
    check(e, "NdkQueryAdapterInfo", a->Dispatch->NdkQueryAdapterInfo(a, &e->info, &size));
    /* An adapter without a port (or an address) still serves loopback connections. */
    if (NdkFpgaPortAddress(a, 0, &e->port) != STATUS_SUCCESS)
        memset(&e->port, 0, sizeof(e->port));
}

uint32_t perf_size_limit(const struct perf_end *e)
{
    uint64_t most = e->info.MaxTransferLength;
    if (e->info.MaxRegistrationSize < most)
        most = e->info.MaxRegistrationSize;
    uint32_t p = 1;
    while ((uint64_t)p * 2u <= most && p < (1u << 30))
        p *= 2u;
    return p;
}

int perf_resources(struct perf_end *e, ULONG rq, ULONG sq, uint32_t len)
{
    NDK_ADAPTER *a = e->adapter;
    struct cli_completion w;
    if (rq > e->info.MaxReceiveQueueDepth)
        rq = e->info.MaxReceiveQueueDepth;
    if (sq > e->info.MaxInitiatorQueueDepth)
        sq = e->info.MaxInitiatorQueueDepth;
    ULONG cq = rq + sq + 8u;
    if (cq > e->info.MaxCqDepth)
        cq = e->info.MaxCqDepth;
    if (ok(e)) {
        cli_completion_init(&w);
        check(e, "NdkCreateCq",
              cli_created(&w, a->Dispatch->NdkCreateCq(a, cq, NULL, NULL, NULL, cli_on_create_done, &w, &e->cq),
                          (void **)&e->cq));
    }
    if (ok(e)) {
        cli_completion_init(&w);
        check(e, "NdkCreatePd",
              cli_created(&w, a->Dispatch->NdkCreatePd(a, cli_on_create_done, &w, &e->pd), (void **)&e->pd));
    }
    if (ok(e)) {
        cli_completion_init(&w);
        check(e, "NdkCreateQp",
              cli_created(&w,
                          e->pd->Dispatch->NdkCreateQp(e->pd, e->cq, e->cq, e, rq, sq, 1, 1, 0, cli_on_create_done,
                                                       &w, &e->qp),
                          (void **)&e->qp));
    }
    if (ok(e)) {
        cli_completion_init(&w);
        check(e, "NdkCreateMr",
              cli_created(&w, e->pd->Dispatch->NdkCreateMr(e->pd, FALSE, cli_on_create_done, &w, &e->mr),
                          (void **)&e->mr));
    }
    SIZE_T bytes = ((SIZE_T)len + PAGE_SIZE - 1) & ~(SIZE_T)(PAGE_SIZE - 1);
    if (ok(e) && check(e, "NdkFpgaAllocateBuffer", NdkFpgaAllocateBuffer(a, bytes, &e->buf))) {
        e->buf_len = (uint32_t)bytes; /* whole pages: room for the 8-byte control messages at any -s */
        cli_completion_init(&w);
        /* The peer writes and reads it, and a Read's bytes land in it. */
        NTSTATUS st = e->mr->Dispatch->NdkRegisterMr(e->mr, e->buf, bytes,
                                                     NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ,
                                                     cli_on_request_done, &w);
        if (check(e, "NdkRegisterMr", cli_finish(&w, st, NULL))) {
            e->ltoken = e->mr->Dispatch->NdkGetLocalTokenFromMr(e->mr);
            e->rtoken = e->mr->Dispatch->NdkGetRemoteTokenFromMr(e->mr);
        }
    }
    return ok(e) ? 0 : -1;
}

/* ---- connections ---- */

static VOID on_connect_request(PVOID ctx, NDK_CONNECTOR *connector)
{
    struct perf_end *e = ctx;
    pthread_mutex_lock(&e->lock);
    if (!e->incoming)
        e->incoming = connector; /* one client; a second waits until the listener closes */
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

static VOID on_disconnect(PVOID ctx)
{
    struct perf_end *e = ctx;
    pthread_mutex_lock(&e->lock);
    e->disconnected = 1;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
}

static void sockaddr_of(struct sockaddr_in *s, const UCHAR ip[4], uint16_t port)
{
    memset(s, 0, sizeof(*s));
    s->sin_family = AF_INET;
    s->sin_port = htons(port);
    memcpy(&s->sin_addr.s_addr, ip, 4);
}

int perf_listen(struct perf_end *e, uint16_t port)
{
    NDK_ADAPTER *a = e->adapter;
    struct cli_completion w;
    if (ok(e)) {
        cli_completion_init(&w);
        check(e, "NdkCreateListener",
              cli_created(&w,
                          a->Dispatch->NdkCreateListener(a, on_connect_request, e, cli_on_create_done, &w,
                                                         &e->listener),
                          (void **)&e->listener));
    }
    if (ok(e)) {
        struct sockaddr_in s;
        sockaddr_of(&s, e->port.Ipv4, port);
        cli_completion_init(&w);
        NTSTATUS st = e->listener->Dispatch->NdkListen(e->listener, (PSOCKADDR)&s, sizeof(s), cli_on_request_done, &w);
        if (!check(e, "NdkListen", cli_finish(&w, st, NULL)) && e->f.status == STATUS_SHARING_VIOLATION)
            snprintf(e->failure_detail, sizeof(e->failure_detail), "port %u is in use on this adapter (-p)",
                     (unsigned)port);
    }
    return ok(e) ? 0 : -1;
}

/* What a wait is for: a client's connect request, or the peer's disconnect. */
enum { WAIT_CLIENT, WAIT_DISCONNECT };

static int arrived(const struct perf_end *e, int what)
{
    return what == WAIT_CLIENT ? e->incoming != NULL : e->disconnected;
}

/* Wait on e->cond until what arrived or deadline_us passes; 1 when it arrived. */
static int wait_for(struct perf_end *e, int what, double deadline_us)
{
    struct timespec until;
    double left = deadline_us - cli_now_us();
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (left > 0) {
        until.tv_sec += (time_t)(left / 1e6);
        until.tv_nsec += (long)((left - (double)(time_t)(left / 1e6) * 1e6) * 1e3);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&e->lock);
    int rc = 0;
    while (!arrived(e, what) && rc == 0 && left > 0)
        rc = pthread_cond_timedwait(&e->cond, &e->lock, &until);
    int got = arrived(e, what);
    pthread_mutex_unlock(&e->lock);
    return got;
}

int perf_wait_client(struct perf_end *e, double timeout_s, uint8_t *hello, ULONG *len)
{
    if (!ok(e))
        return -1;
    if (!wait_for(e, WAIT_CLIENT, cli_now_us() + timeout_s * 1e6)) {
        check(e, "waiting for a client", STATUS_IO_TIMEOUT);
        snprintf(e->failure_detail, sizeof(e->failure_detail), "no client connected within %.0f s (--timeout)",
                 timeout_s);
        return -1;
    }
    pthread_mutex_lock(&e->lock);
    e->conn = e->incoming;
    pthread_mutex_unlock(&e->lock);
    ULONG ird = 0, ord = 0;
    check(e, "NdkGetConnectionData", e->conn->Dispatch->NdkGetConnectionData(e->conn, &ird, &ord, hello, len));
    e->ird = ird;
    e->ord = ord;
    return ok(e) ? 0 : -1;
}

int perf_accept(struct perf_end *e, const uint8_t *pdata, ULONG len)
{
    if (!ok(e))
        return -1;
    struct cli_completion w;
    cli_completion_init(&w);
    NTSTATUS st = e->conn->Dispatch->NdkAccept(e->conn, e->qp, e->info.MaxInboundReadLimit,
                                               e->info.MaxOutboundReadLimit, (PVOID)pdata, len, on_disconnect, e,
                                               cli_on_request_done, &w);
    check(e, "NdkAccept", cli_finish(&w, st, NULL));
    return ok(e) ? 0 : -1;
}

void perf_reject(struct perf_end *e, const uint8_t *pdata, ULONG len)
{
    if (e->conn)
        (void)e->conn->Dispatch->NdkReject(e->conn, (PVOID)pdata, len);
}

int perf_connect(struct perf_end *e, const UCHAR ip[4], uint16_t port, const uint8_t *hello, ULONG len,
                 uint8_t *answer, ULONG *answer_len)
{
    NDK_ADAPTER *a = e->adapter;
    struct cli_completion w;
    ULONG room = *answer_len;
    *answer_len = 0;
    if (ok(e)) {
        cli_completion_init(&w);
        check(e, "NdkCreateConnector",
              cli_created(&w, a->Dispatch->NdkCreateConnector(a, cli_on_create_done, &w, &e->conn),
                          (void **)&e->conn));
    }
    if (!ok(e))
        return -1;
    struct sockaddr_in src, dst;
    sockaddr_of(&src, e->port.Ipv4, 0); /* port 0: the provider picks one */
    sockaddr_of(&dst, ip, port);
    cli_completion_init(&w);
    NTSTATUS st = e->conn->Dispatch->NdkConnect(e->conn, e->qp, (PSOCKADDR)&src, sizeof(src), (PSOCKADDR)&dst,
                                                sizeof(dst), e->info.MaxInboundReadLimit,
                                                e->info.MaxOutboundReadLimit, (PVOID)hello, len, cli_on_request_done,
                                                &w);
    st = cli_finish(&w, st, NULL);
    /* A rejection carries the server's reason in its private data too. */
    if (st == STATUS_SUCCESS || st == STATUS_CONNECTION_REFUSED) {
        ULONG ird = 0, ord = 0, n = room;
        if (e->conn->Dispatch->NdkGetConnectionData(e->conn, &ird, &ord, answer, &n) == STATUS_SUCCESS) {
            *answer_len = n;
            e->ird = ird;
            e->ord = ord;
        }
    }
    if (!check(e, "NdkConnect", st))
        return -1;
    cli_completion_init(&w);
    st = e->conn->Dispatch->NdkCompleteConnect(e->conn, on_disconnect, e, cli_on_request_done, &w);
    check(e, "NdkCompleteConnect", cli_finish(&w, st, NULL));
    return ok(e) ? 0 : -1;
}

int perf_disconnect(struct perf_end *e, double wait_s)
{
    if (!e->conn)
        return 0;
    if (wait_s > 0)
        (void)wait_for(e, WAIT_DISCONNECT, cli_now_us() + wait_s * 1e6);
    struct cli_completion w;
    cli_completion_init(&w);
    NTSTATUS st = e->conn->Dispatch->NdkDisconnect(e->conn, cli_on_request_done, &w);
    st = cli_finish(&w, st, NULL);
    pthread_mutex_lock(&e->lock);
    int by_peer = e->disconnected;
    pthread_mutex_unlock(&e->lock);
    /* The peer's DREQ may have come first: this end is then off the connection already. */
    if (st != STATUS_SUCCESS && !by_peer)
        check(e, "NdkDisconnect", st);
    return ok(e) ? 0 : -1;
}

void perf_close(struct perf_end *e)
{
    /* Closing the adapter frees every object still open under it; an adapter shared
     * with the other end (loopback) keeps this end's objects until that close. */
    if (e->own_adapter)
        NdkFpgaCloseAdapter(e->adapter);
    e->adapter = NULL;
}

/* ---- work requests ---- */

int perf_poll(struct perf_end *e, NDK_RESULT_EX *r, double deadline_us, const char *what)
{
    for (unsigned idle = 0;; idle++) {
        if (e->cq->Dispatch->NdkGetCqResultsEx(e->cq, r, 1) == 1) {
            e->spin_until_us = 0;
            return 1;
        }
        double now = cli_now_us();
        if (now >= deadline_us) {
            check(e, what, STATUS_IO_TIMEOUT);
            return 0;
        }
        /* Once the peer left, what it sent before may still be on its way to the CQ for a
         * moment; after that nothing more comes, and the run ends here. */
        pthread_mutex_lock(&e->lock);
        int gone = e->disconnected;
        pthread_mutex_unlock(&e->lock);
        if (gone && !e->gone_at_us)
            e->gone_at_us = now;
        if (gone && now - e->gone_at_us > 1e6) {
            check(e, what, STATUS_CONNECTION_ABORTED);
            snprintf(e->failure_detail, sizeof(e->failure_detail), "the %s disconnected before the end",
                     e->role[0] == 's' ? "client" : "server");
            return 0;
        }
        /* Spin a little (latency), then nap between polls: the machine may be shared with the peer. */
        if (!e->spin_until_us)
            e->spin_until_us = now + 20000.0;
        if (now < e->spin_until_us) {
            sched_yield();
        } else {
            struct timespec ts = {0, 100 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

int perf_post(struct perf_end *e, enum perf_op op, int receive, uint32_t len, const struct perf_answer *peer,
              uintptr_t ctx)
{
    NDK_SGE sge;
    sge.VirtualAddress = MmGetMdlVirtualAddress(e->buf);
    sge.Length = len;
    sge.MemoryRegionToken = e->ltoken;
    NDK_QP *q = e->qp;
    if (receive)
        return check(e, "NdkReceive", q->Dispatch->NdkReceive(q, (PVOID)ctx, &sge, 1)) ? 0 : -1;
    switch (op) {
    case PERF_WRITE:
        return check(e, "NdkWrite", q->Dispatch->NdkWrite(q, (PVOID)ctx, &sge, 1, peer->addr, peer->token, 0)) ? 0
                                                                                                               : -1;
    case PERF_READ:
        return check(e, "NdkRead", q->Dispatch->NdkRead(q, (PVOID)ctx, &sge, 1, peer->addr, peer->token, 0)) ? 0
                                                                                                             : -1;
    default:
        return check(e, "NdkSend", q->Dispatch->NdkSend(q, (PVOID)ctx, &sge, 1, 0)) ? 0 : -1;
    }
}
