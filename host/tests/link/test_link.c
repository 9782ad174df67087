/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the host link layer and transports against the in-process fake
 * board (fake_board.c) with deterministic fault injection.
 *
 * Run with no argument (or a label such as "san" that prefixes every case name).
 * Started as `test_link --socket PATH --exit-on-disconnect [--die]` it plays a
 * simulator for the "sim" transport tests: it serves the fake board on PATH. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fake_board.h"
#include "link/nf_link.h"
#include "transport/nf_transport.h"
#include "link_test.h"
#include "tap.h"

static const char *label = "link";
static char self_path[PATH_MAX];

#define CHECK(cond, ...)                                          \
    do {                                                          \
        char name_[256];                                          \
        snprintf(name_, sizeof(name_), __VA_ARGS__);              \
        tap_ok((cond), "%s: %s", label, name_);                   \
    } while (0)

/* Send PINGs 1..n of random sizes up to max_body, some deferred. Returns the number
 * of sends that failed. */
static unsigned send_pings(struct nf_link *l, uint32_t first, uint32_t n, size_t max_body, int defer_pct)
{
    static uint8_t buf[NF_LINK_MAX_PAYLOAD];
    unsigned fails = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t body = ((size_t)tap_rnd32() % (max_body / 8 + 1)) * 8;
        size_t len = make_ping(buf, first + i, body);
        int defer = (int)(tap_rnd32() % 100) < defer_pct && i + 1 < n;
        if (nf_link_send(l, buf, len, defer) != STATUS_SUCCESS)
            fails++;
    }
    return fails;
}

/* ---- sessions ------------------------------------------------------------ */

struct session {
    struct fake_board *board;
    struct nf_link *link;
    struct ping_rx rx;
    struct nf_info info;
    NTSTATUS open_status;
};

static struct nf_link_config fast_cfg(void)
{
    struct nf_link_config c;
    memset(&c, 0, sizeof(c));
    c.silence_ms = 3000;
    c.rto_initial_ms = 100;
    c.rto_min_ms = 5;
    c.rto_max_ms = 500;
    return c;
}

static int session_open(struct session *s, const struct fake_board_cfg *bc, const struct nf_link_config *lc)
{
    memset(s, 0, sizeof(*s));
    ping_rx_init(&s->rx);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    s->board = fake_board_start(sv[1], bc);
    struct nf_transport *t;
    if (nf_transport_from_fd(sv[0], "socketpair", &t) != STATUS_SUCCESS)
        return 0;
    s->open_status = nf_link_open_ex(t, lc, ping_rx_on_message, ping_rx_on_dead, &s->rx, &s->link, &s->info);
    return s->open_status == STATUS_SUCCESS;
}

/* session_open for a case that needs the session: a failure is reported under
 * the case's name. */
static int session_up(struct session *s, const struct fake_board_cfg *bc, const struct nf_link_config *lc,
                      const char *what)
{
    int up = session_open(s, bc, lc);
    if (!up)
        CHECK(0, "%s: session (%s)", what, nf_status_name(s->open_status));
    return up;
}

static void session_close(struct session *s)
{
    nf_link_close(s->link);
    fake_board_stop(s->board);
    s->link = NULL;
    s->board = NULL;
}

/* ---- cases ----------------------------------------------------------------- */

static void test_transport_errors(void)
{
    struct nf_transport *t = (struct nf_transport *)1;
    /* "tty" reaches the tty transport (the usb one is tested on a fake FTDI, test_usb.c). */
    CHECK(nf_transport_open("tty:/nonexistent/ttyUSB9", &t) == STATUS_NO_SUCH_FILE && t == NULL &&
              strstr(nf_error_message(), "/nonexistent/ttyUSB9"),
          "transport: tty:PATH with no such device is NO_SUCH_FILE");
    CHECK(nf_transport_open("tty", &t) == STATUS_INVALID_PARAMETER && strstr(nf_error_message(), "tty path"),
          "transport: tty without a path is INVALID_PARAMETER asking for one");
    CHECK(nf_transport_open("sim:", &t) == STATUS_INVALID_PARAMETER && strstr(nf_error_message(), "unknown device"),
          "transport: an empty argument after the prefix is INVALID_PARAMETER");
    CHECK(nf_transport_open("bogus", &t) == STATUS_INVALID_PARAMETER && strstr(nf_error_message(), "bogus"),
          "transport: unknown device string is INVALID_PARAMETER with a message");
    CHECK(nf_transport_open("sim:/nonexistent/x.sock", &t) == STATUS_CONNECTION_REFUSED &&
              strstr(nf_error_message(), "/nonexistent/x.sock"),
          "transport: sim:PATH with nothing listening is CONNECTION_REFUSED");
    CHECK(nf_transport_open("model:/nonexistent/y.sock", &t) == STATUS_CONNECTION_REFUSED,
          "transport: model:PATH with nothing listening is CONNECTION_REFUSED");
    setenv("NDKFPGA_SIM", "/nonexistent/nfsim", 1);
    unsetenv("NDKFPGA_SIM_SOCKET");
    CHECK(nf_transport_open("sim", &t) == STATUS_NO_SUCH_FILE && strstr(nf_error_message(), "/nonexistent/nfsim"),
          "transport: missing simulator binary is NO_SUCH_FILE naming it");
    setenv("NDKFPGA_MODEL", "/nonexistent/nfmodel", 1);
    CHECK(nf_transport_open("model", &t) == STATUS_NO_SUCH_FILE, "transport: missing model binary is NO_SUCH_FILE");
    setenv("NDKFPGA_SIM", self_path, 1);
    setenv("NDKFPGA_SIM_ARGS", "--die", 1);
    CHECK(nf_transport_open("sim", &t) == STATUS_DEVICE_NOT_CONNECTED && strstr(nf_error_message(), "at start"),
          "transport: simulator dying at start is DEVICE_NOT_CONNECTED");
    unsetenv("NDKFPGA_SIM_ARGS");
}

static void test_sim_transport(void)
{
    /* "sim" starts this binary as the simulator, talks to it, stops it at close. */
    setenv("NDKFPGA_SIM", self_path, 1);
    unsetenv("NDKFPGA_SIM_SOCKET");
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open("sim", &t);
    CHECK(st == STATUS_SUCCESS && t && strncmp(t->name, "sim (", 5) == 0, "sim: starts the simulator and connects (%s)",
          t ? t->name : nf_error_message());
    if (st != STATUS_SUCCESS)
        return;
    struct ping_rx rx;
    ping_rx_init(&rx);
    struct nf_link *l = NULL;
    struct nf_link_config c = fast_cfg();
    st = nf_link_open_ex(t, &c, ping_rx_on_message, ping_rx_on_dead, &rx, &l, NULL);
    CHECK(st == STATUS_SUCCESS, "sim: link handshake over the started simulator's socket");
    if (st == STATUS_SUCCESS) {
        unsigned fails = send_pings(l, 1, 200, 512, 30);
        CHECK(fails == 0 && ping_rx_wait(&rx, 200, 5000) == 200 && rx.order_errors == 0,
              "sim: 200 PINGs through the simulator process");
    }
    /* The child's pid is in the name; after close it must be gone. */
    int pid = 0;
    const char *p = strstr(t->name, "pid ");
    if (p)
        pid = atoi(p + 4);
    nf_link_close(l);
    CHECK(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "sim: simulator stopped and reaped at close");
}

static void test_sim_socket_env(void)
{
    /* $NDKFPGA_SIM_SOCKET set but refusing: "sim" starts its own; set and accepting:
     * attaches. */
    setenv("NDKFPGA_SIM", self_path, 1);
    setenv("NDKFPGA_SIM_SOCKET", "/nonexistent/refusing.sock", 1);
    struct nf_transport *t = NULL;
    NTSTATUS st = nf_transport_open("sim", &t);
    CHECK(st == STATUS_SUCCESS && t && strncmp(t->name, "sim (", 5) == 0,
          "sim: $NDKFPGA_SIM_SOCKET not accepting -> starts its own");
    nf_transport_close(t);

    char dir[] = "/tmp/nftest-XXXXXX";
    if (!mkdtemp(dir))
        return;
    char path[64];
    snprintf(path, sizeof(path), "%s/s.sock", dir);
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int ok = bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(ls, 1) == 0;
    setenv("NDKFPGA_SIM_SOCKET", path, 1);
    t = NULL;
    st = ok ? nf_transport_open("sim", &t) : STATUS_INTERNAL_ERROR;
    CHECK(st == STATUS_SUCCESS && t && strncmp(t->name, "sim:", 4) == 0,
          "sim: $NDKFPGA_SIM_SOCKET accepting -> attaches (%s)", t ? t->name : "-");
    nf_transport_close(t);
    close(ls);
    unlink(path);
    rmdir(dir);
    unsetenv("NDKFPGA_SIM_SOCKET");
}

static int case_clean(struct session *s)
{
    CHECK(s->info.rx_slots == 8 && s->info.layout_version == NF_LAYOUT_VERSION,
          "open: RESET handshake returns the board's INFO");
    struct nf_link_stats ls;
    nf_link_get_stats(s->link, &ls);
    CHECK(ls.window == 7, "open: window = rx_slots - 1 = %u", ls.window);
    const uint32_t n = 3000;
    unsigned fails = send_pings(s->link, 1, n, 1024, 40);
    uint64_t got = ping_rx_wait(&s->rx, n, 20000);
    lt_sleep_ms(50); /* anything extra would show now */
    struct fake_board_stats bs;
    fake_board_get_stats(s->board, &bs);
    nf_link_get_stats(s->link, &ls);
    CHECK(fails == 0 && bs.pings == n && bs.order_errors == 0 && bs.content_errors == 0,
          "clean: board got %u PINGs exactly once, in order, intact (got %llu)", n, (unsigned long long)bs.pings);
    CHECK(got == n && s->rx.replies == n && s->rx.order_errors == 0 && s->rx.content_errors == 0 && s->rx.other == 0,
          "clean: host got %u replies exactly once, in order, intact (got %llu)", n, (unsigned long long)s->rx.replies);
    /* A busy machine may delay a thread past the timer: allow a handful. */
    CHECK(ls.bad_frames == 0 && bs.bad_rx == 0 && ls.retransmits * 100 <= ls.data_tx,
          "clean: no bad frame without faults, retransmits <= 1%% (%llu of %llu)", (unsigned long long)ls.retransmits,
          (unsigned long long)ls.data_tx);
    CHECK(bs.window_violations == 0 && bs.max_inflight <= 7 && bs.max_inflight >= 2,
          "window: at most rx_slots - 1 frames beyond the board's ack, and pipelined (max in flight %u)",
          bs.max_inflight);
    return 1;
}

static int case_defer(struct session *s)
{
    uint8_t buf[256];
    unsigned fails = 0;
    for (uint32_t tag = 1; tag <= 10; tag++)
        fails += nf_link_send(s->link, buf, make_ping(buf, tag, 64), 1) != STATUS_SUCCESS;
    lt_sleep_ms(50);
    struct fake_board_stats bs;
    fake_board_get_stats(s->board, &bs);
    CHECK(fails == 0 && bs.pings == 0, "defer: deferred messages wait for a flush");
    NTSTATUS st = nf_link_flush(s->link);
    ping_rx_wait(&s->rx, 10, 3000);
    fake_board_get_stats(s->board, &bs);
    CHECK(st == STATUS_SUCCESS && bs.pings == 10 && bs.data_rx == 1 && bs.max_msgs_in_frame == 10,
          "defer: 10 deferred messages + flush travel in one DATA frame (%llu frames)", (unsigned long long)bs.data_rx);
    /* A message that does not fit closes the open frame first. */
    static uint8_t big[NF_LINK_MAX_PAYLOAD];
    fails = 0;
    fails += nf_link_send(s->link, big, make_ping(big, 11, 2400), 1) != STATUS_SUCCESS;
    fails += nf_link_send(s->link, big, make_ping(big, 12, 2400), 0) != STATUS_SUCCESS;
    ping_rx_wait(&s->rx, 12, 3000);
    fake_board_get_stats(s->board, &bs);
    CHECK(fails == 0 && bs.pings == 12 && bs.data_rx == 3 && s->rx.order_errors == 0,
          "defer: a message that does not fit closes the open frame first");
    return 1;
}

static int case_bad_params(struct session *s)
{
    uint8_t buf[NF_LINK_MAX_PAYLOAD + 64];
    size_t len = make_ping(buf, 1, 16);
    struct nf_link_stats a, b;
    nf_link_get_stats(s->link, &a);
    int bad = 0;
    bad += nf_link_send(s->link, buf, 8, 0) == STATUS_INVALID_PARAMETER;      /* shorter than MSG_HDR */
    bad += nf_link_send(s->link, buf, len + 4, 0) == STATUS_INVALID_PARAMETER; /* not a multiple of 8 */
    bad += nf_link_send(s->link, buf, len + 8, 0) == STATUS_INVALID_PARAMETER; /* MSG_HDR.len differs */
    make_ping(buf, 1, NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE + 8);
    bad += nf_link_send(s->link, buf, NF_LINK_MAX_PAYLOAD + 8, 0) == STATUS_INVALID_PARAMETER; /* too long */
    bad += nf_link_send(s->link, NULL, 16, 0) == STATUS_INVALID_PARAMETER;
    nf_link_get_stats(s->link, &b);
    CHECK(bad == 5 && a.msgs_tx == b.msgs_tx && b.data_tx == a.data_tx,
          "send: bad lengths rejected with INVALID_PARAMETER, nothing queued");
    make_ping(buf, 1, NF_LINK_MAX_PAYLOAD - NF_MSG_HDR_SIZE);
    CHECK(nf_link_send(s->link, buf, NF_LINK_MAX_PAYLOAD, 0) == STATUS_SUCCESS && ping_rx_wait(&s->rx, 1, 3000) == 1,
          "send: a message of exactly MAX_PAYLOAD bytes goes through");
    return 1;
}

static void test_faults(const char *what, double drop, double corrupt, double dup, uint64_t seed, uint32_t n,
                        size_t max_body)
{
    struct fake_board_cfg bc = {.rx_slots = 8,
                                .tx_slots = 8,
                                .seed = seed,
                                .drop = drop,
                                .corrupt = corrupt,
                                .dup = dup,
                                .rto_ms = 5,
                                .max_frame_payload = 512};
    struct nf_link_config lc = fast_cfg();
    lc.silence_ms = 10000;
    struct session s;
    if (!session_up(&s, &bc, &lc, what))
        return;
    unsigned fails = send_pings(s.link, 1, n, max_body, 30);
    uint64_t got = ping_rx_wait(&s.rx, n, 60000);
    lt_sleep_ms(100);
    struct fake_board_stats bs;
    fake_board_get_stats(s.board, &bs);
    struct nf_link_stats ls;
    nf_link_get_stats(s.link, &ls);
    CHECK(fails == 0 && bs.pings == n && bs.order_errors == 0 && bs.content_errors == 0,
          "%s: board got %u PINGs exactly once, in order, intact", what, n);
    CHECK(got == n && s.rx.replies == n && s.rx.order_errors == 0 && s.rx.content_errors == 0 && s.rx.other == 0,
          "%s: host got %u replies exactly once, in order, intact (%llu)", what, n, (unsigned long long)s.rx.replies);
    CHECK(bs.window_violations == 0, "%s: window respected under faults", what);
    if (getenv("LINK_TEST_VERBOSE"))
        fprintf(stderr, "%s: timeouts %llu fast %llu byte %u ns rto %u cap %u data %llu acks %llu board retx %llu\n",
                what, (unsigned long long)ls.timeouts, (unsigned long long)ls.fast_retransmits, ls.byte_ns, ls.rto_us,
                ls.frame_cap, (unsigned long long)ls.data_tx, (unsigned long long)ls.acks_tx,
                (unsigned long long)bs.retransmits);
    CHECK(ls.retransmits > 0 && (ls.bad_frames > 0 || ls.dups > 0) && bs.retransmits + bs.bad_rx + bs.dup_rx > 0,
          "%s: the faults happened and were recovered (host retransmits %llu, bad %llu, dups %llu; board bad %llu)",
          what, (unsigned long long)ls.retransmits, (unsigned long long)ls.bad_frames, (unsigned long long)ls.dups,
          (unsigned long long)bs.bad_rx);
    session_close(&s);
}

static int case_reset(struct session *s)
{
    struct nf_link_stats ls;
    nf_link_get_stats(s->link, &ls);
    CHECK(ls.ignored >= 5 && ls.resets_tx >= 4 && s->rx.replies == 0 && s->rx.other == 0,
          "reset: RESET_ACKs with a wrong nonce and stale DATA are ignored (%llu ignored, %llu RESETs)",
          (unsigned long long)ls.ignored, (unsigned long long)ls.resets_tx);
    uint8_t buf[64];
    CHECK(nf_link_send(s->link, buf, make_ping(buf, 1, 32), 0) == STATUS_SUCCESS &&
              ping_rx_wait(&s->rx, 1, 3000) == 1,
          "reset: the session works after the right RESET_ACK");
    return 1;
}

/* Opens that must fail. */
static void test_reset_fails(void)
{
    struct session s;
    struct fake_board_cfg never = {.seed = 5, .wrong_nonce_answers = 1000000};
    struct nf_link_config lc = fast_cfg();
    lc.silence_ms = 300;
    lc.rto_initial_ms = 20;
    uint64_t t0 = lt_now_ms();
    int up = session_open(&s, &never, &lc);
    uint64_t dt = lt_now_ms() - t0;
    CHECK(!up && s.open_status == STATUS_IO_TIMEOUT && dt >= 250 && dt < 2000,
          "reset: a board that never echoes the nonce fails open with IO_TIMEOUT after the deadline (%llu ms)",
          (unsigned long long)dt);
    fake_board_stop(s.board);

    struct fake_board_cfg badver = {.seed = 6, .layout_version = NF_LAYOUT_VERSION + 1};
    lc = fast_cfg();
    up = session_open(&s, &badver, &lc);
    CHECK(!up && s.open_status == STATUS_INVALID_DEVICE_STATE && strstr(nf_error_message(), "layout version"),
          "reset: INFO of another layout version fails open with INVALID_DEVICE_STATE and a message");
    fake_board_stop(s.board);
}

struct sender_arg {
    struct nf_link *link;
    NTSTATUS status;
    uint32_t first;
    int done;
};

static void *blocked_sender(void *p)
{
    struct sender_arg *a = p;
    static _Thread_local uint8_t buf[2048];
    NTSTATUS st = STATUS_SUCCESS;
    for (uint32_t i = 0; st == STATUS_SUCCESS && i < 100000; i++)
        st = nf_link_send(a->link, buf, make_ping(buf, a->first + i, 1024), 0);
    a->status = st;
    __atomic_store_n(&a->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Start 4 senders that keep sending until the window blocks them. */
static void start_senders(struct nf_link *l, pthread_t *th, struct sender_arg *args)
{
    for (int i = 0; i < 4; i++) {
        args[i] = (struct sender_arg){.link = l, .first = 1000000u * (uint32_t)(i + 1)};
        pthread_create(&th[i], NULL, blocked_sender, &args[i]);
    }
}

static int all_done_within(struct sender_arg *args, unsigned ms)
{
    uint64_t end = lt_now_ms() + ms;
    for (;;) {
        int done = 0;
        for (int i = 0; i < 4; i++)
            done += __atomic_load_n(&args[i].done, __ATOMIC_SEQ_CST);
        if (done == 4)
            return 1;
        if (lt_now_ms() > end)
            return 0;
        lt_sleep_ms(2);
    }
}

static int case_silence(struct session *s)
{
    fake_board_set_mode(s->board, FB_SILENT);
    pthread_t th[4];
    struct sender_arg args[4];
    uint64_t t0 = lt_now_ms();
    start_senders(s->link, th, args);
    int woke = all_done_within(args, 5000);
    uint64_t dt = lt_now_ms() - t0;
    int all_timeout = 1;
    for (int i = 0; i < 4; i++) {
        if (woke)
            pthread_join(th[i], NULL);
        all_timeout &= args[i].status == STATUS_IO_TIMEOUT;
    }
    CHECK(woke && all_timeout && dt >= 350, "silence: 4 blocked senders wake with IO_TIMEOUT after the deadline (%llu ms)",
          (unsigned long long)dt);
    lt_sleep_ms(20);
    CHECK(s->rx.dead_calls == 1 && s->rx.dead_status == STATUS_IO_TIMEOUT &&
              nf_link_status(s->link) == STATUS_IO_TIMEOUT && strstr(nf_link_dead_reason(s->link), "no valid frame"),
          "silence: on_dead called once with IO_TIMEOUT, reason given");
    uint8_t buf[64];
    t0 = lt_now_ms();
    NTSTATUS st = nf_link_send(s->link, buf, make_ping(buf, 1, 32), 0);
    NTSTATUS st2 = nf_link_send(s->link, buf, make_ping(buf, 1, 32), 1);
    CHECK(st == STATUS_IO_TIMEOUT && st2 == STATUS_IO_TIMEOUT && lt_now_ms() - t0 < 50,
          "silence: later sends fail at once");
    return woke;
}

/* Idle for longer than the deadline is fine: the clock only runs while waiting. */
static int case_silence_idle(struct session *s)
{
    lt_sleep_ms(400);
    uint8_t buf[64];
    NTSTATUS st = nf_link_send(s->link, buf, make_ping(buf, 1, 32), 0);
    CHECK(st == STATUS_SUCCESS && ping_rx_wait(&s->rx, 1, 2000) == 1 && s->rx.dead_calls == 0,
          "silence: an idle link longer than the deadline stays alive");
    nf_link_expect(s->link, 1);
    lt_sleep_ms(400);
    CHECK(nf_link_status(s->link) == STATUS_IO_TIMEOUT && s->rx.dead_calls == 1,
          "silence: waiting for a reply that never comes (nf_link_expect) dies after the deadline");
    return 1;
}

static int case_hangup(struct session *s)
{
    fake_board_set_mode(s->board, FB_STALL);
    pthread_t th[4];
    struct sender_arg args[4];
    start_senders(s->link, th, args);
    lt_sleep_ms(100); /* let them fill the window and block */
    fake_board_set_mode(s->board, FB_HANGUP);
    int woke = all_done_within(args, 3000);
    int all = 1;
    for (int i = 0; i < 4; i++) {
        if (woke)
            pthread_join(th[i], NULL);
        all &= args[i].status == STATUS_CONNECTION_RESET;
    }
    lt_sleep_ms(20);
    CHECK(woke && all && s->rx.dead_calls == 1 && s->rx.dead_status == STATUS_CONNECTION_RESET,
          "hangup: peer closing the socket wakes every sender with CONNECTION_RESET, on_dead once");
    return woke;
}

/* Each closes the link itself, to time the close. */
static int case_close_blocked(struct session *s)
{
    fake_board_set_mode(s->board, FB_STALL);
    pthread_t th[4];
    struct sender_arg args[4];
    start_senders(s->link, th, args);
    lt_sleep_ms(100);
    int blocked = 0;
    for (int i = 0; i < 4; i++)
        blocked += !__atomic_load_n(&args[i].done, __ATOMIC_SEQ_CST);
    uint64_t t0 = lt_now_ms();
    nf_link_close(s->link); /* returns only when no sender is inside */
    s->link = NULL;
    uint64_t dt = lt_now_ms() - t0;
    int all = 1;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        all &= args[i].status == STATUS_CANCELLED;
    }
    CHECK(blocked == 4 && all && dt < 1000 && s->rx.dead_calls == 0,
          "close: 4 blocked senders return CANCELLED, close takes %llu ms, no on_dead", (unsigned long long)dt);
    return 1;
}

/* Close while replies stream in both directions. */
static int case_close_streaming(struct session *s)
{
    send_pings(s->link, 1, 300, 2048, 0);
    uint64_t t0 = lt_now_ms();
    nf_link_close(s->link);
    s->link = NULL;
    CHECK(lt_now_ms() - t0 < 1000, "close: in the middle of traffic is prompt");
    return 1;
}

static int case_rtt(struct session *s)
{
    uint8_t buf[64];
    for (uint32_t tag = 1; tag <= 20; tag++) {
        nf_link_send(s->link, buf, make_ping(buf, tag, 32), 0);
        ping_rx_wait(&s->rx, tag, 2000);
    }
    struct nf_link_stats ls;
    nf_link_get_stats(s->link, &ls);
    /* The configured turnaround (5 ms) is far below this board's: the round trips
     * measured make the timeout cover it. A loaded machine (sanitizer build, 2 cores)
     * may stall a thread past the timer a few times; a timeout that did not cover the
     * board would retransmit nearly all 20 pings. */
    CHECK(s->rx.replies == 20 && ls.retransmits <= 5 && ls.rto_us >= 30000,
          "rtt: a 30 ms board gets no retransmission storm (timeout %u us, byte time %u ns, %llu retransmits)",
          ls.rto_us, ls.byte_ns, (unsigned long long)ls.retransmits);
    return 1;
}

/* A slow line (like a simulated board, ~70x slower than real time than INFO says):
 * the byte time is measured on small frames, and a frame far larger than them spends
 * far longer on the line. Its timeout grows with its bytes: it is not sent again
 * while it is still arriving. */
static int case_line_time(struct session *s)
{
    static uint8_t buf[NF_LINK_MAX_PAYLOAD];
    uint32_t tag = 1;
    /* Only this direction is paced, so an RTT bounds the byte time by 20 us x frame /
     * (frame + ACK): mid-sized small frames keep that bound near 20 us. */
    for (; tag <= 30; tag++) {
        nf_link_send(s->link, buf, make_ping(buf, tag, 400), 0);
        ping_rx_wait(&s->rx, tag, 2000);
    }
    struct nf_link_stats a, b;
    nf_link_get_stats(s->link, &a);
    /* 4 KiB at 20 us per byte: ~80 ms on the line, several times the small frames' RTO */
    size_t big = 4000;
    uint64_t t0 = lt_now_ms();
    for (int k = 0; k < 3; k++, tag++) {
        nf_link_send(s->link, buf, make_ping(buf, tag, big), 0);
        ping_rx_wait(&s->rx, tag, 3000);
    }
    uint64_t took = lt_now_ms() - t0;
    nf_link_get_stats(s->link, &b);
    CHECK(s->rx.replies == tag - 1 && b.retransmits == a.retransmits && a.byte_ns >= 18000 && a.byte_ns < 40000,
          "line time: a 4 KiB frame on a 20 us/byte line is not sent again (empty-frame rto %u us, byte time "
          "%u ns, %llu retransmits, 3 frames in %llu ms)",
          a.rto_us, a.byte_ns, (unsigned long long)(b.retransmits - a.retransmits), (unsigned long long)took);
    return 1;
}

/* Messages sent without defer while the line is busy (frames unacknowledged) join
 * the open frame: on a paced line a burst shares frames, in order, none lost. */
static int case_join(struct session *s)
{
    uint8_t buf[64];
    unsigned fails = 0;
    const uint32_t n = 60;
    for (uint32_t tag = 1; tag <= n; tag++)
        fails += nf_link_send(s->link, buf, make_ping(buf, tag, 16), 0) != STATUS_SUCCESS;
    uint64_t got = ping_rx_wait(&s->rx, n, 10000);
    struct fake_board_stats bs;
    fake_board_get_stats(s->board, &bs);
    CHECK(fails == 0 && got == n && bs.pings == n && bs.order_errors == 0 && s->rx.order_errors == 0 &&
              bs.window_violations == 0,
          "join: %u PINGs sent without defer on a busy line arrive once, in order", n);
    CHECK(bs.data_rx < n / 2 && bs.max_msgs_in_frame >= 2,
          "join: they share frames (%llu DATA frames, up to %u messages in one)", (unsigned long long)bs.data_rx,
          bs.max_msgs_in_frame);
    return 1;
}

static int case_malformed(struct session *s)
{
    uint8_t buf[64];
    for (uint32_t tag = 1; tag <= 60; tag++)
        nf_link_send(s->link, buf, make_ping(buf, tag, 32), tag % 2);
    nf_link_flush(s->link);
    lt_sleep_ms(300);
    struct nf_link_stats ls;
    nf_link_get_stats(s->link, &ls);
    CHECK(ls.bad_msgs > 0 && nf_link_status(s->link) == STATUS_SUCCESS && s->rx.replies > 30 &&
              s->rx.content_errors == 0,
          "malformed: a broken message list is counted (%llu) and skipped, the link goes on",
          (unsigned long long)ls.bad_msgs);
    return 1;
}

/* Cases that run on one session: the board's configuration and the link's
 * settings that differ from fast_cfg's (the fields that are not 0). The defer
 * case holds messages far longer than the default bound (2 ms) so that only its
 * flush sends them. */
static const struct session_case {
    const char *group, *name;
    struct fake_board_cfg bc;
    struct nf_link_config lc;
    int (*run)(struct session *s); /* 0: sender threads may still be blocked */
} session_cases[] = {
    {"clean", "clean", {.rx_slots = 8, .tx_slots = 8, .seed = 1}, {.rto_min_ms = 50}, case_clean},
    {"defer", "defer", {.rx_slots = 4, .tx_slots = 4, .seed = 2}, {.defer_max_us = 60000000}, case_defer},
    {"params", "params", {.seed = 3}, {0}, case_bad_params},
    {"reset", "reset", {.seed = 4, .wrong_nonce_answers = 3, .stale_data_before_ack = 2}, {.rto_initial_ms = 10},
     case_reset},
    {"silence", "silence", {.seed = 7}, {.silence_ms = 400}, case_silence},
    {"silence", "silence idle", {.seed = 7}, {.silence_ms = 200}, case_silence_idle},
    {"hangup", "hangup", {.seed = 8}, {0}, case_hangup},
    {"close", "close", {.seed = 9}, {0}, case_close_blocked},
    {"close", "close streaming", {.seed = 9, .drop = 1e-3}, {0}, case_close_streaming},
    {"rtt", "rtt", {.seed = 10, .reply_delay_ms = 30, .rto_ms = 200}, {0}, case_rtt},
    {"join", "join", {.seed = 13, .byte_us = 20}, {0}, case_join},
    {"malformed", "malformed", {.seed = 11, .malformed_every = 3, .max_msgs_per_frame = 2}, {0}, case_malformed},
    {"linetime", "line time", {.seed = 12, .byte_us = 20, .rto_ms = 500}, {.rto_max_ms = 2000}, case_line_time},
};

static void run_session_case(const struct session_case *c)
{
    struct nf_link_config lc = fast_cfg();
    const struct nf_link_config *o = &c->lc;
    lc.silence_ms = o->silence_ms ? o->silence_ms : lc.silence_ms;
    lc.rto_initial_ms = o->rto_initial_ms ? o->rto_initial_ms : lc.rto_initial_ms;
    lc.rto_min_ms = o->rto_min_ms ? o->rto_min_ms : lc.rto_min_ms;
    lc.rto_max_ms = o->rto_max_ms ? o->rto_max_ms : lc.rto_max_ms;
    lc.defer_max_us = o->defer_max_us ? o->defer_max_us : lc.defer_max_us;
    struct session s;
    if (!session_up(&s, &c->bc, &lc, c->name))
        return;
    int settled = c->run(&s);
    session_close(&s);
    if (!settled)
        _exit(1); /* threads still blocked on a freed link: do not go on */
}

/* ---- fake simulator mode -------------------------------------------------------- */

static int fake_simulator(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
            path = argv[++i];
        else if (strcmp(argv[i], "--die") == 0)
            return 3;
    }
    if (!path)
        return 2;
    int ls = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0)
        return 4;
    int fd = accept(ls, NULL, NULL);
    if (fd < 0)
        return 5;
    int probe = dup(fd);
    struct fake_board_cfg bc = {.seed = 12};
    struct fake_board *b = fake_board_start(fd, &bc);
    /* --exit-on-disconnect: wait for the host to go */
    char c;
    while (recv(probe, &c, 1, MSG_PEEK) > 0)
        lt_sleep_ms(5);
    fake_board_stop(b);
    close(probe);
    close(ls);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--socket") == 0)
        return fake_simulator(argc, argv);
    if (argc > 1 && strcmp(argv[1], "--die") == 0)
        return 3;
    if (argc > 1)
        label = strcmp(argv[1], "san") == 0 ? "link[san]" : argv[1];
    if (!realpath("/proc/self/exe", self_path))
        return 1;
    /* $LINK_TEST=NAME runs only the group NAME (for debugging). */
    const char *only = getenv("LINK_TEST");
#define RUN(name, call)                             \
    do {                                            \
        if (!only || strcmp(only, name) == 0)       \
            call;                                   \
    } while (0)
    RUN("transport", test_transport_errors());
    RUN("sim", test_sim_transport());
    RUN("simenv", test_sim_socket_env());
    RUN("faults", test_faults("faults 1e-3", 1e-3, 1e-3, 2e-4, 21, 1000, 64));
    RUN("faults", test_faults("faults 3e-3", 3e-3, 3e-3, 1e-3, 22, 300, 32));
    RUN("reset", test_reset_fails());
    for (size_t i = 0; i < sizeof(session_cases) / sizeof(session_cases[0]); i++)
        RUN(session_cases[i].group, run_session_case(&session_cases[i]));
    return tap_done();
}
