/* SPDX-License-Identifier: Apache-2.0 */
/* nfmodel: the software adapter. The firmware's host build runs against the C models
 * of the link hardware and the engine, behind the same socket protocol as the
 * Verilator board model nfsim (raw UART bytes both ways on a Unix-domain stream
 * socket, one client at a time), so the host library's whole suite runs against it
 * in milliseconds. Modelled time: every firmware bus access costs a few cycles, and
 * while idle the cycle counter follows the wall clock at the nominal clock rate, so
 * the firmware's retransmission timeout means the same thing as on the board. With
 * --wire the network port (hw_net_model.c) joins an nfwire segment, and the firmware
 * runs whether or not a host is attached, so the port answers on the wire. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fw.h"
#include "hw_model.h"
#include "hw_net_model.h"
#include "nf_listen.h"
#include "nf_mii_phy.h"
#include "wire_ep.h"

#define IO_CHUNK 4096
#define HANDOVER_READS 64 /* what a host that has quit may have left unread: a socket buffer's worth */
#define IDLE_POLL_MS 1
#define NO_CLIENT_POLL_MS 200
#define POLL_ROUNDS_PER_IO 64
#define NS_PER_S 1000000000ull
#define WIRE_CONNECT_MS 5000
#define DEFAULT_MAC_SEED 1u /* the default MAC 02:6e:00:00:00:01 */

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

struct options {
    const char *socket_path, *profile, *wire_path, *wire_opts;
    uint32_t baud, mac_seed;
    double drop, corrupt, dup;
    uint64_t seed;
    int exit_on_disconnect;
    int quiet;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: nfmodel --socket PATH [options]\n"
               "  --socket PATH          Unix-domain stream socket to listen on (required)\n"
               "  --profile NAME         adapter sizes: sim (default), ulx3s_85k, ulx3s_25k\n"
               "  --baud N               UART baud the firmware assumes for its timeouts (default 3000000)\n"
               "  --drop P --corrupt P --dup P   per-byte fault probabilities, both directions\n"
               "  --seed N               seed of the fault injection (default 1)\n"
               "  --wire PATH            join the nfwire segment at PATH with the network port\n"
               "  --wire-opts STR        send the hello 'nfport STR' first on the wire (options of the segment)\n"
               "  --mac-seed N           NET.MAC_SEED: the default MAC is 02:6e:<N, 4 bytes> (default 1)\n"
               "  --exit-on-disconnect   exit when the client disconnects\n"
               "  --quiet                no summary on stderr at exit\n");
}

static int parse_prob(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= 0.0 && v <= 1.0))
        return -1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--exit-on-disconnect")) {
            o->exit_on_disconnect = 1;
            continue;
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "nfmodel: %s needs a value\n", a);
            return -1;
        }
        i++;
        /* the fault probabilities */
        double *prob = !strcmp(a, "--drop") ? &o->drop : !strcmp(a, "--corrupt") ? &o->corrupt
                       : !strcmp(a, "--dup")  ? &o->dup : NULL;
        if (!strcmp(a, "--socket")) {
            o->socket_path = v;
        } else if (!strcmp(a, "--profile")) {
            o->profile = v;
        } else if (!strcmp(a, "--wire")) {
            o->wire_path = v;
        } else if (!strcmp(a, "--wire-opts")) {
            o->wire_opts = v;
        } else if (!strcmp(a, "--mac-seed")) {
            if (parse_u64(v, &u) || u > 0xFFFFFFFFu)
                goto bad;
            o->mac_seed = (uint32_t)u;
        } else if (!strcmp(a, "--baud")) {
            if (parse_u64(v, &u) || u == 0 || u > 100000000u)
                goto bad;
            o->baud = (uint32_t)u;
        } else if (!strcmp(a, "--seed")) {
            if (parse_u64(v, &o->seed))
                goto bad;
        } else if (prob) {
            if (parse_prob(v, prob))
                goto bad;
        } else {
            fprintf(stderr, "nfmodel: unknown option %s\n", a);
            usage(stderr);
            return -1;
        }
        continue;
    bad:
        fprintf(stderr, "nfmodel: %s needs a valid value, not '%s'\n", a, v);
        return -1;
    }
    if (!o->socket_path) {
        fprintf(stderr, "nfmodel: --socket PATH is required\n");
        return -1;
    }
    if (o->wire_opts && !o->wire_path) {
        fprintf(stderr, "nfmodel: --wire-opts needs --wire\n");
        return -1;
    }
    return 0;
}

/* Per-byte fault injection (xorshift64), the same for both directions. */
static uint64_t rng_state;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int chance(double p)
{
    return p > 0 && (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0) < p;
}

/* Applies the faults to n bytes of in, writing to out (capacity 2n); returns the count. */
static size_t faults(const struct options *o, const uint8_t *in, size_t n, uint8_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t b = in[i];
        if (chance(o->drop))
            continue;
        if (chance(o->corrupt))
            b ^= (uint8_t)(1u << (rng_next() % 8));
        out[k++] = b;
        if (chance(o->dup))
            out[k++] = b;
    }
    return k;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Sends everything the board has transmitted; returns -1 when the client is gone. */
static int flush_to_client(int fd, const struct options *o)
{
    static uint8_t buf[IO_CHUNK], faulted[2 * IO_CHUNK];
    size_t n;
    while ((n = nf_hw_tx_take(buf, sizeof(buf))) > 0) {
        size_t k = faults(o, buf, n, faulted);
        size_t off = 0;
        while (off < k) {
            ssize_t w = send(fd, faulted + off, k - off, MSG_NOSIGNAL);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            off += (size_t)w;
        }
    }
    return 0;
}

/* Feeds what the client sent to the UART, up to `reads` reads of IO_CHUNK. Returns -1
 * once the client has closed its end, else 0. */
static int take_from_client(int fd, const struct options *o, int reads)
{
    static uint8_t in[IO_CHUNK], faulted[2 * IO_CHUNK];
    for (int r = 0; r < reads; r++) {
        ssize_t got = recv(fd, in, sizeof(in), MSG_DONTWAIT);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (got <= 0)
            return -1;
        nf_hw_rx_bytes(faulted, faults(o, in, (size_t)got, faulted));
    }
    return 0;
}

/* Sends every frame the port has put on the wire; with the PHY in loopback, feeds them
 * back to the port instead, after the firmware's pass as a wire would. */
static void flush_to_wire(struct nf_wire_ep *w)
{
    static uint8_t f[NF_NET_PORT_WIRE_MAX];
    size_t n;
    while ((n = nf_hw_net_wire_take(f, sizeof(f))) > 0)
        if (nf_mii_phy_loopback(nf_hw_net_phy()))
            (void)nf_hw_net_wire_rx(f, n);
        else if (w->fd >= 0)
            nf_wire_ep_send(w, f, n);
}

/* Feeds every frame waiting on the wire to the port. */
static void take_from_wire(struct nf_wire_ep *w)
{
    static uint8_t f[NF_WIRE_EP_MSG_MAX];
    ssize_t n;
    while ((n = nf_wire_ep_recv(w, f, sizeof(f))) > 0)
        (void)nf_hw_net_wire_rx(f, (size_t)n);
    if (n < 0 && w->fd < 0)
        fprintf(stderr, "nfmodel: the wire went away: the network port is down\n");
}

int main(int argc, char **argv)
{
    struct options o = {NULL, "sim", NULL, NULL, 3000000, DEFAULT_MAC_SEED, 0, 0, 0, 1, 0, 0};
    if (parse_args(argc, argv, &o))
        return 2;
    struct nf_hw_cfg cfg;
    if (nf_hw_profile(o.profile, o.baud, &cfg)) {
        fprintf(stderr, "nfmodel: unknown profile %s (sim, ulx3s_85k, ulx3s_25k)\n", o.profile);
        return 2;
    }
    if (nf_hw_init(&cfg)) {
        fprintf(stderr, "nfmodel: the engine model refused the profile's sizes\n");
        return 1;
    }
    nf_hw_net_seed(o.mac_seed);
    struct nf_wire_ep wire = {-1, 0, 0, 0, 0};
    if (o.wire_path) {
        char err[256];
        if (!nf_hw_net()) {
            fprintf(stderr, "nfmodel: profile %s has no network port for --wire\n", o.profile);
            return 2;
        }
        if (nf_wire_ep_connect(&wire, o.wire_path, o.wire_opts, WIRE_CONNECT_MS, err, sizeof(err))) {
            fprintf(stderr, "nfmodel: --wire: %s\n", err);
            return 1;
        }
    }
    int wired = wire.fd >= 0;
    if (nf_hw_net_phy())
        nf_hw_net_phy()->cable = (uint8_t)wired; /* without a segment the cable goes nowhere: link down */
    rng_state = o.seed * 2 + 1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    int lfd = nf_listen_unix("nfmodel", o.socket_path, SOCK_STREAM, 1);
    if (lfd < 0)
        return 1;
    fw_init();

    int cfd = -1, rc = 0;
    uint64_t t0 = now_ns();
    while (!stop) {
        /* The firmware runs while a host is attached, and always on a wire. */
        int run = cfd >= 0 || wired, busy = 0;
        if (run)
            for (int r = 0; r < POLL_ROUNDS_PER_IO && fw_poll(); r++)
                busy = 1;
        if (cfd >= 0 && flush_to_client(cfd, &o) < 0)
            goto disconnected;
        if (cfd < 0) { /* no host on the UART: its bytes are lost, as on a board */
            uint8_t sink[IO_CHUNK];
            while (nf_hw_tx_take(sink, sizeof(sink)) > 0) {
            }
        }
        flush_to_wire(&wire);
        /* Idle until the host, the wire or a new client has something, or a wake is due. */
        struct pollfd p[3] = {{lfd, POLLIN, 0}, {cfd, POLLIN, 0}, {wire.fd, POLLIN, 0}};
        int wait_ms = !run ? NO_CLIENT_POLL_MS : busy || nf_hw_wake_due() ? 0 : IDLE_POLL_MS;
        uint64_t before = now_ns();
        int n = poll(p, 3, wait_ms);
        if (run && !busy) /* idle: the board's clock keeps running in real time */
            nf_hw_advance((now_ns() - before) * cfg.clk_hz / NS_PER_S);
        if (n <= 0)
            continue;
        if (p[2].revents)
            take_from_wire(&wire);
        if (cfd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) && take_from_client(cfd, &o, 1) < 0)
            goto disconnected;
        if (p[0].revents & POLLIN) {
            /* One client at a time: a newcomer is turned away unless the attached one has
             * closed its end (a host that quits and a next one that connects at once). */
            int c = accept(lfd, NULL, NULL);
            if (c >= 0 && cfd >= 0 && take_from_client(cfd, &o, HANDOVER_READS) < 0) {
                close(cfd);
                cfd = -1;
                if (o.exit_on_disconnect) {
                    close(c);
                    break;
                }
            }
            if (c >= 0 && cfd < 0) {
                cfd = c;
            } else if (c >= 0) {
                fprintf(stderr, "nfmodel: refusing a second client\n");
                close(c);
            }
        }
        continue;
    disconnected:
        close(cfd);
        cfd = -1;
        if (o.exit_on_disconnect)
            break;
    }
    if (cfd >= 0)
        close(cfd);
    nf_wire_ep_close(&wire);
    close(lfd);
    unlink(o.socket_path);
    double secs = (double)(now_ns() - t0) / 1e9;
    struct nf_hw_link_counters c = nf_hw_link_counters();
    if (!o.quiet) {
        fprintf(stderr,
                "nfmodel: %llu cycles in %.2f s; frames rx %u ok, %u bad, %u dropped; tx %u (%u retransmitted); "
                "%u work requests\n",
                (unsigned long long)nf_hw_cycles(), secs, c.rx_ok, c.rx_bad, c.rx_drop, c.tx, fw_stats.retransmits,
                fw_stats_wr_count());
        if (wired)
            fprintf(stderr, "nfmodel: wire: %llu frames in, %llu out, %llu dropped (socket full or port down)\n",
                    (unsigned long long)wire.rx_frames, (unsigned long long)wire.tx_frames,
                    (unsigned long long)wire.tx_dropped);
    }
    nf_hw_free();
    return rc;
}
