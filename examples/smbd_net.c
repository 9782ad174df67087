/* SPDX-License-Identifier: Apache-2.0 */
/* The server and the client of smb_direct's two-process mode: MS-SMBD between two
 * adapters, as an SMB2 client and server speak it over RDMA.
 *   1. the client connects (IB CM, the SMB Direct port), its receives already posted;
 *   2. Negotiate Request and Negotiate Response ([MS-SMBD] 2.2.1, 2.2.2): versions,
 *      credits, sizes;
 *   3. per round, a WRITE then a READ (stand-ins for SMB2 WRITE and READ) in data
 *      transfer messages (2.2.3), each naming a fast-registered client buffer by an
 *      SMB_DIRECT_BUFFER_DESCRIPTOR_V1. WRITE: the buffer allows remote read, the server
 *      RDMA-Reads it and answers, the client invalidates it. READ: the buffer allows
 *      remote write, the server RDMA-Writes it and answers with SendAndInvalidate naming
 *      the token; the client's receive completes ReceiveAndInvalidate with it;
 *   4. a keep-alive (no payload, SMB_DIRECT_RESPONSE_REQUESTED) and its answer;
 *   5. the client disconnects; the server sees its DisconnectEvent and exits.
 * Every byte moved is checked on the side that receives it. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smbd.h"

#define STATUS_DATA_ERROR ((NTSTATUS)0xC000003Eu)
#define SERVER_MAX_RW (64u * 1024u) /* the largest READ or WRITE the server takes */

static VOID on_disconnect(PVOID ctx)
{
    struct smbd_conn *c = ctx;
    __atomic_store_n(&c->disconnected, 1, __ATOMIC_RELEASE);
}

static ULONG read_limit(ULONG max)
{
    return max < SMBD_READ_LIMIT ? max : SMBD_READ_LIMIT;
}

/* A receive's outcome where the peer's disconnect is a failure too: awaited says what was due. */
static int arrived(struct smbd_conn *c, int got, const char *awaited)
{
    if (got == -1)
        return smbd_fail(c, awaited, STATUS_CONNECTION_DISCONNECTED);
    return got == 1;
}

/* ip (4 bytes, wire order) and port as NdkListen and NdkConnect take them. */
static struct sockaddr_in ipv4_at(const void *ip, uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    memcpy(&a.sin_addr, ip, 4);
    return a;
}

static int wait_call(struct smbd_conn *c, NTSTATUS st, const char *what)
{
    st = consumer_call_wait(&c->call, st, c->wait_ms);
    return st == STATUS_SUCCESS ? 1 : smbd_fail(c, what, st);
}

/* Bytes of an adapter buffer as pattern id (fill), or checked against it. */
static int pattern_io(struct smbd_conn *c, MDL *mdl, uint32_t id, size_t n, int check)
{
    uint8_t *p = malloc(n);
    NTSTATUS st = p ? STATUS_SUCCESS : STATUS_INSUFFICIENT_RESOURCES;
    if (st == STATUS_SUCCESS && check)
        st = NdkFpgaReadBuffer(c->ad, mdl, 0, p, n);
    for (size_t i = 0; st == STATUS_SUCCESS && i < n; i++)
        if (!check)
            p[i] = smbd_pattern(id, i);
        else if (p[i] != smbd_pattern(id, i)) {
            fprintf(stderr, "%s: byte %zu of message %u's data is 0x%02x, not 0x%02x\n", c->role, i, (unsigned)id,
                    p[i], smbd_pattern(id, i));
            st = STATUS_DATA_ERROR;
        }
    if (st == STATUS_SUCCESS && !check)
        st = NdkFpgaWriteBuffer(c->ad, mdl, 0, p, n);
    free(p);
    return st == STATUS_SUCCESS;
}

/* ================================ server ================================ */

struct server {
    struct smbd_conn c;
    MDL *buf;          /* RDMA Read sink and RDMA Write source */
    NDK_MR *mr;
    uint32_t max_rw;
    unsigned writes, reads, errors;
};

static int server_accept(struct server *s, uint16_t port)
{
    struct smbd_conn *c = &s->c;
    NTSTATUS st = c->ad->Dispatch->NdkCreateListener(c->ad, consumer_connect_event, &c->incoming, NULL, NULL, &c->lis);
    struct sockaddr_in addr = ipv4_at(c->ip, port);
    if (st == STATUS_SUCCESS)
        st = c->lis->Dispatch->NdkListen(c->lis, (PSOCKADDR)&addr, sizeof(addr), NULL, NULL);
    if (st != STATUS_SUCCESS)
        return smbd_fail(c, "NdkCreateListener, NdkListen", st);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, c->ip, ip, sizeof(ip));
    printf("server: listening on %s port %u\n", ip, (unsigned)port);
    fflush(stdout);
    /* the connection may take the peer's adapter start-up: a few answers' worth */
    st = consumer_call_wait(&c->incoming, STATUS_PENDING, 5 * c->wait_ms);
    c->conn = c->incoming.obj;
    if (st != STATUS_SUCCESS || !c->conn)
        return smbd_fail(c, "waiting for a client to connect", st == STATUS_SUCCESS ? STATUS_INTERNAL_ERROR : st);
    /* the Negotiate Request may follow the connection at once: its receive comes first */
    if (!smbd_post_receives(c, 1))
        return 0;
    st = c->conn->Dispatch->NdkAccept(c->conn, c->qp, read_limit(c->info.MaxInboundReadLimit),
                                      read_limit(c->info.MaxOutboundReadLimit), NULL, 0, on_disconnect, c,
                                      consumer_call_done, &c->call);
    if (!wait_call(c, st, "NdkAccept"))
        return 0;
    struct sockaddr_in peer;
    ULONG plen = sizeof(peer);
    if (c->conn->Dispatch->NdkGetPeerAddress(c->conn, (PSOCKADDR)&peer, &plen) == STATUS_SUCCESS) {
        inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof(ip));
        printf("server: accepted %s port %u\n", ip, (unsigned)ntohs(peer.sin_port));
    }
    return 1;
}

static int server_negotiate(struct server *s)
{
    struct smbd_conn *c = &s->c;
    uint8_t msg[SMBD_MSG_SIZE];
    size_t n = 0;
    NDK_RESULT_EX r;
    if (!arrived(c, smbd_receive(c, msg, sizeof(msg), &n, &r), "the client's Negotiate Request"))
        return 0;
    struct smbd_neg_req req;
    const char *why = smbd_get_neg_req(msg, n, &req);
    struct smbd_neg_resp resp = {.min_version = SMBD_VERSION_1,
                                 .max_version = SMBD_VERSION_1,
                                 .negotiated_version = SMBD_VERSION_1,
                                 .credits_requested = SMBD_RQ_DEPTH,
                                 .max_read_write_size = s->max_rw,
                                 .preferred_send_size = SMBD_MSG_SIZE,
                                 .max_receive_size = SMBD_MSG_SIZE,
                                 .max_fragmented_size = SMBD_MIN_FRAGMENTED};
    if (why && n >= SMBD_NEG_REQ_LEN && (req.min_version > SMBD_VERSION_1 || req.max_version < SMBD_VERSION_1)) {
        /* [MS-SMBD] 3.1.5.3: a version it cannot speak is answered, then the connection ends */
        resp.status = (uint32_t)STATUS_NOT_SUPPORTED;
        smbd_put_neg_resp(msg, &resp);
        smbd_send_raw(c, msg, SMBD_NEG_RESP_LEN, 0, 0);
    }
    if (why) {
        fprintf(stderr, "server: FAILED: protocol: %s\n", why);
        return 0;
    }
    c->target = req.credits_requested;
    c->max_fragmented = req.max_fragmented_size;
    if (req.max_receive_size < resp.preferred_send_size)
        resp.preferred_send_size = req.max_receive_size;
    if (!smbd_post_receives(c, SMBD_RQ_DEPTH)) /* every receive posted before it is granted */
        return 0;
    resp.credits_granted = (uint16_t)smbd_grant(c, 1);
    smbd_put_neg_resp(msg, &resp);
    if (!smbd_send_raw(c, msg, SMBD_NEG_RESP_LEN, 0, 0))
        return 0;
    printf("server: Negotiate Request: versions 0x%04x-0x%04x, %u credits requested, PreferredSendSize %u, "
           "MaxReceiveSize %u, MaxFragmentedSize %u\n", req.min_version, req.max_version, req.credits_requested,
           (unsigned)req.preferred_send_size, (unsigned)req.max_receive_size, (unsigned)req.max_fragmented_size);
    printf("server: Negotiate Response: version 0x0100, %u credits granted, MaxReadWriteSize %u\n",
           resp.credits_granted, (unsigned)resp.max_read_write_size);
    return 1;
}

/* One READ or WRITE request: the RDMA through the client's descriptor, then the answer. */
static int server_request(struct server *s, const struct smbd_app *q)
{
    struct smbd_conn *c = &s->c;
    NTSTATUS status = STATUS_SUCCESS;
    if (q->flags & SMBD_APP_RESPONSE)
        return smbd_fail(c, "a response where a request belongs", STATUS_INVALID_PARAMETER);
    if (q->n_desc != 1 || q->desc.length != q->length || q->length == 0 || q->length > s->max_rw ||
        (q->channel != SMBD_CHANNEL_RDMA_V1 && q->channel != SMBD_CHANNEL_RDMA_V1_INVALIDATE))
        status = STATUS_INVALID_PARAMETER;
    int write = q->command == SMBD_APP_WRITE;
    if (status == STATUS_SUCCESS && !write && !pattern_io(c, s->buf, q->message_id, q->length, 0))
        status = STATUS_INTERNAL_ERROR;
    if (status == STATUS_SUCCESS) {
        NDK_SGE sge = consumer_sge(s->buf, s->mr, 0, q->length);
        NTSTATUS st = write ? c->qp->Dispatch->NdkRead(c->qp, (PVOID)0xD0, &sge, 1, q->desc.offset, q->desc.token, 0)
                            : c->qp->Dispatch->NdkWrite(c->qp, (PVOID)0xD0, &sge, 1, q->desc.offset, q->desc.token, 0);
        if (st != STATUS_SUCCESS)
            return smbd_fail(c, write ? "NdkRead" : "NdkWrite", st);
        if (!smbd_complete(c, write ? NdkOperationTypeRead : NdkOperationTypeWrite, (PVOID)0xD0,
                           write ? "the RDMA Read of the client's buffer" : "the RDMA Write into the client's buffer"))
            return 0;
        if (write && !pattern_io(c, s->buf, q->message_id, q->length, 1))
            status = STATUS_DATA_ERROR;
    }
    unsigned *done = write ? &s->writes : &s->reads;
    if (status == STATUS_SUCCESS)
        ++*done;
    else
        s->errors++;
    if (status == STATUS_SUCCESS && *done == 1)
        printf("server: %s of %u bytes: RDMA %s through token 0x%08x at 0x%" PRIx64 ", every byte as the client's\n",
               write ? "WRITE" : "READ", (unsigned)q->length, write ? "Read" : "Write", (unsigned)q->desc.token,
               q->desc.offset);
    struct smbd_app a = {.command = q->command,
                         .flags = SMBD_APP_RESPONSE,
                         .message_id = q->message_id,
                         .status = (uint32_t)status,
                         .length = status == STATUS_SUCCESS ? q->length : 0,
                         .file_offset = q->file_offset};
    uint8_t payload[SMBD_APP_LEN];
    smbd_put_app(payload, &a);
    int inv = q->channel == SMBD_CHANNEL_RDMA_V1_INVALIDATE && q->n_desc == 1;
    return smbd_send_data(c, payload, sizeof(payload), 0, inv, q->desc.token);
}

static int server_serve(struct server *s)
{
    struct smbd_conn *c = &s->c;
    for (;;) {
        struct smbd_data h;
        uint8_t payload[SMBD_MSG_SIZE];
        size_t len = 0;
        NDK_RESULT_EX r;
        int got = smbd_receive_data(c, &h, payload, &len, &r);
        if (got == -1)
            return 1; /* the client disconnected: the session is over */
        if (!got)
            return 0;
        if (r.Type != NdkOperationTypeReceive)
            return smbd_fail(c, "a client message that invalidated a token of the server", STATUS_INVALID_PARAMETER);
        if (len == 0) { /* credits or a keep-alive: answered at once when asked */
            if ((h.flags & SMBD_RESPONSE_REQUESTED) && !smbd_send_data(c, NULL, 0, 0, 0, 0))
                return 0;
            if (h.flags & SMBD_RESPONSE_REQUESTED)
                printf("server: keep-alive (SMB_DIRECT_RESPONSE_REQUESTED) answered\n");
            continue;
        }
        struct smbd_app q;
        const char *why = smbd_get_app(payload, len, &q);
        if (why)
            return smbd_fail(c, why, STATUS_INVALID_PARAMETER);
        if (!server_request(s, &q))
            return 0;
    }
}

static int server_run(const char *dev, uint16_t port)
{
    struct server s;
    memset(&s, 0, sizeof(s));
    struct smbd_conn *c = &s.c;
    if (!smbd_open(c, "server", dev))
        return 1;
    s.max_rw = c->info.FRMRPageCount * PAGE_SIZE;
    if (s.max_rw > SERVER_MAX_RW)
        s.max_rw = SERVER_MAX_RW;
    ULONG flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
    if (!(c->info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED))
        flags |= NDK_MR_FLAG_RDMA_READ_SINK;
    NTSTATUS st = NdkFpgaAllocateBuffer(c->ad, s.max_rw, &s.buf);
    if (st == STATUS_SUCCESS)
        st = c->pd->Dispatch->NdkCreateMr(c->pd, FALSE, NULL, NULL, &s.mr);
    if (st == STATUS_SUCCESS)
        st = s.mr->Dispatch->NdkRegisterMr(s.mr, s.buf, s.max_rw, flags, NULL, NULL);
    int ok = st == STATUS_SUCCESS || smbd_fail(c, "the server's data buffer", st);
    ok = ok && server_accept(&s, port) && server_negotiate(&s) && server_serve(&s);
    if (ok && c->conn) { /* the client went first; this side's disconnect then flushes its QP */
        st = c->conn->Dispatch->NdkDisconnect(c->conn, consumer_call_done, &c->call);
        st = consumer_call_wait(&c->call, st, c->wait_ms);
        if (st != STATUS_SUCCESS)
            ok = smbd_fail(c, "NdkDisconnect after the client's", st);
    }
    if (ok && s.errors)
        ok = smbd_fail(c, "requests answered with an error status", STATUS_DATA_ERROR);
    if (ok && s.writes + s.reads == 0)
        ok = smbd_fail(c, "the client disconnected before any READ or WRITE", STATUS_CONNECTION_DISCONNECTED);
    if (ok)
        printf("server: the client disconnected after %u WRITEs and %u READs, every byte checked\n", s.writes,
               s.reads);
    if (s.mr)
        NdkCloseObject(&s.mr->Header, NULL, NULL);
    smbd_close(c);
    printf("server: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

/* ================================ client ================================ */

struct client {
    struct smbd_conn c;
    MDL *buf;           /* the buffer each READ and WRITE names */
    NDK_MR *fr;         /* fast-register MR over it: one token, re-registered each time */
    NDK_LOGICAL_ADDRESS *pages;
    ULONG npages, bytes;
    uint32_t max_rw;
    int verbose;
};

static int client_connect(struct client *k, const struct in_addr *server, uint16_t port)
{
    struct smbd_conn *c = &k->c;
    NTSTATUS st = c->ad->Dispatch->NdkCreateConnector(c->ad, NULL, NULL, &c->conn);
    if (st != STATUS_SUCCESS)
        return smbd_fail(c, "NdkCreateConnector", st);
    /* the Negotiate Response and what follows land in receives posted before the connection */
    if (!smbd_post_receives(c, SMBD_RQ_DEPTH))
        return 0;
    struct sockaddr_in dst = ipv4_at(server, port);
    st = c->conn->Dispatch->NdkConnect(c->conn, c->qp, NULL, 0, (PSOCKADDR)&dst, sizeof(dst),
                                       read_limit(c->info.MaxInboundReadLimit),
                                       read_limit(c->info.MaxOutboundReadLimit), NULL, 0, consumer_call_done, &c->call);
    if (!wait_call(c, st, "NdkConnect"))
        return 0;
    st = c->conn->Dispatch->NdkCompleteConnect(c->conn, on_disconnect, c, consumer_call_done, &c->call);
    if (!wait_call(c, st, "NdkCompleteConnect"))
        return 0;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, server, ip, sizeof(ip));
    printf("client: connected to %s port %u\n", ip, (unsigned)port);
    return 1;
}

static int client_negotiate(struct client *k)
{
    struct smbd_conn *c = &k->c;
    struct smbd_neg_req req = {.min_version = SMBD_VERSION_1,
                               .max_version = SMBD_VERSION_1,
                               .credits_requested = SMBD_RQ_DEPTH,
                               .preferred_send_size = SMBD_MSG_SIZE,
                               .max_receive_size = SMBD_MSG_SIZE,
                               .max_fragmented_size = SMBD_MIN_FRAGMENTED};
    uint8_t msg[SMBD_MSG_SIZE];
    smbd_put_neg_req(msg, &req);
    if (!smbd_send_raw(c, msg, SMBD_NEG_REQ_LEN, 0, 0))
        return 0;
    size_t n = 0;
    NDK_RESULT_EX r;
    if (!arrived(c, smbd_receive(c, msg, sizeof(msg), &n, &r), "the server's Negotiate Response"))
        return 0;
    struct smbd_neg_resp resp;
    const char *why = smbd_get_neg_resp(msg, n, &resp);
    if (why) {
        fprintf(stderr, "client: FAILED: protocol: %s (Status 0x%08x)\n", why, (unsigned)resp.status);
        return 0;
    }
    c->send_credits = resp.credits_granted;
    c->target = resp.credits_requested;
    c->max_fragmented = resp.max_fragmented_size;
    k->max_rw = resp.max_read_write_size;
    if (k->bytes > k->max_rw) {
        fprintf(stderr, "client: FAILED: --bytes %u exceeds the server's MaxReadWriteSize %u\n", (unsigned)k->bytes,
                (unsigned)k->max_rw);
        return 0;
    }
    printf("client: negotiated version 0x%04x: %u send credits, the server asks for %u, MaxReadWriteSize %u\n",
           resp.negotiated_version, resp.credits_granted, resp.credits_requested, (unsigned)resp.max_read_write_size);
    return smbd_post_receives(c, SMBD_RQ_DEPTH);
}

__attribute__((format(printf, 2, 3))) static void say(const struct client *k, const char *fmt, ...)
{
    if (!k->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("client:   ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* One WRITE (the server RDMA-Reads the buffer) or READ (it RDMA-Writes it). */
static int client_io(struct client *k, int write, uint32_t id, uint64_t file_offset)
{
    struct smbd_conn *c = &k->c;
    NDK_QP *qp = c->qp;
    NTSTATUS st;
    if (write)
        st = pattern_io(c, k->buf, id, k->bytes, 0) ? STATUS_SUCCESS : STATUS_INTERNAL_ERROR;
    else { /* bytes the server does not write show up as 0xEE */
        uint8_t *p = malloc(k->bytes);
        st = p ? STATUS_SUCCESS : STATUS_INSUFFICIENT_RESOURCES;
        if (p)
            memset(p, 0xEE, k->bytes);
        if (p)
            st = NdkFpgaWriteBuffer(c->ad, k->buf, 0, p, k->bytes);
        free(p);
    }
    if (st != STATUS_SUCCESS)
        return smbd_fail(c, "filling the client's buffer", st);
    void *va = MmGetMdlVirtualAddress(k->buf);
    st = qp->Dispatch->NdkFastRegister(qp, (PVOID)0xF0, k->fr, k->npages, k->pages, 0, k->bytes, va,
                                       write ? NDK_OP_FLAG_ALLOW_REMOTE_READ : NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    if (st != STATUS_SUCCESS)
        return smbd_fail(c, "NdkFastRegister", st);
    if (!smbd_complete(c, NdkOperationTypeFastRegister, (PVOID)0xF0, "NdkFastRegister"))
        return 0;
    const UINT32 token = k->fr->Dispatch->NdkGetRemoteTokenFromMr(k->fr);
    say(k, write ? "fast-registered %u bytes for remote read, token 0x%08x" :
                   "fast-registered %u bytes for remote write, token 0x%08x", (unsigned)k->bytes, (unsigned)token);
    struct smbd_app q = {.command = write ? SMBD_APP_WRITE : SMBD_APP_READ,
                         .message_id = id,
                         .length = k->bytes,
                         .file_offset = file_offset,
                         .channel = write ? SMBD_CHANNEL_RDMA_V1 : SMBD_CHANNEL_RDMA_V1_INVALIDATE,
                         .n_desc = 1,
                         .desc = {.offset = (uint64_t)(uintptr_t)va, .token = token, .length = k->bytes}};
    uint8_t payload[SMBD_MSG_SIZE];
    smbd_put_app(payload, &q);
    if (!smbd_send_data(c, payload, SMBD_APP_LEN, 0, 0, 0))
        return 0;
    say(k, "%s request %u sent: descriptor {0x%" PRIx64 ", token 0x%08x, %u bytes}, channel %s", write ? "WRITE" : "READ",
        (unsigned)id, q.desc.offset, (unsigned)token, (unsigned)k->bytes, write ? "RDMA_V1" : "RDMA_V1_INVALIDATE");
    struct smbd_data h;
    size_t len = 0;
    NDK_RESULT_EX r;
    if (!arrived(c, smbd_receive_data(c, &h, payload, &len, &r), "the server's answer"))
        return 0;
    struct smbd_app a;
    const char *why = smbd_get_app(payload, len, &a);
    if (why)
        return smbd_fail(c, why, STATUS_INVALID_PARAMETER);
    if (a.command != q.command || !(a.flags & SMBD_APP_RESPONSE) || a.message_id != id) {
        fprintf(stderr, "client: FAILED: the answer to message %u is command 0x%x flags 0x%x id %u\n", (unsigned)id,
                a.command, a.flags, (unsigned)a.message_id);
        return 0;
    }
    if (a.status != STATUS_SUCCESS || a.length != k->bytes) {
        fprintf(stderr, "client: FAILED: the server answered message %u with %s, %u bytes\n", (unsigned)id,
                NdkFpgaStatusName((NTSTATUS)a.status), (unsigned)a.length);
        return 0;
    }
    if (write) { /* RDMA_V1: the buffer stays registered until this side invalidates it */
        if (r.Type != NdkOperationTypeReceive)
            return smbd_fail(c, "the WRITE's answer invalidated a token", STATUS_INVALID_PARAMETER);
        st = qp->Dispatch->NdkInvalidate(qp, (PVOID)0xF1, &k->fr->Header, 0);
        if (st != STATUS_SUCCESS || !smbd_complete(c, NdkOperationTypeInvalidate, (PVOID)0xF1, "NdkInvalidate"))
            return st == STATUS_SUCCESS ? 0 : smbd_fail(c, "NdkInvalidate", st);
        say(k, "WRITE answered: SUCCESS, %u bytes; token 0x%08x invalidated here (NdkInvalidate)", (unsigned)a.length,
            (unsigned)token);
        return 1;
    }
    if (r.Type != NdkOperationTypeReceiveAndInvalidate || r.TypeSpecificCompletionOutput != token) {
        fprintf(stderr, "client: FAILED: the READ's answer completed type 0x%x token 0x%08" PRIx64
                        " (expected ReceiveAndInvalidate, 0x%08x)\n", (unsigned)r.Type,
                (uint64_t)r.TypeSpecificCompletionOutput, (unsigned)token);
        return 0;
    }
    if (!pattern_io(c, k->buf, id, k->bytes, 1))
        return smbd_fail(c, "the bytes the server wrote", STATUS_DATA_ERROR);
    say(k, "READ answered by SendAndInvalidate: ReceiveAndInvalidate of token 0x%08x, %u bytes all right",
        (unsigned)token, (unsigned)k->bytes);
    return 1;
}

static int client_setup(struct client *k)
{
    struct smbd_conn *c = &k->c;
    k->npages = (k->bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    if (k->npages > c->info.FRMRPageCount) {
        fprintf(stderr, "client: FAILED: --bytes %u needs %u pages; the adapter fast-registers %u\n",
                (unsigned)k->bytes, (unsigned)k->npages, (unsigned)c->info.FRMRPageCount);
        return 0;
    }
    NTSTATUS st = NdkFpgaAllocateBuffer(c->ad, (SIZE_T)k->npages * PAGE_SIZE, &k->buf);
    if (st == STATUS_SUCCESS)
        st = c->pd->Dispatch->NdkCreateMr(c->pd, TRUE, NULL, NULL, &k->fr);
    if (st == STATUS_SUCCESS)
        st = k->fr->Dispatch->NdkInitializeFastRegisterMr(k->fr, k->npages, TRUE, NULL, NULL);
    k->pages = calloc(k->npages, sizeof(*k->pages));
    if (st == STATUS_SUCCESS && !k->pages)
        st = STATUS_INSUFFICIENT_RESOURCES;
    if (st != STATUS_SUCCESS)
        return smbd_fail(c, "the client's buffer and fast-register MR", st);
    for (ULONG i = 0; i < k->npages; i++)
        k->pages[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(k->buf)[i] << PAGE_SHIFT;
    return 1;
}

static int client_run(const char *dev, const struct in_addr *server, uint16_t port, unsigned iters, ULONG bytes)
{
    struct client k;
    memset(&k, 0, sizeof(k));
    k.bytes = bytes;
    struct smbd_conn *c = &k.c;
    int ok = smbd_open(c, "client", dev) && client_setup(&k) && client_connect(&k, server, port) &&
             client_negotiate(&k);
    uint64_t t0 = consumer_now_ms();
    for (unsigned i = 0; ok && i < iters; i++) {
        k.verbose = i == 0;
        if (k.verbose)
            printf("client: round 1:\n");
        ok = client_io(&k, 1, 2 * i + 1, (uint64_t)i * bytes) && client_io(&k, 0, 2 * i + 2, (uint64_t)i * bytes);
        if (ok && ((i + 1) % 100 == 0 || i + 1 == iters))
            printf("client: %u rounds of WRITE and READ of %u bytes, every byte checked (%llu ms)\n", i + 1,
                   (unsigned)bytes, (unsigned long long)(consumer_now_ms() - t0));
    }
    if (ok) { /* a keep-alive: no payload, the server must answer at once */
        struct smbd_data h;
        uint8_t payload[SMBD_MSG_SIZE];
        size_t len = 1;
        NDK_RESULT_EX r;
        ok = smbd_send_data(c, NULL, 0, SMBD_RESPONSE_REQUESTED, 0, 0) &&
             arrived(c, smbd_receive_data(c, &h, payload, &len, &r), "the answer to the keep-alive");
        if (ok && len != 0)
            ok = smbd_fail(c, "the keep-alive's answer carries data", STATUS_INVALID_PARAMETER);
        if (ok)
            printf("client: keep-alive answered; %u send credits held\n", c->send_credits);
    }
    if (ok) {
        NTSTATUS st = c->conn->Dispatch->NdkDisconnect(c->conn, consumer_call_done, &c->call);
        ok = wait_call(c, st, "NdkDisconnect");
    }
    if (k.fr)
        NdkCloseObject(&k.fr->Header, NULL, NULL);
    smbd_close(c);
    free(k.pages);
    printf("client: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

/* ================================ command line ================================ */

static int usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s server DEVICE [--port P]\n"
            "       %s client DEVICE SERVER_IP [--port P] [--iterations N] [--bytes B]\n"
            "DEVICE is a device string with a network port (model,net=SEG,ip=A.B.C.D/N);\n"
            "the port is %u unless given, N 1 and B 4096 unless given\n",
            prog, prog, SMBD_PORT);
    return 2;
}

/* A decimal number in [lo, hi], or 0 (with *ok cleared) when it is not one. */
static unsigned long number(const char *s, unsigned long lo, unsigned long hi, int *ok)
{
    char *end = NULL;
    unsigned long v = s ? strtoul(s, &end, 10) : 0;
    if (!s || !*s || *end || v < lo || v > hi)
        *ok = 0;
    return v;
}

int smbd_main(int argc, char **argv)
{
    int server = strcmp(argv[1], "server") == 0, ok = 1, fixed = server ? 3 : 4;
    if (argc < fixed || argv[2][0] == '-')
        return usage(argv[0]);
    unsigned long port = SMBD_PORT, iters = 1, bytes = 4096;
    for (int i = fixed; ok && i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--port") == 0)
            port = number(v, 1, 65535, &ok);
        else if (!server && strcmp(argv[i], "--iterations") == 0)
            iters = number(v, 1, 1000000, &ok);
        else if (!server && strcmp(argv[i], "--bytes") == 0)
            bytes = number(v, 1, 1u << 20, &ok);
        else
            ok = 0;
    }
    struct in_addr ip;
    if (!ok || (!server && inet_pton(AF_INET, argv[3], &ip) != 1))
        return usage(argv[0]);
    if (server)
        return server_run(argv[2], (uint16_t)port);
    return client_run(argv[2], &ip, (uint16_t)port, (unsigned)iters, (ULONG)bytes);
}
