/* ndmrlat: memory-registration latency through the public NDKPI only (ndkpi.h,
 * ndkfpga.h), in the manner of Windows' ndmrlat: for each size from 4 KiB doubling
 * to the largest the adapter allows (NDK_ADAPTER_INFO.MaxRegistrationSize for
 * NdkRegisterMr, FRMRPageCount pages for NdkFastRegister), the time of
 *   NdkRegisterMr / NdkDeregisterMr      per call (until it returns) and to completion
 *                                        (until its completion callback ran),
 *   NdkFastRegister / NdkInvalidate      per call and to completion (until the CQE is
 *                                        on the CQ: NdkGetCqResultsEx polled),
 * averaged over ITERS iterations, in wall-clock microseconds of this host against the
 * chosen adapter (default the simulation, which runs about 70 times slower than the
 * board), plus the board's own cycles for the last fast-register and invalidate
 * (NdkFpgaQueryStats: LastWorkRequestCycles).
 * Output: a table on stdout; with --series, "series ndmrlat ..." lines for
 * bench/report.py. Exit status non-zero if any call fails.
 * Usage: ndmrlat [--series] [--iters N] [DEVICE] */
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndkfpga.h"
#include "ndkpi.h"

static int failures;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct completion {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    NTSTATUS status;
    NDK_OBJECT_HEADER *object;
    double at_us; /* when the callback ran */
};

static void completion_init(struct completion *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
}

static void completion_signal(struct completion *c, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    double t = now_us();
    pthread_mutex_lock(&c->lock);
    c->status = st;
    c->object = obj;
    c->at_us = t;
    c->done = 1;
    pthread_cond_signal(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static VOID on_request_done(PVOID ctx, NTSTATUS st) { completion_signal(ctx, st, NULL); }
static VOID on_create_done(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj) { completion_signal(ctx, st, obj); }
static VOID on_disconnect(PVOID ctx) { (void)ctx; }

/* The final status of a call that may pend; *done_us is when it completed. */
static NTSTATUS finish(struct completion *c, NTSTATUS st, double *done_us)
{
    if (st != STATUS_PENDING) {
        if (done_us)
            *done_us = now_us();
        return st;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 300;
    pthread_mutex_lock(&c->lock);
    int rc = 0;
    while (!c->done && rc == 0)
        rc = pthread_cond_timedwait(&c->cond, &c->lock, &until);
    st = c->done ? c->status : STATUS_IO_TIMEOUT;
    if (done_us)
        *done_us = c->at_us;
    pthread_mutex_unlock(&c->lock);
    return st;
}

static int expect(const char *what, NTSTATUS st)
{
    if (st != STATUS_SUCCESS) {
        fprintf(stderr, "ndmrlat: %s: %s\n", what, NdkFpgaStatusName(st));
        failures++;
        return 0;
    }
    return 1;
}

/* The object of a create call: set inline (*out) or by its completion callback. */
static void *created(const char *what, NTSTATUS st, struct completion *c, void *out)
{
    st = finish(c, st, NULL);
    if (!expect(what, st))
        return NULL;
    return out ? out : (void *)c->object;
}
#define CREATE(what, var, call)                                                                                     \
    do {                                                                                                           \
        completion_init(&c);                                                                                       \
        var = NULL;                                                                                                \
        NTSTATUS st_ = (call);                                                                                     \
        var = created(what, st_, &c, var);                                                                         \
    } while (0)

/* Poll the CQ until one result arrives; returns its status and when it was seen. */
static NTSTATUS next_result(NDK_CQ *cq, double *at_us)
{
    NDK_RESULT_EX r;
    double limit = now_us() + 300e6;
    while (now_us() < limit) {
        if (cq->Dispatch->NdkGetCqResultsEx(cq, &r, 1) == 1) {
            *at_us = now_us();
            return r.Status;
        }
        sched_yield();
    }
    return STATUS_IO_TIMEOUT;
}

static NDK_CONNECTOR *incoming;
static pthread_mutex_t incoming_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t incoming_cond = PTHREAD_COND_INITIALIZER;
static VOID on_connect_request(PVOID ctx, NDK_CONNECTOR *connector)
{
    (void)ctx;
    pthread_mutex_lock(&incoming_lock);
    incoming = connector;
    pthread_cond_signal(&incoming_cond);
    pthread_mutex_unlock(&incoming_lock);
}

/* Two QPs of the adapter connected to each other (loopback), as a consumer does it. */
static int connect_pair(NDK_ADAPTER *a, NDK_QP *initiator, NDK_QP *target)
{
    struct completion c;
    NDK_LISTENER *listener = NULL;
    NDK_CONNECTOR *active = NULL;
    CREATE("NdkCreateListener", listener,
           a->Dispatch->NdkCreateListener(a, on_connect_request, NULL, on_create_done, &c, &listener));
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons(4792);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    completion_init(&c);
    if (!listener ||
        !expect("NdkListen", finish(&c, listener->Dispatch->NdkListen(listener, (const SOCKADDR *)&addr, sizeof(addr),
                                                                      on_request_done, &c),
                                    NULL)))
        return 0;
    CREATE("NdkCreateConnector", active, a->Dispatch->NdkCreateConnector(a, on_create_done, &c, &active));
    if (!active)
        return 0;
    struct completion connected, accepted, completed;
    completion_init(&connected);
    completion_init(&accepted);
    completion_init(&completed);
    NTSTATUS st = active->Dispatch->NdkConnect(active, initiator, (const SOCKADDR *)&addr, sizeof(addr),
                                               (const SOCKADDR *)&addr, sizeof(addr), 1, 1, NULL, 0, on_request_done,
                                               &connected);
    if (st != STATUS_PENDING && !expect("NdkConnect", st))
        return 0;
    pthread_mutex_lock(&incoming_lock);
    while (!incoming)
        pthread_cond_wait(&incoming_cond, &incoming_lock);
    NDK_CONNECTOR *passive = incoming;
    pthread_mutex_unlock(&incoming_lock);
    st = passive->Dispatch->NdkAccept(passive, target, 1, 1, NULL, 0, on_disconnect, NULL, on_request_done, &accepted);
    if (st != STATUS_PENDING && !expect("NdkAccept", st))
        return 0;
    if (!expect("connect", finish(&connected, STATUS_PENDING, NULL)))
        return 0;
    st = active->Dispatch->NdkCompleteConnect(active, on_disconnect, NULL, on_request_done, &completed);
    return expect("NdkCompleteConnect", finish(&completed, st, NULL)) &&
           expect("accept", finish(&accepted, STATUS_PENDING, NULL));
}

struct row {
    double reg_call, reg_done, dereg_call, dereg_done, fr_call, fr_done, inv_call, inv_done;
    unsigned fr_cycles, inv_cycles;
};

int main(int argc, char **argv)
{
    int series = 0, iters = 3;
    const char *device = getenv("NDKFPGA_DEVICE");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--series") == 0)
            series = 1;
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else
            device = argv[i];
    }
    if (!device || !*device)
        device = "sim";
    if (iters < 1) {
        fprintf(stderr, "usage: ndmrlat [--series] [--iters N>=1] [DEVICE]\n");
        return 2;
    }

    NDK_ADAPTER *a = NULL;
    if (!expect("NdkFpgaOpenAdapter", NdkFpgaOpenAdapter(device, &a)))
        return 1;
    NDK_ADAPTER_INFO info;
    ULONG isz = sizeof(info);
    memset(&info, 0, sizeof(info));
    info.Version.Major = 1;
    info.Version.Minor = 0;
    expect("NdkQueryAdapterInfo", a->Dispatch->NdkQueryAdapterInfo(a, &info, &isz));
    struct completion c;
    NDK_CQ *cq = NULL;
    NDK_PD *pd = NULL;
    NDK_QP *qi = NULL, *qt = NULL;
    NDK_MR *mr = NULL, *frmr = NULL;
    CREATE("NdkCreateCq", cq, a->Dispatch->NdkCreateCq(a, 64, NULL, NULL, NULL, on_create_done, &c, &cq));
    CREATE("NdkCreatePd", pd, a->Dispatch->NdkCreatePd(a, on_create_done, &c, &pd));
    if (!cq || !pd) {
        fprintf(stderr, "ndmrlat: no CQ or PD\n");
        return 1;
    }
    CREATE("NdkCreateQp", qi, pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, 16, 0, 1, 0, on_create_done, &c, &qi));
    CREATE("NdkCreateQp", qt, pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, 16, 0, 1, 0, on_create_done, &c, &qt));
    CREATE("NdkCreateMr", mr, pd->Dispatch->NdkCreateMr(pd, FALSE, on_create_done, &c, &mr));
    CREATE("NdkCreateMr(fast)", frmr, pd->Dispatch->NdkCreateMr(pd, TRUE, on_create_done, &c, &frmr));
    if (!qi || !qt || !mr || !frmr || !connect_pair(a, qi, qt)) {
        fprintf(stderr, "ndmrlat: setup failed\n");
        return 1;
    }
    completion_init(&c);
    if (!expect("NdkInitializeFastRegisterMr",
                finish(&c, frmr->Dispatch->NdkInitializeFastRegisterMr(frmr, info.FRMRPageCount, TRUE, on_request_done,
                                                                       &c),
                       NULL)))
        return 1;

    SIZE_T fr_max = (SIZE_T)info.FRMRPageCount * PAGE_SIZE;
    SIZE_T top = info.MaxRegistrationSize > fr_max ? info.MaxRegistrationSize : fr_max;
    printf("ndmrlat on \"%s\": %d iterations per size; MaxRegistrationSize %zu, FRMRPageCount %u\n", device, iters,
           (size_t)info.MaxRegistrationSize, (unsigned)info.FRMRPageCount);
    printf("times in microseconds of wall time (per call / to completion); board cycles from INFO\n");
    printf("%10s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "size", "reg", "reg-done", "dereg", "dereg-done", "fr",
           "fr-done", "inv", "inv-done", "fr-cyc", "inv-cyc");
    NDK_LOGICAL_ADDRESS *pages = calloc(info.FRMRPageCount ? info.FRMRPageCount : 1, sizeof(*pages));
    /* Powers of two, then the largest size itself when it is not one. */
    for (SIZE_T size = PAGE_SIZE; size <= top && failures == 0;
         size = (size * 2 > top && size < top) ? top : size * 2) {
        MDL *buf = NULL;
        if (!expect("NdkFpgaAllocateBuffer", NdkFpgaAllocateBuffer(a, size, &buf)))
            break;
        struct row r;
        memset(&r, 0, sizeof(r));
        int can_reg = size <= info.MaxRegistrationSize, can_fr = size <= fr_max;
        ULONG n = (ULONG)(size / PAGE_SIZE);
        for (ULONG i = 0; can_fr && i < n; i++)
            pages[i] = (NDK_LOGICAL_ADDRESS)MmGetMdlPfnArray(buf)[i] << PAGE_SHIFT;
        for (int it = 0; it < iters && failures == 0; it++) {
            double t0, t1, td;
            if (can_reg) {
                completion_init(&c);
                t0 = now_us();
                NTSTATUS st = mr->Dispatch->NdkRegisterMr(mr, buf, size, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, on_request_done,
                                                          &c);
                t1 = now_us();
                expect("NdkRegisterMr", finish(&c, st, &td));
                r.reg_call += t1 - t0;
                r.reg_done += td - t0;
                completion_init(&c);
                t0 = now_us();
                st = mr->Dispatch->NdkDeregisterMr(mr, on_request_done, &c);
                t1 = now_us();
                expect("NdkDeregisterMr", finish(&c, st, &td));
                r.dereg_call += t1 - t0;
                r.dereg_done += td - t0;
            }
            if (can_fr) {
                PVOID va = (PVOID)(uintptr_t)0x50000000u;
                t0 = now_us();
                NTSTATUS st = qi->Dispatch->NdkFastRegister(qi, (PVOID)1, frmr, n, pages, 0, size, va,
                                                            NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
                t1 = now_us();
                expect("NdkFastRegister", st);
                expect("NdkFastRegister completion", next_result(cq, &td));
                r.fr_call += t1 - t0;
                r.fr_done += td - t0;
                NDKFPGA_STATS s;
                if (expect("NdkFpgaQueryStats", NdkFpgaQueryStats(a, &s)))
                    r.fr_cycles = s.LastWorkRequestCycles;
                t0 = now_us();
                st = qi->Dispatch->NdkInvalidate(qi, (PVOID)2, &frmr->Header, 0);
                t1 = now_us();
                expect("NdkInvalidate", st);
                expect("NdkInvalidate completion", next_result(cq, &td));
                r.inv_call += t1 - t0;
                r.inv_done += td - t0;
                if (expect("NdkFpgaQueryStats", NdkFpgaQueryStats(a, &s)))
                    r.inv_cycles = s.LastWorkRequestCycles;
            }
        }
        NdkFpgaFreeBuffer(a, buf);
        double k = 1.0 / iters;
        /* -1: the adapter does not allow this operation at this size (shown as "-"). */
        double v[8] = {r.reg_call * k,  r.reg_done * k, r.dereg_call * k, r.dereg_done * k,
                       r.fr_call * k,   r.fr_done * k,  r.inv_call * k,   r.inv_done * k};
        long cyc[2] = {(long)r.fr_cycles, (long)r.inv_cycles};
        for (int j = 0; j < 8; j++)
            if ((j < 4 && !can_reg) || (j >= 4 && !can_fr))
                v[j] = -1;
        if (!can_fr)
            cyc[0] = cyc[1] = -1;
        printf("%10zu", (size_t)size);
        for (int j = 0; j < 8; j++) {
            if (v[j] < 0)
                printf(" %9s", "-");
            else
                printf(" %9.1f", v[j]);
        }
        for (int j = 0; j < 2; j++) {
            if (cyc[j] < 0)
                printf(" %9s", "-");
            else
                printf(" %9ld", cyc[j]);
        }
        printf("\n");
        if (series) {
            printf("series ndmrlat %zu", (size_t)size);
            for (int j = 0; j < 8; j++)
                printf(" %.1f", v[j]);
            printf(" %ld %ld\n", cyc[0], cyc[1]);
        }
        fflush(stdout);
    }
    free(pages);
    NdkFpgaCloseAdapter(a);
    printf("%s - ndmrlat: every registration call and completion succeeded\n", failures ? "not ok" : "ok");
    return failures ? 1 : 0;
}
