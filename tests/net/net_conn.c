/* SPDX-License-Identifier: Apache-2.0 */
/* NDK connections between two adapters on one segment, through the public API only:
 * NdkListen, NdkConnect, NdkAccept, NdkReject, NdkCompleteConnect,
 * NdkGetConnectionData, NdkGetLocalAddress/NdkGetPeerAddress and NdkDisconnect go on
 * the wire (IB CM), and Send, Write, Read and SendAndInvalidate cross it.
 *   net_conn DEVICE_A DEVICE_B [BIG]   (each a device string with net= and ip=)
 *   net_conn kill DEVICE_A DEVICE_B    B in a child process, killed mid-transfer
 * Prints TAP lines; exits 1 when a check failed. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../consumer.h"
#include "../tap.h"

#define PORT 4791u
#define BUF_BYTES (256u * 1024u)
#define WAIT_MS 60000
#define MR_REMOTE (NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_ALLOW_REMOTE_WRITE)
#define NDK_MAX_PDATA 148u /* MaxCalleeData */

/* One adapter's side: its objects, a buffer registered for remote access, its address. */
struct side {
    const char *name;
    NDK_ADAPTER *ad;
    NDK_PD *pd;
    NDK_CQ *cq;
    MDL *buf;
    NDK_MR *mr;
    struct sockaddr_in ip; /* port 0 */
    struct consumer_session s;
};

static struct consumer_call disc_a, disc_b; /* DisconnectEvents */
static int disc_count_a, disc_count_b;

static VOID on_disc(PVOID ctx)
{
    struct consumer_call *k = ctx;
    __atomic_add_fetch(k == &disc_a ? &disc_count_a : &disc_count_b, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&k->done, 1, __ATOMIC_RELEASE);
}

static NTSTATUS wait_call(struct consumer_call *k, NTSTATUS st)
{
    return consumer_call_wait(k, st, WAIT_MS);
}

static int side_open(struct side *d, const char *name, const char *dev)
{
    memset(d, 0, sizeof(*d));
    d->name = name;
    d->s.wait_ms = WAIT_MS;
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &d->ad);
    if (!tap_ok(st == STATUS_SUCCESS, "%s: open %s (%s %s)", name, dev, NdkFpgaStatusName(st),
                NdkFpgaErrorMessage(NULL)))
        return 0;
    d->s.ad = d->ad;
    NDKFPGA_PORT_ADDRESS pa;
    memset(&pa, 0, sizeof(pa));
    st = NdkFpgaPortAddress(d->ad, 0, &pa);
    d->ip.sin_family = AF_INET;
    memcpy(&d->ip.sin_addr, pa.Ipv4, 4);
    struct consumer_call k = {0, 0, NULL};
    if (st == STATUS_SUCCESS)
        st = d->ad->Dispatch->NdkCreatePd(d->ad, NULL, NULL, &d->pd);
    if (st == STATUS_SUCCESS)
        st = d->ad->Dispatch->NdkCreateCq(d->ad, 256, NULL, NULL, NULL, NULL, NULL, &d->cq);
    if (st == STATUS_SUCCESS)
        st = NdkFpgaAllocateBuffer(d->ad, BUF_BYTES, &d->buf);
    if (st == STATUS_SUCCESS)
        st = d->pd->Dispatch->NdkCreateMr(d->pd, FALSE, NULL, NULL, &d->mr);
    if (st == STATUS_SUCCESS)
        st = wait_call(&k, d->mr->Dispatch->NdkRegisterMr(d->mr, d->buf, BUF_BYTES, MR_REMOTE, consumer_call_done, &k));
    return tap_ok(st == STATUS_SUCCESS, "%s: address, PD, CQ, a %u-byte buffer registered for remote access (%s)",
                  name, BUF_BYTES, NdkFpgaStatusName(st));
}

static struct sockaddr_in at(const struct side *d, uint16_t port)
{
    struct sockaddr_in a = d->ip;
    a.sin_port = htons(port);
    return a;
}

static NDK_QP *new_qp(struct side *d)
{
    NDK_QP *qp = NULL;
    NTSTATUS st = consumer_qp_rq(d->pd, d->cq, d->cq, 8, 2, 16, 2, NULL, &qp);
    return st == STATUS_SUCCESS ? qp : NULL;
}

static uint8_t pattern(size_t i, unsigned seed)
{
    return (uint8_t)(i * 131u + seed * 17u + (i >> 8));
}

static void fill(struct side *d, size_t off, size_t n, unsigned seed)
{
    uint8_t *p = malloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(i, seed);
    NdkFpgaWriteBuffer(d->ad, d->buf, off, p, n);
    free(p);
}

static int same(struct side *d, size_t off, size_t n, unsigned seed)
{
    uint8_t *p = malloc(n);
    int ok = NdkFpgaReadBuffer(d->ad, d->buf, off, p, n) == STATUS_SUCCESS;
    for (size_t i = 0; ok && i < n; i++)
        ok = p[i] == pattern(i, seed);
    free(p);
    return ok;
}

static uint64_t va(const struct side *d, size_t off)
{
    return (uint64_t)(uintptr_t)MmGetMdlVirtualAddress(d->buf) + off;
}

/* The next result of d's CQ (status, bytes), or status IO_TIMEOUT. */
static NDK_RESULT_EX result(struct side *d)
{
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    if (!consumer_cq_wait(d->cq, &r, WAIT_MS))
        r.Status = STATUS_IO_TIMEOUT;
    return r;
}

/* A connection from qa (side a) to b's listener; accept with pdata of bpd_len bytes. */
struct conn {
    NDK_QP *qa, *qb;
    NDK_CONNECTOR *ca, *cb;
};

/* A connects to B asking for read limits ird/ord (B accepts with 1/2); check: the
 * connection data and addresses are checked too (for 2/3). */
static int connect_limits(struct side *a, struct side *b, struct conn *c, int check, ULONG ird, ULONG ord)
{
    uint8_t apd[56], bpd[148], got[160];
    for (unsigned i = 0; i < sizeof(apd); i++)
        apd[i] = (uint8_t)(0xA0 + i);
    for (unsigned i = 0; i < sizeof(bpd); i++)
        bpd[i] = (uint8_t)(3 * i + 1);
    memset(c, 0, sizeof(*c));
    c->qa = new_qp(a);
    c->qb = new_qp(b);
    struct consumer_call kc = {0, 0, NULL}, ka = {0, 0, NULL};
    NTSTATUS st = a->ad->Dispatch->NdkCreateConnector(a->ad, NULL, NULL, &c->ca);
    struct sockaddr_in dst = at(b, b->s.port);
    NTSTATUS cst = st == STATUS_SUCCESS && c->qa && c->qb
                       ? c->ca->Dispatch->NdkConnect(c->ca, c->qa, NULL, 0, (PSOCKADDR)&dst, sizeof(dst), ird, ord, apd,
                                                     sizeof(apd), consumer_call_done, &kc)
                       : STATUS_INSUFFICIENT_RESOURCES;
    if (!tap_ok(cst == STATUS_PENDING, "NdkConnect %s -> %s:%u with 56 bytes of private data: PENDING (%s)", a->name,
                b->name, b->s.port, NdkFpgaStatusName(cst)))
        return 0;
    st = wait_call(&b->s.incoming, STATUS_PENDING);
    c->cb = b->s.incoming.obj;
    if (!tap_ok(st == STATUS_SUCCESS && c->cb, "%s's ConnectEvent (%s)", b->name, NdkFpgaStatusName(st)))
        return 0;
    if (check) {
        ULONG ird = 0, ord = 0, plen = sizeof(got);
        st = c->cb->Dispatch->NdkGetConnectionData(c->cb, &ird, &ord, got, &plen);
        tap_ok(st == STATUS_SUCCESS && plen == sizeof(apd) && !memcmp(got, apd, sizeof(apd)) && ird == 3 && ord == 2,
               "incoming NdkGetConnectionData: the caller's 56 bytes, its read limits 2/3 seen from here as 3/2 (%s, "
               "%lu bytes, %lu/%lu)",
               NdkFpgaStatusName(st), (unsigned long)plen, (unsigned long)ird, (unsigned long)ord);
        struct sockaddr_in peer, local;
        ULONG pl = sizeof(peer), ll = sizeof(local);
        NTSTATUS s1 = c->cb->Dispatch->NdkGetPeerAddress(c->cb, (PSOCKADDR)&peer, &pl);
        NTSTATUS s2 = c->cb->Dispatch->NdkGetLocalAddress(c->cb, (PSOCKADDR)&local, &ll);
        tap_ok(s1 == STATUS_SUCCESS && s2 == STATUS_SUCCESS && peer.sin_addr.s_addr == a->ip.sin_addr.s_addr &&
                   ntohs(peer.sin_port) >= 49152 && local.sin_addr.s_addr == b->ip.sin_addr.s_addr &&
                   ntohs(local.sin_port) == PORT,
               "incoming connector's addresses: peer %s:%u (ephemeral), local %s:%u", a->name, ntohs(peer.sin_port),
               b->name, ntohs(local.sin_port));
    }
    NTSTATUS ast = c->cb->Dispatch->NdkAccept(c->cb, c->qb, 1, 2, bpd, sizeof(bpd), on_disc, &disc_b,
                                              consumer_call_done, &ka);
    st = wait_call(&kc, cst);
    if (!tap_ok(ast == STATUS_PENDING && st == STATUS_SUCCESS, "NdkAccept PENDING, the connect completes SUCCESS (%s, %s)",
                NdkFpgaStatusName(ast), NdkFpgaStatusName(st)))
        return 0;
    if (check) {
        ULONG ird = 0, ord = 0, plen = sizeof(got);
        st = c->ca->Dispatch->NdkGetConnectionData(c->ca, &ird, &ord, got, &plen);
        tap_ok(st == STATUS_SUCCESS && plen == sizeof(bpd) && !memcmp(got, bpd, sizeof(bpd)) && ird == 2 && ord == 1,
               "NdkGetConnectionData: the acceptor's 148 bytes; effective limits 2/1 from 2/3 asked and 1/2 accepted "
               "(%s, %lu bytes, %lu/%lu)",
               NdkFpgaStatusName(st), (unsigned long)plen, (unsigned long)ird, (unsigned long)ord);
        struct sockaddr_in local;
        ULONG ll = sizeof(local);
        st = c->ca->Dispatch->NdkGetLocalAddress(c->ca, (PSOCKADDR)&local, &ll);
        tap_ok(st == STATUS_SUCCESS && local.sin_addr.s_addr == a->ip.sin_addr.s_addr && ntohs(local.sin_port) >= 49152,
               "the caller's NdkGetLocalAddress: its address and an ephemeral port (%u)", ntohs(local.sin_port));
    }
    st = wait_call(&kc, c->ca->Dispatch->NdkCompleteConnect(c->ca, on_disc, &disc_a, consumer_call_done, &kc));
    NTSTATUS st2 = wait_call(&ka, ast);
    return tap_ok(st == STATUS_SUCCESS && st2 == STATUS_SUCCESS,
                  "NdkCompleteConnect and the accept complete SUCCESS (%s, %s)", NdkFpgaStatusName(st),
                  NdkFpgaStatusName(st2));
}

static int connect_pair(struct side *a, struct side *b, struct conn *c, int check)
{
    return connect_limits(a, b, c, check, 2, 3);
}

static NDK_SGE sge(struct side *d, size_t off, ULONG n)
{
    return consumer_sge(d->buf, d->mr, off, n);
}

/* A Send of n bytes from s to r (r's receive posted first), every byte checked. */
static void send_check(struct side *s, NDK_QP *qs, struct side *r, NDK_QP *qr, size_t n, unsigned seed)
{
    fill(s, 0, n, seed);
    NDK_SGE rs[2] = {sge(r, 0x10000, (ULONG)(n / 2 + 1)), sge(r, 0x20000, (ULONG)n)};
    NDK_SGE ss = sge(s, 0, (ULONG)n);
    NTSTATUS p1 = qr->Dispatch->NdkReceive(qr, (PVOID)1, rs, 2);
    NTSTATUS p2 = qs->Dispatch->NdkSend(qs, (PVOID)2, &ss, 1, 0);
    NDK_RESULT_EX x = result(s), y = result(r);
    if (x.RequestContext == (PVOID)1) { /* one CQ for both: the receive came first */
        NDK_RESULT_EX t = x;
        x = y;
        y = t;
    }
    size_t first = n / 2 + 1 < n ? n / 2 + 1 : n;
    int ok = p1 == STATUS_SUCCESS && p2 == STATUS_SUCCESS && x.Status == STATUS_SUCCESS && y.Status == STATUS_SUCCESS &&
             y.BytesTransferred == n;
    /* the received bytes: first into SGE 0, the rest into SGE 1 */
    uint8_t *got = malloc(n), *want = malloc(n);
    if (ok) {
        NdkFpgaReadBuffer(r->ad, r->buf, 0x10000, got, first);
        if (n > first)
            NdkFpgaReadBuffer(r->ad, r->buf, 0x20000, got + first, n - first);
        for (size_t i = 0; i < n; i++)
            want[i] = pattern(i, seed);
        ok = !memcmp(got, want, n);
    }
    free(got);
    free(want);
    tap_ok(ok, "Send %s -> %s of %zu bytes into two receive SGEs, every byte (%s, %s)", s->name, r->name, n,
           NdkFpgaStatusName(x.Status), NdkFpgaStatusName(y.Status));
}

/* Write n bytes from a at 0 into b at off, then Read them back into a at 0x20000. */
static void write_read_check(struct side *a, NDK_QP *qa, struct side *b, size_t off, size_t n, unsigned seed)
{
    fill(a, 0, n, seed);
    UINT32 token = b->mr->Dispatch->NdkGetRemoteTokenFromMr(b->mr);
    NDK_SGE ws = sge(a, 0, (ULONG)n), rs = sge(a, 0x20000, (ULONG)n);
    NTSTATUS p = qa->Dispatch->NdkWrite(qa, (PVOID)3, &ws, 1, va(b, off), token, 0);
    NDK_RESULT_EX x = result(a);
    tap_ok(p == STATUS_SUCCESS && x.Status == STATUS_SUCCESS && same(b, off, n, seed),
           "Write %s -> %s of %zu bytes at offset %zu, every byte (%s)", a->name, b->name, n, off,
           NdkFpgaStatusName(x.Status));
    p = qa->Dispatch->NdkRead(qa, (PVOID)4, &rs, 1, va(b, off), token, 0);
    x = result(a);
    tap_ok(p == STATUS_SUCCESS && x.Status == STATUS_SUCCESS && x.BytesTransferred == n && same(a, 0x20000, n, seed),
           "Read %s <- %s of %zu bytes, every byte (%s)", a->name, b->name, n, NdkFpgaStatusName(x.Status));
}

/* Close what a connection holds: connectors, then QPs (a close never fails). */
static void close_conn(struct conn *c)
{
    NDK_OBJECT_HEADER *o[4] = {c->ca ? &c->ca->Header : NULL, c->cb ? &c->cb->Header : NULL,
                               c->qa ? &c->qa->Header : NULL, c->qb ? &c->qb->Header : NULL};
    for (int i = 0; i < 4; i++)
        if (o[i])
            NdkCloseObject(o[i], NULL, NULL);
    memset(c, 0, sizeof(*c));
}

/* A window of B's MR bound on B's QP: A writes through it inside its range, then one
 * byte past it: ACCESS_VIOLATION, the grant checked where the memory is. */
static void window_check(struct side *a, struct conn *c, struct side *b)
{
    NDK_MW *mw = NULL;
    NTSTATUS st = b->pd->Dispatch->NdkCreateMw(b->pd, NULL, NULL, &mw);
    if (st == STATUS_SUCCESS)
        st = c->qb->Dispatch->NdkBind(c->qb, (PVOID)10, b->mr, mw, (PVOID)(uintptr_t)va(b, 0x8000), 512,
                                      NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    r.Status = st;
    if (st == STATUS_SUCCESS)
        r = result(b);
    if (!tap_ok(r.Status == STATUS_SUCCESS, "%s binds a 512-byte window of its MR for remote write (%s)", b->name,
                NdkFpgaStatusName(r.Status))) {
        if (mw)
            NdkCloseObject(&mw->Header, NULL, NULL);
        return;
    }
    UINT32 token = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
    fill(a, 0, 512, 31);
    NDK_SGE ws = sge(a, 0, 512);
    st = c->qa->Dispatch->NdkWrite(c->qa, (PVOID)11, &ws, 1, va(b, 0x8000), token, 0);
    NDK_RESULT_EX x = result(a);
    tap_ok(st == STATUS_SUCCESS && x.Status == STATUS_SUCCESS && same(b, 0x8000, 512, 31),
           "a Write %s -> %s through the window, its whole range, every byte (%s)", a->name, b->name,
           NdkFpgaStatusName(x.Status));
    ws = sge(a, 0, 2);
    st = c->qa->Dispatch->NdkWrite(c->qa, (PVOID)12, &ws, 1, va(b, 0x8000 + 511), token, 0);
    x = result(a);
    tap_ok(x.Status == STATUS_ACCESS_VIOLATION, "a Write through the window one byte past it: ACCESS_VIOLATION (%s)",
           NdkFpgaStatusName(x.Status));
    NdkCloseObject(&mw->Header, NULL, NULL);
}

/* A Read past the end of B's MR: ACCESS_VIOLATION at A, and B's QP broken too (its
 * next Send does not succeed). */
static void read_past_mr(struct side *a, struct conn *c, struct side *b)
{
    NDK_SGE rs = sge(a, 0, 64);
    UINT32 token = b->mr->Dispatch->NdkGetRemoteTokenFromMr(b->mr);
    NTSTATUS st = c->qa->Dispatch->NdkRead(c->qa, (PVOID)13, &rs, 1, va(b, BUF_BYTES - 32), token, 0);
    NDK_RESULT_EX x = result(a);
    tap_ok(st == STATUS_SUCCESS && x.Status == STATUS_ACCESS_VIOLATION,
           "a Read %s <- %s past the end of the MR: ACCESS_VIOLATION (%s)", a->name, b->name,
           NdkFpgaStatusName(x.Status));
    NDK_SGE ss = sge(b, 0, 8);
    st = c->qb->Dispatch->NdkSend(c->qb, (PVOID)14, &ss, 1, 0);
    NDK_RESULT_EX y;
    memset(&y, 0, sizeof(y));
    y.Status = st;
    if (st == STATUS_SUCCESS)
        y = result(b);
    tap_ok(y.Status != STATUS_SUCCESS && y.Status != STATUS_IO_TIMEOUT,
           "... and %s's QP is broken: its next Send fails (%s)", b->name, NdkFpgaStatusName(y.Status));
}

/* Write big bytes from a fresh buffer of a into one of b at an odd offset, then Read
 * them back into a cleared buffer of a: every byte checked. */
static void big_check(struct side *a, NDK_QP *qa, struct side *b, size_t big)
{
    MDL *sa = NULL, *sb = NULL;
    NDK_MR *ma = NULL, *mb = NULL;
    struct consumer_call k = {0, 0, NULL};
    NTSTATUS st = NdkFpgaAllocateBuffer(a->ad, big, &sa);
    if (st == STATUS_SUCCESS)
        st = NdkFpgaAllocateBuffer(b->ad, big + 1, &sb);
    if (st == STATUS_SUCCESS)
        st = a->pd->Dispatch->NdkCreateMr(a->pd, FALSE, NULL, NULL, &ma);
    if (st == STATUS_SUCCESS)
        st = wait_call(&k, ma->Dispatch->NdkRegisterMr(ma, sa, big, MR_REMOTE, consumer_call_done, &k));
    if (st == STATUS_SUCCESS)
        st = b->pd->Dispatch->NdkCreateMr(b->pd, FALSE, NULL, NULL, &mb);
    if (st == STATUS_SUCCESS)
        st = wait_call(&k, mb->Dispatch->NdkRegisterMr(mb, sb, big + 1, MR_REMOTE, consumer_call_done, &k));
    uint8_t *data = malloc(big), *got = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = pattern(i, 77);
    if (st == STATUS_SUCCESS)
        st = NdkFpgaWriteBuffer(a->ad, sa, 0, data, big);
    if (tap_ok(st == STATUS_SUCCESS, "%zu-byte buffers on both adapters, registered (%s)", big, NdkFpgaStatusName(st))) {
        NDK_SGE s1 = consumer_sge(sa, ma, 0, (ULONG)big);
        UINT64 raddr = (uint64_t)(uintptr_t)MmGetMdlVirtualAddress(sb) + 1;
        UINT32 token = mb->Dispatch->NdkGetRemoteTokenFromMr(mb);
        st = qa->Dispatch->NdkWrite(qa, (PVOID)15, &s1, 1, raddr, token, 0);
        NDK_RESULT_EX x = result(a);
        int ok = st == STATUS_SUCCESS && x.Status == STATUS_SUCCESS &&
                 NdkFpgaReadBuffer(b->ad, sb, 1, got, big) == STATUS_SUCCESS && !memcmp(got, data, big);
        tap_ok(ok, "Write %s -> %s of %zu bytes at an odd offset, every byte (%s)", a->name, b->name, big,
               NdkFpgaStatusName(x.Status));
        memset(got, 0, big);
        NdkFpgaWriteBuffer(a->ad, sa, 0, got, big);
        st = qa->Dispatch->NdkRead(qa, (PVOID)16, &s1, 1, raddr, token, 0);
        x = result(a);
        ok = st == STATUS_SUCCESS && x.Status == STATUS_SUCCESS && x.BytesTransferred == big &&
             NdkFpgaReadBuffer(a->ad, sa, 0, got, big) == STATUS_SUCCESS && !memcmp(got, data, big);
        tap_ok(ok, "Read %s <- %s of %zu bytes back, every byte (%s)", a->name, b->name, big,
               NdkFpgaStatusName(x.Status));
    }
    free(data);
    free(got);
    if (ma)
        NdkCloseObject(&ma->Header, NULL, NULL);
    if (mb)
        NdkCloseObject(&mb->Header, NULL, NULL);
    if (sa)
        NdkFpgaFreeBuffer(a->ad, sa);
    if (sb)
        NdkFpgaFreeBuffer(b->ad, sb);
}

/* The initiator depth agreed is honoured: with 1, four queued Reads all complete, every
 * byte right (one at a time on the wire); with 0 (A asked for no outbound READs), a Read
 * completes INVALID_DEVICE_STATE. */
static void read_depth(struct side *a, struct side *b)
{
    struct conn c;
    if (connect_limits(a, b, &c, 0, 1, 1)) {
        fill(b, 0x20000, 4 * 16384, 51);
        UINT32 token = b->mr->Dispatch->NdkGetRemoteTokenFromMr(b->mr);
        NDK_SGE rs[4];
        int posted = 0;
        for (int i = 0; i < 4; i++) {
            rs[i] = sge(a, 0x10000 + (size_t)i * 16384, 16384);
            posted += c.qa->Dispatch->NdkRead(c.qa, (PVOID)(uintptr_t)(40 + i), &rs[i], 1,
                                              va(b, 0x20000 + (size_t)i * 16384), token, 0) == STATUS_SUCCESS;
        }
        int good = 0;
        for (int i = 0; i < posted; i++)
            good += result(a).Status == STATUS_SUCCESS;
        uint8_t *got = malloc(4 * 16384);
        int same_bytes = NdkFpgaReadBuffer(a->ad, a->buf, 0x10000, got, 4 * 16384) == STATUS_SUCCESS;
        for (size_t i = 0; same_bytes && i < 4 * 16384; i++)
            same_bytes = got[i] == pattern(i, 51);
        free(got);
        tap_ok(posted == 4 && good == 4 && same_bytes,
               "four 16 KiB Reads queued with an initiator depth of 1: all SUCCESS, every byte (%d of %d)", good,
               posted);
    }
    close_conn(&c);
    if (connect_limits(a, b, &c, 0, 1, 0)) {
        NDK_SGE rs = sge(a, 0, 64);
        UINT32 token = b->mr->Dispatch->NdkGetRemoteTokenFromMr(b->mr);
        NTSTATUS st = c.qa->Dispatch->NdkRead(c.qa, (PVOID)44, &rs, 1, va(b, 0), token, 0);
        NDK_RESULT_EX x;
        memset(&x, 0, sizeof(x));
        x.Status = st;
        if (st == STATUS_SUCCESS)
            x = result(a);
        tap_ok(x.Status == STATUS_INVALID_DEVICE_STATE,
               "a Read on a connection that agreed no outbound READs: INVALID_DEVICE_STATE (%s)",
               NdkFpgaStatusName(x.Status));
    }
    close_conn(&c);
}

static void refusals(struct side *a, struct side *b)
{
    NDK_QP *q = new_qp(a);
    NDK_CONNECTOR *c = NULL;
    struct consumer_call k = {0, 0, NULL};
    a->ad->Dispatch->NdkCreateConnector(a->ad, NULL, NULL, &c);
    struct sockaddr_in nobody = at(b, PORT + 1);
    NTSTATUS st = wait_call(&k, c->Dispatch->NdkConnect(c, q, NULL, 0, (PSOCKADDR)&nobody, sizeof(nobody), 0, 0, NULL,
                                                        0, consumer_call_done, &k));
    tap_ok(st == STATUS_CONNECTION_REFUSED, "a connect to a port nobody listens on: CONNECTION_REFUSED (%s)",
           NdkFpgaStatusName(st));
    NdkCloseObject(&c->Header, NULL, NULL);

    /* rejected with private data */
    a->ad->Dispatch->NdkCreateConnector(a->ad, NULL, NULL, &c);
    struct sockaddr_in dst = at(b, PORT);
    NTSTATUS cst = c->Dispatch->NdkConnect(c, q, NULL, 0, (PSOCKADDR)&dst, sizeof(dst), 0, 0, "hi", 2,
                                           consumer_call_done, &k);
    st = wait_call(&b->s.incoming, STATUS_PENDING);
    NDK_CONNECTOR *in = b->s.incoming.obj;
    NTSTATUS rj = st == STATUS_SUCCESS ? in->Dispatch->NdkReject(in, "no thanks", 9) : st;
    st = wait_call(&k, cst);
    char got[160];
    ULONG plen = sizeof(got);
    NTSTATUS gd = c->Dispatch->NdkGetConnectionData(c, NULL, NULL, got, &plen);
    tap_ok(rj == STATUS_SUCCESS && st == STATUS_CONNECTION_REFUSED && gd == STATUS_SUCCESS && plen >= 9 &&
               !memcmp(got, "no thanks", 9),
           "NdkReject with private data: the connect completes CONNECTION_REFUSED and the caller reads the data "
           "(%s, %s, %s)", NdkFpgaStatusName(rj), NdkFpgaStatusName(st), NdkFpgaStatusName(gd));
    if (in)
        NdkCloseObject(&in->Header, NULL, NULL);
    NdkCloseObject(&c->Header, NULL, NULL);

    /* nobody has the address */
    a->ad->Dispatch->NdkCreateConnector(a->ad, NULL, NULL, &c);
    struct sockaddr_in ghost = at(b, PORT);
    ((uint8_t *)&ghost.sin_addr)[3] ^= 0x40;
    st = wait_call(&k, c->Dispatch->NdkConnect(c, q, NULL, 0, (PSOCKADDR)&ghost, sizeof(ghost), 0, 0, NULL, 0,
                                               consumer_call_done, &k));
    tap_ok(st == STATUS_HOST_UNREACHABLE, "a connect to an address nobody has: HOST_UNREACHABLE (%s)",
           NdkFpgaStatusName(st));
    /* a source address that is not the adapter's */
    struct sockaddr_in wrong = at(b, 0);
    st = c->Dispatch->NdkConnect(c, q, (PSOCKADDR)&wrong, sizeof(wrong), (PSOCKADDR)&dst, sizeof(dst), 0, 0, NULL, 0,
                                 consumer_call_done, &k);
    tap_ok(st == STATUS_INVALID_ADDRESS, "a connect from another adapter's address: INVALID_ADDRESS (%s)",
           NdkFpgaStatusName(st));
    NdkCloseObject(&c->Header, NULL, NULL);
    NdkCloseObject(&q->Header, NULL, NULL);

    /* listeners: the port once, the adapter's own address only */
    struct consumer_call ev = {0, 0, NULL};
    NDK_LISTENER *l = NULL;
    b->ad->Dispatch->NdkCreateListener(b->ad, consumer_connect_event, &ev, NULL, NULL, &l);
    struct sockaddr_in same_port = at(b, PORT), other = at(a, PORT + 2);
    NTSTATUS s1 = l->Dispatch->NdkListen(l, (PSOCKADDR)&same_port, sizeof(same_port), NULL, NULL);
    NTSTATUS s2 = l->Dispatch->NdkListen(l, (PSOCKADDR)&other, sizeof(other), NULL, NULL);
    tap_ok(s1 == STATUS_SHARING_VIOLATION && s2 == STATUS_INVALID_ADDRESS,
           "NdkListen on a port in use: SHARING_VIOLATION (%s); on another adapter's address: INVALID_ADDRESS (%s)",
           NdkFpgaStatusName(s1), NdkFpgaStatusName(s2));
    struct sockaddr_in eph = at(b, 0), got_a;
    ULONG gl = sizeof(got_a);
    NTSTATUS s3 = l->Dispatch->NdkListen(l, (PSOCKADDR)&eph, sizeof(eph), NULL, NULL);
    NTSTATUS s4 = l->Dispatch->NdkGetLocalAddress(l, (PSOCKADDR)&got_a, &gl);
    tap_ok(s3 == STATUS_SUCCESS && s4 == STATUS_SUCCESS && ntohs(got_a.sin_port) >= 49152,
           "NdkListen on port 0 takes an ephemeral port (%u)", ntohs(got_a.sin_port));
    NdkCloseObject(&l->Header, NULL, NULL);
}

/* SendAndInvalidate from a invalidates b's fast-registered MR on b. */
static void send_invalidate(struct side *a, struct conn *c, struct side *b)
{
    NDK_MR *fmr = NULL;
    struct consumer_call k = {0, 0, NULL};
    NTSTATUS st = b->pd->Dispatch->NdkCreateMr(b->pd, TRUE, NULL, NULL, &fmr);
    if (st == STATUS_SUCCESS)
        st = wait_call(&k, fmr->Dispatch->NdkInitializeFastRegisterMr(fmr, 2, TRUE, consumer_call_done, &k));
    NDK_LOGICAL_ADDRESS pages[2];
    ULONG lsize = sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + 2 * sizeof(NDK_LOGICAL_ADDRESS);
    NDK_LOGICAL_ADDRESS_MAPPING *lam = calloc(1, lsize);
    ULONG fbo = 0;
    if (st == STATUS_SUCCESS)
        st = wait_call(&k, b->ad->Dispatch->NdkBuildLAM(b->ad, b->buf, 2 * PAGE_SIZE, consumer_call_done, &k, lam,
                                                        &lsize, &fbo));
    if (st == STATUS_SUCCESS) {
        pages[0] = lam->AdapterPageArray[0];
        pages[1] = lam->AdapterPageArray[1];
        st = c->qb->Dispatch->NdkFastRegister(c->qb, (PVOID)5, fmr, 2, pages, 0, 2 * PAGE_SIZE,
                                              MmGetMdlVirtualAddress(b->buf), NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    }
    NDK_RESULT_EX r;
    memset(&r, 0, sizeof(r));
    r.Status = st;
    if (st == STATUS_SUCCESS)
        r = result(b);
    if (!tap_ok(r.Status == STATUS_SUCCESS, "%s fast-registers 2 pages for remote write (%s)", b->name,
                NdkFpgaStatusName(r.Status)))
        return;
    UINT32 token = fmr->Dispatch->NdkGetRemoteTokenFromMr(fmr);
    NDK_SGE rs = sge(b, 0x30000, 64), ss = sge(a, 0, 16);
    c->qb->Dispatch->NdkReceive(c->qb, (PVOID)6, &rs, 1);
    st = c->qa->Dispatch->NdkSendAndInvalidate(c->qa, (PVOID)7, &ss, 1, 0, token);
    NDK_RESULT_EX x = result(a), y = result(b);
    tap_ok(st == STATUS_SUCCESS && x.Status == STATUS_SUCCESS && y.Status == STATUS_SUCCESS &&
               y.Type == NdkOperationTypeReceiveAndInvalidate && y.TypeSpecificCompletionOutput == token,
           "SendAndInvalidate %s -> %s: the receive completes RECEIVE_AND_INVALIDATE with the token (%s, %s, type %d)",
           a->name, b->name, NdkFpgaStatusName(x.Status), NdkFpgaStatusName(y.Status), (int)y.Type);
    NDK_SGE ws = sge(a, 0, 16);
    st = c->qa->Dispatch->NdkWrite(c->qa, (PVOID)8, &ws, 1, va(b, 0), token, 0);
    x = result(a);
    tap_ok(x.Status == STATUS_ACCESS_VIOLATION,
           "a Write through the invalidated token: ACCESS_VIOLATION at the requester (%s)", NdkFpgaStatusName(x.Status));
    NdkCloseObject(&fmr->Header, NULL, NULL);
    b->ad->Dispatch->NdkReleaseLAM(b->ad, lam);
    free(lam);
}

/* The adapter's nonzero counters as TAP comments (all: every one, else only the
 * retransmissions): what its port and transport saw. */
static void dump_counters(const struct side *d, int all)
{
    ULONG n = 0;
    NdkFpgaQueryCounters(d->ad, NULL, &n);
    NDKFPGA_COUNTER *c = calloc(n, sizeof(*c));
    if (c && NdkFpgaQueryCounters(d->ad, c, &n) == STATUS_SUCCESS)
        for (ULONG i = 0; i < n; i++)
            if (c[i].Value && c[i].Group != NDKFPGA_COUNTER_HOST_LINK &&
                (all || !strcmp(c[i].Name, "rc_retransmits") || !strcmp(c[i].Name, "cm_resends")))
                printf("# %s: %s %llu\n", d->name, c[i].Name, (unsigned long long)c[i].Value);
    free(c);
}

/* The child of kill_case: B listens, accepts with its buffer's address and token as
 * private data, says so on fd, and waits to be killed. Prints nothing (the TAP lines
 * are the parent's); exits 1 if a step fails. */
static int peer_child(const char *dev, int fd)
{
    struct side b;
    if (!freopen("/dev/null", "w", stdout) || !side_open(&b, "B", dev) || consumer_listen(&b.s, PORT + 5))
        return 1;
    NTSTATUS st = wait_call(&b.s.incoming, STATUS_PENDING);
    NDK_CONNECTOR *cb = b.s.incoming.obj;
    NDK_QP *qb = new_qp(&b);
    if (st != STATUS_SUCCESS || !cb || !qb)
        return 1;
    struct {
        uint64_t va;
        uint32_t token, ip;
    } pd = {va(&b, 0), b.mr->Dispatch->NdkGetRemoteTokenFromMr(b.mr), b.ip.sin_addr.s_addr};
    struct consumer_call k = {0, 0, NULL};
    st = wait_call(&k, cb->Dispatch->NdkAccept(cb, qb, 0, 0, &pd, sizeof(pd), NULL, NULL, consumer_call_done, &k));
    if (st != STATUS_SUCCESS || write(fd, "R", 1) != 1)
        return 1;
    for (;;)
        pause();
}

/* A child process of ours running the program comm (the library's nfmodel), or 0. */
static pid_t child_named(const char *comm)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && !found && (e = readdir(d))) {
        char path[300], name[64];
        int pid = 0, ppid = 0;
        char state;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fscanf(f, "%d (%63[^)]) %c %d", &pid, name, &state, &ppid) == 4 && ppid == getpid() &&
            !strcmp(name, comm))
            found = pid;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

/* The peer adapter killed mid-transfer: every queued Write completes within a bound
 * (the first unanswered IO_TIMEOUT, none left pending) and the DisconnectEvent runs once. */
static int kill_case(const char *dev_a, const char *dev_b)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        _exit(peer_child(dev_b, fds[1]));
    }
    close(fds[1]);
    struct side a;
    if (child < 0 || !side_open(&a, "A", dev_a))
        return 1;
    /* B's address: the second device string's ip= */
    const char *ipo = strstr(dev_b, "ip=");
    char ipbuf[32] = "";
    if (ipo)
        sscanf(ipo + 3, "%31[0-9.]", ipbuf);
    struct sockaddr_in dst = a.ip;
    dst.sin_port = htons(PORT + 5);
    int ok_ip = inet_pton(AF_INET, ipbuf, &dst.sin_addr) == 1;
    NDK_QP *qa = new_qp(&a);
    NDK_CONNECTOR *ca = NULL;
    a.ad->Dispatch->NdkCreateConnector(a.ad, NULL, NULL, &ca);
    struct consumer_call k = {0, 0, NULL};
    char ready = 0;
    NTSTATUS st = ok_ip && qa && ca ? wait_call(&k, ca->Dispatch->NdkConnect(ca, qa, NULL, 0, (PSOCKADDR)&dst,
                                                                            sizeof(dst), 0, 0, NULL, 0,
                                                                            consumer_call_done, &k))
                                    : STATUS_INVALID_PARAMETER;
    if (st == STATUS_SUCCESS)
        st = wait_call(&k, ca->Dispatch->NdkCompleteConnect(ca, on_disc, &disc_a, consumer_call_done, &k));
    if (st == STATUS_SUCCESS && read(fds[0], &ready, 1) != 1)
        st = STATUS_CONNECTION_ABORTED;
    struct {
        uint64_t va;
        uint32_t token, ip;
    } pd;
    uint8_t got[NDK_MAX_PDATA]; /* the REP's private data, zero-padded to what it carries */
    ULONG plen = sizeof(got);
    if (st == STATUS_SUCCESS)
        st = ca->Dispatch->NdkGetConnectionData(ca, NULL, NULL, got, &plen);
    memcpy(&pd, got, sizeof(pd));
    if (!tap_ok(st == STATUS_SUCCESS && ready == 'R', "A connects to B in another process (%s)", NdkFpgaStatusName(st))) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return 1;
    }
    enum { N = 8 };
    fill(&a, 0, 65536, 41);
    NDK_SGE ws = sge(&a, 0, 65536);
    int posted = 0;
    for (int i = 0; i < N; i++)
        posted += qa->Dispatch->NdkWrite(qa, (PVOID)(uintptr_t)(100 + i), &ws, 1, pd.va, pd.token, 0) == STATUS_SUCCESS;
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    uint64_t t0 = consumer_now_ms();
    int done = 0, timeouts = 0, other = 0;
    for (int i = 0; i < posted; i++) {
        NDK_RESULT_EX r = result(&a);
        if (r.Status == STATUS_IO_TIMEOUT && !r.RequestContext)
            break; /* the test's own wait ran out */
        done++;
        timeouts += r.Status == STATUS_IO_TIMEOUT;
        other += r.Status != STATUS_IO_TIMEOUT && r.Status != STATUS_SUCCESS && r.Status != STATUS_CANCELLED;
    }
    double secs = (double)(consumer_now_ms() - t0) / 1000.0;
    tap_ok(posted == N && done == N && timeouts >= 1 && !other,
           "B killed with %d 64 KiB Writes queued: all complete in %.1f s, %d IO_TIMEOUT, the rest SUCCESS or "
           "CANCELLED", posted, secs, timeouts);
    NTSTATUS ev = wait_call(&disc_a, STATUS_PENDING);
    tap_ok(ev == STATUS_SUCCESS && disc_count_a == 1, "A's DisconnectEvent runs once (%s, %d)", NdkFpgaStatusName(ev),
           disc_count_a);
    NdkCloseObject(&ca->Header, NULL, NULL);
    NdkCloseObject(&qa->Header, NULL, NULL);

    /* A's own adapter dies while a connect waits for the board's answer: it completes */
    qa = new_qp(&a);
    ca = NULL;
    a.ad->Dispatch->NdkCreateConnector(a.ad, NULL, NULL, &ca);
    pid_t mine = child_named("nfmodel");
    NTSTATUS cst = qa && ca ? ca->Dispatch->NdkConnect(ca, qa, NULL, 0, (PSOCKADDR)&dst, sizeof(dst), 0, 0, NULL, 0,
                                                      consumer_call_done, &k)
                            : STATUS_INVALID_PARAMETER;
    if (mine > 0)
        kill(mine, SIGKILL);
    st = wait_call(&k, cst);
    tap_ok(mine > 0 && cst == STATUS_PENDING && st != STATUS_IO_TIMEOUT && st != STATUS_SUCCESS,
           "A's adapter killed while a connect waits: the connect completes at once (%s)", NdkFpgaStatusName(st));
    NdkFpgaCloseAdapter(a.ad);
    if (mine > 0)
        waitpid(mine, NULL, 0);
    printf("# %d checks, %d failed\n", tap_count, tap_failures);
    return tap_failures ? 1 : 0;
}

/* Connect, a Send each way, a Write and a Read back, every byte checked; then close. */
static int quick_case(struct side *a, struct side *b)
{
    NTSTATUS st = consumer_listen(&b->s, PORT);
    tap_ok(st == STATUS_SUCCESS, "B listens on any address, port %u (%s)", PORT, NdkFpgaStatusName(st));
    struct conn c;
    if (connect_pair(a, b, &c, 1)) {
        send_check(a, c.qa, b, c.qb, 1000, 1);
        send_check(b, c.qb, a, c.qa, 1500, 11);
        write_read_check(a, c.qa, b, 77, 2000, 3);
    }
    close_conn(&c);
    dump_counters(a, tap_failures != 0);
    dump_counters(b, tap_failures != 0);
    NdkFpgaCloseAdapter(a->ad);
    NdkFpgaCloseAdapter(b->ad);
    printf("# %d checks, %d failed\n", tap_count, tap_failures);
    return tap_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "kill"))
        return kill_case(argv[2], argv[3]);
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: net_conn DEVICE_A DEVICE_B [BIG_BYTES | quick]\n");
        return 2;
    }
    /* quick: connect, a Send each way, a Write and a Read, for adapters slow to simulate */
    int quick = argc > 3 && !strcmp(argv[3], "quick");
    size_t big = argc > 3 && !quick ? strtoul(argv[3], NULL, 0) : 0;
    struct side a, b;
    if (!side_open(&a, "A", argv[1]) || !side_open(&b, "B", argv[2]))
        return 1;
    if (quick)
        return quick_case(&a, &b);
    NDK_ADAPTER_INFO info;
    ULONG isz = sizeof(info);
    NTSTATUS st = a.ad->Dispatch->NdkQueryAdapterInfo(a.ad, &info, &isz);
    tap_ok(st == STATUS_SUCCESS && info.RdmaTechnology == NdkRoCEv2 && info.MaxCallerData == 56 &&
               info.MaxCalleeData == 148,
           "NdkQueryAdapterInfo: RdmaTechnology RoCEv2, MaxCallerData 56, MaxCalleeData 148 (%d, %lu, %lu)",
           (int)info.RdmaTechnology, (unsigned long)info.MaxCallerData, (unsigned long)info.MaxCalleeData);
    st = consumer_listen(&b.s, PORT);
    tap_ok(st == STATUS_SUCCESS, "B listens on any address, port %u (%s)", PORT, NdkFpgaStatusName(st));

    struct conn c;
    if (connect_pair(&a, &b, &c, 1)) {
        static const size_t sizes[] = {1, 1024, 1025, 6000};
        for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            send_check(&a, c.qa, &b, c.qb, sizes[i], i);
            send_check(&b, c.qb, &a, c.qa, sizes[i], i + 10);
        }
        write_read_check(&a, c.qa, &b, 1, 1, 3);
        write_read_check(&a, c.qa, &b, 4097, 65537, 4);
        write_read_check(&b, c.qb, &a, 77, 4096, 5);
        if (big)
            big_check(&a, c.qa, &b, big);

        /* the peer disconnects: B's DisconnectEvent once, its QP not flushed */
        NDK_SGE rs = sge(&a, 0x30000, 64);
        c.qa->Dispatch->NdkReceive(c.qa, (PVOID)9, &rs, 1);
        struct consumer_call k = {0, 0, NULL};
        st = wait_call(&k, c.ca->Dispatch->NdkDisconnect(c.ca, consumer_call_done, &k));
        NDK_RESULT_EX r = result(&a);
        tap_ok(st == STATUS_SUCCESS && r.Status == STATUS_CANCELLED && r.RequestContext == (PVOID)9,
               "NdkDisconnect completes SUCCESS; A's pending receive completes CANCELLED (%s, %s)",
               NdkFpgaStatusName(st), NdkFpgaStatusName(r.Status));
        NTSTATUS ev = wait_call(&disc_b, STATUS_PENDING);
        tap_ok(ev == STATUS_SUCCESS && disc_count_b == 1 && disc_count_a == 0,
               "B's DisconnectEvent runs once; A's does not (%d, %d)", disc_count_b, disc_count_a);
        st = wait_call(&k, c.cb->Dispatch->NdkDisconnect(c.cb, consumer_call_done, &k));
        tap_ok(st == STATUS_SUCCESS && disc_count_b == 1, "B's NdkDisconnect then completes SUCCESS (%s)",
               NdkFpgaStatusName(st));
    }
    close_conn(&c);

    /* each refusal breaks the connection: a fresh one for each */
    if (connect_pair(&a, &b, &c, 0))
        send_invalidate(&a, &c, &b);
    close_conn(&c);
    if (connect_pair(&a, &b, &c, 0))
        window_check(&a, &c, &b);
    close_conn(&c);
    if (connect_pair(&a, &b, &c, 0))
        read_past_mr(&a, &c, &b);
    close_conn(&c);
    read_depth(&a, &b);
    refusals(&a, &b);

    /* this adapter's own address still connects two of its QPs (loopback) */
    struct side self = a;
    memset(&self.s, 0, sizeof(self.s));
    self.s.ad = a.ad;
    self.s.wait_ms = WAIT_MS;
    self.name = "A itself";
    struct conn l;
    st = consumer_listen(&self.s, PORT + 3);
    if (tap_ok(st == STATUS_SUCCESS, "A listens on port %u too (%s)", PORT + 3, NdkFpgaStatusName(st)) &&
        connect_pair(&a, &self, &l, 0))
        send_check(&a, l.qa, &self, l.qb, 3000, 21);
    dump_counters(&a, tap_failures != 0);
    dump_counters(&b, tap_failures != 0);
    NdkFpgaCloseAdapter(a.ad);
    NdkFpgaCloseAdapter(b.ad);
    printf("# %d checks, %d failed\n", tap_count, tap_failures);
    return tap_failures ? 1 : 0;
}
