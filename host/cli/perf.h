/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga's perftest-style commands (write_lat, write_bw, read_lat, read_bw, send_lat,
 * send_bw): one end of the test, server or client, built through NDKPI only
 * (perf_conn.c), and the tests and their output (cmd_perf.c). */
#ifndef NDKFPGA_PERF_H
#define NDKFPGA_PERF_H

#include "cli.h"

#define PERF_DEFAULT_PORT 18515
#define PERF_MAGIC 0x5450464Eu /* "NFPT": the private data is ours */
#define PERF_VERSION 1u

enum perf_op { PERF_WRITE = 1, PERF_READ = 2, PERF_SEND = 3 };

/* What the client asks for: NdkConnect's private data (PERF_HELLO_BYTES, within the
 * 56 bytes a REQ carries), encoded little-endian field by field. */
struct perf_hello {
    uint32_t op;       /* enum perf_op */
    uint32_t bw;       /* 1: bandwidth, 0: latency */
    uint32_t iters;    /* operations per size */
    uint32_t depth;    /* operations in flight (1 for latency) */
    uint32_t min_size; /* sizes: min_size doubling up to max_size */
    uint32_t max_size;
    uint64_t addr;     /* the sender's buffer: virtual address, remote token, bytes */
    uint32_t token;
    uint32_t len;
};
#define PERF_HELLO_BYTES 44u

/* The server's answer: NdkAccept's (status 0) or NdkReject's (a PERF_REFUSED_*) private data. */
enum perf_refusal { PERF_OK = 0, PERF_REFUSED_VERSION = 1, PERF_REFUSED_SIZE = 2, PERF_REFUSED_RESOURCES = 3 };
struct perf_answer {
    uint32_t status;     /* enum perf_refusal */
    uint32_t max_size;   /* the largest size the server takes */
    uint64_t addr;       /* the server's buffer */
    uint32_t token;
    uint32_t len;
    uint32_t recv_slots; /* receives the server keeps posted for Sends (send_bw's first credit) */
};
#define PERF_ANSWER_BYTES 36u

void perf_hello_put(uint8_t *b, const struct perf_hello *h);
int perf_hello_get(const uint8_t *b, ULONG len, struct perf_hello *h); /* 0: ours and of our version */
void perf_answer_put(uint8_t *b, const struct perf_answer *a);
int perf_answer_get(const uint8_t *b, ULONG len, struct perf_answer *a);

/* One end of a test: the adapter, a CQ, a PD, a QP, a registered buffer and the
 * connection. A failing call is kept in f (the first one) and every later step is
 * skipped, so a run reports the call that failed first. */
struct perf_end {
    const struct cli *c;
    const char *role;         /* "server" or "client", for messages */
    NDK_ADAPTER *adapter;
    int own_adapter;          /* opened by this end: closed by perf_close */
    NDK_ADAPTER_INFO info;
    NDKFPGA_PORT_ADDRESS port; /* PrefixLength 0: the adapter has no address */
    NDK_CQ *cq;
    NDK_PD *pd;
    NDK_QP *qp;
    NDK_MR *mr;
    MDL *buf;
    uint32_t buf_len;
    UINT32 ltoken, rtoken;    /* the buffer's local and remote tokens */
    NDK_LISTENER *listener;
    NDK_CONNECTOR *conn;
    ULONG ird, ord;           /* the connection's read limits */
    struct cli_failure f;
    char failure_detail[160]; /* said after the call's status, when set */
    pthread_mutex_t lock;     /* guards incoming and disconnected: the library's callbacks set them */
    pthread_cond_t cond;
    NDK_CONNECTOR *incoming;
    int disconnected;
    double spin_until_us;     /* perf_poll spins until then, then naps between polls */
    double gone_at_us;        /* when perf_poll first saw the peer's disconnect */
};

/* Set up the end on an open adapter (own: perf_close closes it) and read its info and address. */
void perf_init(struct perf_end *e, const struct cli *c, const char *role, NDK_ADAPTER *a, int own);
/* CQ, PD, QP (rq receives, sq initiator requests, one SGE each) and a registered buffer of
 * len bytes rounded up to whole pages (adapter memory; remote read and write allowed). 0 on
 * success. */
int perf_resources(struct perf_end *e, ULONG rq, ULONG sq, uint32_t len);
/* The largest size one operation may move, a power of two (both buffer and transfer fit). */
uint32_t perf_size_limit(const struct perf_end *e);
/* Listen on the adapter's address (0.0.0.0 without one), port port. 0 on success. */
int perf_listen(struct perf_end *e, uint16_t port);
/* Wait up to timeout_s for a client's connect request, then read its private data
 * into hello[PERF_HELLO_BYTES]. 0 on success; on timeout f names the wait. */
int perf_wait_client(struct perf_end *e, double timeout_s, uint8_t *hello, ULONG *len);
int perf_accept(struct perf_end *e, const uint8_t *pdata, ULONG len);
void perf_reject(struct perf_end *e, const uint8_t *pdata, ULONG len);
/* Connect to ip:port with the hello; *answer (PERF_ANSWER_BYTES) the server's reply
 * (also when it rejected: then f names NdkConnect with STATUS_CONNECTION_REFUSED). */
int perf_connect(struct perf_end *e, const UCHAR ip[4], uint16_t port, const uint8_t *hello, ULONG len,
                 uint8_t *answer, ULONG *answer_len);
/* Wait up to wait_s for the peer's disconnect (0: none), then disconnect this end. */
int perf_disconnect(struct perf_end *e, double wait_s);
void perf_close(struct perf_end *e);
/* The address the adapter listens on / connects from, "A.B.C.D". */
void perf_ip_string(const UCHAR ip[4], char out[16]);

/* The next completion, until deadline_us (cli_now_us); 1 with *r, 0 on timeout (f set to
 * STATUS_IO_TIMEOUT naming what). */
int perf_poll(struct perf_end *e, NDK_RESULT_EX *r, double deadline_us, const char *what);
/* Post one work request on the buffer at offset 0 of len bytes: a Send, a receive, or
 * (op WRITE/READ) an RDMA Write/Read of the peer's buffer at its address. 0 on success. */
int perf_post(struct perf_end *e, enum perf_op op, int receive, uint32_t len, const struct perf_answer *peer,
              uintptr_t ctx);

#endif
