/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga write_lat, write_bw, read_lat, read_bw, send_lat, send_bw: RDMA Write, RDMA
 * Read and Send between two adapters in the manner of perftest's ib_*_lat and ib_*_bw,
 * through NDKPI only (perf_conn.c builds each end).
 *
 * Without a peer address the command is the server: it listens and serves one client.
 * With one it is the client, which runs the test and reports it. The client's private
 * data tells the server the test, the sizes and the iterations; the server's answer
 * carries its buffer's address and remote token. The client then
 *  - write_lat, read_lat: one Write/Read at a time, from NdkWrite/NdkRead until its
 *    completion (the responder's acknowledgement or the read data): a round trip;
 *  - send_lat: ping-pong: a Send, the server's receive completes and it sends back, the
 *    client's receive completes; half of that round trip, as ib_send_lat reports;
 *  - *_bw: up to IN_FLIGHT operations at once, first post to last completion.
 * Sends only go to a posted receive (the adapter's loopback has no receiver-not-ready
 * retry): the server keeps recv_slots receives posted for send_bw and tells the client,
 * in a credit Send every half of them, that it has posted that many more. After each
 * size of a Write/Read test, and after the last Send, the client sends one message that
 * the server counts, so the server knows where the client is and when it is done. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

#define LAT_ITERS 1000u
#define BW_ITERS 5000u
#define LAT_SIZE 2u
#define BW_SIZE 65536u
#define BW_DEPTH 16u
#define ALL_MAX_SIZE (1u << 23)
#define DEFAULT_TIMEOUT_S 60u
#define CREDIT_RECVS 8u /* the client's receives for credits: more than the server can have unread */
#define MSG_BYTES 8u    /* a credit, a size's end, the end */
#define MAX_SIZES 32u

/* What a completion was for: its RequestContext. */
enum { CTX_OP = 1, CTX_RECV, CTX_CTRL };

struct perf_opts {
    enum perf_op op;
    int bw;
    uint64_t port, size, iters, depth, timeout;
    int all, loopback, size_given;
    int client;
    UCHAR server[4];
};

/* One size's figures (client). */
struct perf_row {
    uint32_t bytes, iters, depth;
    double min_us, median_us, avg_us, p99_us, max_us; /* latency */
    double seconds, mb_per_s, msgs_per_s;               /* bandwidth */
};

static const char *op_name(enum perf_op op)
{
    return op == PERF_WRITE ? "write" : op == PERF_READ ? "read" : "send";
}

/* The sizes of a test: min doubling up to max (one when equal). */
static size_t sizes_of(uint32_t min, uint32_t max, uint32_t *out)
{
    size_t n = 0;
    for (uint64_t s = min; s <= max && n < MAX_SIZES; s *= 2u)
        out[n++] = (uint32_t)s;
    return n;
}

/* ---- failure lines ---- */

/* One line for the end's first failed call, with its detail or the library's message. */
static int perf_report(struct perf_end *e)
{
    const char *msg = e->failure_detail[0] ? e->failure_detail : NdkFpgaErrorMessage(e->adapter);
    fprintf(stderr, "ndkfpga %s: %s: %s: %s%s%s\n", e->c->cmd, e->role, e->f.call, NdkFpgaStatusName(e->f.status),
            *msg ? "; " : "", msg);
    return CLI_EXIT_FAILED;
}

static void json_error(const struct perf_end *e)
{
    printf("{\"command\": \"%s\", \"role\": \"%s\", \"error\": {\"call\": ", e->c->cmd, e->role);
    cli_json_string(stdout, e->f.call);
    printf(", \"status\": ");
    cli_json_string(stdout, NdkFpgaStatusName(e->f.status));
    printf(", \"detail\": ");
    cli_json_string(stdout, e->failure_detail);
    printf("}}\n");
}

static int fail_detail(struct perf_end *e, const char *what, NTSTATUS st, const char *detail)
{
    if (!e->f.call) {
        cli_check(&e->f, what, st);
        snprintf(e->failure_detail, sizeof(e->failure_detail), "%s", detail);
    }
    return -1;
}

/* A completion that must have succeeded. */
static int result_ok(struct perf_end *e, const NDK_RESULT_EX *r)
{
    static const char *const what[] = {"a completion", "an RDMA Write's completion", "an RDMA Read's completion",
                                       "a Send's completion"};
    if (r->Status == STATUS_SUCCESS)
        return 1;
    const char *w = r->Type == NdkOperationTypeReceive ? "a receive's completion"
                    : r->Type == NdkOperationTypeWrite ? what[1]
                    : r->Type == NdkOperationTypeRead  ? what[2]
                    : r->Type == NdkOperationTypeSend  ? what[3]
                                                       : what[0];
    cli_check(&e->f, w, r->Status);
    return 0;
}

/* ---- the server ---- */

struct perf_server {
    struct perf_end e;
    const struct cli *c;
    const struct perf_opts *o;
    struct perf_hello h;
    uint32_t sizes[MAX_SIZES];
    size_t nsizes;
    uint64_t received; /* messages taken, data and control */
    char client[24];
    /* loopback: the client waits for the listen */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int listening; /* 1 listening, -1 failed before */
};

static void server_listening(struct perf_server *s, int state)
{
    pthread_mutex_lock(&s->lock);
    s->listening = state;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* The client's request: what it asks is within what this adapter can do. */
static enum perf_refusal server_check(struct perf_server *s, uint32_t limit)
{
    const struct perf_hello *h = &s->h;
    if (h->op < PERF_WRITE || h->op > PERF_SEND || h->bw > 1 || !h->iters || !h->depth || !h->min_size ||
        h->min_size > h->max_size)
        return PERF_REFUSED_VERSION;
    if (h->max_size > limit)
        return PERF_REFUSED_SIZE;
    return PERF_OK;
}

/* Wait for the next completion, at most the idle timeout after the last one. */
static int server_next(struct perf_server *s, NDK_RESULT_EX *r)
{
    if (!perf_poll(&s->e, r, cli_now_us() + (double)s->o->timeout * 1e6, "waiting for the client")) {
        if (s->e.f.status == STATUS_IO_TIMEOUT)
            snprintf(s->e.failure_detail, sizeof(s->e.failure_detail),
                     "nothing came for %llu s (--timeout) after %llu messages of the run",
                     (unsigned long long)s->o->timeout, (unsigned long long)s->received);
        return 0;
    }
    return result_ok(&s->e, r);
}

/* Serve a Write/Read test: one control message per size. */
static void serve_rdma(struct perf_server *s, ULONG posted)
{
    struct perf_end *e = &s->e;
    while (s->received < s->nsizes && !e->f.call) {
        NDK_RESULT_EX r;
        if (!server_next(s, &r))
            break;
        if (r.Type == NdkOperationTypeReceive) {
            s->received++;
            if (posted < s->nsizes && perf_post(e, PERF_SEND, 1, e->buf_len, NULL, CTX_RECV) == 0)
                posted++;
        }
    }
}

/* Serve send_lat: a pong for each ping, then the end message. */
static void serve_send_lat(struct perf_server *s)
{
    struct perf_end *e = &s->e;
    uint64_t pings = (uint64_t)s->h.iters * s->nsizes, sends = 0, sent = 0;
    while ((s->received < pings + 1 || sent < sends) && !e->f.call) {
        NDK_RESULT_EX r;
        if (!server_next(s, &r))
            break;
        if (r.Type != NdkOperationTypeReceive) {
            sent++;
            continue;
        }
        if (++s->received > pings)
            continue; /* the end */
        /* The next receive is posted before the pong, so the client's next ping finds it. */
        if (perf_post(e, PERF_SEND, 1, e->buf_len, NULL, CTX_RECV) == 0 &&
            perf_post(e, PERF_SEND, 0, r.BytesTransferred, NULL, CTX_OP) == 0)
            sends++;
    }
}

/* Serve send_bw: every receive re-posted, a credit every half of recv_slots. */
static void serve_send_bw(struct perf_server *s, ULONG slots)
{
    struct perf_end *e = &s->e;
    uint64_t total = (uint64_t)s->h.iters * s->nsizes, posted = slots, sends = 0, sent = 0;
    ULONG per_credit = slots / 2u ? slots / 2u : 1u;
    while ((s->received < total + 1 || sent < sends) && !e->f.call) {
        NDK_RESULT_EX r;
        if (!server_next(s, &r))
            break;
        if (r.Type != NdkOperationTypeReceive) {
            sent++;
            continue;
        }
        uint64_t j = s->received++;
        if (posted < total + 1 && perf_post(e, PERF_SEND, 1, e->buf_len, NULL, CTX_RECV) == 0)
            posted++;
        /* Credit k only when the client cannot finish without it: it is then still
         * connected to take it (it disconnects once its end message completed). */
        uint64_t k = (j + 1) / per_credit;
        if ((j + 1) % per_credit == 0 && slots + (k - 1) * per_credit <= total &&
            perf_post(e, PERF_SEND, 0, MSG_BYTES, NULL, CTX_CTRL) == 0)
            sends++;
    }
}

/* The server's whole run on an open adapter (closed at the end when own). */
static void server_run(struct perf_server *s, NDK_ADAPTER *a, int own)
{
    struct perf_end *e = &s->e;
    perf_init(e, s->c, "server", a, own);
    uint32_t limit = perf_size_limit(e);
    char ip[16];
    perf_ip_string(e->port.Ipv4, ip);
    if (perf_listen(e, (uint16_t)s->o->port) != 0) {
        server_listening(s, -1);
        return;
    }
    /* Said on stderr whatever the output: a script starts the client when it reads it. */
    if (!s->o->loopback)
        fprintf(stderr, "ndkfpga %s: listening on %s:%u, waiting up to %llu s for a client\n", s->c->cmd, ip,
                (unsigned)s->o->port, (unsigned long long)s->o->timeout);
    server_listening(s, 1);
    uint8_t hello[64];
    ULONG hlen = sizeof(hello);
    if (perf_wait_client(e, (double)s->o->timeout, hello, &hlen) != 0)
        return;
    struct sockaddr_in peer;
    ULONG plen = sizeof(peer);
    if (e->conn->Dispatch->NdkGetPeerAddress(e->conn, (PSOCKADDR)&peer, &plen) == STATUS_SUCCESS)
        snprintf(s->client, sizeof(s->client), "%s:%u", inet_ntoa(peer.sin_addr), (unsigned)ntohs(peer.sin_port));
    struct perf_answer ans;
    memset(&ans, 0, sizeof(ans));
    ans.max_size = limit;
    ans.status = perf_hello_get(hello, hlen, &s->h) != 0 ? PERF_REFUSED_VERSION : server_check(s, limit);
    ULONG slots = 0;
    if (ans.status == PERF_OK) {
        s->nsizes = sizes_of(s->h.min_size, s->h.max_size, s->sizes);
        /* Receives: one per size's end (Write/Read), one at a time (send_lat), or a window
         * (send_bw); all posted before the accept, so the client's first Send finds one. */
        ULONG most = e->info.MaxReceiveQueueDepth;
        slots = s->h.op != PERF_SEND ? (ULONG)s->nsizes : s->h.bw ? 64u : 1u;
        if (slots > most)
            slots = most;
        if (perf_resources(e, slots, 8u, s->h.max_size) != 0)
            ans.status = PERF_REFUSED_RESOURCES;
        for (ULONG k = 0; k < slots && ans.status == PERF_OK; k++)
            if (perf_post(e, PERF_SEND, 1, e->buf_len, NULL, CTX_RECV) != 0)
                ans.status = PERF_REFUSED_RESOURCES;
    }
    uint8_t pdata[PERF_ANSWER_BYTES];
    if (ans.status != PERF_OK) {
        perf_answer_put(pdata, &ans);
        perf_reject(e, pdata, sizeof(pdata));
        if (!e->f.call)
            fail_detail(e, "the client's request", STATUS_INVALID_PARAMETER,
                        ans.status == PERF_REFUSED_SIZE ? "it asked for a size above this adapter's limit"
                                                        : "not a request of this version of ndkfpga");
        return;
    }
    ans.addr = (uint64_t)(uintptr_t)MmGetMdlVirtualAddress(e->buf);
    ans.token = e->rtoken;
    ans.len = e->buf_len;
    ans.recv_slots = slots;
    perf_answer_put(pdata, &ans);
    if (perf_accept(e, pdata, sizeof(pdata)) != 0)
        return;
    if (s->h.op != PERF_SEND)
        serve_rdma(s, slots);
    else if (s->h.bw)
        serve_send_bw(s, slots);
    else
        serve_send_lat(s);
    /* The client disconnects once its end message completed: wait a little for that. */
    perf_disconnect(e, e->f.call ? 0 : 5.0);
}

/* ---- the client ---- */

struct perf_client {
    struct perf_end e;
    const struct perf_opts *o;
    struct perf_answer peer;
    uint64_t sent;     /* Sends posted, data and control (send_bw's credits count them) */
    uint64_t credits;  /* credit messages taken */
    ULONG per_credit;
    double *samples;
};

/* May the client's next Send go (send_bw)? Only into a receive the server has posted. */
static int send_allowed(const struct perf_client *k)
{
    if (k->o->op != PERF_SEND || !k->o->bw)
        return 1;
    return k->sent < (uint64_t)k->peer.recv_slots + k->credits * k->per_credit;
}

/* The next completion: 1 when *r is one of the client's own operations, 0 when it was a
 * credit (taken, and its receive posted again), -1 on failure. */
static int client_next(struct perf_client *k, NDK_RESULT_EX *r, double *at)
{
    struct perf_end *e = &k->e;
    if (!perf_poll(e, r, cli_now_us() + (double)k->o->timeout * 1e6, "waiting for a completion"))
        return -1;
    if (at)
        *at = cli_now_us();
    if (!result_ok(e, r))
        return -1;
    if (r->RequestContext != (PVOID)(uintptr_t)CTX_CTRL || r->Type != NdkOperationTypeReceive)
        return 1;
    k->credits++;
    return perf_post(e, PERF_SEND, 1, MSG_BYTES, NULL, CTX_CTRL) == 0 ? 0 : -1;
}

/* A control Send (a size's end, the end), waited for. */
static int client_ctrl(struct perf_client *k)
{
    struct perf_end *e = &k->e;
    NDK_RESULT_EX r;
    while (!send_allowed(k))
        if (client_next(k, &r, NULL) < 0)
            return -1;
    if (perf_post(e, PERF_SEND, 0, MSG_BYTES, NULL, CTX_OP) != 0)
        return -1;
    k->sent++;
    int got;
    while ((got = client_next(k, &r, NULL)) == 0 || r.Type != NdkOperationTypeSend)
        if (got < 0)
            return -1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void lat_stats(struct perf_row *row, double *v, uint32_t n)
{
    qsort(v, n, sizeof(v[0]), cmp_double);
    double sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += v[i];
    row->min_us = v[0];
    row->max_us = v[n - 1];
    row->avg_us = sum / n;
    row->median_us = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    uint32_t rank = (uint32_t)((99u * (uint64_t)n + 99u) / 100u); /* nearest rank: ceil(0.99 n) */
    row->p99_us = v[rank ? rank - 1 : 0];
}

static void client_lat(struct perf_client *k, uint32_t size, struct perf_row *row)
{
    struct perf_end *e = &k->e;
    enum perf_op op = k->o->op;
    for (uint32_t i = 0; i < row->iters && !e->f.call; i++) {
        cli_progress("%s: %u bytes, %u of %u", e->c->cmd, (unsigned)size, (unsigned)(i + 1), (unsigned)row->iters);
        NDK_RESULT_EX r;
        double t0, at = 0;
        int got_recv = op != PERF_SEND, got_op = 0;
        if (op == PERF_SEND && perf_post(e, op, 1, size, NULL, CTX_RECV) != 0)
            break;
        t0 = cli_now_us();
        if (perf_post(e, op, 0, size, &k->peer, CTX_OP) != 0)
            break;
        if (op == PERF_SEND)
            k->sent++;
        int got;
        while (!(got_recv && got_op) && (got = client_next(k, &r, &at)) >= 0) {
            if (!got)
                continue;
            if (r.Type == NdkOperationTypeReceive) {
                got_recv = 1;
                k->samples[i] = (at - t0) / 2; /* half the ping-pong */
            } else {
                got_op = 1;
                if (op != PERF_SEND)
                    k->samples[i] = at - t0;
            }
        }
    }
    if (!e->f.call)
        lat_stats(row, k->samples, row->iters);
}

static void client_bw(struct perf_client *k, uint32_t size, struct perf_row *row)
{
    struct perf_end *e = &k->e;
    uint64_t posted = 0, done = 0;
    double t0 = cli_now_us();
    while (done < row->iters && !e->f.call) {
        while (posted < row->iters && posted - done < row->depth && send_allowed(k)) {
            if (perf_post(e, k->o->op, 0, size, &k->peer, CTX_OP) != 0)
                break;
            posted++;
            k->sent += k->o->op == PERF_SEND;
        }
        NDK_RESULT_EX r;
        int got = e->f.call ? -1 : client_next(k, &r, NULL);
        if (got < 0)
            break;
        if (!got)
            continue; /* a credit: more Sends may go */
        done++;
        if (done % 64 == 0)
            cli_progress("%s: %u bytes, %llu of %u", e->c->cmd, (unsigned)size, (unsigned long long)done,
                         (unsigned)row->iters);
    }
    row->seconds = (cli_now_us() - t0) / 1e6;
    if (!e->f.call && row->seconds > 0) {
        row->mb_per_s = (double)size * row->iters / row->seconds / 1e6;
        row->msgs_per_s = row->iters / row->seconds;
    }
}

/* The client's whole run on an open adapter: rows[] filled, *nrows of them. */
static void client_run(struct perf_client *k, const struct cli *c, NDK_ADAPTER *a, int own, uint32_t *sizes,
                       size_t nsizes, struct perf_row *rows)
{
    struct perf_end *e = &k->e;
    const struct perf_opts *o = k->o;
    perf_init(e, c, "client", a, own);
    uint32_t max = sizes[nsizes - 1];
    if (!e->f.call && max > perf_size_limit(e)) {
        char d[96];
        snprintf(d, sizeof(d), "this adapter moves at most %u bytes in one operation (-s)",
                 (unsigned)perf_size_limit(e));
        fail_detail(e, "the size", STATUS_INVALID_PARAMETER, d);
        return;
    }
    ULONG depth = o->bw ? (ULONG)o->depth : 1u;
    if (perf_resources(e, CREDIT_RECVS, depth + 2u, max) != 0)
        return;
    k->samples = calloc(o->iters, sizeof(double));
    if (!k->samples) {
        fail_detail(e, "memory for the samples", STATUS_INSUFFICIENT_RESOURCES, "");
        return;
    }
    struct perf_hello h = {o->op, (uint32_t)o->bw, (uint32_t)o->iters, depth, sizes[0], max,
                           (uint64_t)(uintptr_t)MmGetMdlVirtualAddress(e->buf), e->rtoken, e->buf_len};
    uint8_t hello[PERF_HELLO_BYTES], answer[256];
    ULONG alen = sizeof(answer);
    perf_hello_put(hello, &h);
    UCHAR ip[4];
    memcpy(ip, o->client ? o->server : e->port.Ipv4, 4);
    if (!o->client && !e->port.PrefixLength)
        memcpy(ip, (const UCHAR[4]){127, 0, 0, 1}, 4); /* no address: the adapter's loopback */
    int rc = perf_connect(e, ip, (uint16_t)o->port, hello, PERF_HELLO_BYTES, answer, &alen);
    int ours = perf_answer_get(answer, alen, &k->peer) == 0;
    char where[40];
    perf_ip_string(ip, where);
    if (rc != 0) {
        char d[160];
        if (e->f.status == STATUS_CONNECTION_REFUSED && ours && k->peer.status == PERF_REFUSED_SIZE)
            snprintf(d, sizeof(d), "the server takes at most %u bytes (-s)", (unsigned)k->peer.max_size);
        else if (e->f.status == STATUS_CONNECTION_REFUSED && ours)
            snprintf(d, sizeof(d), "the server refused the test (%s)",
                     k->peer.status == PERF_REFUSED_RESOURCES ? "out of resources" : "another version of ndkfpga");
        else if (e->f.status == STATUS_CONNECTION_REFUSED)
            snprintf(d, sizeof(d), "nobody listens on %s:%u: start `ndkfpga %s` there first", where,
                     (unsigned)o->port, c->cmd);
        else
            d[0] = '\0';
        if (d[0])
            snprintf(e->failure_detail, sizeof(e->failure_detail), "%s", d);
        return;
    }
    if (!ours || k->peer.status != PERF_OK || k->peer.len < max) {
        fail_detail(e, "the server's answer", STATUS_INVALID_PARAMETER, "not an ndkfpga perf server of this version");
        return;
    }
    k->per_credit = k->peer.recv_slots / 2u ? k->peer.recv_slots / 2u : 1u;
    if (o->op == PERF_READ && e->ord && depth > e->ord)
        depth = e->ord; /* reads in flight: at most the connection's outbound read limit */
    for (ULONG i = 0; i < CREDIT_RECVS && o->op == PERF_SEND && o->bw; i++)
        perf_post(e, PERF_SEND, 1, MSG_BYTES, NULL, CTX_CTRL);
    for (size_t i = 0; i < nsizes && !e->f.call; i++) {
        rows[i].bytes = sizes[i];
        rows[i].iters = (uint32_t)o->iters;
        rows[i].depth = depth;
        if (o->bw)
            client_bw(k, sizes[i], &rows[i]);
        else
            client_lat(k, sizes[i], &rows[i]);
        if (!e->f.call && o->op != PERF_SEND)
            client_ctrl(k); /* the size's end */
    }
    if (!e->f.call && o->op == PERF_SEND)
        client_ctrl(k); /* the end */
    cli_progress_done();
    perf_disconnect(e, 0);
}

/* ---- output ---- */

static void print_rows(const struct cli *c, const struct perf_opts *o, const char *device, const char *server,
                       const struct perf_row *rows, size_t n)
{
    if (c->json) {
        printf("{\"command\": \"%s\", \"role\": \"client\", \"test\": \"%s\", \"device\": ", c->cmd, op_name(o->op));
        cli_json_string(stdout, device);
        printf(", \"server\": ");
        cli_json_string(stdout, server);
        printf(", \"loopback\": %s, \"iterations\": %llu,\n \"unit\": \"%s\",\n \"results\": [", o->loopback ? "true" : "false",
               (unsigned long long)o->iters,
               o->bw ? "MB/s = 10^6 bytes per second of wall time, first post to last completion"
               : o->op == PERF_SEND ? "microseconds of wall time, half the Send ping-pong round trip"
                                    : "microseconds of wall time from the post to the completion");
        for (size_t i = 0; i < n; i++) {
            const struct perf_row *r = &rows[i];
            printf("%s\n  {\"bytes\": %u, \"iterations\": %u", i ? "," : "", (unsigned)r->bytes, (unsigned)r->iters);
            if (o->bw) {
                printf(", \"in_flight\": %u, \"seconds\": ", (unsigned)r->depth);
                cli_json_number(stdout, r->seconds, 6);
                printf(", \"mb_per_s\": ");
                cli_json_number(stdout, r->mb_per_s, 3);
                printf(", \"msgs_per_s\": ");
                cli_json_number(stdout, r->msgs_per_s, 1);
            } else {
                printf(", \"min_us\": %.2f, \"median_us\": %.2f, \"avg_us\": %.2f, \"p99_us\": %.2f, \"max_us\": %.2f",
                       r->min_us, r->median_us, r->avg_us, r->p99_us, r->max_us);
            }
            printf("}");
        }
        printf("]}\n");
        return;
    }
    printf("%s %s on %s, server %s%s\n", op_name(o->op), o->bw ? "bandwidth" : "latency", device, server,
           o->loopback ? " (loopback on this adapter)" : "");
    if (o->bw) {
        printf(" %10s %12s %10s %14s %16s\n", "#bytes", "#iterations", "in flight", "BW [MB/s]", "rate [msgs/s]");
        for (size_t i = 0; i < n; i++)
            printf(" %10u %12u %10u %14.2f %16.0f\n", (unsigned)rows[i].bytes, (unsigned)rows[i].iters,
                   (unsigned)rows[i].depth, rows[i].mb_per_s, rows[i].msgs_per_s);
        printf("MB = 10^6 bytes; first post to last completion, wall time\n");
    } else {
        printf(" %10s %12s %10s %10s %10s %10s %10s\n", "#bytes", "#iterations", "min[us]", "median[us]", "avg[us]",
               "p99[us]", "max[us]");
        for (size_t i = 0; i < n; i++)
            printf(" %10u %12u %10.2f %10.2f %10.2f %10.2f %10.2f\n", (unsigned)rows[i].bytes, (unsigned)rows[i].iters,
                   rows[i].min_us, rows[i].median_us, rows[i].avg_us, rows[i].p99_us, rows[i].max_us);
        printf("%s\n", o->op == PERF_SEND ? "half the Send ping-pong round trip, wall time"
                                          : "from the post to the completion (one round trip), wall time");
    }
}

static void print_server(const struct cli *c, const struct perf_server *s, const char *device)
{
    if (c->json) {
        printf("{\"command\": \"%s\", \"role\": \"server\", \"device\": ", c->cmd);
        cli_json_string(stdout, device);
        printf(", \"client\": ");
        cli_json_string(stdout, s->client);
        printf(", \"test\": \"%s\", \"bandwidth\": %s, \"iterations\": %u, \"sizes\": [", op_name(s->h.op),
               s->h.bw ? "true" : "false", (unsigned)s->h.iters);
        for (size_t i = 0; i < s->nsizes; i++)
            printf("%s%u", i ? ", " : "", (unsigned)s->sizes[i]);
        printf("], \"messages_received\": %llu}\n", (unsigned long long)s->received);
        return;
    }
    printf("served %s %s for %s on %s: %zu size%s of %u iterations, %llu message%s received\n", op_name(s->h.op),
           s->h.bw ? "bandwidth" : "latency", s->client, device, s->nsizes, s->nsizes == 1 ? "" : "s",
           (unsigned)s->h.iters, (unsigned long long)s->received, s->received == 1 ? "" : "s");
}

/* ---- the command ---- */

static void *server_thread(void *arg)
{
    struct perf_server *s = arg;
    server_run(s, s->e.adapter, 0);
    server_listening(s, -1); /* a client still waiting gives up */
    return NULL;
}

/* A.B.C.D into ip; 0 on success. */
static int parse_ip(const char *s, UCHAR ip[4])
{
    unsigned v[4];
    char end;
    if (sscanf(s, "%3u.%3u.%3u.%3u%c", &v[0], &v[1], &v[2], &v[3], &end) != 4)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return -1;
    for (int i = 0; i < 4; i++) {
        if (v[i] > 255)
            return -1;
        ip[i] = (UCHAR)v[i];
    }
    return 0;
}

/* --connect A.B.C.D, --connect=A.B.C.D or a positional A.B.C.D (no device name starts
 * with a digit) out of argv; the rest into rest[]. -1 to go on, else the exit code. */
static int take_server(const struct cli *c, struct perf_opts *o, int argc, char **argv, char **rest, int *n)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = !strcmp(a, "--connect")          ? (i + 1 < argc ? argv[++i] : "")
                        : !strncmp(a, "--connect=", 10)      ? a + 10
                        : i > 0 && isdigit((unsigned char)a[0]) && strchr(a, '.') ? a
                                                                                 : NULL;
        if (!v) {
            rest[(*n)++] = argv[i];
            continue;
        }
        if (o->client)
            return cli_report(c, CLI_EXIT_USAGE, "one server address, not two");
        if (parse_ip(v, o->server) != 0)
            return cli_report(c, CLI_EXIT_USAGE, "the server address is A.B.C.D, not \"%s\"", v);
        o->client = 1;
    }
    return -1;
}

static int perf_command(struct cli *c, int argc, char **argv, enum perf_op op, int bw)
{
    struct perf_opts o;
    memset(&o, 0, sizeof(o));
    o.op = op;
    o.bw = bw;
    o.port = PERF_DEFAULT_PORT;
    o.size = bw ? BW_SIZE : LAT_SIZE;
    o.iters = bw ? BW_ITERS : LAT_ITERS;
    o.depth = BW_DEPTH;
    o.timeout = DEFAULT_TIMEOUT_S;
    char **rest = calloc((size_t)argc + 1, sizeof(*rest));
    if (!rest)
        return cli_report(c, CLI_EXIT_FAILED, "out of memory");
    int n = 0;
    int code = take_server(c, &o, argc, argv, rest, &n);
    const struct cli_option opts[] = {
        {"port", 'p', NULL, &o.port, 1, 65535, 0, 0, "a port"},
        {"size", 's', NULL, &o.size, 1, ALL_MAX_SIZE, 0, 1, "a size in bytes"},
        {"iters", 'n', NULL, &o.iters, 1, 10000000, 0, 0, "a count of iterations"},
        {"all", 'a', &o.all, NULL, 0, 0, 0, 0, NULL},
        {"in-flight", 'q', NULL, &o.depth, 1, 1024, 0, 0, "a count of operations in flight"},
        {"timeout", CLI_OPT_TIMEOUT, NULL, &o.timeout, 1, 86400, 0, 0, "seconds"},
        {"loopback", CLI_OPT_LOOPBACK, &o.loopback, NULL, 0, 0, 0, 0, NULL},
    };
    if (code < 0) {
        uint64_t size0 = o.size;
        code = cli_parse_options(c, n, rest, 1, opts, sizeof(opts) / sizeof(opts[0]));
        o.size_given = o.size != size0;
    }
    free(rest);
    if (code >= 0)
        return code;
    if (o.all && o.size_given)
        return cli_report(c, CLI_EXIT_USAGE, "-a runs every size: leave out -s");
    if (o.loopback && o.client)
        return cli_report(c, CLI_EXIT_USAGE, "--loopback runs both ends here: leave out the server address");

    int cl = o.client || o.loopback;
    code = CLI_EXIT_OK;
    NDK_ADAPTER *a = cli_open(c, &code);
    if (!a)
        return code;
    NDKFPGA_ADAPTER_DETAILS d;
    if (NdkFpgaQueryAdapterDetails(a, &d) != STATUS_SUCCESS)
        snprintf(d.Device, sizeof(d.Device), "%s", c->device);

    static struct perf_server srv; /* the loopback thread's, or this process's server */
    memset(&srv, 0, sizeof(srv));
    srv.c = c;
    srv.o = &o;
    pthread_mutex_init(&srv.lock, NULL);
    pthread_cond_init(&srv.cond, NULL);
    if (!cl) {
        server_run(&srv, a, 0);
        cli_progress_done();
        if (srv.e.f.call) {
            code = perf_report(&srv.e);
            if (c->json)
                json_error(&srv.e);
        } else {
            print_server(c, &srv, d.Device);
        }
        NdkFpgaCloseAdapter(a);
        return code;
    }

    pthread_t th;
    if (o.loopback) {
        srv.e.adapter = a;
        if (pthread_create(&th, NULL, server_thread, &srv) != 0) {
            NdkFpgaCloseAdapter(a);
            return cli_report(c, CLI_EXIT_FAILED, "cannot start the loopback server thread");
        }
        pthread_mutex_lock(&srv.lock);
        while (!srv.listening)
            pthread_cond_wait(&srv.cond, &srv.lock);
        pthread_mutex_unlock(&srv.lock);
    }
    uint32_t sizes[MAX_SIZES];
    size_t nsizes = o.all ? sizes_of(2, ALL_MAX_SIZE, sizes) : sizes_of((uint32_t)o.size, (uint32_t)o.size, sizes);
    static struct perf_client k;
    memset(&k, 0, sizeof(k));
    k.o = &o;
    struct perf_row rows[MAX_SIZES];
    memset(rows, 0, sizeof(rows));
    if (o.all) {
        /* -a: the sizes this adapter moves (the server checks its own). */
        NDK_ADAPTER_INFO info;
        ULONG isz = sizeof(info);
        info.Version.Major = NDKFPGA_NDK_VERSION_MAJOR;
        info.Version.Minor = NDKFPGA_NDK_VERSION_MINOR;
        if (a->Dispatch->NdkQueryAdapterInfo(a, &info, &isz) == STATUS_SUCCESS) {
            struct perf_end tmp;
            memset(&tmp, 0, sizeof(tmp));
            tmp.info = info;
            uint32_t lim = perf_size_limit(&tmp);
            size_t keep = 0;
            while (keep < nsizes && sizes[keep] <= lim)
                keep++;
            if (keep < nsizes)
                fprintf(stderr, "ndkfpga %s: sizes above %u bytes skipped: the adapter moves at most that much at once\n",
                        c->cmd, (unsigned)lim);
            nsizes = keep ? keep : 1;
        }
    }
    if (srv.listening > 0 || !o.loopback)
        client_run(&k, c, a, 0, sizes, nsizes, rows);
    else
        fail_detail(&k.e, "the loopback server", srv.e.f.status ? srv.e.f.status : STATUS_INTERNAL_ERROR, "");
    if (o.loopback)
        pthread_join(th, NULL);
    char server[40];
    UCHAR *sip = o.client ? o.server : k.e.port.Ipv4;
    snprintf(server, sizeof(server), "%u.%u.%u.%u:%u", sip[0], sip[1], sip[2], sip[3], (unsigned)o.port);
    if (k.e.f.call || (o.loopback && srv.e.f.call)) {
        if (k.e.f.call)
            code = perf_report(&k.e);
        if (o.loopback && srv.e.f.call)
            code = perf_report(&srv.e);
        if (c->json)
            json_error(k.e.f.call ? &k.e : &srv.e);
    } else {
        print_rows(c, &o, d.Device, server, rows, nsizes);
    }
    free(k.samples);
    NdkFpgaCloseAdapter(a);
    return code;
}

int cmd_perf(struct cli *c, int argc, char **argv)
{
    /* The command's name says the test: write_, read_ or send_, then lat or bw. */
    enum perf_op op = !strncmp(c->cmd, "write_", 6) ? PERF_WRITE : !strncmp(c->cmd, "read_", 5) ? PERF_READ : PERF_SEND;
    return perf_command(c, argc, argv, op, strstr(c->cmd, "_bw") != NULL);
}
