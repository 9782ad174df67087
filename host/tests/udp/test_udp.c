/* SPDX-License-Identifier: Apache-2.0 */
/* The udp: transport on its own: bad device strings fail at once with their statuses,
 * bytes go out in datagrams of at most NF_LINK_UDP_MAX_PAYLOAD and come back in order
 * however small the reads, and an open with nobody listening ends in the link's
 * timeout (a status, not a hang). TAP output. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ndkfpga.h"
#include "nf_layout.h"
#include "tap.h"
#include "transport/nf_transport.h"

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A UDP socket on 127.0.0.1 at a free port (into *port). */
static int bound_socket(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

static void bad_strings(void)
{
    static const struct {
        const char *dev;
        NTSTATUS want;
    } cases[] = {
        {"udp", STATUS_INVALID_PARAMETER},          {"udp::41790", STATUS_INVALID_PARAMETER},
        {"udp:127.0.0.1:0", STATUS_INVALID_PARAMETER}, {"udp:127.0.0.1:65536", STATUS_INVALID_PARAMETER},
        {"udp:127.0.0.1:4x", STATUS_INVALID_PARAMETER}, {"udp:127.0.0.1:", STATUS_INVALID_PARAMETER},
        {"udp:no-such-host.invalid", STATUS_INVALID_ADDRESS},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct nf_transport *t = NULL;
        NTSTATUS st = nf_transport_open(cases[i].dev, &t);
        tap_ok(st == cases[i].want && !t, "\"%s\": %s (%s)", cases[i].dev, NdkFpgaStatusName(st),
               NdkFpgaErrorMessage(NULL));
        nf_transport_close(t);
    }
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open("udp:localhost", &t);
    tap_ok(st == STATUS_SUCCESS && t && strstr(t->name, ":41790"), "\"udp:localhost\" takes the contract's port (%s)",
           t ? t->name : NdkFpgaErrorMessage(NULL));
    nf_transport_close(t);
}

static void datagrams(void)
{
    unsigned port;
    int peer = bound_socket(&port);
    char dev[64];
    snprintf(dev, sizeof(dev), "udp:127.0.0.1:%u", port);
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open(dev, &t);
    if (!tap_ok(peer >= 0 && st == STATUS_SUCCESS, "open %s", dev)) {
        nf_transport_close(t);
        return;
    }
    static uint8_t out[5000], in[5000];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (uint8_t)(i * 7 + 3);
    tap_ok(nf_transport_write(t, out, sizeof(out), 1000) == STATUS_SUCCESS, "write 5000 bytes");
    size_t got = 0, most = 0, n_dgram = 0;
    struct sockaddr_in from;
    socklen_t flen = sizeof(from);
    while (got < sizeof(in)) {
        struct pollfd p = {.fd = peer, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            break;
        ssize_t n = recvfrom(peer, in + got, sizeof(in) - got, 0, (struct sockaddr *)&from, &flen);
        if (n <= 0)
            break;
        got += (size_t)n;
        most = (size_t)n > most ? (size_t)n : most;
        n_dgram++;
    }
    tap_ok(got == sizeof(out) && memcmp(in, out, got) == 0 && most <= NF_LINK_UDP_MAX_PAYLOAD,
           "the bytes arrive whole in %zu datagrams of at most %u", n_dgram, (unsigned)NF_LINK_UDP_MAX_PAYLOAD);
    /* Two datagrams back, read 100 bytes at a time. */
    sendto(peer, out, 1400, 0, (struct sockaddr *)&from, flen);
    sendto(peer, out + 1400, 600, 0, (struct sockaddr *)&from, flen);
    got = 0;
    for (int i = 0; i < 100 && got < 2000; i++) {
        ssize_t n = nf_transport_read(t, in + got, 100, 1000);
        if (n < 0)
            break;
        got += (size_t)n;
    }
    tap_ok(got == 2000 && memcmp(in, out, 2000) == 0, "datagrams read back in order in small pieces (%zu bytes)", got);
    uint64_t t0 = mono_ms();
    ssize_t n = nf_transport_read(t, in, sizeof(in), 200);
    uint64_t dt = mono_ms() - t0;
    tap_ok(n == 0 && dt >= 150 && dt < 2000, "a read with nothing to read times out (%llu ms)", (unsigned long long)dt);
    close(peer); /* now nobody listens: ICMP answers are lost datagrams, not errors */
    tap_ok(nf_transport_write(t, out, 100, 200) == STATUS_SUCCESS, "write with nobody listening: the datagram is lost");
    n = nf_transport_read(t, in, sizeof(in), 200);
    tap_ok(n == 0, "read with nobody listening: nothing, no error (%zd)", n);
    nf_transport_close(t);
}

static void nobody_listening(void)
{
    unsigned port;
    int fd = bound_socket(&port);
    close(fd); /* a port nobody listens on */
    char dev[64];
    snprintf(dev, sizeof(dev), "udp:127.0.0.1:%u", port);
    setenv("NDKFPGA_LINK_TIMEOUT_MS", "500", 1);
    NDK_ADAPTER *ad = NULL;
    uint64_t t0 = mono_ms();
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &ad);
    uint64_t dt = mono_ms() - t0;
    tap_ok(st == STATUS_IO_TIMEOUT && !ad && dt < 5000, "open %s with nobody listening: %s after %llu ms (%s)", dev,
           NdkFpgaStatusName(st), (unsigned long long)dt, NdkFpgaErrorMessage(NULL));
    if (ad)
        NdkFpgaCloseAdapter(ad);
}

int main(void)
{
    bad_strings();
    datagrams();
    nobody_listening();
    return tap_done();
}
