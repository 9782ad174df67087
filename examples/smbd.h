/* SPDX-License-Identifier: Apache-2.0 */
/* smbd: the two-process mode of examples/smb_direct.c, MS-SMBD (the SMB2 Remote Direct
 * Memory Access Transport Protocol) between two adapters.
 *
 * smbd_wire.c   the messages, byte for byte (little-endian, [MS-SMBD] 2.2), and the
 *               small application payload that stands for SMB2 READ and WRITE
 * smbd_conn.c   one SMB Direct connection over NDK: receives, credits, Send
 * smbd_net.c    the server and the client */
#ifndef NDK_EXAMPLES_SMBD_H
#define NDK_EXAMPLES_SMBD_H

#include <stddef.h>
#include <stdint.h>

#include "consumer.h"
#include "ndkfpga.h"
#include "ndkpi.h"

/* ---- [MS-SMBD] 2.2: the messages ---- */
#define SMBD_VERSION_1 0x0100u
#define SMBD_NEG_REQ_LEN 20u          /* 2.2.1 */
#define SMBD_NEG_RESP_LEN 32u         /* 2.2.2 */
#define SMBD_DATA_HDR_LEN 20u         /* 2.2.3 without padding: a message with no payload */
#define SMBD_DATA_OFFSET 24u          /* a payload starts 8-byte aligned, after 4 bytes of padding */
#define SMBD_RESPONSE_REQUESTED 0x0001u
#define SMBD_MIN_RECEIVE_SIZE 128u    /* 3.1.5.6, 3.1.5.7: the least a peer may offer */
#define SMBD_MIN_FRAGMENTED 131072u
#define SMBD_DESC_LEN 16u             /* SMB_DIRECT_BUFFER_DESCRIPTOR_V1 */
#define SMBD_PORT 445u                /* the SMB Direct port on RoCE and InfiniBand (RDMA-CM) */

struct smbd_neg_req {
    uint16_t min_version, max_version, credits_requested;
    uint32_t preferred_send_size, max_receive_size, max_fragmented_size;
};

struct smbd_neg_resp {
    uint16_t min_version, max_version, negotiated_version, credits_requested, credits_granted;
    uint32_t status, max_read_write_size, preferred_send_size, max_receive_size, max_fragmented_size;
};

struct smbd_data {
    uint16_t credits_requested, credits_granted, flags;
    uint32_t remaining_data_length, data_offset, data_length;
};

/* SMB_DIRECT_BUFFER_DESCRIPTOR_V1: a registered buffer as the peer names it. */
struct smbd_desc {
    uint64_t offset; /* the buffer's address in the token's address space */
    uint32_t token, length;
};

/* ---- the application payload (SMB2 READ/WRITE's stand-in) ---- */
#define SMBD_APP_READ 0x0008u         /* SMB2 READ's command code */
#define SMBD_APP_WRITE 0x0009u        /* SMB2 WRITE's */
#define SMBD_APP_RESPONSE 0x0001u     /* flags: this is the answer */
#define SMBD_CHANNEL_RDMA_V1 0x1u     /* SMB2_CHANNEL_RDMA_V1: the buffer stays registered */
#define SMBD_CHANNEL_RDMA_V1_INVALIDATE 0x2u /* ...: the answer invalidates it (SendAndInvalidate) */
#define SMBD_APP_LEN 48u

struct smbd_app {
    uint16_t command, flags;
    uint32_t message_id, status, length; /* length: bytes asked for (request), moved (response) */
    uint64_t file_offset;
    uint32_t channel, n_desc;            /* n_desc: 0 or 1 descriptor follows */
    struct smbd_desc desc;
};

void smbd_put_neg_req(uint8_t *b, const struct smbd_neg_req *m);
void smbd_put_neg_resp(uint8_t *b, const struct smbd_neg_resp *m);
/* The header of a data transfer message: 24 bytes (padding included) when data_length
 * is nonzero, else 20. Returns the bytes written. */
size_t smbd_put_data(uint8_t *b, const struct smbd_data *m);
void smbd_put_app(uint8_t *b, const struct smbd_app *m);

/* Each parser checks what [MS-SMBD] 3.1.5.6-3.1.5.8 makes the receiver check; NULL when
 * the message passes, else what is wrong with it. */
const char *smbd_get_neg_req(const uint8_t *b, size_t len, struct smbd_neg_req *m);
const char *smbd_get_neg_resp(const uint8_t *b, size_t len, struct smbd_neg_resp *m);
const char *smbd_get_data(const uint8_t *b, size_t len, uint32_t max_fragmented, struct smbd_data *m);
const char *smbd_get_app(const uint8_t *b, size_t len, struct smbd_app *m);

/* The byte at index i of message id's data: both ends compute it. */
static inline uint8_t smbd_pattern(uint32_t id, size_t i)
{
    return (uint8_t)(i * 29u + id * 113u + (i >> 9) + 7u);
}

/* ---- one SMB Direct connection (smbd_conn.c) ---- */
#define SMBD_RQ_DEPTH 16u      /* receives posted: the credits this side can grant */
#define SMBD_MSG_SIZE 1024u    /* each receive buffer, and the largest message sent */
#define SMBD_READ_LIMIT 4u     /* RDMA Reads in flight, each way */

struct smbd_conn {
    const char *role;          /* "server" or "client", in messages */
    NDK_ADAPTER *ad;
    NDK_PD *pd;
    NDK_CQ *rcq, *scq;         /* receives; Sends, RDMA and registration */
    NDK_QP *qp;
    NDK_CONNECTOR *conn;
    NDK_LISTENER *lis;
    MDL *msgs;                 /* SMBD_RQ_DEPTH receive slots, then one send slot */
    NDK_MR *msg_mr;
    NDK_ADAPTER_INFO info;
    uint8_t ip[4];             /* the port's address */
    int wait_ms;               /* the longest wait for one answer of the adapter or the peer */
    struct consumer_call incoming, call; /* connect events; one call's completion */
    int disconnected;          /* the peer disconnected (DisconnectEvent) */
    /* credits ([MS-SMBD] 3.1.1.1), every count bounded by SMBD_RQ_DEPTH */
    unsigned posted;           /* receives posted */
    unsigned granted;          /* credits the peer holds: never more than posted */
    unsigned send_credits;     /* Sends this side may still make */
    unsigned target;           /* the peer's CreditsRequested */
    unsigned next_slot;        /* receive slot of the next receive posted (receives complete in order) */
    uint32_t max_fragmented;   /* the peer's MaxFragmentedSize */
};

int smbd_fail(const struct smbd_conn *c, const char *what, NTSTATUS st);
int smbd_open(struct smbd_conn *c, const char *role, const char *dev);
void smbd_close(struct smbd_conn *c);
int smbd_post_receives(struct smbd_conn *c, unsigned n);
/* The next message received: its bytes, its completion; 0 (said why) on failure. */
int smbd_receive(struct smbd_conn *c, uint8_t *msg, size_t cap, size_t *len, NDK_RESULT_EX *r);
/* A Send of len bytes (SendAndInvalidate naming inv_token when inv is set), completed. */
int smbd_send_raw(struct smbd_conn *c, const uint8_t *msg, size_t len, int inv, UINT32 inv_token);
/* The credits this side can grant now ([MS-SMBD] 3.1.5.9): receives posted and not yet
 * granted, up to the peer's target; counted as granted. */
unsigned smbd_grant(struct smbd_conn *c, int at_least_one);
/* A data transfer message carrying payload (len 0: none); takes a credit. */
int smbd_send_data(struct smbd_conn *c, const uint8_t *payload, size_t len, uint16_t flags, int inv, UINT32 inv_token);
/* The next data transfer message: header and payload; its credit accounted, its receive
 * posted again. */
int smbd_receive_data(struct smbd_conn *c, struct smbd_data *h, uint8_t *payload, size_t *len, NDK_RESULT_EX *r);
/* Wait for an outstanding request's completion on the initiator CQ (type and context). */
int smbd_complete(struct smbd_conn *c, NDK_OPERATION_TYPE type, void *ctx, const char *what);

int smbd_main(int argc, char **argv);

#endif
