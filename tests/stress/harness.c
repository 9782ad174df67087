/* SPDX-License-Identifier: Apache-2.0 */
/* The stress suite's driver: picks the cases, runs each in a child process of its own
 * (in its own process group, so the adapter processes the library starts for it go
 * with it) under a watchdog, and turns a hang or a crash into a "not ok" line that
 * says what the case was doing. Output is TAP-style, as tools/testrun.py counts it.
 *
 *   stress [-s full|small|tiny] [-w SECONDS] [--seed N] [-n] [-l] [DEVICE] [CASE ...]
 *
 * DEVICE is a name NdkFpgaOpenAdapter takes (default $NDKFPGA_DEVICE, else "model");
 * CASEs (default $STRESS_CASES, comma separated, else all) are names from -l. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stress.h"

struct st_config cfg;

/* Shared between the harness and the case's process. */
struct shared {
    char doing[512];
    int oks, fails;
    int finished; /* the case function returned */
    int bailed;   /* the case ended itself with st_bail */
};
static struct shared *sh;
static const char *cur_case = "";
static int in_child;
static pthread_mutex_t out_m = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------------- */
/* Reporting                                                                  */

static void vline(const char *head, const char *fmt, va_list ap, const char *tail)
{
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    for (char *p = msg; *p; p++) /* one line per check */
        if (*p == '\n')
            *p = ' ';
    pthread_mutex_lock(&out_m);
    printf("%s%s%s%s%s\n", head, cur_case, *cur_case ? ": " : "", msg, tail);
    fflush(stdout);
    pthread_mutex_unlock(&out_m);
}

int st_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(cond ? "ok - " : "not ok - ", fmt, ap, "");
    va_end(ap);
    if (sh)
        __atomic_add_fetch(cond ? &sh->oks : &sh->fails, 1, __ATOMIC_SEQ_CST);
    return cond;
}

void st_skip(const char *what, const char *why)
{
    pthread_mutex_lock(&out_m);
    printf("ok - %s: %s # SKIP %s\n", cur_case, what, why);
    fflush(stdout);
    pthread_mutex_unlock(&out_m);
    if (sh)
        __atomic_add_fetch(&sh->oks, 1, __ATOMIC_SEQ_CST);
}

void st_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline("# ", fmt, ap, "");
    va_end(ap);
}

void st_doing(const char *fmt, ...)
{
    if (!sh)
        return;
    char buf[sizeof(sh->doing)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&out_m);
    memcpy(sh->doing, buf, sizeof(buf));
    pthread_mutex_unlock(&out_m);
}

void st_bail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline("not ok - ", fmt, ap, " (the case ends here)");
    va_end(ap);
    if (sh) {
        __atomic_add_fetch(&sh->fails, 1, __ATOMIC_SEQ_CST);
        sh->bailed = 1;
    }
    fflush(stdout);
    if (in_child)
        _exit(1);
    exit(1);
}

uint64_t st_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t st_now_ms(void)
{
    return st_now_us() / 1000u;
}

void st_sleep_us(long us)
{
    struct timespec ts = {us / 1000000L, (us % 1000000L) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void st_sleep_ms(int ms)
{
    st_sleep_us((long)ms * 1000L);
}

static uint32_t rng_state = 1;
static pthread_mutex_t rng_m = PTHREAD_MUTEX_INITIALIZER;

uint32_t st_rand(void)
{
    pthread_mutex_lock(&rng_m);
    /* xorshift32 */
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    rng_state = x;
    pthread_mutex_unlock(&rng_m);
    return x;
}

uint32_t st_rand_below(uint32_t n)
{
    return n ? st_rand() % n : 0;
}

void st_fill(void *p, size_t n, uint32_t seed)
{
    uint8_t *b = p;
    uint32_t s = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        b[i] = (uint8_t)(s >> 16);
    }
}

const char *st_name(NTSTATUS st)
{
    if (st == ST_NO_COMPLETION)
        return "no completion within the bound";
    return NdkFpgaStatusName(st);
}

struct bounded {
    void *(*fn)(void *);
    void *arg;
    pthread_mutex_t m;
    pthread_cond_t c;
    int done;
    int abandoned;
};

static void *bounded_main(void *p)
{
    struct bounded *b = p;
    b->fn(b->arg);
    pthread_mutex_lock(&b->m);
    b->done = 1;
    int abandoned = b->abandoned;
    pthread_cond_broadcast(&b->c);
    pthread_mutex_unlock(&b->m);
    if (abandoned)
        free(b);
    return NULL;
}

int st_bounded(void *(*fn)(void *), void *arg, int ms)
{
    struct bounded *b = calloc(1, sizeof(*b));
    if (!b)
        st_bail("out of memory");
    b->fn = fn;
    b->arg = arg;
    pthread_mutex_init(&b->m, NULL);
    pthread_cond_init(&b->c, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, bounded_main, b) != 0)
        st_bail("pthread_create failed");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&b->m);
    while (!b->done && pthread_cond_timedwait(&b->c, &b->m, &ts) == 0)
        ;
    int done = b->done;
    if (!done)
        b->abandoned = 1; /* the thread frees b when (if) it returns */
    pthread_mutex_unlock(&b->m);
    if (done) {
        pthread_join(t, NULL);
        pthread_mutex_destroy(&b->m);
        pthread_cond_destroy(&b->c);
        free(b);
        return 1;
    }
    pthread_detach(t);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Cases and the watchdog                                                     */

struct case_def {
    const char *name;
    void (*fn)(void);
    int watchdog_model_s, watchdog_sim_s; /* the case's whole budget */
    const char *what;
};

static const struct case_def cases[] = {
    {"threads", case_threads, 30, 30,
     "threads x fast-register/write/read/invalidate cycles on one CQ"},
    {"deep-queue", case_deep_queue, 30, 30,
     "a QP filled to its depth, with and without DEFER; a lone deferred request"},
    {"cq-overflow", case_cq_overflow, 30, 30,
     "more completions than the CQ holds, not polled"},
    {"error-breaks-qp", case_error_breaks_qp, 20, 20,
     "an error completion, then every later request CANCELLED"},
    {"exhaustion", case_exhaustion, 30, 30,
     "allocate until INSUFFICIENT_RESOURCES, free, repeat: same counts"},
    {"flush-race", case_flush_race, 40, 30,
     "NdkFlush from one thread while another posts"},
    {"close-outstanding", case_close_outstanding, 30, 20,
     "closing QP, PD and adapter with requests outstanding"},
    {"init-fr-dead", case_init_fr_dead, 20, 20,
     "NdkInitializeFastRegisterMr without a callback after link death"},
    {"frozen", case_frozen, 45, 45,
     "a SIGSTOPped adapter: posts never block; closing a frozen or killed adapter"},
    {"link-death", case_link_death, 45, 45,
     "SIGKILL of the adapter during a posting storm, repeated"},
    {"foreign-handles", case_foreign_handles, 30, 30,
     "MDLs and objects of another adapter, hand-made or closed"},
    {"guessed-tokens", case_guessed_tokens, 30, 30,
     "random, wrong-key, zero and privileged tokens for RDMA"},
    {"packed-frame", case_packed_frame, 30, 30,
     "a frame of work requests whose answers exceed the TX window: each still completes once"},
    {"kill-storm", case_kill_storm, 180, 240,
     "SIGKILL of the adapter under two posters (DEFER) and a buffer read, many trials"},
    {"buffer-copy", case_buffer_copy, 60, 480,
     "NdkFpgaWriteBuffer/ReadBuffer of every length up to the largest buffer, at the link's rate"},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const struct case_def *find_case(const char *name)
{
    for (size_t i = 0; i < NCASES; i++)
        if (!strcmp(cases[i].name, name))
            return &cases[i];
    return NULL;
}

static volatile sig_atomic_t child_pgid;

static void on_term(int sig)
{
    if (child_pgid > 0)
        kill(-child_pgid, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int run_case(const struct case_def *c, int fork_it, int watchdog_s)
{
    memset(sh, 0, sizeof(*sh));
    snprintf(sh->doing, sizeof(sh->doing), "starting");
    uint64_t t0 = st_now_ms();
    printf("# --- %s: %s\n", c->name, c->what);
    fflush(stdout);
    if (!fork_it) {
        cur_case = c->name;
        rng_state = cfg.seed * 2654435761u + (uint32_t)(c - cases) * 7919u + 1u;
        c->fn();
        cur_case = "";
        printf("# %s: %llu ms\n", c->name, (unsigned long long)(st_now_ms() - t0));
        return sh->fails == 0 && sh->oks > 0;
    }
    pid_t pid = fork();
    if (pid < 0) {
        printf("not ok - %s: fork failed: %s\n", c->name, strerror(errno));
        return 0;
    }
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        in_child = 1;
        cur_case = c->name;
        rng_state = cfg.seed * 2654435761u + (uint32_t)(c - cases) * 7919u + 1u;
        c->fn();
        sh->finished = 1;
        fflush(stdout);
        _exit(sh->fails ? 1 : 0);
    }
    setpgid(pid, pid); /* also here: no race with the child's own call */
    child_pgid = pid;
    int timed_out = 0;
    siginfo_t si;
    for (;;) {
        memset(&si, 0, sizeof(si));
        /* WNOWAIT: the child stays a zombie, so its process group id stays ours
         * until the group is killed below. */
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            break;
        if (st_now_ms() - t0 > (uint64_t)watchdog_s * 1000u) {
            timed_out = 1;
            break;
        }
        st_sleep_ms(5);
    }
    kill(-pid, SIGKILL); /* the case's process (when hung) and any adapter process it left */
    int status = 0;
    waitpid(pid, &status, 0);
    child_pgid = 0;
    /* Adapter processes orphaned by the case come to us (subreaper): reap them. */
    for (int i = 0; i < 50; i++) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (kill(-pid, 0) != 0)
            break;
        st_sleep_ms(2);
    }
    int ok = 1;
    if (timed_out) {
        printf("not ok - %s: watchdog: no end after %d s; the case was: %s\n", c->name, watchdog_s, sh->doing);
        ok = 0;
    } else if (WIFSIGNALED(status)) {
        printf("not ok - %s: died of signal %d (%s) while: %s\n", c->name, WTERMSIG(status),
               strsignal(WTERMSIG(status)), sh->doing);
        ok = 0;
    } else if (!sh->finished && !sh->bailed) {
        /* exit() from inside the case: a sanitizer's report (stderr) exits 1 */
        printf("not ok - %s: the process exited %d before the case finished (a sanitizer report on stderr?), "
               "while: %s\n",
               c->name, WEXITSTATUS(status), sh->doing);
        ok = 0;
    } else if (WEXITSTATUS(status) != 0 && sh->fails == 0) {
        printf("not ok - %s: exited %d with no failing check, while: %s\n", c->name, WEXITSTATUS(status), sh->doing);
        ok = 0;
    } else if (sh->oks + sh->fails == 0) {
        printf("not ok - %s: reported nothing\n", c->name);
        ok = 0;
    } else if (sh->fails) {
        ok = 0;
    }
    printf("# %s: %llu ms, %d ok, %d not ok\n", c->name, (unsigned long long)(st_now_ms() - t0), sh->oks, sh->fails);
    fflush(stdout);
    return ok;
}

static void usage(void)
{
    printf("usage: stress [-s full|small|tiny] [-w SECONDS] [--seed N] [-n] [-l] [DEVICE] [CASE ...]\n"
           "  DEVICE   as NdkFpgaOpenAdapter takes it (default $NDKFPGA_DEVICE, else model)\n"
           "  CASE     one of -l (default $STRESS_CASES, comma separated, else all)\n"
           "  -s       scale: full (model default), small (sanitized runs), tiny (sim default)\n"
           "  -w       watchdog of every case in seconds (default per case)\n"
           "  -n       run the cases in this process (no fork, no watchdog: for a debugger)\n"
           "  -l       list the cases\n"
           "environment: STRESS_SCALE, STRESS_SEED, STRESS_WAIT_MS (longest wait for one completion),\n"
           "  STRESS_DEFER_BOUND_MS (a lone deferred request completes within this beyond a round trip),\n"
           "  STRESS_POST_BOUND_MS (a post on a frozen adapter returns within this; 50)\n");
}

static int scale_of(const char *s)
{
    if (!strcmp(s, "full"))
        return SCALE_FULL;
    if (!strcmp(s, "small"))
        return SCALE_SMALL;
    if (!strcmp(s, "tiny"))
        return SCALE_TINY;
    return -1;
}

int main(int argc, char **argv)
{
    const char *device = getenv("NDKFPGA_DEVICE");
    const char *scale = getenv("STRESS_SCALE");
    const char *seed = getenv("STRESS_SEED");
    int watchdog = 0, fork_it = 1;
    const struct case_def *sel[NCASES * 4];
    size_t nsel = 0;
    int device_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-s") && i + 1 < argc) {
            scale = argv[++i];
        } else if (!strcmp(a, "-w") && i + 1 < argc) {
            watchdog = atoi(argv[++i]);
        } else if (!strcmp(a, "--seed") && i + 1 < argc) {
            seed = argv[++i];
        } else if (!strcmp(a, "-n")) {
            fork_it = 0;
        } else if (!strcmp(a, "-l")) {
            for (size_t k = 0; k < NCASES; k++)
                printf("%-18s %s\n", cases[k].name, cases[k].what);
            return 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        } else if (find_case(a)) {
            if (nsel < sizeof(sel) / sizeof(sel[0]))
                sel[nsel++] = find_case(a);
        } else if (!device_given && a[0] != '-') {
            device = a;
            device_given = 1;
        } else {
            usage();
            return 2;
        }
    }
    if (nsel == 0 && getenv("STRESS_CASES") && *getenv("STRESS_CASES")) {
        char *list = strdup(getenv("STRESS_CASES"));
        char *save = NULL;
        for (char *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
            const struct case_def *c = find_case(t);
            if (!c) {
                printf("not ok - STRESS_CASES names no case \"%s\" (see -l)\n", t);
                free(list);
                return 2;
            }
            if (nsel < sizeof(sel) / sizeof(sel[0]))
                sel[nsel++] = c;
        }
        free(list);
    }
    if (nsel == 0)
        for (size_t k = 0; k < NCASES; k++)
            sel[nsel++] = &cases[k];
    if (!device || !*device)
        device = "model";
    cfg.device = device;
    cfg.sim = strncmp(device, "sim", 3) == 0;
    cfg.scale = cfg.sim ? SCALE_TINY : SCALE_FULL;
    if (scale && *scale) {
        cfg.scale = scale_of(scale);
        if (cfg.scale < 0) {
            usage();
            return 2;
        }
    }
    cfg.seed = seed && *seed ? (unsigned)strtoul(seed, NULL, 0) : 1u;
    cfg.wait_ms = cfg.sim ? 10000 : 3000;
    if (getenv("STRESS_WAIT_MS") && atoi(getenv("STRESS_WAIT_MS")) > 0)
        cfg.wait_ms = atoi(getenv("STRESS_WAIT_MS"));
    cfg.post_bound_ms = 50;
    if (getenv("STRESS_POST_BOUND_MS") && atoi(getenv("STRESS_POST_BOUND_MS")) > 0)
        cfg.post_bound_ms = atoi(getenv("STRESS_POST_BOUND_MS"));
    cfg.defer_bound_ms = cfg.sim ? 1000 : 200;
    if (getenv("STRESS_DEFER_BOUND_MS") && atoi(getenv("STRESS_DEFER_BOUND_MS")) > 0)
        cfg.defer_bound_ms = atoi(getenv("STRESS_DEFER_BOUND_MS"));

    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        printf("not ok - stress: mmap of the shared page failed\n");
        return 1;
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* a killed case's adapter processes are reaped here */
    signal(SIGINT, on_term);
    signal(SIGTERM, on_term);
    signal(SIGPIPE, SIG_IGN);
    static const char *const scale_names[] = {"tiny", "small", "full"};
    printf("# stress suite on \"%s\", scale %s, seed %u, %zu case(s)\n", cfg.device, scale_names[cfg.scale], cfg.seed,
           nsel);
    fflush(stdout);
    uint64_t t0 = st_now_ms();
    int failed = 0;
    for (size_t i = 0; i < nsel; i++) {
        int w = watchdog > 0 ? watchdog : cfg.sim ? sel[i]->watchdog_sim_s : sel[i]->watchdog_model_s;
        if (!run_case(sel[i], fork_it, w))
            failed++;
    }
    printf("# stress: %zu case(s), %d failed, %llu ms\n", nsel, failed, (unsigned long long)(st_now_ms() - t0));
    return failed ? 1 : 0;
}
