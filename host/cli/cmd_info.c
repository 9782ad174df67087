/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga list, info, stats: what devices there are, what an adapter is, its counters. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_DEVICES 72

/* ---- list ---- */

static const char *kind_name(ULONG kind)
{
    switch (kind) {
    case NDKFPGA_DEVICE_USB:
        return "board";
    case NDKFPGA_DEVICE_SIM:
        return "simulation";
    case NDKFPGA_DEVICE_MODEL:
        return "software";
    default:
        return "?";
    }
}

/* What the state of a device means for a person. */
static const char *device_state(const NDKFPGA_DEVICE *d)
{
    switch (d->Status) {
    case STATUS_SUCCESS:
        return "available";
    case STATUS_ACCESS_DENIED:
        return "no permission: install the udev rule tools/99-ndkfpga.rules and replug the board";
    case STATUS_NO_SUCH_FILE:
        return d->Kind == NDKFPGA_DEVICE_SIM ? "not built (make sim), or set $NDKFPGA_SIM"
                                             : "not built (make model), or set $NDKFPGA_MODEL";
    default:
        return NdkFpgaStatusName(d->Status);
    }
}

/* --probe: open the device and close it again; the status of the open. */
static NTSTATUS probe(const char *name)
{
    NDK_ADAPTER *a = NULL;
    NTSTATUS st = NdkFpgaOpenAdapter(name, &a);
    if (st == STATUS_SUCCESS)
        NdkFpgaCloseAdapter(a);
    return st;
}

int cmd_list(struct cli *c, int argc, char **argv)
{
    int do_probe = 0;
    const struct cli_option opts[] = {{"probe", CLI_OPT_PROBE, &do_probe, NULL, 0, 0, 0, 0, NULL}};
    int code = cli_parse_options(c, argc, argv, 0, opts, 1);
    if (code >= 0)
        return code;
    NDKFPGA_DEVICE devs[MAX_DEVICES];
    ULONG n = MAX_DEVICES;
    NTSTATUS st = NdkFpgaListDevices(devs, &n);
    if (st != STATUS_SUCCESS && st != STATUS_BUFFER_TOO_SMALL)
        return cli_fail(c, NULL, "NdkFpgaListDevices", st);
    if (n > MAX_DEVICES)
        n = MAX_DEVICES;
    NTSTATUS probed[MAX_DEVICES];
    for (ULONG i = 0; i < n; i++) {
        probed[i] = STATUS_PENDING;
        if (do_probe && devs[i].Status == STATUS_SUCCESS) {
            cli_progress("probing %s ...", devs[i].Name);
            probed[i] = probe(devs[i].Name);
        }
    }
    cli_progress_done();
    ULONG boards = 0, first_board = n;
    for (ULONG i = 0; i < n; i++)
        if (devs[i].Kind == NDKFPGA_DEVICE_USB && boards++ == 0)
            first_board = i;
    /* What "auto" opens: the first board, else the simulation. */
    const char *auto_is = boards ? devs[first_board].Name : "sim";

    if (c->json) {
        printf("{\"devices\": [");
        for (ULONG i = 0; i < n; i++) {
            const NDKFPGA_DEVICE *d = &devs[i];
            printf("%s\n  {\"name\": ", i ? "," : "");
            cli_json_string(stdout, d->Name);
            printf(", \"kind\": ");
            cli_json_string(stdout, kind_name(d->Kind));
            printf(", \"description\": ");
            cli_json_string(stdout, d->Description);
            printf(", \"path\": ");
            cli_json_string(stdout, d->Path);
            printf(", \"available\": %s, \"status\": ", d->Status == STATUS_SUCCESS ? "true" : "false");
            cli_json_string(stdout, NdkFpgaStatusName(d->Status));
            if (do_probe) {
                printf(", \"probe\": ");
                cli_json_string(stdout, probed[i] == STATUS_PENDING ? "" : NdkFpgaStatusName(probed[i]));
            }
            printf("}");
        }
        printf("\n], \"boards\": %lu, \"auto\": ", (unsigned long)boards);
        cli_json_string(stdout, auto_is);
        printf("}\n");
        return CLI_EXIT_OK;
    }
    if (boards == 0)
        printf("no board found on USB (looked for FT231X 0403:6015 and FT2232H 0403:6010)\n");
    for (ULONG i = 0; i < n; i++) {
        const NDKFPGA_DEVICE *d = &devs[i];
        printf("%-12s %-10s %-30s %s", d->Name, kind_name(d->Kind), d->Description, device_state(d));
        if (d->Path[0])
            printf("  %s", d->Path);
        if (probed[i] != STATUS_PENDING)
            printf("  [probe: %s]", probed[i] == STATUS_SUCCESS ? "opened" : NdkFpgaStatusName(probed[i]));
        printf("\n");
    }
    printf("\"auto\" opens %s\n", auto_is);
    return CLI_EXIT_OK;
}

/* ---- info ---- */

static const struct {
    ULONG flag;
    const char *name;
} adapter_flags[] = {
    {NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED, "IN_ORDER_DMA_SUPPORTED"},
    {NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, "RDMA_READ_SINK_NOT_REQUIRED"},
    {NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED, "CQ_INTERRUPT_MODERATION_SUPPORTED"},
    {NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED, "MULTI_ENGINE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED, "RDMA_READ_LOCAL_INVALIDATE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, "CQ_RESIZE_SUPPORTED"},
    {NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, "LOOPBACK_CONNECTIONS_SUPPORTED"},
};
#define N_FLAGS (sizeof(adapter_flags) / sizeof(adapter_flags[0]))

static const char *technology_name(NDK_RDMA_TECHNOLOGY t)
{
    static const char *const names[] = {"Undefined", "iWARP", "InfiniBand", "RoCE", "RoCEv2"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* The NDK_ADAPTER_INFO fields that are ULONGs, in the structure's order. */
#define INFO_ULONGS(X)                                                                                    \
    X(FRMRPageCount) X(MaxInitiatorRequestSge) X(MaxReceiveRequestSge) X(MaxReadRequestSge)               \
        X(MaxTransferLength) X(MaxInlineDataSize) X(MaxInboundReadLimit) X(MaxOutboundReadLimit)          \
            X(MaxReceiveQueueDepth) X(MaxInitiatorQueueDepth) X(MaxSrqDepth) X(MaxCqDepth)                 \
                X(LargeRequestThreshold) X(MaxCallerData) X(MaxCalleeData)

static void print_info_text(const NDKFPGA_ADAPTER_DETAILS *d, const NDK_ADAPTER_INFO *i)
{
    printf("device              %s\n", d->Device);
    if (d->Profile != NDKFPGA_PROFILE_NONE)
        printf("profile             %s (index %u in proto/profiles.toml)\n", d->ProfileName, (unsigned)d->Profile);
    else
        printf("profile             none (sizes of no build profile)\n");
    printf("firmware version    %u.%u\n", (unsigned)(d->FirmwareVersion >> 16), (unsigned)(d->FirmwareVersion & 0xFFFF));
    printf("hardware version    %u.%u\n", (unsigned)(d->HardwareVersion >> 16), (unsigned)(d->HardwareVersion & 0xFFFF));
    printf("layout version      %u\n", (unsigned)d->LayoutVersion);
    printf("clock               %.3f MHz\n", d->ClockHz / 1e6);
    printf("link rate           %u Bd (UART)\n", (unsigned)d->LinkBaud);
    printf("link frames         %u RX slots, %u TX slots, %u-byte payload\n", (unsigned)d->LinkRxSlots,
           (unsigned)d->LinkTxSlots, (unsigned)d->LinkMaxPayload);
    printf("adapter memory      %u bytes (%u KiB), %u for buffers\n", (unsigned)d->MemoryBytes,
           (unsigned)(d->MemoryBytes / 1024), (unsigned)d->UserMemoryBytes);
    printf("page size           %u\n", (unsigned)d->PageSize);
    printf("MPT entries         %u (key table: MRs at once)\n", (unsigned)d->MptEntries);
    printf("MTT entries         %u (translation table: pages registered at once)\n", (unsigned)d->MttEntries);
    printf("max FRMR pages      %u (firmware limit of one fast-register MR)\n", (unsigned)d->MaxFrmrPages);
    printf("max QPs             %u\n", (unsigned)d->MaxQps);
    printf("max SGE             %u\n", (unsigned)d->MaxSge);
    printf("NDK_ADAPTER_INFO\n");
    printf("  %-24s %u.%u\n", "Version", (unsigned)i->Version.Major, (unsigned)i->Version.Minor);
    printf("  %-24s 0x%04x\n", "VendorId", (unsigned)i->VendorId);
    printf("  %-24s 0x%04x\n", "DeviceId", (unsigned)i->DeviceId);
    printf("  %-24s %zu\n", "MaxRegistrationSize", (size_t)i->MaxRegistrationSize);
    printf("  %-24s %zu\n", "MaxWindowSize", (size_t)i->MaxWindowSize);
#define PRINT_ULONG(f) printf("  %-24s %u\n", #f, (unsigned)i->f);
    INFO_ULONGS(PRINT_ULONG)
#undef PRINT_ULONG
    printf("  %-24s 0x%08x", "AdapterFlags", (unsigned)i->AdapterFlags);
    const char *sep = " (";
    for (size_t k = 0; k < N_FLAGS; k++) {
        if (i->AdapterFlags & adapter_flags[k].flag) {
            printf("%s%s", sep, adapter_flags[k].name);
            sep = " | ";
        }
    }
    printf("%s\n", sep[1] == '(' ? "" : ")");
    printf("  %-24s %d (%s)\n", "RdmaTechnology", (int)i->RdmaTechnology, technology_name(i->RdmaTechnology));
}

static void print_info_json(const NDKFPGA_ADAPTER_DETAILS *d, const NDK_ADAPTER_INFO *i)
{
    printf("{\"device\": ");
    cli_json_string(stdout, d->Device);
    printf(",\n \"profile\": ");
    if (d->Profile != NDKFPGA_PROFILE_NONE) {
        printf("{\"index\": %u, \"name\": ", (unsigned)d->Profile);
        cli_json_string(stdout, d->ProfileName);
        printf("}");
    } else {
        printf("null");
    }
    printf(",\n \"firmware_version\": \"%u.%u\", \"hardware_version\": \"%u.%u\", \"layout_version\": %u,\n",
           (unsigned)(d->FirmwareVersion >> 16), (unsigned)(d->FirmwareVersion & 0xFFFF),
           (unsigned)(d->HardwareVersion >> 16), (unsigned)(d->HardwareVersion & 0xFFFF), (unsigned)d->LayoutVersion);
    printf(" \"clock_hz\": %u, \"clock_mhz\": %.3f, \"link_baud\": %u, \"link_rx_slots\": %u, \"link_tx_slots\": %u, "
           "\"link_max_payload\": %u,\n",
           (unsigned)d->ClockHz, d->ClockHz / 1e6, (unsigned)d->LinkBaud, (unsigned)d->LinkRxSlots,
           (unsigned)d->LinkTxSlots, (unsigned)d->LinkMaxPayload);
    printf(" \"memory_bytes\": %u, \"user_memory_bytes\": %u, \"page_size\": %u, \"mpt_entries\": %u, "
           "\"mtt_entries\": %u, \"max_frmr_pages\": %u, \"max_qps\": %u, \"max_sge\": %u,\n",
           (unsigned)d->MemoryBytes, (unsigned)d->UserMemoryBytes, (unsigned)d->PageSize, (unsigned)d->MptEntries,
           (unsigned)d->MttEntries, (unsigned)d->MaxFrmrPages, (unsigned)d->MaxQps, (unsigned)d->MaxSge);
    printf(" \"adapter_info\": {\"Version\": \"%u.%u\", \"VendorId\": %u, \"DeviceId\": %u, "
           "\"MaxRegistrationSize\": %zu, \"MaxWindowSize\": %zu",
           (unsigned)i->Version.Major, (unsigned)i->Version.Minor, (unsigned)i->VendorId, (unsigned)i->DeviceId,
           (size_t)i->MaxRegistrationSize, (size_t)i->MaxWindowSize);
#define JSON_ULONG(f) printf(", \"%s\": %u", #f, (unsigned)i->f);
    INFO_ULONGS(JSON_ULONG)
#undef JSON_ULONG
    printf(", \"AdapterFlags\": %u, \"AdapterFlagNames\": [", (unsigned)i->AdapterFlags);
    int first = 1;
    for (size_t k = 0; k < N_FLAGS; k++) {
        if (i->AdapterFlags & adapter_flags[k].flag) {
            printf("%s\"%s\"", first ? "" : ", ", adapter_flags[k].name);
            first = 0;
        }
    }
    printf("], \"RdmaTechnology\": %d}}\n", (int)i->RdmaTechnology);
}

/* Options of info and stats: the device, --json (and for stats, --nonzero). Returns -1
 * to go on, else the exit code to stop with. */
static int device_options(struct cli *c, int argc, char **argv, int *nonzero)
{
    const struct cli_option opts[] = {{"nonzero", 'z', nonzero, NULL, 0, 0, 0, 0, NULL}};
    return cli_parse_options(c, argc, argv, 1, opts, nonzero ? 1u : 0u);
}

int cmd_info(struct cli *c, int argc, char **argv)
{
    int code = device_options(c, argc, argv, NULL);
    if (code >= 0)
        return code;
    NDK_ADAPTER *a = cli_open(c, &code);
    if (!a)
        return code;
    code = CLI_EXIT_OK;
    NDKFPGA_ADAPTER_DETAILS d;
    NDK_ADAPTER_INFO info;
    ULONG size = sizeof(info);
    memset(&info, 0, sizeof(info));
    info.Version.Major = NDKFPGA_NDK_VERSION_MAJOR;
    info.Version.Minor = NDKFPGA_NDK_VERSION_MINOR;
    NTSTATUS st = a->Dispatch->NdkQueryAdapterInfo(a, &info, &size);
    if (st != STATUS_SUCCESS)
        code = cli_fail(c, a, "NdkQueryAdapterInfo", st);
    else if ((st = NdkFpgaQueryAdapterDetails(a, &d)) != STATUS_SUCCESS)
        code = cli_fail(c, a, "NdkFpgaQueryAdapterDetails", st);
    else if (c->json)
        print_info_json(&d, &info);
    else
        print_info_text(&d, &info);
    NdkFpgaCloseAdapter(a);
    return code;
}

/* ---- stats ---- */

static const struct {
    ULONG group;
    const char *key, *title;
} counter_groups[] = {
    {NDKFPGA_COUNTER_LINK, "link", "link, board side (since the adapter booted)"},
    {NDKFPGA_COUNTER_HOST_LINK, "host_link", "link, host side (since this command opened the adapter)"},
    {NDKFPGA_COUNTER_OPERATION, "operations", "requests and work requests executed"},
    {NDKFPGA_COUNTER_REFUSAL, "refusals", "refused, by status (replies and completions)"},
    {NDKFPGA_COUNTER_ACCESS_REFUSAL, "access_refusals", "accesses the engine refused, by reason"},
    {NDKFPGA_COUNTER_HOST, "host", "completions and requests the library handled itself (since open)"},
};
#define N_GROUPS (sizeof(counter_groups) / sizeof(counter_groups[0]))

/* The board's counter named name (0 when absent). */
static UINT64 counter_value(const NDKFPGA_COUNTER *ctr, ULONG n, const char *name)
{
    for (ULONG k = 0; k < n; k++)
        if (ctr[k].Group == NDKFPGA_COUNTER_LINK && strcmp(ctr[k].Name, name) == 0)
            return ctr[k].Value;
    return 0;
}

/* A firmware trap (STATS faults, fault_cause, fault_pc), said first: the adapter fails
 * every request until it restarts. */
static void print_fault(const NDKFPGA_COUNTER *ctr, ULONG n)
{
    if (counter_value(ctr, n, "faults") == 0)
        return;
    printf("FIRMWARE FAULT: trap cause %llu at pc 0x%08llx; requests fail STATUS_DEVICE_HARDWARE_ERROR until the "
           "adapter restarts\n",
           (unsigned long long)counter_value(ctr, n, "fault_cause"), (unsigned long long)counter_value(ctr, n, "fault_pc"));
}

int cmd_stats(struct cli *c, int argc, char **argv)
{
    int nonzero = 0;
    int code = device_options(c, argc, argv, &nonzero);
    if (code >= 0)
        return code;
    NDK_ADAPTER *a = cli_open(c, &code);
    if (!a)
        return code;
    ULONG n = 0;
    NTSTATUS st = NdkFpgaQueryCounters(a, NULL, &n);
    NDKFPGA_COUNTER *ctr = NULL;
    if (st == STATUS_BUFFER_TOO_SMALL) {
        ctr = calloc(n ? n : 1, sizeof(*ctr));
        st = ctr ? NdkFpgaQueryCounters(a, ctr, &n) : STATUS_INSUFFICIENT_RESOURCES;
    }
    NDKFPGA_ADAPTER_DETAILS d;
    if (st == STATUS_SUCCESS)
        st = NdkFpgaQueryAdapterDetails(a, &d);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(c, a, "NdkFpgaQueryCounters", st);
        free(ctr);
        NdkFpgaCloseAdapter(a);
        return code;
    }
    if (c->json) {
        printf("{\"device\": ");
        cli_json_string(stdout, d.Device);
        for (size_t g = 0; g < N_GROUPS; g++) {
            printf(",\n \"%s\": {", counter_groups[g].key);
            int first = 1;
            for (ULONG k = 0; k < n; k++) {
                if (ctr[k].Group != counter_groups[g].group || (nonzero && ctr[k].Value == 0))
                    continue;
                printf("%s", first ? "" : ", ");
                cli_json_string(stdout, ctr[k].Name);
                printf(": %llu", (unsigned long long)ctr[k].Value);
                first = 0;
            }
            printf("}");
        }
        printf("}\n");
    } else {
        printf("counters of %s\n", d.Device);
        print_fault(ctr, n);
        for (size_t g = 0; g < N_GROUPS; g++) {
            printf("%s\n", counter_groups[g].title);
            for (ULONG k = 0; k < n; k++) {
                if (ctr[k].Group != counter_groups[g].group || (nonzero && ctr[k].Value == 0))
                    continue;
                printf("  %-22s %12llu  %s\n", ctr[k].Name, (unsigned long long)ctr[k].Value, ctr[k].Description);
            }
        }
    }
    free(ctr);
    NdkFpgaCloseAdapter(a);
    return CLI_EXIT_OK;
}
