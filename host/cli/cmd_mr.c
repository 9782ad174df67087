/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga mrlat, mrrate: memory-registration latency by size and registration rate, in
 * the manner of NetworkDirect's ndmrlat and ndmrrate, through NDKPI only.
 *
 * mrlat: for each size from 4 KiB doubling to the largest the adapter allows
 * (MaxRegistrationSize for NdkRegisterMr, FRMRPageCount pages for NdkFastRegister),
 * the time of NdkRegisterMr / NdkDeregisterMr per call (until it returns) and to
 * completion (until its callback ran), and of NdkFastRegister / NdkInvalidate per call
 * and to completion (until the result is on the CQ), averaged over the iterations, in
 * wall-clock microseconds of this host, plus the board's own cycles for the last
 * fast-register and invalidate (NdkFpgaQueryStats: LastWorkRequestCycles).
 *
 * mrrate: register+deregister pairs per second with several MRs in flight, and
 * fast-register+invalidate pairs per second with many work requests in flight on one
 * QP (the QP runs them in order, so one MR serves). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DEFAULT_ITERS 3
#define DEFAULT_RATE_COUNT 1000
#define DEFAULT_RATE_DEPTH 16
#define MAX_ITERS 1000000u
#define MAX_RATE_DEPTH 256u
#define FR_VA 0x50000000u /* base virtual address of every fast-register */
#define CQ_BATCH 64

/* ---- mrlat ---- */

/* Columns of a row; -1: the operation is not allowed at that size. */
enum { REG_CALL, REG_DONE, DEREG_CALL, DEREG_DONE, FR_CALL, FR_DONE, INV_CALL, INV_DONE, N_TIMES };
static const char *const time_keys[N_TIMES] = {
    "register_call_us",      "register_done_us",      "deregister_call_us", "deregister_done_us",
    "fast_register_call_us", "fast_register_done_us", "invalidate_call_us", "invalidate_done_us",
};
static const char *const time_heads[N_TIMES] = {"reg",     "reg-done", "dereg", "dereg-done",
                                                "fr",      "fr-done",  "inv",   "inv-done"};

struct row {
    size_t size;
    double t[N_TIMES];
    long fr_cycles, inv_cycles;
};

struct lat_run {
    const struct cli *c;
    struct cli_session *s;
    NDK_MR *mr, *frmr;
    NDK_LOGICAL_ADDRESS *pages;
    uint64_t iters;
    struct cli_failure f;
};

static int lat_check(struct lat_run *r, const char *what, NTSTATUS st)
{
    return cli_check(&r->f, what, st);
}

/* The board's cycles of the last work request. */
static long last_cycles(struct lat_run *r)
{
    NDKFPGA_STATS s;
    return lat_check(r, "NdkFpgaQueryStats", NdkFpgaQueryStats(r->s->adapter, &s)) ? (long)s.LastWorkRequestCycles
                                                                                   : -1;
}

/* One timed operation of a row, by its pair of columns: REG_CALL (NdkRegisterMr of buf),
 * DEREG_CALL (NdkDeregisterMr), FR_CALL (NdkFastRegister of n pages), INV_CALL
 * (NdkInvalidate). Adds the time until the call returned and until it completed (its
 * callback ran, or its result is on the CQ) to the row; a work request's board cycles
 * go to the row too. */
static void timed_op(struct lat_run *r, struct row *row, int col, MDL *buf, ULONG n, SIZE_T size)
{
    static const char *const names[N_TIMES] = {
        [REG_CALL] = "NdkRegisterMr",     [DEREG_CALL] = "NdkDeregisterMr",
        [FR_CALL] = "NdkFastRegister",    [FR_DONE] = "NdkFastRegister completion",
        [INV_CALL] = "NdkInvalidate",     [INV_DONE] = "NdkInvalidate completion",
    };
    NDK_QP *qp = r->s->initiator;
    NDK_MR *mr = r->mr;
    struct cli_completion w;
    cli_completion_init(&w);
    double t0 = cli_now_us(), td = t0;
    NTSTATUS st;
    if (col == REG_CALL)
        st = mr->Dispatch->NdkRegisterMr(mr, buf, size, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, cli_on_request_done, &w);
    else if (col == DEREG_CALL)
        st = mr->Dispatch->NdkDeregisterMr(mr, cli_on_request_done, &w);
    else if (col == FR_CALL)
        st = qp->Dispatch->NdkFastRegister(qp, (PVOID)1, r->frmr, n, r->pages, 0, size, (PVOID)(uintptr_t)FR_VA,
                                           NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    else
        st = qp->Dispatch->NdkInvalidate(qp, (PVOID)2, &r->frmr->Header, 0);
    double t1 = cli_now_us();
    if (col < FR_CALL) {
        lat_check(r, names[col], cli_finish(&w, st, &td));
    } else {
        NDK_RESULT_EX res;
        if (lat_check(r, names[col], st) && lat_check(r, names[col + 1], cli_next_result(r->s->cq, &res, &td)))
            lat_check(r, col == FR_CALL ? "NdkFastRegister result" : "NdkInvalidate result", res.Status);
        *(col == FR_CALL ? &row->fr_cycles : &row->inv_cycles) = last_cycles(r);
    }
    row->t[col] += t1 - t0;
    row->t[col + 1] += td - t0;
}

static void measure_size(struct lat_run *r, struct row *row, SIZE_T size, int can_reg, int can_fr)
{
    NDK_ADAPTER *a = r->s->adapter;
    MDL *buf = NULL;
    memset(row, 0, sizeof(*row));
    row->size = size;
    if (!lat_check(r, "NdkFpgaAllocateBuffer", NdkFpgaAllocateBuffer(a, size, &buf)))
        return;
    ULONG n = (ULONG)(size / PAGE_SIZE);
    for (ULONG i = 0; can_fr && i < n; i++)
        r->pages[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(buf)[i] << PAGE_SHIFT;
    for (uint64_t it = 0; it < r->iters && !r->f.call; it++) {
        cli_progress("mrlat: %zu bytes, iteration %llu of %llu", (size_t)size, (unsigned long long)(it + 1),
                     (unsigned long long)r->iters);
        if (can_reg) {
            timed_op(r, row, REG_CALL, buf, n, size);
            timed_op(r, row, DEREG_CALL, buf, n, size);
        }
        if (can_fr && !r->f.call) {
            timed_op(r, row, FR_CALL, buf, n, size);
            timed_op(r, row, INV_CALL, buf, n, size);
        }
    }
    NdkFpgaFreeBuffer(a, buf);
    for (int j = 0; j < N_TIMES; j++)
        row->t[j] = ((j < FR_CALL && !can_reg) || (j >= FR_CALL && !can_fr)) ? -1 : row->t[j] / (double)r->iters;
    if (!can_fr)
        row->fr_cycles = row->inv_cycles = -1;
}

static void print_row_text(const struct row *row, int series)
{
    printf("%10zu", row->size);
    for (int j = 0; j < N_TIMES; j++) {
        if (row->t[j] < 0)
            printf(" %10s", "-");
        else
            printf(" %10.1f", row->t[j]);
    }
    const long cycles[2] = {row->fr_cycles, row->inv_cycles};
    for (int j = 0; j < 2; j++) {
        if (cycles[j] < 0)
            printf(" %9s", "-");
        else
            printf(" %9ld", cycles[j]);
    }
    printf("\n");
    if (series) {
        /* bench/report.py reads these. */
        printf("series ndmrlat %zu", row->size);
        for (int j = 0; j < N_TIMES; j++)
            printf(" %.1f", row->t[j]);
        printf(" %ld %ld\n", row->fr_cycles, row->inv_cycles);
    }
    fflush(stdout);
}

static void print_row_json(const struct row *row, int first)
{
    printf("%s\n  {\"size\": %zu", first ? "" : ",", row->size);
    for (int j = 0; j < N_TIMES; j++) {
        printf(", \"%s\": ", time_keys[j]);
        cli_json_number(stdout, row->t[j], 1);
    }
    printf(", \"fast_register_cycles\": ");
    cli_json_number(stdout, (double)row->fr_cycles, 0);
    printf(", \"invalidate_cycles\": ");
    cli_json_number(stdout, (double)row->inv_cycles, 0);
    printf("}");
}

int cmd_mrlat(struct cli *c, int argc, char **argv)
{
    uint64_t iters = DEFAULT_ITERS, min_size = PAGE_SIZE, max_size = UINT32_MAX;
    int series = 0;
    const struct cli_option opts[] = {
        {"iters", 'n', NULL, &iters, 1, MAX_ITERS, 0, 0, "a count of iterations"},
        {"min-size", CLI_OPT_MIN_SIZE, NULL, &min_size, PAGE_SIZE, UINT32_MAX, PAGE_SIZE, 1, "a size"},
        {"max-size", CLI_OPT_MAX_SIZE, NULL, &max_size, PAGE_SIZE, UINT32_MAX, PAGE_SIZE, 1, "a size"},
        {"series", CLI_OPT_SERIES, &series, NULL, 0, 0, 0, 0, NULL},
    };
    int code = cli_parse_options(c, argc, argv, 1, opts, sizeof(opts) / sizeof(opts[0]));
    if (code >= 0)
        return code;
    if (min_size > max_size)
        return cli_report(c, CLI_EXIT_USAGE, "--min-size is above --max-size");
    if (c->json && series)
        return cli_report(c, CLI_EXIT_USAGE, "--json and --series are two different outputs: choose one");

    struct cli_session s;
    if ((code = cli_session_open(c, &s, 64, 16)) != 0)
        return code;
    struct lat_run r;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.s = &s;
    r.iters = iters;
    NTSTATUS st;
    r.mr = cli_create_mr(&s, FALSE, &st);
    if (r.mr)
        r.frmr = cli_create_mr(&s, TRUE, &st);
    if (!r.mr || !r.frmr) {
        code = cli_fail(c, s.adapter, "NdkCreateMr", st);
        cli_session_close(&s);
        return code;
    }
    struct cli_completion w;
    cli_completion_init(&w);
    st = cli_finish(&w,
                    r.frmr->Dispatch->NdkInitializeFastRegisterMr(r.frmr, s.info.FRMRPageCount, TRUE,
                                                                  cli_on_request_done, &w),
                    NULL);
    r.pages = calloc(s.info.FRMRPageCount ? s.info.FRMRPageCount : 1, sizeof(*r.pages));
    if (st != STATUS_SUCCESS || !r.pages) {
        code = cli_fail(c, s.adapter, "NdkInitializeFastRegisterMr", r.pages ? st : STATUS_INSUFFICIENT_RESOURCES);
        free(r.pages);
        cli_session_close(&s);
        return code;
    }
    NDKFPGA_ADAPTER_DETAILS d;
    if (NdkFpgaQueryAdapterDetails(s.adapter, &d) != STATUS_SUCCESS)
        snprintf(d.Device, sizeof(d.Device), "%s", c->device);

    SIZE_T fr_max = (SIZE_T)s.info.FRMRPageCount * PAGE_SIZE;
    SIZE_T top = s.info.MaxRegistrationSize > fr_max ? s.info.MaxRegistrationSize : fr_max;
    if (top > max_size)
        top = (SIZE_T)max_size;
    if (c->json) {
        printf("{\"command\": \"mrlat\", \"device\": ");
        cli_json_string(stdout, d.Device);
        printf(", \"iterations\": %llu, \"max_registration_size\": %zu, \"frmr_page_count\": %u, "
               "\"unit\": \"microseconds of wall time; cycles of the board\", \"rows\": [",
               (unsigned long long)iters, (size_t)s.info.MaxRegistrationSize, (unsigned)s.info.FRMRPageCount);
    } else {
        printf("mrlat on %s: %llu iterations per size; MaxRegistrationSize %zu, FRMRPageCount %u\n", d.Device,
               (unsigned long long)iters, (size_t)s.info.MaxRegistrationSize, (unsigned)s.info.FRMRPageCount);
        printf("times in microseconds of wall time (per call / to completion); board cycles from INFO\n");
        printf("%10s", "size");
        for (int j = 0; j < N_TIMES; j++)
            printf(" %10s", time_heads[j]);
        printf(" %9s %9s\n", "fr-cyc", "inv-cyc");
    }
    int rows = 0;
    /* Powers of two from the smallest size, then the largest itself when it is not one. */
    for (SIZE_T size = (SIZE_T)min_size; size <= top && !r.f.call;
         size = (size * 2 > top && size < top) ? top : size * 2) {
        struct row row;
        measure_size(&r, &row, size, size <= s.info.MaxRegistrationSize, size <= fr_max);
        cli_progress_done();
        if (r.f.call)
            break;
        if (c->json)
            print_row_json(&row, rows == 0);
        else
            print_row_text(&row, series);
        rows++;
    }
    if (c->json) {
        /* A failed run still leaves one JSON document: the rows so far and what failed. */
        printf("\n]");
        if (r.f.call) {
            printf(", \"error\": {\"call\": ");
            cli_json_string(stdout, r.f.call);
            printf(", \"status\": ");
            cli_json_string(stdout, NdkFpgaStatusName(r.f.status));
            printf("}");
        }
        printf("}\n");
    }
    if (r.f.call)
        code = cli_fail(c, s.adapter, r.f.call, r.f.status);
    else if (series)
        printf("ok - ndmrlat: every registration call and completion succeeded\n");
    free(r.pages);
    cli_session_close(&s);
    return code;
}

/* ---- mrrate ---- */

/* Registrations with several MRs in flight: each MR registers, deregisters, again. */
struct reg_state {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ready;           /* MRs whose request completed and wait for the next step */
};
struct reg_mr {
    struct reg_state *rs;
    NDK_MR *mr;
    int registered;      /* what the last completed request did */
    int done;            /* its completion arrived */
    NTSTATUS status;
};

static VOID on_reg_done(PVOID ctx, NTSTATUS st)
{
    struct reg_mr *m = ctx;
    pthread_mutex_lock(&m->rs->lock);
    m->status = st;
    m->done = 1;
    m->rs->ready++;
    pthread_cond_signal(&m->rs->cond);
    pthread_mutex_unlock(&m->rs->lock);
}

/* Post the next step of m: register when it is not registered, else deregister. */
static NTSTATUS reg_step(struct reg_mr *m, MDL *buf, SIZE_T size)
{
    m->done = 0;
    NTSTATUS st = m->registered ? m->mr->Dispatch->NdkDeregisterMr(m->mr, on_reg_done, m)
                                : m->mr->Dispatch->NdkRegisterMr(m->mr, buf, size, NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                                                                 on_reg_done, m);
    return st == STATUS_PENDING ? STATUS_SUCCESS : (st == STATUS_SUCCESS ? STATUS_INTERNAL_ERROR : st);
}

/* count register+deregister pairs; *what names the call that failed. */
static NTSTATUS register_rate(struct cli_session *s, uint64_t count, uint64_t depth, SIZE_T size, double *secs,
                              const char **what)
{
    MDL *buf = NULL;
    *what = "NdkFpgaAllocateBuffer";
    NTSTATUS st = NdkFpgaAllocateBuffer(s->adapter, size, &buf);
    if (st != STATUS_SUCCESS)
        return st;
    if (depth > count)
        depth = count;
    struct reg_state rs;
    pthread_mutex_init(&rs.lock, NULL);
    pthread_cond_init(&rs.cond, NULL);
    rs.ready = 0;
    struct reg_mr *mrs = calloc(depth, sizeof(*mrs));
    uint64_t started = 0, pairs = 0, busy = 0;
    *what = "NdkCreateMr";
    for (uint64_t i = 0; mrs && i < depth && st == STATUS_SUCCESS; i++) {
        mrs[i].rs = &rs;
        mrs[i].mr = cli_create_mr(s, FALSE, &st);
    }
    if (!mrs)
        st = STATUS_INSUFFICIENT_RESOURCES;
    double t0 = cli_now_us();
    *what = "NdkRegisterMr";
    for (uint64_t i = 0; st == STATUS_SUCCESS && i < depth; i++) {
        st = reg_step(&mrs[i], buf, size);
        if (st == STATUS_SUCCESS) {
            started++;
            busy++;
        }
    }
    while (busy > 0) {
        pthread_mutex_lock(&rs.lock);
        while (rs.ready == 0)
            pthread_cond_wait(&rs.cond, &rs.lock);
        pthread_mutex_unlock(&rs.lock);
        for (uint64_t i = 0; i < depth; i++) {
            pthread_mutex_lock(&rs.lock);
            int done = mrs[i].done;
            if (done) {
                mrs[i].done = 0;
                rs.ready--;
            }
            pthread_mutex_unlock(&rs.lock);
            if (!done)
                continue;
            busy--;
            if (mrs[i].status != STATUS_SUCCESS) {
                if (st == STATUS_SUCCESS) {
                    st = mrs[i].status;
                    *what = mrs[i].registered ? "NdkDeregisterMr" : "NdkRegisterMr";
                }
                continue;
            }
            mrs[i].registered = !mrs[i].registered;
            if (!mrs[i].registered)
                pairs++;
            /* Go on: deregister what was registered; register again while pairs are due. */
            if (st == STATUS_SUCCESS && (mrs[i].registered || started < count)) {
                started += !mrs[i].registered;
                NTSTATUS s2 = reg_step(&mrs[i], buf, size);
                if (s2 == STATUS_SUCCESS) {
                    busy++;
                } else {
                    st = s2;
                    *what = mrs[i].registered ? "NdkDeregisterMr" : "NdkRegisterMr";
                }
            }
            cli_progress("mrrate: %llu of %llu register+deregister pairs", (unsigned long long)pairs,
                         (unsigned long long)count);
        }
    }
    *secs = (cli_now_us() - t0) / 1e6;
    cli_progress_done();
    NdkFpgaFreeBuffer(s->adapter, buf); /* every MR over it is deregistered by now */
    free(mrs);                          /* (the MRs close with the adapter) */
    return st;
}

/* count fast-register+invalidate pairs on one MR with up to depth work requests in flight. */
static NTSTATUS fast_register_rate(struct cli_session *s, uint64_t count, uint64_t depth, SIZE_T size, double *secs,
                                   const char **what)
{
    ULONG n = (ULONG)(size / PAGE_SIZE);
    MDL *buf = NULL;
    *what = "NdkFpgaAllocateBuffer";
    NTSTATUS st = NdkFpgaAllocateBuffer(s->adapter, size, &buf);
    if (st != STATUS_SUCCESS)
        return st;
    NDK_LOGICAL_ADDRESS *pages = calloc(n, sizeof(*pages));
    *what = "NdkCreateMr";
    NDK_MR *mr = pages ? cli_create_mr(s, TRUE, &st) : NULL;
    if (!pages)
        st = STATUS_INSUFFICIENT_RESOURCES;
    if (mr) {
        struct cli_completion w;
        cli_completion_init(&w);
        *what = "NdkInitializeFastRegisterMr";
        st = cli_finish(&w, mr->Dispatch->NdkInitializeFastRegisterMr(mr, n, FALSE, cli_on_request_done, &w), NULL);
    }
    for (ULONG i = 0; st == STATUS_SUCCESS && i < n; i++)
        pages[i].QuadPart = (LONGLONG)MmGetMdlPfnArray(buf)[i] << PAGE_SHIFT;
    NDK_QP *qp = s->initiator;
    uint64_t total = 2 * count, posted = 0, completed = 0;
    double t0 = cli_now_us(), idle_since = t0;
    while (st == STATUS_SUCCESS && completed < total) {
        while (posted < total && posted - completed < depth) {
            NTSTATUS p = (posted % 2 == 0) ? qp->Dispatch->NdkFastRegister(qp, NULL, mr, n, pages, 0, size,
                                                                              (PVOID)(uintptr_t)FR_VA, 0)
                                           : qp->Dispatch->NdkInvalidate(qp, NULL, &mr->Header, 0);
            if (p == STATUS_INSUFFICIENT_RESOURCES)
                break; /* the QP's queue is full: reap first */
            if (p != STATUS_SUCCESS) {
                st = p;
                *what = posted % 2 == 0 ? "NdkFastRegister" : "NdkInvalidate";
                break;
            }
            posted++;
        }
        NDK_RESULT_EX r[CQ_BATCH];
        ULONG got = s->cq->Dispatch->NdkGetCqResultsEx(s->cq, r, CQ_BATCH);
        for (ULONG i = 0; i < got; i++) {
            if (r[i].Status != STATUS_SUCCESS && st == STATUS_SUCCESS) {
                st = r[i].Status;
                *what = r[i].Type == NdkOperationTypeInvalidate ? "NdkInvalidate result" : "NdkFastRegister result";
            }
        }
        completed += got;
        double now = cli_now_us();
        if (got) {
            idle_since = now;
            cli_progress("mrrate: %llu of %llu fast-register+invalidate pairs", (unsigned long long)(completed / 2),
                         (unsigned long long)count);
        } else if (now - idle_since > 300e6) {
            st = STATUS_IO_TIMEOUT;
            *what = "NdkGetCqResultsEx";
        } else {
            sched_yield();
        }
    }
    *secs = (cli_now_us() - t0) / 1e6;
    cli_progress_done();
    /* Nothing may still run through the buffer: wait for what is in flight. */
    while (completed < posted && st != STATUS_IO_TIMEOUT) {
        NDK_RESULT_EX r;
        if (cli_next_result(s->cq, &r, NULL) != STATUS_SUCCESS)
            break;
        completed++;
    }
    free(pages);
    if (completed == posted)
        NdkFpgaFreeBuffer(s->adapter, buf);
    return st;
}

int cmd_mrrate(struct cli *c, int argc, char **argv)
{
    uint64_t count = DEFAULT_RATE_COUNT, depth = DEFAULT_RATE_DEPTH, size = PAGE_SIZE;
    const struct cli_option opts[] = {
        {"count", 'n', NULL, &count, 1, MAX_ITERS, 0, 0, "a count of pairs"},
        {"in-flight", 'q', NULL, &depth, 1, MAX_RATE_DEPTH, 0, 0, "a number of work requests in flight"},
        {"size", 's', NULL, &size, PAGE_SIZE, UINT32_MAX, PAGE_SIZE, 1, "a size"},
    };
    int code = cli_parse_options(c, argc, argv, 1, opts, sizeof(opts) / sizeof(opts[0]));
    if (code >= 0)
        return code;
    struct cli_session s;
    /* Work requests in flight: each fast-register and invalidate is one. */
    if ((code = cli_session_open(c, &s, (ULONG)(2 * depth + CQ_BATCH), (ULONG)depth)) != 0)
        return code;
    if (size > s.info.MaxRegistrationSize || size / PAGE_SIZE > s.info.FRMRPageCount) {
        cli_session_close(&s);
        return cli_report(c, CLI_EXIT_FAILED,
                          "-s %llu is above what this adapter registers at once (%zu bytes, %u pages fast)",
                          (unsigned long long)size, (size_t)s.info.MaxRegistrationSize, (unsigned)s.info.FRMRPageCount);
    }
    if (depth > s.info.MaxInitiatorQueueDepth)
        depth = s.info.MaxInitiatorQueueDepth;
    NDKFPGA_ADAPTER_DETAILS d;
    if (NdkFpgaQueryAdapterDetails(s.adapter, &d) != STATUS_SUCCESS)
        snprintf(d.Device, sizeof(d.Device), "%s", c->device);
    double reg_s = 0, fr_s = 0;
    const char *what = "";
    NTSTATUS st = register_rate(&s, count, depth, (SIZE_T)size, &reg_s, &what);
    if (st == STATUS_SUCCESS)
        st = fast_register_rate(&s, count, depth, (SIZE_T)size, &fr_s, &what);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(c, s.adapter, what, st);
        cli_session_close(&s);
        return code;
    }
    cli_session_close(&s);
    double reg_rate = reg_s > 0 ? (double)count / reg_s : 0, fr_rate = fr_s > 0 ? (double)count / fr_s : 0;
    if (c->json) {
        printf("{\"command\": \"mrrate\", \"device\": ");
        cli_json_string(stdout, d.Device);
        printf(
            ", \"size\": %llu, \"in_flight\": %llu,\n \"register\": {\"pairs\": %llu, \"seconds\": %.6f, "
            "\"per_second\": %.1f},\n \"fast_register\": {\"pairs\": %llu, \"seconds\": %.6f, \"per_second\": %.1f}}\n",
            (unsigned long long)size, (unsigned long long)depth, (unsigned long long)count, reg_s, reg_rate,
            (unsigned long long)count, fr_s, fr_rate);
        return CLI_EXIT_OK;
    }
    printf("mrrate on %s: %llu-byte regions, up to %llu in flight\n", d.Device, (unsigned long long)size,
           (unsigned long long)depth);
    printf("  register+deregister        %8llu pairs in %8.3f s = %10.0f pairs/s\n", (unsigned long long)count, reg_s,
           reg_rate);
    printf("  fast-register+invalidate   %8llu pairs in %8.3f s = %10.0f pairs/s\n", (unsigned long long)count, fr_s,
           fr_rate);
    return CLI_EXIT_OK;
}
