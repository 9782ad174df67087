/* SPDX-License-Identifier: Apache-2.0 */
/* Every deadline of the library is monotonic: with the wall clock an hour off
 * (wallclock_shim.c, LD_PRELOAD) and the adapter frozen (SIGSTOP), a synchronous
 * request, an asynchronous one and a work request still time out on time
 * ($NDKFPGA_REQUEST_TIMEOUT_MS, set small by test_clock.sh). TAP output. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer.h"
#include "ndkfpga.h"
#include "tap.h"

/* What the library's deadline watch may add to the request timeout, and scheduling. */
#define SLACK_MS 2000

static void bail(const char *fmt, const char *arg)
{
    printf("not ok - ");
    printf(fmt, arg);
    printf("\n");
    exit(1);
}

struct done {
    pthread_mutex_t m;
    int fired;
    NTSTATUS st;
    uint64_t at;
};

static VOID on_create(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj)
{
    struct done *d = ctx;
    (void)obj;
    pthread_mutex_lock(&d->m);
    d->fired = 1;
    d->st = st;
    d->at = consumer_now_ms();
    pthread_mutex_unlock(&d->m);
}

static int wait_fired(struct done *d, uint64_t limit_ms)
{
    uint64_t t0 = consumer_now_ms();
    for (;;) {
        pthread_mutex_lock(&d->m);
        int f = d->fired;
        pthread_mutex_unlock(&d->m);
        if (f || consumer_now_ms() - t0 > limit_ms)
            return f;
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

int main(void)
{
    const char *v = getenv("NDKFPGA_REQUEST_TIMEOUT_MS");
    uint64_t timeout_ms = v ? strtoul(v, NULL, 10) : 0;
    const char *dev = getenv("NDKFPGA_DEVICE") ? getenv("NDKFPGA_DEVICE") : "model";
    tap_ok(timeout_ms > 0 && timeout_ms <= 2000, "NDKFPGA_REQUEST_TIMEOUT_MS is small (%llu ms)",
           (unsigned long long)timeout_ms);
    NDK_ADAPTER *a = NULL;
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &a);
    if (st != STATUS_SUCCESS) {
        printf("not ok - open %s: %s\n", dev, NdkFpgaStatusName(st));
        return 1;
    }
    NDKFPGA_ADAPTER_DETAILS det;
    st = NdkFpgaQueryAdapterDetails(a, &det);
    const char *p = st == STATUS_SUCCESS ? strstr(det.Device, "pid ") : NULL;
    pid_t pid = p ? (pid_t)atoi(p + 4) : 0;
    if (pid <= 0)
        bail("the adapter's process is not known (%s)", NdkFpgaStatusName(st));
    NDK_PD *pd = NULL;
    st = a->Dispatch->NdkCreatePd(a, NULL, NULL, &pd);
    if (st != STATUS_SUCCESS)
        bail("NdkCreatePd: %s", NdkFpgaStatusName(st));
    kill(pid, SIGSTOP);

    /* A synchronous request: its own wait enforces the deadline. */
    NDKFPGA_STATS stats;
    uint64_t t0 = consumer_now_ms();
    st = NdkFpgaQueryStats(a, &stats);
    uint64_t took = consumer_now_ms() - t0;
    tap_ok(st == STATUS_IO_TIMEOUT && took <= timeout_ms + SLACK_MS,
           "synchronous request to a frozen adapter: %s after %llu ms (deadline %llu ms)", NdkFpgaStatusName(st),
           (unsigned long long)took, (unsigned long long)timeout_ms);

    /* An asynchronous one: the callback thread's watch enforces it. */
    struct done d = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
    NDK_MR *mr = NULL;
    t0 = consumer_now_ms();
    st = pd->Dispatch->NdkCreateMr(pd, FALSE, on_create, &d, &mr);
    int fired = st == STATUS_PENDING && wait_fired(&d, timeout_ms + SLACK_MS);
    tap_ok(fired && d.st == STATUS_IO_TIMEOUT,
           "asynchronous request to a frozen adapter: call %s, callback %s after %llu ms", NdkFpgaStatusName(st),
           fired ? NdkFpgaStatusName(d.st) : "(none)", (unsigned long long)(fired ? d.at - t0 : consumer_now_ms() - t0));

    /* A buffer copy: its messages' deadlines. */
    MDL *mdl = NULL;
    uint8_t buf[8192];
    st = NdkFpgaAllocateBuffer(a, sizeof(buf), &mdl);
    t0 = consumer_now_ms();
    if (st == STATUS_SUCCESS)
        st = NdkFpgaReadBuffer(a, mdl, 0, buf, sizeof(buf));
    took = consumer_now_ms() - t0;
    tap_ok(st == STATUS_IO_TIMEOUT && took >= timeout_ms / 2 && took <= timeout_ms + SLACK_MS,
           "NdkFpgaReadBuffer from a frozen adapter: %s after %llu ms", NdkFpgaStatusName(st),
           (unsigned long long)took);
    kill(pid, SIGKILL);
    NdkFpgaCloseAdapter(a);
    return tap_done();
}
