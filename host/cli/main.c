/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga: the command-line tool of libndkfpga (ndkpi.h, ndkfpga.h), in the manner of
 * git and ip: `ndkfpga [-v] [-d DEVICE] COMMAND [OPTIONS] [DEVICE]`. The subcommands
 * are in the table at the end of this file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define DEVICE_HELP                                                                                       \
    "DEVICE (positional, -d DEVICE, or $NDKFPGA_DEVICE; default auto) is a name NdkFpgaOpenAdapter takes:\n" \
    "  auto           the first board on USB, else sim\n"                                                  \
    "  sim            start the Verilator board model (nfsim); sim:SOCKET an nfsim already listening\n"   \
    "  model          start the software adapter (nfmodel); model:SOCKET one already listening\n"        \
    "  sim,net=NAME,ip=A.B.C.D[/N][,mac=..,loss=P,pcap=FILE,tap=IF,...]  (or model,...) one whose\n"   \
    "                 network port is on segment NAME (host/README.md, \"Device strings\")\n"           \
    "  usb            the first board on USB; usb:BUS-ADDR a given one (as `ndkfpga list` shows)\n"      \
    "  tty:PATH       a board through a serial device (e.g. tty:/dev/ttyUSB0)\n"

#define COMMON_HELP                                                                                       \
    "  -d, --device DEVICE   the adapter (instead of the positional DEVICE)\n"                            \
    "  -v, --verbose         also the library's own messages on stderr\n"                                  \
    "  -h, --help            this help\n"

/* What every perftest-style command shares: how it runs, and its options (size and
 * iterations defaults differ between the latency and the bandwidth tests). */
#define PERF_HELP                                                                                             \
    "Without a server address this is the server: it listens on the adapter's address, port PORT, serves\n"    \
    "one client and says what it served (\"listening on A.B.C.D:PORT\" on stderr once it listens). With\n"     \
    "--connect A.B.C.D (or A.B.C.D as an argument) it is the client: it connects, runs the test for each\n"    \
    "size and reports it. The client's NdkConnect private data tells the server the test; the server's\n"    \
    "NdkAccept private data carries its buffer's address and remote token. Both ends use adapter memory\n"    \
    "registered with NdkRegisterMr.\n"                                                                       \
    "  --connect A.B.C.D     be the client of the server at A.B.C.D\n"                                        \
    "  -p, --port PORT       the server's port (default 18515)\n"                                             \
    "  -a, --all             every size from 2 doubling to 8 MiB (those above the adapter's limit skipped)\n"
#define PERF_OPTIONS(size, iters)                                                                             \
    "  -s, --size BYTES      bytes per operation (1 to 8M; 4k, 64k...; default " size ")\n"                   \
    "  -n, --iters N         operations per size (default " iters ")\n"                                       \
    "  --timeout SECONDS     the server waits this long for a client and then for each message of the run;\n" \
    "                        the client this long for each completion (default 60)\n"                       \
    "  --loopback            also run the server, in this process on the same adapter (the client connects\n" \
    "                        to the adapter's own address)\n"                                                 \
    "  --json                one JSON document on stdout: the client's {\"results\": [...]}, the server's\n"  \
    "                        {\"role\": \"server\", \"messages_received\": ...}, or {\"error\": ...}\n"
#define PERF_LAT PERF_HELP PERF_OPTIONS("2", "1000")
#define PERF_BW                                                                                               \
    PERF_HELP PERF_OPTIONS("65536", "5000")                                                                   \
    "  -q, --in-flight N     operations in flight (default 16; Reads: at most the connection's read limit)\n"

#define EXIT_HELP                                                                                         \
    "Exit status: 0 done; 1 the operation failed; 2 usage error; 3 the device could not be opened.\n"

static int cmd_help(struct cli *c, int argc, char **argv);

static const struct cli_command commands[] = {
    {"list", "boards on USB (and whether you may open them), the simulation and the software adapter",
     "usage: ndkfpga list [--probe] [--json]\n"
     "The boards found on USB (bus-address, FTDI chip, whether this user may open it), and whether the\n"
     "simulation (nfsim) and the software adapter (nfmodel) the library starts are there. Opens nothing\n"
     "unless --probe is given. With no board, says so and exits 0.\n"
     "  --probe               also open and close each available device (slow for sim)\n"
     "  --json                one JSON document on stdout\n"
     "  -v, --verbose         also the library's own messages on stderr\n"
     "  -h, --help            this help\n" EXIT_HELP,
     cmd_list},
    {"info", "what the adapter is: NDK_ADAPTER_INFO, firmware, profile, table sizes, clock, link rate",
     "usage: ndkfpga info [--json] [DEVICE]\n"
     "Every field of NdkQueryAdapterInfo (FRMRPageCount, queue depths, limits, AdapterFlags by name), and\n"
     "the firmware, hardware and layout versions, the build profile, the key-table (MPT) and\n"
     "translation-table (MTT) sizes, adapter memory, the clock in MHz and the link rate.\n"
     "  --json                one JSON document on stdout\n" COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_info},
    {"stats", "the adapter's counters: link frames, operations executed, refusals by status and reason",
     "usage: ndkfpga stats [--nonzero] [--json] [DEVICE]\n"
     "The adapter's counters (NdkFpgaQueryCounters): the board's link counters (frames received good,\n"
     "bad or dropped, duplicates, frames sent, retransmits, TX overflow), this host's side of the link\n"
     "(frames, retransmits, CRC errors), requests and work requests executed by kind, and refusals by\n"
     "status and by the engine's reason. The board counts since it booted; opening it does not clear them.\n"
     "  -z, --nonzero         only the counters that are not 0\n"
     "  --json                one JSON document on stdout: {\"link\": {...}, \"host_link\": ..., \"operations\": ...,\n"
     "                        \"refusals\": ..., \"access_refusals\": ...}\n" COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_stats},
    {"addr", "the network port's MAC and IPv4 address/prefix: print them, or set them",
     "usage: ndkfpga addr [A.B.C.D/N] [--mac XX:XX:XX:XX:XX:XX] [--json] [DEVICE]\n"
     "Prints the adapter's network port addresses: its MAC (02:6e:... by default) and its IPv4\n"
     "address and prefix (not set until the host sets them). With A.B.C.D/N and/or --mac, sets them\n"
     "first (NET_CONFIG), then prints what the adapter now has. The settings last until the adapter\n"
     "resets. An adapter without a network port (the boards today) fails with STATUS_NOT_SUPPORTED.\n"
     "  A.B.C.D/N             set the IPv4 address and prefix length (8..32)\n"
     "  --mac XX:..           set the MAC (unicast: first byte even; not all zero)\n"
     "  --json                one JSON document on stdout: {\"mac\": ..., \"ipv4\": ..., \"prefix_length\": ...}\n"
     COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_addr},
    {"neigh", "the network port's ARP cache: IPv4 address, MAC, state",
     "usage: ndkfpga neigh [--json] [DEVICE]\n"
     "The adapter's ARP cache (NdkFpgaQueryNeighbors): each neighbour's IPv4 address, its MAC once\n"
     "known, and the entry's state: incomplete (an ARP request is out), reachable (the MAC is known and\n"
     "used until it ages out) or failed (no answer to the retries: connects to it fail\n"
     "STATUS_HOST_UNREACHABLE for a while). Entries come when the adapter connects to a peer, or when a\n"
     "peer asks for the adapter's address. An adapter without a network port fails with\n"
     "STATUS_NOT_SUPPORTED.\n"
     "  --json                one JSON document on stdout: {\"neighbors\": [{\"ipv4\": ..., \"mac\": ...,\n"
     "                        \"state\": ..., \"tries\": ..., \"age_ms\": ...}]}\n" COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_neigh},
    {"phy", "the network port's PHY: ID, link, speed, loopback; loopback on or off",
     "usage: ndkfpga phy [loopback on|off] [--json] [DEVICE]\n"
     "The network port's PHY over MDIO (NdkFpgaPhyControl): its address and ID (PHYID1/2), link,\n"
     "speed and duplex, and whether it loops frames back. \"loopback on\" sets BMCR loopback (forced\n"
     "full duplex): every frame the port sends comes back to the adapter and none goes on the cable,\n"
     "so two QPs connected to the adapter's own address check the whole port on one board\n"
     "(docs/network.md). \"loopback off\" turns auto-negotiation back on. An adapter without a port\n"
     "fails with STATUS_NOT_SUPPORTED, one whose MDIO bus has no PHY with STATUS_INVALID_DEVICE_STATE.\n"
     "  loopback on|off       set the PHY's loopback first, then print its status\n"
     "  --json                one JSON document on stdout: {\"address\": ..., \"id\": ..., \"link\": ...,\n"
     "                        \"speed_mbps\": ..., \"duplex\": ..., \"autoneg\": ..., \"loopback\": ...}\n"
     COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_phy},
    {"ping", "link round-trip time and message rate",
     "usage: ndkfpga ping [-c COUNT] [-s BYTES] [-n RATE_COUNT] [-q IN_FLIGHT] [--json] [DEVICE]\n"
     "Round-trip time over the link (min/avg/max of COUNT pings, one at a time), then the message rate\n"
     "with many pings in flight. A ping is a PING message the firmware echoes with its payload.\n"
     "  -c, --count N         pings one at a time for the round-trip time (default 5)\n"
     "  -s, --size BYTES      payload of each ping, 0 to 4064 (rounded up to 8; default 0)\n"
     "  -n, --rate-count N    pings for the message rate (default 64; 0: no rate)\n"
     "  -q, --in-flight N     pings in flight for the rate (default 8)\n"
     "  --json                one JSON document on stdout\n" COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_ping},
    {"mrlat", "register/deregister and fast-register/invalidate latency by size (ndmrlat)",
     "usage: ndkfpga mrlat [-n ITERS] [--min-size BYTES] [--max-size BYTES] [--json | --series] [DEVICE]\n"
     "For each size from 4 KiB doubling to the largest the adapter allows, the time of NdkRegisterMr and\n"
     "NdkDeregisterMr (per call and to completion) and of NdkFastRegister and NdkInvalidate (per call and\n"
     "until the result is on the CQ), in microseconds of wall time averaged over the iterations, plus the\n"
     "board's cycles for the last fast-register and invalidate. \"-\": not allowed at that size.\n"
     "  -n, --iters N         iterations per size (default 3)\n"
     "  --min-size BYTES      first size (a multiple of 4096; 4k, 64k, 1M; default 4k)\n"
     "  --max-size BYTES      last size (default: the adapter's limit)\n"
     "  --json                one JSON document on stdout: {\"rows\": [{\"size\": ..., ...}], ...}\n"
     "  --series              also \"series ndmrlat ...\" lines and a TAP line (bench/report.py)\n" COMMON_HELP
         DEVICE_HELP EXIT_HELP,
     cmd_mrlat},
    {"mrrate", "registrations and fast-register+invalidate pairs per second, many in flight (ndmrrate)",
     "usage: ndkfpga mrrate [-n COUNT] [-q IN_FLIGHT] [-s BYTES] [--json] [DEVICE]\n"
     "Register+deregister pairs per second with IN_FLIGHT MRs at work at once, and fast-register+\n"
     "invalidate pairs per second with up to IN_FLIGHT work requests in flight on one QP.\n"
     "  -n, --count N         pairs of each kind (default 1000)\n"
     "  -q, --in-flight N     MRs / work requests in flight (default 16)\n"
     "  -s, --size BYTES      bytes of each registration (a multiple of 4096; default 4k)\n"
     "  --json                one JSON document on stdout\n" COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_mrrate},
    {"sendlat", "Send-to-receive latency by size, ping-pong round trip and message rate (ndpingpong)",
     "usage: ndkfpga sendlat [-c COUNT] [-n RATE_COUNT] [-q IN_FLIGHT] [--host] [--json | --series] [DEVICE]\n"
     "Two connected QPs: the time from NdkSend until the peer's receive completion is on the CQ for 8, 512\n"
     "and 4096-byte messages (plus the board's cycles of the last Send and of the whole path), the round\n"
     "trip of an 8-byte ping-pong, and 8-byte messages per second with IN_FLIGHT Sends in flight and as\n"
     "many receives pre-posted. Microseconds of wall time, averaged over COUNT.\n"
     "  -c, --count N         messages one at a time per figure (default 10)\n"
     "  -n, --rate-count N    messages for the rate (default 200; 0: no rate)\n"
     "  -q, --in-flight N     Sends in flight for the rate (default 16; at most the queue depths)\n"
     "  --host                message buffers in host memory (IoAllocateMdl, MmBuildMdlForNonPagedPool),\n"
     "                        filled and checked by the CPU, instead of adapter memory\n"
     "  --json                one JSON document on stdout\n"
     "  --series              also \"key = value\" lines and a TAP line (bench/report.py)\n" COMMON_HELP
         DEVICE_HELP EXIT_HELP,
     cmd_sendlat},
    {"write_lat", "RDMA Write latency between two adapters (server, or client with --connect; ib_write_lat)",
     "usage: ndkfpga write_lat [--connect A.B.C.D] [-p PORT] [-s BYTES | -a] [-n ITERS] [--timeout S] [--json] [DEVICE]\n"
     "RDMA Write latency: the client posts one NdkWrite into the server's buffer at a time and takes the time\n"
     "until its completion (the server's adapter acknowledged it: one round trip on the wire); min, median,\n"
     "average, 99th percentile and max in microseconds.\n" PERF_LAT COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_perf},
    {"write_bw", "RDMA Write bandwidth between two adapters (ib_write_bw)",
     "usage: ndkfpga write_bw [--connect A.B.C.D] [-p PORT] [-s BYTES | -a] [-n ITERS] [-q N] [--timeout S] [--json] [DEVICE]\n"
     "RDMA Write bandwidth: the client keeps up to IN_FLIGHT NdkWrites into the server's buffer going;\n"
     "MB/s (10^6 bytes) and messages/s from the first post to the last completion.\n" PERF_BW COMMON_HELP
         DEVICE_HELP EXIT_HELP,
     cmd_perf},
    {"read_lat", "RDMA Read latency between two adapters (ib_read_lat)",
     "usage: ndkfpga read_lat [--connect A.B.C.D] [-p PORT] [-s BYTES | -a] [-n ITERS] [--timeout S] [--json] [DEVICE]\n"
     "RDMA Read latency: the client posts one NdkRead of the server's buffer at a time and takes the time\n"
     "until its completion (the data is in its buffer); min, median, average, 99th percentile and max in\n"
     "microseconds.\n" PERF_LAT COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_perf},
    {"read_bw", "RDMA Read bandwidth between two adapters (ib_read_bw)",
     "usage: ndkfpga read_bw [--connect A.B.C.D] [-p PORT] [-s BYTES | -a] [-n ITERS] [-q N] [--timeout S] [--json] [DEVICE]\n"
     "RDMA Read bandwidth: the client keeps up to IN_FLIGHT NdkReads of the server's buffer going; MB/s\n"
     "(10^6 bytes) and messages/s from the first post to the last completion.\n" PERF_BW COMMON_HELP DEVICE_HELP
         EXIT_HELP,
     cmd_perf},
    {"send_lat", "Send/Receive latency between two adapters, ping-pong (ib_send_lat)",
     "usage: ndkfpga send_lat [--connect A.B.C.D] [-p PORT] [-s BYTES | -a] [-n ITERS] [--timeout S] [--json] [DEVICE]\n"
     "Send latency: the client sends, the server's receive completes and it sends the message back, the\n"
     "client's receive completes; half of that round trip (as ib_send_lat), min, median, average, 99th\n"
     "percentile and max in microseconds.\n" PERF_LAT COMMON_HELP DEVICE_HELP EXIT_HELP,
     cmd_perf},
    {"send_bw", "Send/Receive bandwidth between two adapters (ib_send_bw)",
     "usage: ndkfpga send_bw [--connect A.B.C.D] [-p PORT] [-s BYTES | -a] [-n ITERS] [-q N] [--timeout S] [--json] [DEVICE]\n"
     "Send bandwidth: the client keeps up to IN_FLIGHT NdkSends going, never more than the server has\n"
     "receives posted (the server tells it in a credit message each time it posted half its window again);\n"
     "MB/s (10^6 bytes) and messages/s from the first post to the last completion.\n" PERF_BW COMMON_HELP
         DEVICE_HELP EXIT_HELP,
     cmd_perf},
    {"help", "this list, or the help of one command",
     "usage: ndkfpga help [COMMAND]\n"
     "The commands, or the help of one (the same as `ndkfpga COMMAND --help`).\n",
     cmd_help},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct cli_command *cli_command_find(const char *name)
{
    for (size_t i = 0; name && i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void main_help(FILE *f)
{
    fprintf(f, "usage: ndkfpga [-v] [-d DEVICE] COMMAND [OPTIONS] [DEVICE]\n"
               "The command-line tool of the ndkfpga RDMA adapter (libndkfpga).\n\n"
               "Commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`ndkfpga COMMAND --help` tells more about each.\n\n"
               "Options before the command:\n" COMMON_HELP "\n" DEVICE_HELP "\n" EXIT_HELP);
}

static int cmd_help(struct cli *c, int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        cli_usage(c, stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 2)
        return cli_report(c, CLI_EXIT_USAGE, "one command at a time");
    if (argc == 2) {
        const struct cli_command *cmd = cli_command_find(argv[1]);
        if (!cmd)
            return cli_report(c, CLI_EXIT_USAGE, "unknown command \"%s\"", argv[1]);
        fputs(cmd->usage, stdout);
        return CLI_EXIT_OK;
    }
    main_help(stdout);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
    struct cli c;
    memset(&c, 0, sizeof(c));
    const char *env = getenv("NDKFPGA_DEVICE");
    c.device = env && *env ? env : "auto";
    /* The library prints nothing of its own unless $NDKFPGA_DEBUG is set (its failure
     * messages would repeat ours): -v turns its failure messages on. */

    /* Options before the command. */
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            main_help(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            c.verbose = 1;
            setenv("NDKFPGA_DEBUG", "1", 0);
        } else if (!strcmp(a, "-d") || !strcmp(a, "--device") || !strncmp(a, "--device=", 9) ||
                   (a[1] == 'd' && a[2])) {
            const char *v = !strncmp(a, "--device=", 9) ? a + 9 : (a[1] == 'd' && a[2]) ? a + 2 : argv[++i];
            if (!v || !*v) {
                fprintf(stderr, "ndkfpga: %s needs a device name (see `ndkfpga --help`)\n", a);
                return CLI_EXIT_USAGE;
            }
            c.device = v;
            c.device_given = 1;
        } else {
            fprintf(stderr, "ndkfpga: unknown option %s before the command (see `ndkfpga --help`)\n", a);
            return CLI_EXIT_USAGE;
        }
    }
    if (i >= argc) {
        main_help(stderr);
        fprintf(stderr, "ndkfpga: no command given\n");
        return CLI_EXIT_USAGE;
    }
    const struct cli_command *cmd = cli_command_find(argv[i]);
    if (!cmd) {
        fprintf(stderr, "ndkfpga: unknown command \"%s\" (commands:", argv[i]);
        for (size_t k = 0; k < N_COMMANDS; k++)
            fprintf(stderr, " %s", commands[k].name);
        fprintf(stderr, "; see `ndkfpga help`)\n");
        return CLI_EXIT_USAGE;
    }
    c.cmd = cmd->name;
    /* The command parses its own arguments from a fresh getopt. */
    optind = 0;
    opterr = 0;
    int code = cmd->fn(&c, argc - i, argv + i);
    fflush(stdout);
    return code;
}
