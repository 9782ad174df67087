/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga: an adapter with a CQ, a PD and two QPs connected to each other (loopback),
 * built through NDKPI as any consumer does it; and waiting for completions. */
#include <arpa/inet.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define WAIT_LIMIT_S 300 /* no completion takes this long, even on the simulation */
#define LISTEN_PORT 4792

void cli_completion_init(struct cli_completion *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC); /* cli_finish's deadline: immune to wall-clock steps */
    pthread_cond_init(&w->cond, &a);
    pthread_condattr_destroy(&a);
}

static void signal_done(struct cli_completion *w, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    double t = cli_now_us();
    pthread_mutex_lock(&w->lock);
    w->status = st;
    w->object = obj;
    w->at_us = t;
    w->done = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

VOID cli_on_request_done(PVOID ctx, NTSTATUS st)
{
    signal_done(ctx, st, NULL);
}

VOID cli_on_create_done(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    signal_done(ctx, st, obj);
}

NTSTATUS cli_finish(struct cli_completion *w, NTSTATUS st, double *done_us)
{
    if (st != STATUS_PENDING) {
        if (done_us)
            *done_us = cli_now_us();
        return st;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += WAIT_LIMIT_S;
    pthread_mutex_lock(&w->lock);
    int rc = 0;
    while (!w->done && rc == 0)
        rc = pthread_cond_timedwait(&w->cond, &w->lock, &until);
    st = w->done ? w->status : STATUS_IO_TIMEOUT;
    if (done_us)
        *done_us = w->at_us;
    pthread_mutex_unlock(&w->lock);
    return st;
}

NTSTATUS cli_next_result(NDK_CQ *cq, NDK_RESULT_EX *r, double *at_us)
{
    double limit = cli_now_us() + WAIT_LIMIT_S * 1e6;
    while (cli_now_us() < limit) {
        if (cq->Dispatch->NdkGetCqResultsEx(cq, r, 1) == 1) {
            if (at_us)
                *at_us = cli_now_us();
            return STATUS_SUCCESS;
        }
        sched_yield();
    }
    return STATUS_IO_TIMEOUT;
}

NTSTATUS cli_created(struct cli_completion *w, NTSTATUS st, void **out)
{
    st = cli_finish(w, st, NULL);
    if (st == STATUS_SUCCESS && !*out)
        *out = w->object;
    return st;
}

NDK_MR *cli_create_mr(struct cli_session *s, BOOLEAN fast, NTSTATUS *st)
{
    struct cli_completion w;
    cli_completion_init(&w);
    NDK_MR *mr = NULL;
    *st = cli_created(&w, s->pd->Dispatch->NdkCreateMr(s->pd, fast, cli_on_create_done, &w, &mr), (void **)&mr);
    return *st == STATUS_SUCCESS ? mr : NULL;
}

/* The connection request the listener got. */
struct incoming {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    NDK_CONNECTOR *connector;
};

static VOID on_connect_request(PVOID ctx, NDK_CONNECTOR *connector)
{
    struct incoming *in = ctx;
    pthread_mutex_lock(&in->lock);
    in->connector = connector;
    pthread_cond_signal(&in->cond);
    pthread_mutex_unlock(&in->lock);
}

static VOID on_disconnect(PVOID ctx)
{
    (void)ctx;
}

/* Connect initiator to target on the same adapter; the status of the first step that
 * failed, *what naming it. The listener and connectors stay open until the adapter
 * closes. */
static NTSTATUS connect_pair(struct cli_session *s, const char **what)
{
    NDK_ADAPTER *a = s->adapter;
    struct cli_completion w;
    static struct incoming in = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL};
    in.connector = NULL;
    NDK_LISTENER *listener = NULL;
    cli_completion_init(&w);
    *what = "NdkCreateListener";
    NTSTATUS st = cli_created(&w, a->Dispatch->NdkCreateListener(a, on_connect_request, &in, cli_on_create_done, &w,
                                                             &listener),
                          (void **)&listener);
    if (st != STATUS_SUCCESS)
        return st;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(LISTEN_PORT);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cli_completion_init(&w);
    *what = "NdkListen";
    st = cli_finish(&w, listener->Dispatch->NdkListen(listener, (PSOCKADDR)&addr, sizeof(addr),
                                                      cli_on_request_done, &w),
                    NULL);
    if (st != STATUS_SUCCESS)
        return st;
    NDK_CONNECTOR *active = NULL;
    cli_completion_init(&w);
    *what = "NdkCreateConnector";
    st = cli_created(&w, a->Dispatch->NdkCreateConnector(a, cli_on_create_done, &w, &active), (void **)&active);
    if (st != STATUS_SUCCESS)
        return st;
    struct cli_completion connected, accepted, completed;
    cli_completion_init(&connected);
    cli_completion_init(&accepted);
    cli_completion_init(&completed);
    *what = "NdkConnect";
    st = active->Dispatch->NdkConnect(active, s->initiator, (PSOCKADDR)&addr, sizeof(addr),
                                      (PSOCKADDR)&addr, sizeof(addr), 1, 1, NULL, 0, cli_on_request_done,
                                      &connected);
    if (st != STATUS_PENDING && st != STATUS_SUCCESS)
        return st;
    /* The incoming side arrives unless the connect fails: wait for either, bounded. */
    NDK_CONNECTOR *passive = NULL;
    for (int waited_ms = 0; !passive; waited_ms += 10) {
        pthread_mutex_lock(&in.lock);
        passive = in.connector;
        pthread_mutex_unlock(&in.lock);
        if (passive)
            break;
        pthread_mutex_lock(&connected.lock);
        int failed = connected.done && connected.status != STATUS_SUCCESS;
        NTSTATUS why = connected.status;
        pthread_mutex_unlock(&connected.lock);
        if (failed)
            return why;
        if (waited_ms >= WAIT_LIMIT_S * 1000)
            return STATUS_IO_TIMEOUT;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    *what = "NdkAccept";
    st = passive->Dispatch->NdkAccept(passive, s->target, 1, 1, NULL, 0, on_disconnect, NULL, cli_on_request_done,
                                      &accepted);
    if (st != STATUS_PENDING && st != STATUS_SUCCESS)
        return st;
    *what = "NdkConnect";
    st = cli_finish(&connected, STATUS_PENDING, NULL);
    if (st != STATUS_SUCCESS)
        return st;
    *what = "NdkCompleteConnect";
    st = cli_finish(&completed,
                    active->Dispatch->NdkCompleteConnect(active, on_disconnect, NULL, cli_on_request_done, &completed),
                    NULL);
    if (st != STATUS_SUCCESS)
        return st;
    *what = "NdkAccept";
    return cli_finish(&accepted, STATUS_PENDING, NULL);
}

int cli_session_open(const struct cli *c, struct cli_session *s, ULONG cq_depth, ULONG queue_depth)
{
    return cli_session_open_receives(c, s, cq_depth, queue_depth, 0);
}

int cli_session_open_receives(const struct cli *c, struct cli_session *s, ULONG cq_depth, ULONG queue_depth,
                              ULONG rq_depth)
{
    memset(s, 0, sizeof(*s));
    int code = CLI_EXIT_OK;
    s->adapter = cli_open(c, &code);
    if (!s->adapter)
        return code;
    NDK_ADAPTER *a = s->adapter;
    ULONG size = sizeof(s->info);
    s->info.Version.Major = NDKFPGA_NDK_VERSION_MAJOR;
    s->info.Version.Minor = NDKFPGA_NDK_VERSION_MINOR;
    const char *what = "NdkQueryAdapterInfo";
    NTSTATUS st = a->Dispatch->NdkQueryAdapterInfo(a, &s->info, &size);
    struct cli_completion w;
    if (st == STATUS_SUCCESS) {
        if (cq_depth > s->info.MaxCqDepth)
            cq_depth = s->info.MaxCqDepth;
        if (queue_depth > s->info.MaxInitiatorQueueDepth)
            queue_depth = s->info.MaxInitiatorQueueDepth;
        if (rq_depth > s->info.MaxReceiveQueueDepth)
            rq_depth = s->info.MaxReceiveQueueDepth;
        cli_completion_init(&w);
        what = "NdkCreateCq";
        st = cli_created(&w, a->Dispatch->NdkCreateCq(a, cq_depth, NULL, NULL, NULL, cli_on_create_done, &w, &s->cq),
                     (void **)&s->cq);
    }
    if (st == STATUS_SUCCESS) {
        cli_completion_init(&w);
        what = "NdkCreatePd";
        st = cli_created(&w, a->Dispatch->NdkCreatePd(a, cli_on_create_done, &w, &s->pd), (void **)&s->pd);
    }
    NDK_QP **qps[2] = {&s->initiator, &s->target};
    for (int i = 0; i < 2 && st == STATUS_SUCCESS; i++) {
        cli_completion_init(&w);
        what = "NdkCreateQp";
        st = cli_created(&w, s->pd->Dispatch->NdkCreateQp(s->pd, s->cq, s->cq, NULL, rq_depth, queue_depth, rq_depth ? 1 : 0, 1, 0,
                                                      cli_on_create_done, &w, qps[i]),
                     (void **)qps[i]);
    }
    if (st == STATUS_SUCCESS)
        st = connect_pair(s, &what);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(c, a, what, st);
        cli_session_close(s);
    }
    return code;
}

void cli_session_close(struct cli_session *s)
{
    /* Closing the adapter frees every object still open under it. */
    NdkFpgaCloseAdapter(s->adapter);
    memset(s, 0, sizeof(*s));
}
