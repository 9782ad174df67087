/* SPDX-License-Identifier: Apache-2.0 */
/* One SMB Direct connection over NDK: its adapter objects, its receives and its credits
 * ([MS-SMBD] 3.1.1.1, 3.1.5.1, 3.1.5.8, 3.1.5.9). What stays true:
 *   - a credit is granted only for a receive already posted (granted <= posted);
 *   - a data transfer message is sent only with a credit in hand (send_credits > 0);
 *   - every wait is bounded by wait_ms on the monotonic clock. */
#include <stdio.h>
#include <string.h>

#include "smbd.h"

#define SEND_SLOT (SMBD_RQ_DEPTH * SMBD_MSG_SIZE)

int smbd_fail(const struct smbd_conn *c, const char *what, NTSTATUS st)
{
    fprintf(stderr, "%s: FAILED: %s: %s\n", c->role, what, NdkFpgaStatusName(st));
    return 0;
}

static int violation(const struct smbd_conn *c, const char *why)
{
    fprintf(stderr, "%s: FAILED: protocol: %s\n", c->role, why);
    return 0;
}

int smbd_open(struct smbd_conn *c, const char *role, const char *dev)
{
    memset(c, 0, sizeof(*c));
    c->role = role;
    c->wait_ms = strncmp(dev, "sim", 3) == 0 ? 120000 : 20000;
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &c->ad);
    if (st != STATUS_SUCCESS) {
        fprintf(stderr, "%s: FAILED: NdkFpgaOpenAdapter(\"%s\"): %s %s\n", role, dev, NdkFpgaStatusName(st),
                NdkFpgaErrorMessage(NULL));
        return 0;
    }
    ULONG isz = sizeof(c->info);
    NDKFPGA_PORT_ADDRESS pa;
    memset(&pa, 0, sizeof(pa));
    const char *what = "NdkQueryAdapterInfo";
    st = c->ad->Dispatch->NdkQueryAdapterInfo(c->ad, &c->info, &isz);
    if (st == STATUS_SUCCESS) {
        what = "NdkFpgaPortAddress (a device string with net= and ip=)";
        st = NdkFpgaPortAddress(c->ad, 0, &pa);
        if (st == STATUS_SUCCESS && pa.PrefixLength == 0)
            st = STATUS_INVALID_ADDRESS;
        memcpy(c->ip, pa.Ipv4, 4);
    }
    if (st == STATUS_SUCCESS) {
        what = "NdkCreateCq, NdkCreatePd";
        st = c->ad->Dispatch->NdkCreateCq(c->ad, 64, NULL, NULL, NULL, NULL, NULL, &c->rcq);
    }
    if (st == STATUS_SUCCESS)
        st = c->ad->Dispatch->NdkCreateCq(c->ad, 64, NULL, NULL, NULL, NULL, NULL, &c->scq);
    if (st == STATUS_SUCCESS)
        st = c->ad->Dispatch->NdkCreatePd(c->ad, NULL, NULL, &c->pd);
    if (st == STATUS_SUCCESS) {
        what = "the message buffers and their MR";
        st = NdkFpgaAllocateBuffer(c->ad, SEND_SLOT + SMBD_MSG_SIZE, &c->msgs);
    }
    if (st == STATUS_SUCCESS)
        st = c->pd->Dispatch->NdkCreateMr(c->pd, FALSE, NULL, NULL, &c->msg_mr);
    if (st == STATUS_SUCCESS)
        st = c->msg_mr->Dispatch->NdkRegisterMr(c->msg_mr, c->msgs, SEND_SLOT + SMBD_MSG_SIZE,
                                                NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL);
    if (st == STATUS_SUCCESS) {
        what = "NdkCreateQp";
        st = consumer_qp_rq(c->pd, c->rcq, c->scq, SMBD_RQ_DEPTH, 1, 16, 1, c, &c->qp);
    }
    if (st != STATUS_SUCCESS)
        return smbd_fail(c, what, st);
    return 1;
}

void smbd_close(struct smbd_conn *c)
{
    NDK_OBJECT_HEADER *objs[3] = {c->conn ? &c->conn->Header : NULL, c->lis ? &c->lis->Header : NULL,
                                  c->qp ? &c->qp->Header : NULL};
    for (int i = 0; i < 3; i++)
        if (objs[i])
            NdkCloseObject(objs[i], NULL, NULL);
    if (c->ad)
        NdkFpgaCloseAdapter(c->ad);
    c->ad = NULL;
}

int smbd_post_receives(struct smbd_conn *c, unsigned n)
{
    while (c->posted < n) {
        NDK_SGE sge = consumer_sge(c->msgs, c->msg_mr, (size_t)c->next_slot * SMBD_MSG_SIZE, SMBD_MSG_SIZE);
        NTSTATUS st = c->qp->Dispatch->NdkReceive(c->qp, (PVOID)(uintptr_t)(c->next_slot + 1), &sge, 1);
        if (st != STATUS_SUCCESS)
            return smbd_fail(c, "NdkReceive", st);
        c->next_slot = (c->next_slot + 1) % SMBD_RQ_DEPTH;
        c->posted++;
    }
    return 1;
}

/* 1: a message; 0: a failure (said); -1: the peer disconnected and nothing is left. */
int smbd_receive(struct smbd_conn *c, uint8_t *msg, size_t cap, size_t *len, NDK_RESULT_EX *r)
{
    uint64_t end = consumer_now_ms() + (uint64_t)c->wait_ms;
    const struct timespec tick = {0, 1000000L};
    for (;;) {
        /* the flag first: a message that came before the disconnect is in the CQ already */
        int gone = __atomic_load_n(&c->disconnected, __ATOMIC_ACQUIRE);
        if (c->rcq->Dispatch->NdkGetCqResultsEx(c->rcq, r, 1) == 1)
            break;
        if (gone)
            return -1;
        if (consumer_now_ms() >= end)
            return smbd_fail(c, "waiting for the peer's next message", STATUS_IO_TIMEOUT);
        nanosleep(&tick, NULL);
    }
    unsigned slot = (c->next_slot + SMBD_RQ_DEPTH - c->posted) % SMBD_RQ_DEPTH;
    if (c->posted == 0)
        return violation(c, "a receive completed with none posted");
    c->posted--;
    if (r->Status != STATUS_SUCCESS)
        return smbd_fail(c, "a receive", r->Status);
    if (r->RequestContext != (PVOID)(uintptr_t)(slot + 1))
        return violation(c, "receives completed out of order");
    *len = r->BytesTransferred < cap ? r->BytesTransferred : cap;
    NTSTATUS st = NdkFpgaReadBuffer(c->ad, c->msgs, (size_t)slot * SMBD_MSG_SIZE, msg, *len);
    return st == STATUS_SUCCESS ? 1 : smbd_fail(c, "NdkFpgaReadBuffer of a message", st);
}

int smbd_complete(struct smbd_conn *c, NDK_OPERATION_TYPE type, void *ctx, const char *what)
{
    NDK_RESULT_EX r;
    if (!consumer_cq_wait(c->scq, &r, c->wait_ms))
        return smbd_fail(c, what, STATUS_IO_TIMEOUT);
    if (r.Status != STATUS_SUCCESS)
        return smbd_fail(c, what, r.Status);
    if (r.Type != type || r.RequestContext != ctx) {
        fprintf(stderr, "%s: FAILED: %s: completion of type 0x%x context %p (expected 0x%x, %p)\n", c->role, what,
                (unsigned)r.Type, r.RequestContext, (unsigned)type, ctx);
        return 0;
    }
    return 1;
}

int smbd_send_raw(struct smbd_conn *c, const uint8_t *msg, size_t len, int inv, UINT32 inv_token)
{
    NTSTATUS st = NdkFpgaWriteBuffer(c->ad, c->msgs, SEND_SLOT, msg, len);
    NDK_SGE sge = consumer_sge(c->msgs, c->msg_mr, SEND_SLOT, (ULONG)len);
    if (st == STATUS_SUCCESS)
        st = inv ? c->qp->Dispatch->NdkSendAndInvalidate(c->qp, (PVOID)0x5E, &sge, 1, 0, inv_token)
                 : c->qp->Dispatch->NdkSend(c->qp, (PVOID)0x5E, &sge, 1, 0);
    if (st != STATUS_SUCCESS)
        return smbd_fail(c, inv ? "NdkSendAndInvalidate" : "NdkSend", st);
    return smbd_complete(c, NdkOperationTypeSend, (PVOID)0x5E, inv ? "SendAndInvalidate" : "Send");
}

unsigned smbd_grant(struct smbd_conn *c, int at_least_one)
{
    unsigned avail = c->posted - c->granted;
    unsigned want = c->target > c->granted ? c->target - c->granted : 0;
    unsigned n = avail < want ? avail : want;
    if (n == 0 && at_least_one && avail > 0)
        n = 1;
    if (n > 255)
        n = 255;
    c->granted += n;
    return n;
}

int smbd_send_data(struct smbd_conn *c, const uint8_t *payload, size_t len, uint16_t flags, int inv, UINT32 inv_token)
{
    if (c->send_credits == 0)
        return violation(c, "a message to send and no send credit");
    if (len > SMBD_MSG_SIZE - SMBD_DATA_OFFSET)
        return violation(c, "a payload larger than one message");
    c->send_credits--;
    if (c->send_credits == 0) /* the peer must answer, so that it grants this side credits again */
        flags |= SMBD_RESPONSE_REQUESTED;
    struct smbd_data h = {.credits_requested = SMBD_RQ_DEPTH,
                          .credits_granted = (uint16_t)smbd_grant(c, 0),
                          .flags = flags,
                          .remaining_data_length = 0,
                          .data_offset = len ? SMBD_DATA_OFFSET : 0,
                          .data_length = (uint32_t)len};
    uint8_t msg[SMBD_MSG_SIZE];
    size_t n = smbd_put_data(msg, &h);
    if (len)
        memcpy(msg + n, payload, len);
    return smbd_send_raw(c, msg, n + len, inv, inv_token);
}

int smbd_receive_data(struct smbd_conn *c, struct smbd_data *h, uint8_t *payload, size_t *len, NDK_RESULT_EX *r)
{
    uint8_t msg[SMBD_MSG_SIZE];
    size_t n = 0;
    int got = smbd_receive(c, msg, sizeof(msg), &n, r);
    if (got != 1)
        return got;
    const char *why = smbd_get_data(msg, n, c->max_fragmented, h);
    if (why)
        return violation(c, why);
    if (c->granted == 0)
        return violation(c, "the peer sent a message without a credit");
    c->granted--;
    c->send_credits += h->credits_granted;
    c->target = h->credits_requested;
    *len = h->data_length;
    if (h->data_length)
        memcpy(payload, msg + h->data_offset, h->data_length);
    return smbd_post_receives(c, SMBD_RQ_DEPTH); /* the receive again, before it is granted */
}
