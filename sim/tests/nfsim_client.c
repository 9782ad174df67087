/* SPDX-License-Identifier: Apache-2.0 */
/* Test client for nfsim: speaks the link's wire format through proto/c/nf_frame.c.
 *
 *   nfsim_client SOCKET echo N        send N DATA frames (random sizes, including the
 *                                     largest), expect each back unchanged, in order
 *   nfsim_client SOCKET faulty N      like echo, over a faulty link: every frame that
 *                                     arrives with a good CRC must be one that was sent
 *   nfsim_client SOCKET reset NONCE   send RESET (rsvd = NONCE) until RESET_ACK with the
 *                                     same nonce and an INFO payload arrives
 *   nfsim_client SOCKET idle MS       stay connected and silent for MS milliseconds
 *
 * Prints "ok - ..." / "not ok - ..." lines; exits non-zero on failure. Every wait has
 * a wall-clock deadline so a dead simulator fails the test instead of hanging it. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "nf_frame.h"
#include "tap.h"

#define DEADLINE_MS 120000

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int connect_to(const char *path)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof(addr));
    if (strlen(path) >= sizeof(addr.sun_path))
        return -1;
    addr.sun_family = AF_UNIX;
    strcpy(addr.sun_path, path);
    for (int tries = 0; tries < 200; tries++) {  /* the simulator may still be starting */
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0)
            return -1;
        if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
            return fd;
        close(fd);
        usleep(50000);
    }
    return -1;
}

static int write_all(int fd, const uint8_t *buf, size_t len)
{
    while (len) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads bytes into the decoder until a frame completes or the deadline passes.
 * Returns 1 (good frame in dec->buf), 0 (deadline), -1 (peer gone). Bad frames are
 * counted in dec->bad and skipped. */
static int read_frame(int fd, struct nf_frame_decoder *dec, int64_t deadline)
{
    static uint8_t buf[4096];
    static size_t have, pos;
    for (;;) {
        while (pos < have) {
            if (nf_frame_decode_byte(dec, buf[pos++]) == NF_FRAME_OK)
                return 1;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0)
            return -1;
        have = (size_t)n;
        pos = 0;
    }
}

static size_t make_frame(uint8_t *raw, uint8_t type, uint8_t seq, size_t payload, uint16_t rsvd)
{
    memset(raw, 0, NF_LINK_HDR_SIZE);
    raw[NF_LINK_HDR_TYPE_OFF] = type;
    raw[NF_LINK_HDR_SEQ_OFF] = seq;
    raw[NF_LINK_HDR_LEN_OFF] = (uint8_t)payload;
    raw[NF_LINK_HDR_LEN_OFF + 1] = (uint8_t)(payload >> 8);
    raw[NF_LINK_HDR_RSVD_OFF] = (uint8_t)rsvd;
    raw[NF_LINK_HDR_RSVD_OFF + 1] = (uint8_t)(rsvd >> 8);
    for (size_t i = 0; i < payload; i++)
        raw[NF_LINK_HDR_SIZE + i] = (uint8_t)tap_rnd32();
    return NF_LINK_HDR_SIZE + payload;
}

static size_t pick_size(int i)
{
    if (i == 0)
        return NF_LINK_MAX_PAYLOAD;
    if (i == 1)
        return 0;
    return tap_rnd32() % 600;
}

static int run_echo(int fd, int n, int faulty)
{
    static uint8_t raw[64][NF_FRAME_MAX_RAW];
    static size_t raw_len[64];
    static uint8_t wire[NF_FRAME_MAX_WIRE];
    static struct nf_frame_decoder dec;
    if (n < 1 || n > 64) {
        fprintf(stderr, "nfsim_client: N must be 1..64\n");
        return 2;
    }
    nf_frame_decoder_init(&dec);
    size_t wire_total = 0;
    for (int i = 0; i < n; i++)
        raw_len[i] = make_frame(raw[i], NF_LINK_TYPE_DATA, (uint8_t)i, faulty ? tap_rnd32() % 100 : pick_size(i), 0);
    /* The echo firmware has no flow control: keep at most WINDOW frames unanswered
     * so its RX slots never overflow. Over a faulty link a lost frame never comes
     * back: the window then slides when nothing arrives for a while. */
    const int window = 4;
    const int64_t quiet_ms = faulty ? 1500 : DEADLINE_MS;
    int sent = 0, got = 0, lost = 0, in_order = 1, foreign = 0, next = 0;
    while (got + lost < n) {
        while (sent < n && sent - got - lost < window) {
            size_t w = nf_frame_encode(raw[sent], raw_len[sent], wire, sizeof(wire));
            if (!w || write_all(fd, wire, w) < 0) {
                tap_ok(0, "client: send frame %d", sent);
                return 1;
            }
            wire_total += w;
            sent++;
        }
        int r = read_frame(fd, &dec, now_ms() + quiet_ms);
        if (r < 0 || (r == 0 && !faulty))
            break;
        if (r == 0) {
            lost = sent - got;  /* whatever is outstanding after a quiet spell is lost */
            continue;
        }
        /* Match against the frames sent: in order without faults; with faults any
         * good frame must still be exactly one of those sent. */
        int match = -1;
        for (int i = faulty ? 0 : next; i < sent && match < 0; i++)
            if (dec.len == raw_len[i] && memcmp(dec.buf, raw[i], dec.len) == 0)
                match = i;
        if (match < 0)
            foreign++;
        else if (!faulty && match != next)
            in_order = 0;
        next = match + 1;
        got++;
    }
    if (!faulty) {
        tap_ok(got == n && in_order && foreign == 0 && dec.bad == 0,
               "echo: %d frames (%zu wire bytes) came back unchanged and in order (got %d, bad %u)",
               n, wire_total, got, dec.bad);
    } else {
        tap_ok(foreign == 0, "faulty link: no corrupted frame passes the CRC (%d good, %u bad, %d sent)",
               got, dec.bad, n);
        tap_ok(got > 0, "faulty link: frames still flow (%d good, %u bad)", got, dec.bad);
    }
    return tap_done();
}

static int run_reset(int fd, uint16_t nonce)
{
    static uint8_t raw[NF_FRAME_MAX_RAW];
    static uint8_t wire[NF_FRAME_MAX_WIRE];
    static struct nf_frame_decoder dec;
    nf_frame_decoder_init(&dec);
    size_t len = make_frame(raw, NF_LINK_TYPE_RESET, 0, 0, nonce);
    size_t w = nf_frame_encode(raw, len, wire, sizeof(wire));
    int64_t deadline = now_ms() + DEADLINE_MS;
    int ok = 0, others = 0;
    while (!ok && now_ms() < deadline) {
        if (write_all(fd, wire, w) < 0)
            break;
        /* Resend every 2 s of wall time until the answer comes, as the host does. */
        int64_t resend = now_ms() + 2000;
        int r;
        while ((r = read_frame(fd, &dec, resend < deadline ? resend : deadline)) == 1) {
            uint16_t rsvd = (uint16_t)(dec.buf[NF_LINK_HDR_RSVD_OFF] | dec.buf[NF_LINK_HDR_RSVD_OFF + 1] << 8);
            if (dec.buf[NF_LINK_HDR_TYPE_OFF] == NF_LINK_TYPE_RESET_ACK && rsvd == nonce) {
                ok = 1;
                break;
            }
            others++;
        }
        if (r < 0)
            break;
    }
    if (!tap_ok(ok, "reset: RESET_ACK with nonce 0x%04x received (%d other frames)", nonce, others))
        return tap_done();
    size_t plen = dec.len - NF_LINK_HDR_SIZE;
    const uint8_t *p = dec.buf + NF_LINK_HDR_SIZE;
    int has_info = plen >= NF_INFO_SIZE;
    /* The payload is INFO, possibly inside a MSG_HDR: find INFO either way. */
    if (has_info && plen >= NF_MSG_HDR_SIZE + NF_INFO_SIZE) {
        uint16_t op = (uint16_t)(p[0] | p[1] << 8);
        if (op == (NF_OP_INFO | NF_OP_REPLY))
            p += NF_MSG_HDR_SIZE;
    }
    struct nf_info info;
    if (has_info)
        memcpy(&info, p, sizeof(info));
    tap_ok(has_info, "reset: RESET_ACK carries an INFO payload (%zu bytes)", plen);
    if (has_info) {
        tap_ok(info.layout_version == NF_LAYOUT_VERSION && info.rx_slots == NF_PROFILE_SIM_RX_SLOTS &&
                   info.tx_slots == NF_PROFILE_SIM_TX_SLOTS && info.clk_hz == NF_SOC_CPU_CLK_SIM_HZ &&
                   info.max_payload == NF_LINK_MAX_PAYLOAD,
               "reset: INFO says layout %u, %u/%u slots, %u Hz, max payload %u, mem %u bytes",
               info.layout_version, info.rx_slots, info.tx_slots, info.clk_hz, info.max_payload, info.mem_bytes);
    }
    return tap_done();
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: nfsim_client SOCKET echo|faulty N SEED | reset NONCE | idle MS\n");
        return 2;
    }
    char *end;
    long arg = strtol(argv[3], &end, 0);
    if (*end || arg < 0) {
        fprintf(stderr, "nfsim_client: bad number %s\n", argv[3]);
        return 2;
    }
    int fd = connect_to(argv[1]);
    if (fd < 0) {
        printf("not ok - client: cannot connect to %s\n", argv[1]);
        return 1;
    }
    int rc;
    if (!strcmp(argv[2], "echo") || !strcmp(argv[2], "faulty")) {
        rc = run_echo(fd, (int)arg, !strcmp(argv[2], "faulty"));
    } else if (!strcmp(argv[2], "reset")) {
        rc = run_reset(fd, (uint16_t)arg);
    } else if (!strcmp(argv[2], "idle")) {
        usleep((useconds_t)arg * 1000);
        rc = 0;
    } else {
        fprintf(stderr, "nfsim_client: unknown mode %s\n", argv[2]);
        rc = 2;
    }
    close(fd);
    return rc;
}
