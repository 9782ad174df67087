/* SPDX-License-Identifier: Apache-2.0 */
/* Diagnostics of the adapter (ndkfpga.h): devices, details, statistics, counters,
 * status names, error messages and pings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ndk_internal.h"
#ifdef NF_WITH_BOARD_TRANSPORTS
#include "transport/transport_board.h"
#endif

NTSTATUS NdkFpgaQueryStats(NDK_ADAPTER *a, NDKFPGA_STATS *s)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !s)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uint8_t msg[NF_MSG_HDR_SIZE];
    struct nf_info in;
    size_t got = 0;
    memset(&in, 0, sizeof(in));
    NTSTATUS st = ndk_call(ad, NF_OP_INFO, msg, sizeof(msg), &in, sizeof(in), &got);
    if (st != STATUS_SUCCESS)
        return st;
    if (got < sizeof(in))
        return STATUS_INTERNAL_ERROR;
    memset(s, 0, sizeof(*s));
    s->FirmwareVersion = in.fw_version;
    s->ClockHz = in.clk_hz;
    s->WorkRequests = in.wr_count;
    s->LastWorkRequestOp = in.last_wr_op;
    s->LastWorkRequestCycles = in.last_wr_cycles;
    s->LastWorkRequestFwCycles = in.last_wr_fw_cycles;
    s->LinkRxOk = in.rx_ok;
    s->LinkRxBad = in.rx_bad;
    s->LinkRxDrop = in.rx_drop;
    s->LinkRetransmits = in.retransmits;
    s->Cycle = (uint64_t)in.cycle_hi << 32 | in.cycle_lo;
    return STATUS_SUCCESS;
}

const char *NdkFpgaStatusName(NTSTATUS st)
{
    return nf_status_name(st);
}

const char *NdkFpgaErrorMessage(NDK_ADAPTER *a)
{
    if (ndk_obj_ok(a, NdkObjectTypeAdapter)) {
        struct ndk_adapter *ad = ndk_adapter_of(a);
        if (nf_link_status(ad->link) != STATUS_SUCCESS)
            return nf_link_dead_reason(ad->link);
    }
    return nf_error_message();
}

_Static_assert(NDKFPGA_LOG_ERROR == NF_LOG_ERROR && NDKFPGA_LOG_WARNING == NF_LOG_WARNING &&
                   NDKFPGA_LOG_DEBUG == NF_LOG_DEBUG && NDKFPGA_LOG_NONE == NF_LOG_NONE,
               "log levels are the link layer's");

VOID NdkFpgaSetLogCallback(NDKFPGA_LOG_CALLBACK cb, PVOID ctx, ULONG level)
{
    nf_log_set(cb, ctx, level); /* the same type: VOID (*)(PVOID, ULONG, const char *) */
}

/* Copy src into a fixed field, always terminated. */
static void put_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* The library-started devices after the boards. */
static const struct {
    ULONG kind;
    const char *name, *description;
} started_devices[] = {
    {NDKFPGA_DEVICE_SIM, "sim", "Verilator board model (nfsim)"},
    {NDKFPGA_DEVICE_MODEL, "model", "software adapter (nfmodel)"},
};
#define N_STARTED (sizeof(started_devices) / sizeof(started_devices[0]))
#define MAX_BOARDS 64

NTSTATUS NdkFpgaListDevices(NDKFPGA_DEVICE *devs, ULONG *count)
{
    if (!count || (!devs && *count > 0))
        return STATUS_INVALID_PARAMETER;
    ULONG cap = *count, n = 0;
#ifdef NF_WITH_BOARD_TRANSPORTS
    struct nf_board_info boards[MAX_BOARDS];
    int nb = nf_board_list(boards, MAX_BOARDS);
    if (nb > MAX_BOARDS)
        nb = MAX_BOARDS;
    for (int i = 0; i < nb; i++, n++) {
        if (n >= cap)
            continue;
        NDKFPGA_DEVICE *d = &devs[n];
        memset(d, 0, sizeof(*d));
        d->Kind = NDKFPGA_DEVICE_USB;
        d->Status = boards[i].may_open ? STATUS_SUCCESS : STATUS_ACCESS_DENIED;
        snprintf(d->Name, sizeof(d->Name), "usb:%03d-%03d", boards[i].bus, boards[i].addr);
        put_str(d->Description, sizeof(d->Description), boards[i].chip);
        put_str(d->Path, sizeof(d->Path), boards[i].node);
    }
#endif
    for (size_t k = 0; k < N_STARTED; k++, n++) {
        if (n >= cap)
            continue;
        NDKFPGA_DEVICE *d = &devs[n];
        memset(d, 0, sizeof(*d));
        d->Kind = started_devices[k].kind;
        put_str(d->Name, sizeof(d->Name), started_devices[k].name);
        put_str(d->Description, sizeof(d->Description), started_devices[k].description);
        NTSTATUS st = nf_transport_binary_path(started_devices[k].name, d->Path, sizeof(d->Path));
        d->Status = st == STATUS_SUCCESS ? STATUS_SUCCESS : STATUS_NO_SUCH_FILE;
    }
    *count = n;
    return n > cap ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
}

/* The adapter's counters (STATS); STATUS_NOT_SUPPORTED from firmware before it. */
static NTSTATUS query_stats(struct ndk_adapter *ad, struct nf_stats *out)
{
    uint8_t msg[NF_MSG_HDR_SIZE];
    size_t got = 0;
    memset(out, 0, sizeof(*out));
    NTSTATUS st = ndk_call(ad, NF_OP_STATS, msg, sizeof(msg), out, sizeof(*out), &got);
    if (st == STATUS_SUCCESS && got < sizeof(*out))
        return STATUS_INTERNAL_ERROR;
    return st;
}

#define PROFILE_NAME(name, index) [index] = #name,
static const char *const profile_names[NF_PROFILE_COUNT] = {NF_PROFILE_LIST(PROFILE_NAME)};

NTSTATUS NdkFpgaQueryAdapterDetails(NDK_ADAPTER *a, NDKFPGA_ADAPTER_DETAILS *d)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !d)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    struct nf_stats stats;
    NTSTATUS st = query_stats(ad, &stats);
    if (st != STATUS_SUCCESS && st != STATUS_NOT_SUPPORTED)
        return st;
    const struct nf_info *in = &ad->info;
    memset(d, 0, sizeof(*d));
    d->FirmwareVersion = in->fw_version;
    d->HardwareVersion = in->hw_version;
    d->LayoutVersion = in->layout_version;
    d->ClockHz = in->clk_hz;
    /* uart_period: clocks per bit with NF_SOC_UART_PERIOD_FRAC fraction bits */
    d->LinkBaud = in->uart_period ? (UINT32)(((uint64_t)in->clk_hz << NF_SOC_UART_PERIOD_FRAC) / in->uart_period) : 0;
    d->MemoryBytes = in->mem_bytes;
    d->UserMemoryBytes = in->mem_bytes - in->user_base;
    d->PageSize = in->page_size;
    d->MptEntries = in->mpt_entries;
    d->MttEntries = in->mtt_entries;
    d->MaxFrmrPages = in->max_frmr_pages;
    d->MaxQps = in->max_qps;
    d->MaxSge = in->max_sge;
    d->LinkRxSlots = in->rx_slots;
    d->LinkTxSlots = in->tx_slots;
    d->LinkMaxPayload = in->max_payload;
    d->Profile = NDKFPGA_PROFILE_NONE;
    if (st == STATUS_SUCCESS && stats.profile < NF_PROFILE_COUNT) {
        d->Profile = stats.profile;
        put_str(d->ProfileName, sizeof(d->ProfileName), profile_names[stats.profile]);
    }
    put_str(d->Device, sizeof(d->Device), ad->device);
    return STATUS_SUCCESS;
}

/* ---- counters ---- */

/* Names of the indexed counters: layout.toml's lists, lower case (filled once). */
#define NAME_LEN 32
static char op_names[NF_STAT_OP_COUNT][NAME_LEN];
static char status_names[NF_STAT_STATUS_COUNT][NAME_LEN];
#define N_REFUSE_CODES NF_STATS_REFUSE_CODES_COUNT
static char refuse_names[N_REFUSE_CODES][NAME_LEN];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void lower_into(char *dst, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < NAME_LEN; i++)
        dst[i] = (char)((src[i] >= 'A' && src[i] <= 'Z') ? src[i] - 'A' + 'a' : src[i]);
    dst[i] = '\0';
}

#define OP_NAME(name, index) lower_into(op_names[index], #name);
#define STATUS_NAME(name, index) lower_into(status_names[index], #name);
#define REFUSE_NAME(name, code) lower_into(refuse_names[code], #name);
static void names_init(void)
{
    NF_STAT_OP_LIST(OP_NAME)
    NF_STAT_STATUS_LIST(STATUS_NAME)
    NF_REFUSE_LIST(REFUSE_NAME)
}

#define COUNTED_STATUS(name, index) [index] = STATUS_##name,
static const NTSTATUS counted_status[NF_STAT_STATUS_COUNT] = {NF_STAT_STATUS_LIST(COUNTED_STATUS)};

/* The descriptions are the layout description's (tools/layout.toml, enum STAT_OP). */
#define OP_DOC(name, index, doc) [index] = doc,
static const char *const op_descriptions[NF_STAT_OP_COUNT] = {NF_STAT_OP_DOC_LIST(OP_DOC)};
#undef OP_DOC

/* The descriptions are the layout description's (tools/layout.toml, enum REFUSE). */
#define REFUSE_DOC(name, code, doc) [code] = doc,
static const char *const refuse_descriptions[N_REFUSE_CODES] = {NF_REFUSE_DOC_LIST(REFUSE_DOC)};
#undef REFUSE_DOC

/* Fixed counters: name, description, and where the value comes from. */
struct fixed_counter {
    ULONG group;
    const char *name, *description;
    size_t off;      /* offset of a uint32_t in struct nf_stats, or of a uint64_t in struct nf_link_stats */
};
#define BOARD_ROW(f, d) {NDKFPGA_COUNTER_LINK, #f, d, offsetof(struct nf_stats, f)},
#define HOST_ROW(f, n, d) {NDKFPGA_COUNTER_HOST_LINK, n, d, offsetof(struct nf_link_stats, f)},
static const struct fixed_counter fixed_counters[] = {
    /* The board's counters and their descriptions: STATS fields marked counter in tools/layout.toml. */
    NF_STATS_COUNTER_LIST(BOARD_ROW)
    NF_LINK_COUNTER_LIST(HOST_ROW)
};
#define N_FIXED (sizeof(fixed_counters) / sizeof(fixed_counters[0]))

#define N_HOST_COUNTERS 5u

/* Engine refusal codes that have a name (not OK). */
static ULONG refuse_code_count(void)
{
    ULONG n = 0;
    for (ULONG c = 1; c < N_REFUSE_CODES; c++)
        n += refuse_names[c][0] != '\0';
    return n;
}

static ULONG counter_count(void)
{
    return (ULONG)N_FIXED + NF_STAT_OP_COUNT + 1u + NF_STAT_STATUS_COUNT + 1u + refuse_code_count() + N_HOST_COUNTERS;
}

/* Append one counter at *n when there is room. */
static void put_counter(NDKFPGA_COUNTER *out, ULONG cap, ULONG *n, ULONG group, const char *name, const char *desc,
                        UINT64 value, NTSTATUS status, ULONG code)
{
    if (*n < cap) {
        NDKFPGA_COUNTER *c = &out[*n];
        c->Group = group;
        c->Status = status;
        c->ProviderErrorCode = code;
        c->Name = name;
        c->Description = desc ? desc : "";
        c->Value = value;
    }
    (*n)++;
}

NTSTATUS NdkFpgaQueryCounters(NDK_ADAPTER *a, NDKFPGA_COUNTER *out, ULONG *count)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !count || (!out && *count > 0))
        return STATUS_INVALID_PARAMETER;
    pthread_once(&names_once, names_init);
    ULONG need = counter_count();
    if (*count < need) {
        *count = need;
        return STATUS_BUFFER_TOO_SMALL;
    }
    struct ndk_adapter *ad = ndk_adapter_of(a);
    struct nf_stats s;
    NTSTATUS st = query_stats(ad, &s);
    if (st != STATUS_SUCCESS)
        return st;
    struct nf_link_stats h;
    nf_link_get_stats(ad->link, &h);
    ULONG cap = *count, n = 0;
    for (size_t i = 0; i < N_FIXED; i++) {
        const struct fixed_counter *f = &fixed_counters[i];
        UINT64 v;
        if (f->group == NDKFPGA_COUNTER_LINK) {
            uint32_t w;
            memcpy(&w, (const uint8_t *)&s + f->off, sizeof(w));
            v = w;
        } else {
            memcpy(&v, (const uint8_t *)&h + f->off, sizeof(v));
        }
        put_counter(out, cap, &n, f->group, f->name, f->description, v, STATUS_SUCCESS, 0);
    }
    for (ULONG i = 0; i < NF_STAT_OP_COUNT; i++)
        put_counter(out, cap, &n, NDKFPGA_COUNTER_OPERATION, op_names[i], op_descriptions[i], s.ops[i],
                    STATUS_SUCCESS, 0);
    put_counter(out, cap, &n, NDKFPGA_COUNTER_OPERATION, "unknown", "messages of a kind the firmware does not know",
                s.ops_unknown, STATUS_SUCCESS, 0);
    for (ULONG i = 0; i < NF_STAT_STATUS_COUNT; i++)
        put_counter(out, cap, &n, NDKFPGA_COUNTER_REFUSAL, status_names[i], NdkFpgaStatusName(counted_status[i]),
                    s.refused[i], counted_status[i], 0);
    put_counter(out, cap, &n, NDKFPGA_COUNTER_REFUSAL, "other", "any other failure status", s.refused_other,
                STATUS_SUCCESS, 0);
    for (ULONG c = 1; c < N_REFUSE_CODES; c++)
        if (refuse_names[c][0])
            put_counter(out, cap, &n, NDKFPGA_COUNTER_ACCESS_REFUSAL, refuse_names[c], refuse_descriptions[c],
                        s.refuse_codes[c], STATUS_SUCCESS, c);
    pthread_mutex_lock(&ad->lock);
    const UINT64 hv[N_HOST_COUNTERS] = {ad->cq_overflows, ad->cq_dropped, ad->req_timeouts, ad->wr_timeouts,
                                        ad->close_flushed};
    pthread_mutex_unlock(&ad->lock);
    static const char *const hn[N_HOST_COUNTERS][2] = {
        {"cq_overflows", "CQs that overflowed (reported once with STATUS_BUFFER_OVERFLOW; CQ and QPs unusable)"},
        {"cq_dropped", "completions that found their CQ full or overflowed (not delivered)"},
        {"request_timeouts", "requests unanswered within the deadline (completed STATUS_IO_TIMEOUT)"},
        {"wr_timeouts", "work requests unanswered within the deadline (completed STATUS_IO_TIMEOUT)"},
        {"close_cancelled", "work requests completed STATUS_CANCELLED by a close"},
    };
    for (ULONG i = 0; i < N_HOST_COUNTERS; i++)
        put_counter(out, cap, &n, NDKFPGA_COUNTER_HOST, hn[i][0], hn[i][1], hv[i], STATUS_SUCCESS, 0);
    *count = n;
    return STATUS_SUCCESS;
}

/* ---- pings ---- */

struct ping_run {
    uint32_t body;          /* payload bytes of each ping (a multiple of 8) */
    uint32_t outstanding;
    NTSTATUS status;        /* first failure */
    uint32_t *free_slots;   /* stack of idle slot indices */
    uint32_t nfree;
    NDKFPGA_PING_RESULT *res;
};

struct ping_slot {
    struct ndk_req r;
    struct ping_run *run;
    uint32_t index, seq;
    uint64_t sent_ns;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t ping_byte(uint32_t seq, uint32_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + 1u);
}

/* A ping's reply (under ad->lock, on the link thread; body NULL when the link died). */
static void ping_reply(struct ndk_adapter *ad, struct ndk_req *r, NTSTATUS status, const uint8_t *body, size_t len)
{
    (void)ad;
    struct ping_slot *s = NDK_CONTAINER(r, struct ping_slot, r);
    struct ping_run *run = s->run;
    uint64_t rtt = mono_ns() - s->sent_ns;
    if (status == STATUS_SUCCESS) {
        int same = body && len == run->body;
        for (uint32_t i = 0; same && i < run->body; i++)
            same = body[i] == ping_byte(s->seq, i);
        if (!same)
            status = STATUS_INTERNAL_ERROR;
    }
    if (status == STATUS_SUCCESS) {
        NDKFPGA_PING_RESULT *res = run->res;
        if (res->Replies == 0 || rtt < res->MinNs)
            res->MinNs = rtt;
        if (rtt > res->MaxNs)
            res->MaxNs = rtt;
        res->TotalNs += rtt;
        res->Replies++;
    } else if (run->status == STATUS_SUCCESS) {
        run->status = status;
    }
    run->free_slots[run->nfree++] = s->index;
    run->outstanding--;
}

NTSTATUS NdkFpgaPing(NDK_ADAPTER *a, ULONG count, ULONG in_flight, ULONG payload, NDKFPGA_PING_RESULT *res)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !res || count == 0 || in_flight == 0 || payload > NDKFPGA_PING_MAX_PAYLOAD)
        return STATUS_INVALID_PARAMETER;
    memset(res, 0, sizeof(*res));
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uint32_t depth = in_flight < count ? in_flight : count;
    struct ping_run run;
    memset(&run, 0, sizeof(run));
    run.body = (payload + 7u) & ~7u;
    run.res = res;
    struct ping_slot *slots = calloc(depth, sizeof(*slots));
    uint32_t *free_slots = calloc(depth, sizeof(*free_slots));
    uint8_t *msg = malloc(NF_MSG_HDR_SIZE + run.body);
    if (!slots || !free_slots || !msg) {
        free(slots);
        free(free_slots);
        free(msg);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    run.free_slots = free_slots;
    for (uint32_t i = 0; i < depth; i++) {
        slots[i].index = i;
        free_slots[run.nfree++] = depth - 1u - i;
    }
    NTSTATUS st = STATUS_SUCCESS;
    uint64_t t0 = mono_ns();
    for (uint32_t seq = 0; seq < count; seq++) {
        pthread_mutex_lock(&ad->lock);
        while (run.nfree == 0 && run.status == STATUS_SUCCESS)
            pthread_cond_wait(&ad->cond, &ad->lock);
        if (run.status != STATUS_SUCCESS) {
            pthread_mutex_unlock(&ad->lock);
            break;
        }
        struct ping_slot *s = &slots[run.free_slots[--run.nfree]];
        run.outstanding++;
        pthread_mutex_unlock(&ad->lock);
        memset(&s->r, 0, sizeof(s->r));
        s->r.on_reply = ping_reply;
        s->run = &run;
        s->seq = seq;
        for (uint32_t i = 0; i < run.body; i++)
            msg[NF_MSG_HDR_SIZE + i] = ping_byte(seq, i);
        s->sent_ns = mono_ns();
        st = ndk_req_send(ad, &s->r, NF_OP_PING, msg, NF_MSG_HDR_SIZE + run.body, 0);
        if (st != STATUS_SUCCESS && st != STATUS_PENDING) {
            /* Not sent: no reply will come for it. */
            pthread_mutex_lock(&ad->lock);
            run.outstanding--;
            run.free_slots[run.nfree++] = s->index;
            if (run.status == STATUS_SUCCESS)
                run.status = st;
            pthread_mutex_unlock(&ad->lock);
            break;
        }
    }
    pthread_mutex_lock(&ad->lock);
    while (run.outstanding > 0)
        pthread_cond_wait(&ad->cond, &ad->lock);
    st = run.status;
    pthread_mutex_unlock(&ad->lock);
    res->ElapsedNs = mono_ns() - t0;
    free(slots);
    free(free_slots);
    free(msg);
    return st;
}
