/* SPDX-License-Identifier: Apache-2.0 */
/* smb_direct: the SMB-Direct pattern of fast-register, Send and SendAndInvalidate.
 *
 * Two modes, told apart by the first argument.
 *
 * Two processes, two adapters ("server" and "client"; examples/smbd_net.c): MS-SMBD as
 * an SMB2 client and server speak it over RoCEv2. The server listens on its adapter's
 * address (port 445 unless --port) and serves one client; the client connects, sends
 * the SMBDirect Negotiate Request, takes the Negotiate Response, then per round a WRITE
 * (its buffer fast-registered for remote read; the server RDMA-Reads it) and a READ (for
 * remote write; the server RDMA-Writes it and answers with SendAndInvalidate, so the
 * client's receive completes ReceiveAndInvalidate with the token), in data transfer
 * messages with credits, each naming the buffer by an SMB_DIRECT_BUFFER_DESCRIPTOR_V1.
 *   smb_direct server DEVICE [--port P]
 *   smb_direct client DEVICE SERVER_IP [--port P] [--iterations N] [--bytes B]
 * DEVICE has a network port: model,net=SEG,ip=10.0.0.1/24 (pcap=FILE captures the port;
 * `tshark -r FILE -Y smb_direct` shows the messages, examples/README.md).
 *
 * Loopback, one adapter (any other first argument): two queue pairs connected in
 * loopback on one adapter, each with a receive queue (depth 16, 2 SGEs). Side A owns a
 * buffer; each iteration:
 *   1. A fast-registers the buffer (the MR was initialized once; the token never changes)
 *   2. A and B post a receive each
 *   3. A Sends B a descriptor {token, address, length}
 *   4. B RDMA-Writes the data through the token
 *   5. B answers with NdkSendAndInvalidate naming the token
 *   6. A's receive completes as ReceiveAndInvalidate with the token (the adapter
 *      invalidated it before A saw the receive); A checks the data
 * The first and last iterations also show that a write through the token is then
 * refused (on a pair of its own: an error completion breaks the connection).
 *
 * With "host", every buffer is ordinary host memory described by IoAllocateMdl +
 * MmBuildMdlForNonPagedPool, as a kernel consumer's would be: A's data buffer goes
 * through NdkBuildLAM to NdkFastRegister, the CPU fills and checks every byte itself,
 * and the library moves them at each hand-over (docs/host-memory.md). Otherwise the
 * buffers are adapter memory (NdkFpgaAllocateBuffer, NdkFpgaWriteBuffer/ReadBuffer).
 *
 * Usage: smb_direct [DEVICE [ITERATIONS [BYTES [host]]]]   (default: model 1 512)
 * Prints each step of the first iteration, then one line per 100 iterations; exits
 * non-zero on the first deviation. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "consumer.h"
#include "ndkfpga.h"
#include "ndkpi.h"
#include "smbd.h"

#define RQ_DEPTH 16
#define RQ_SGE 2
#define MSG 64 /* bytes of each message buffer */
#define PORT 4801

/* Side A's and B's message buffers inside one MDL (one normal MR, local write). */
enum { A_RECV = 0, A_SEND = MSG, B_RECV = 2 * MSG, B_SEND = 3 * MSG, B_DATA = 4 * MSG };

struct smb {
    struct consumer_session s;
    NDK_CQ *icq, *rcq_a, *rcq_b; /* initiator CQ (both sides), receive CQ of each side */
    NDK_PD *pd;
    struct consumer_pair pr; /* qa is side A, qb side B */
    MDL *msgs, *buf;         /* message buffers; A's data buffer (one page) */
    uint8_t *host_msgs, *host_buf; /* host mode: the memory those MDLs describe */
    NDK_LOGICAL_ADDRESS_MAPPING *lam; /* host mode: A's data buffer as adapter addresses */
    NDK_MR *msg_mr, *fr;
    UINT64 va;
    ULONG len;
    int verbose;
    uint16_t src_port;
};

static int fail(const char *what, NTSTATUS st)
{
    printf("FAILED: %s: %s\n", what, NdkFpgaStatusName(st));
    return 0;
}

static int mismatch(const char *what)
{
    printf("FAILED: %s\n", what);
    return 0;
}

static void say(const struct smb *m, const char *line)
{
    if (m->verbose)
        printf("  %s\n", line);
}

/* The next result of cq: it must have status want, type, and request context ctx. */
static int expect(struct smb *m, NDK_CQ *cq, NTSTATUS want, NDK_OPERATION_TYPE type, void *ctx, NDK_RESULT_EX *r,
                  const char *what)
{
    if (!consumer_cq_wait(cq, r, m->s.wait_ms))
        return fail(what, STATUS_IO_TIMEOUT);
    if (r->Status != want || r->Type != type || r->RequestContext != ctx) {
        printf("FAILED: %s: %s type 0x%x ctx %p (expected %s type 0x%x ctx %p)\n", what, NdkFpgaStatusName(r->Status),
               (unsigned)r->Type, r->RequestContext, NdkFpgaStatusName(want), (unsigned)type, ctx);
        return 0;
    }
    return 1;
}

static int setup(struct smb *m, const char *dev)
{
    NDK_ADAPTER *ad = NULL;
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &ad);
    m->s.ad = ad;
    m->s.wait_ms = strncmp(dev, "sim", 3) == 0 ? 60000 : 10000;
    if (st != STATUS_SUCCESS)
        return fail("NdkFpgaOpenAdapter", st);
    NDK_CQ **cqs[3] = {&m->icq, &m->rcq_a, &m->rcq_b};
    for (int i = 0; i < 3 && st == STATUS_SUCCESS; i++)
        st = ad->Dispatch->NdkCreateCq(ad, 64, NULL, NULL, NULL, NULL, NULL, cqs[i]);
    if (st == STATUS_SUCCESS)
        st = ad->Dispatch->NdkCreatePd(ad, NULL, NULL, &m->pd);
    if (st == STATUS_SUCCESS)
        st = consumer_listen(&m->s, PORT);
    if (st != STATUS_SUCCESS)
        return fail("CQs, PD, listener", st);
    printf("adapter \"%s\" open: 3 CQs, a PD, a listener\n", dev);
    return 1;
}

/* A and B: QPs with receive queues (depth 16, 2 SGEs), connected. */
static int connect_sides(struct smb *m)
{
    const char *what = "NdkCreateQp (receive depth 16, 2 SGEs)";
    NTSTATUS st = consumer_qp_rq(m->pd, m->rcq_a, m->icq, RQ_DEPTH, RQ_SGE, 16, 1, (PVOID)0xAA, &m->pr.qa);
    if (st == STATUS_SUCCESS) /* B's receives complete on a CQ of its own */
        st = consumer_qp_rq(m->pd, m->rcq_b, m->icq, RQ_DEPTH, RQ_SGE, 16, 1, (PVOID)0xBB, &m->pr.qb);
    if (st == STATUS_SUCCESS)
        st = consumer_connect(&m->s, &m->pr, m->src_port++, &what);
    if (st != STATUS_SUCCESS)
        return fail(what, st);
    printf("QPs A and B (receive depth %d, %d SGEs) connected in loopback\n", RQ_DEPTH, RQ_SGE);
    return 1;
}

/* Bytes into / out of a message buffer: the CPU's own memory in host mode. */
static void put(struct smb *m, size_t off, const void *data, size_t len)
{
    if (m->host_msgs)
        memcpy(m->host_msgs + off, data, len);
    else
        NdkFpgaWriteBuffer(m->s.ad, m->msgs, off, data, len);
}

static void get(struct smb *m, MDL *mdl, size_t off, void *data, size_t len)
{
    uint8_t *host = mdl == m->msgs ? m->host_msgs : m->host_buf;
    if (host)
        memcpy(data, host + off, len);
    else
        NdkFpgaReadBuffer(m->s.ad, mdl, off, data, len);
}

/* Host mode: page-aligned host memory and an MDL over it, as IoAllocateMdl and
 * MmBuildMdlForNonPagedPool give a kernel consumer. */
static NTSTATUS host_buffer(size_t len, uint8_t **mem, MDL **mdl)
{
    *mem = aligned_alloc(PAGE_SIZE, (len + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE);
    *mdl = *mem ? IoAllocateMdl(*mem, (ULONG)len, FALSE, FALSE, NULL) : NULL;
    if (!*mdl)
        return STATUS_INSUFFICIENT_RESOURCES;
    MmBuildMdlForNonPagedPool(*mdl);
    return STATUS_SUCCESS;
}

/* Host mode: A's data buffer as the adapter addresses NdkFastRegister takes. */
static NTSTATUS host_lam(struct smb *m)
{
    NDK_ADAPTER *ad = m->s.ad;
    ULONG size = 0, fbo = 0;
    NTSTATUS st = ad->Dispatch->NdkBuildLAM(ad, m->buf, PAGE_SIZE, NULL, NULL, NULL, &size, &fbo);
    if (st != STATUS_BUFFER_TOO_SMALL)
        return st == STATUS_SUCCESS ? STATUS_INTERNAL_ERROR : st;
    m->lam = malloc(size);
    if (!m->lam)
        return STATUS_INSUFFICIENT_RESOURCES;
    return ad->Dispatch->NdkBuildLAM(ad, m->buf, PAGE_SIZE, NULL, NULL, m->lam, &size, &fbo);
}

static int buffers(struct smb *m, int host)
{
    NDK_ADAPTER *ad = m->s.ad;
    NTSTATUS st;
    if (host) {
        st = host_buffer(4 * MSG + PAGE_SIZE, &m->host_msgs, &m->msgs);
        if (st == STATUS_SUCCESS)
            st = host_buffer(PAGE_SIZE, &m->host_buf, &m->buf);
        if (st == STATUS_SUCCESS)
            st = host_lam(m);
        m->va = (UINT64)(uintptr_t)m->host_buf; /* the address the consumer knows it by */
    } else {
        st = NdkFpgaAllocateBuffer(ad, 4 * MSG + PAGE_SIZE, &m->msgs);
        if (st == STATUS_SUCCESS)
            st = NdkFpgaAllocateBuffer(ad, PAGE_SIZE, &m->buf);
    }
    if (st == STATUS_SUCCESS)
        st = m->pd->Dispatch->NdkCreateMr(m->pd, FALSE, NULL, NULL, &m->msg_mr);
    if (st == STATUS_SUCCESS)
        st = m->msg_mr->Dispatch->NdkRegisterMr(m->msg_mr, m->msgs, 4 * MSG + PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                                                NULL, NULL);
    if (st == STATUS_SUCCESS)
        st = m->pd->Dispatch->NdkCreateMr(m->pd, TRUE, NULL, NULL, &m->fr);
    if (st == STATUS_SUCCESS)
        st = m->fr->Dispatch->NdkInitializeFastRegisterMr(m->fr, 1, TRUE, NULL, NULL);
    if (st != STATUS_SUCCESS)
        return fail("buffers, message MR, NdkInitializeFastRegisterMr", st);
    printf("A: fast-register MR initialized once (1 page), token 0x%08x; buffers in %s memory\n",
           (unsigned)m->fr->Dispatch->NdkGetRemoteTokenFromMr(m->fr), host ? "host" : "adapter");
    return 1;
}

/* B writes 8 bytes through token from a pair of its own: the write must be refused. */
static int refused(struct smb *m, UINT32 token)
{
    struct consumer_pair p;
    memset(&p, 0, sizeof(p));
    const char *what;
    NTSTATUS st = consumer_pair_up(&m->s, &p, m->pd, m->icq, m->icq, 0, 0, 4, 1, NULL, m->src_port++, &what);
    NDK_SGE sge = consumer_sge(m->msgs, m->msg_mr, B_DATA, 8);
    if (st == STATUS_SUCCESS) {
        what = "NdkWrite through the invalidated token";
        st = p.qa->Dispatch->NdkWrite(p.qa, (PVOID)0x77, &sge, 1, m->va, token, 0);
    }
    NDK_RESULT_EX r;
    int ok = st == STATUS_SUCCESS && expect(m, m->icq, STATUS_ACCESS_VIOLATION, NdkOperationTypeWrite, (PVOID)0x77,
                                            &r, "a write through the invalidated token");
    if (st != STATUS_SUCCESS)
        fail(what, st);
    else if (ok)
        printf("%sB: RDMA Write through token 0x%08x after the SendAndInvalidate: %s (refused, as it must be)\n",
               m->verbose ? "  " : "last iteration: ", (unsigned)token, NdkFpgaStatusName(r.Status));
    consumer_pair_close(&p);
    return ok;
}

/* A's receive, taken with NdkGetCqResultsEx (even iterations: Type and token checked)
 * or NdkGetCqResults (odd ones: status, context and bytes). */
static int a_receive(struct smb *m, unsigned it, UINT32 token, ULONG bytes)
{
    if (it % 2 == 0) {
        char line[160];
        NDK_RESULT_EX r;
        if (!expect(m, m->rcq_a, STATUS_SUCCESS, NdkOperationTypeReceiveAndInvalidate, (PVOID)0xA1, &r,
                    "A's receive (NdkGetCqResultsEx)"))
            return 0;
        if (r.TypeSpecificCompletionOutput != token || r.BytesTransferred != bytes || r.QPContext != (PVOID)0xAA) {
            printf("FAILED: A's receive: token 0x%08" PRIx64 " bytes %u (expected 0x%08x, %u)\n",
                   (uint64_t)r.TypeSpecificCompletionOutput, (unsigned)r.BytesTransferred, (unsigned)token,
                   (unsigned)bytes);
            return 0;
        }
        snprintf(line, sizeof(line), "A: receive completed (NdkGetCqResultsEx): ReceiveAndInvalidate, token 0x%08x, "
                                     "%u bytes", (unsigned)token, (unsigned)bytes);
        say(m, line);
        return 1;
    }
    NDK_RESULT r;
    uint64_t end = consumer_now_ms() + (uint64_t)m->s.wait_ms;
    while (m->rcq_a->Dispatch->NdkGetCqResults(m->rcq_a, &r, 1) != 1)
        if (consumer_now_ms() >= end)
            return fail("A's receive (NdkGetCqResults)", STATUS_IO_TIMEOUT);
    if (r.Status != STATUS_SUCCESS || r.RequestContext != (PVOID)0xA1 || r.BytesTransferred != bytes)
        return fail("A's receive (NdkGetCqResults)", r.Status);
    say(m, "A: receive completed (NdkGetCqResults): SUCCESS");
    return 1;
}

static int iteration(struct smb *m, unsigned it, uint8_t *data, uint8_t *back)
{
    char line[160];
    NDK_QP *qa = m->pr.qa, *qb = m->pr.qb;
    const UINT32 token = m->fr->Dispatch->NdkGetRemoteTokenFromMr(m->fr);
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(m->buf)[0] << PAGE_SHIFT};
    NDK_RESULT_EX r;
    if (m->host_buf) /* the CPU fills the whole page; B then writes m->len bytes of it */
        memset(m->host_buf, 0xEE, PAGE_SIZE);
    NTSTATUS st = qa->Dispatch->NdkFastRegister(qa, (PVOID)0xA0, m->fr, 1, m->lam ? m->lam->AdapterPageArray : &page, 0,
                                                m->len, (PVOID)(uintptr_t)m->va, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    if (st != STATUS_SUCCESS ||
        !expect(m, m->icq, STATUS_SUCCESS, NdkOperationTypeFastRegister, (PVOID)0xA0, &r, "A's NdkFastRegister"))
        return st == STATUS_SUCCESS ? 0 : fail("NdkFastRegister", st);
    snprintf(line, sizeof(line), "A: fast-registered %u bytes at 0x%" PRIx64 ", token 0x%08x%s", (unsigned)m->len,
             (uint64_t)m->va, (unsigned)token, it ? " (the same token, reused)" : "");
    say(m, line);
    /* Receives: A one SGE, B its buffer in two SGEs (the descriptor spans both). */
    NDK_SGE ra = consumer_sge(m->msgs, m->msg_mr, A_RECV, MSG);
    st = qa->Dispatch->NdkReceive(qa, (PVOID)0xA1, &ra, 1);
    if (st == STATUS_SUCCESS) {
        NDK_SGE rb[2] = {consumer_sge(m->msgs, m->msg_mr, B_RECV, 8),
                         consumer_sge(m->msgs, m->msg_mr, B_RECV + 8, MSG - 8)};
        st = qb->Dispatch->NdkReceive(qb, (PVOID)0xB1, rb, 2);
    }
    if (st != STATUS_SUCCESS)
        return fail("NdkReceive", st);
    say(m, "A and B: posted a receive each (B's in 2 SGEs)");
    /* A -> B: the descriptor. */
    uint64_t desc[2] = {(uint64_t)token << 32 | m->len, m->va}, got[2];
    put(m, A_SEND, desc, sizeof(desc));
    NDK_SGE sa = consumer_sge(m->msgs, m->msg_mr, A_SEND, sizeof(desc));
    st = qa->Dispatch->NdkSend(qa, (PVOID)0xA2, &sa, 1, 0);
    if (st != STATUS_SUCCESS)
        return fail("A's NdkSend", st);
    if (!expect(m, m->icq, STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0xA2, &r, "A's Send") ||
        !expect(m, m->rcq_b, STATUS_SUCCESS, NdkOperationTypeReceive, (PVOID)0xB1, &r, "B's receive"))
        return 0;
    get(m, m->msgs, B_RECV, got, sizeof(got));
    if (r.BytesTransferred != sizeof(desc) || memcmp(got, desc, sizeof(desc)))
        return mismatch("B's receive: the descriptor differs from what A sent");
    const UINT32 rtoken = (UINT32)(got[0] >> 32);
    const ULONG rlen = (ULONG)(got[0] & 0xffffffffu);
    snprintf(line, sizeof(line), "A -> B Send: descriptor {token 0x%08x, address 0x%" PRIx64 ", %u bytes} received",
             (unsigned)rtoken, got[1], (unsigned)rlen);
    say(m, line);
    /* B writes the data through the token, then answers with SendAndInvalidate. */
    for (ULONG i = 0; i < rlen; i++)
        data[i] = (uint8_t)(it * 131u + i * 7u + 1u);
    put(m, B_DATA, data, rlen);
    NDK_SGE sd = consumer_sge(m->msgs, m->msg_mr, B_DATA, rlen);
    st = qb->Dispatch->NdkWrite(qb, (PVOID)0xB2, &sd, 1, got[1], rtoken, 0);
    if (st != STATUS_SUCCESS ||
        !expect(m, m->icq, STATUS_SUCCESS, NdkOperationTypeWrite, (PVOID)0xB2, &r, "B's RDMA Write"))
        return st == STATUS_SUCCESS ? 0 : fail("B's NdkWrite", st);
    say(m, "B: RDMA Write of the data through the token: SUCCESS");
    NDK_SGE sb = consumer_sge(m->msgs, m->msg_mr, B_SEND, 8);
    st = qb->Dispatch->NdkSendAndInvalidate(qb, (PVOID)0xB3, &sb, 1, 0, rtoken);
    if (st != STATUS_SUCCESS)
        return fail("B's NdkSendAndInvalidate", st);
    if (!expect(m, m->icq, STATUS_SUCCESS, NdkOperationTypeSend, (PVOID)0xB3, &r, "B's SendAndInvalidate"))
        return 0;
    say(m, "B -> A SendAndInvalidate naming the token: SUCCESS");
    if (!a_receive(m, it, token, 8))
        return 0;
    get(m, m->buf, 0, back, m->len);
    if (memcmp(back, data, m->len))
        return mismatch("A: the data in its buffer differs from what B wrote");
    for (ULONG i = m->len; m->host_buf && i < PAGE_SIZE; i++)
        if (m->host_buf[i] != 0xEE)
            return mismatch("A: a byte of its page past what B wrote changed");
    snprintf(line, sizeof(line), "A: the %u bytes B wrote are in its buffer", (unsigned)m->len);
    say(m, line);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "server") == 0 || strcmp(argv[1], "client") == 0))
        return smbd_main(argc, argv);
    const char *dev = argc > 1 ? argv[1] : "model";
    unsigned iters = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1;
    struct smb m;
    memset(&m, 0, sizeof(m));
    m.len = argc > 3 ? (ULONG)strtoul(argv[3], NULL, 10) : 512;
    m.va = 0x10000;
    m.src_port = 22000;
    int host = argc > 4 && strcmp(argv[4], "host") == 0;
    if (iters == 0 || m.len == 0 || m.len > PAGE_SIZE || (argc > 4 && !host)) {
        fprintf(stderr, "usage: %s [DEVICE [ITERATIONS [BYTES (1..%u) [host]]]]\n"
                        "       %s server DEVICE [--port P]\n"
                        "       %s client DEVICE SERVER_IP [--port P] [--iterations N] [--bytes B]\n",
                argv[0], (unsigned)PAGE_SIZE, argv[0], argv[0]);
        return 2;
    }
    uint8_t *data = malloc(PAGE_SIZE), *back = malloc(PAGE_SIZE);
    int ok = data && back && setup(&m, dev) && connect_sides(&m) && buffers(&m, host);
    uint64_t t0 = consumer_now_ms();
    for (unsigned it = 0; ok && it < iters; it++) {
        m.verbose = it == 0;
        if (m.verbose)
            printf("iteration 1:\n");
        ok = iteration(&m, it, data, back);
        if (ok && (it == 0 || it + 1 == iters))
            ok = refused(&m, m.fr->Dispatch->NdkGetRemoteTokenFromMr(m.fr));
        if (ok && ((it + 1) % 100 == 0 || it + 1 == iters))
            printf("%u iterations: data verified each time, token reused (%llu ms)\n", it + 1,
                   (unsigned long long)(consumer_now_ms() - t0));
    }
    consumer_pair_close(&m.pr);
    if (m.lam)
        m.s.ad->Dispatch->NdkReleaseLAM(m.s.ad, m.lam);
    if (m.s.ad)
        NdkFpgaCloseAdapter(m.s.ad);
    IoFreeMdl(m.host_msgs ? m.msgs : NULL);
    IoFreeMdl(m.host_buf ? m.buf : NULL);
    free(m.host_msgs);
    free(m.host_buf);
    free(m.lam);
    free(data);
    free(back);
    printf("%s\n", ok ? "smb_direct: ok" : "smb_direct: FAILED");
    return ok ? 0 : 1;
}
