/* SPDX-License-Identifier: Apache-2.0 */
/* The library is quiet by default: a failing open and a failing call print nothing to
 * stderr without $NDKFPGA_DEBUG; with it they print "ndkfpga: " lines; a log callback
 * (NdkFpgaSetLogCallback) receives them instead, filtered by level, from any thread;
 * NdkFpgaErrorMessage works throughout. TAP output. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ndkfpga.h"
#include "tap.h"

/* stderr goes to a file while f runs; returns what was written (static buffer). */
static const char *captured(void (*f)(void))
{
    static char buf[8192];
    char path[] = "/tmp/ndkfpga_test_log_XXXXXX";
    int fd = mkstemp(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    f();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = 0;
    for (char *c = buf; *c; c++)
        if (*c == '\n' && c[1])
            *c = '|'; /* one TAP line per check */
    close(fd);
    unlink(path);
    return buf;
}

static NTSTATUS open_st, call_st;
static char open_msg[256], call_msg[256];

/* A failing open (no such device) and a failing call (the adapter killed under it). */
static void failures(void)
{
    NDK_ADAPTER *a = NULL;
    open_st = NdkFpgaOpenAdapter("tty:/nonexistent/ndkfpga-test", &a);
    snprintf(open_msg, sizeof(open_msg), "%s", NdkFpgaErrorMessage(NULL));
    call_st = STATUS_SUCCESS;
    call_msg[0] = 0;
    if (NdkFpgaOpenAdapter("model", &a) != STATUS_SUCCESS)
        return;
    NDKFPGA_ADAPTER_DETAILS det;
    if (NdkFpgaQueryAdapterDetails(a, &det) == STATUS_SUCCESS) {
        const char *p = strstr(det.Device, "pid ");
        if (p)
            kill((pid_t)atoi(p + 4), SIGKILL);
    }
    NDKFPGA_STATS stats;
    for (int i = 0; i < 200 && call_st == STATUS_SUCCESS; i++) {
        call_st = NdkFpgaQueryStats(a, &stats);
        if (call_st == STATUS_SUCCESS) {
            struct timespec ts = {0, 5 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    snprintf(call_msg, sizeof(call_msg), "%s", NdkFpgaErrorMessage(a));
    NdkFpgaCloseAdapter(a);
}

static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static int got_n, got_bad_level, got_newline;
static char got_first[256];

static VOID on_log(PVOID ctx, ULONG level, const char *msg)
{
    pthread_mutex_lock(&got_lock);
    if (ctx != &got_n || level < NDKFPGA_LOG_ERROR || level > NDKFPGA_LOG_DEBUG)
        got_bad_level++;
    if (strchr(msg, '\n'))
        got_newline++;
    if (got_n++ == 0)
        snprintf(got_first, sizeof(got_first), "%s", msg);
    pthread_mutex_unlock(&got_lock);
}

int main(void)
{
    unsetenv("NDKFPGA_DEBUG");
    unsetenv("NDKFPGA_QUIET");
    const char *err = captured(failures);
    tap_ok(open_st != STATUS_SUCCESS && call_st != STATUS_SUCCESS,
           "a failing open (%s) and a failing call after the adapter was killed (%s)", NdkFpgaStatusName(open_st),
           NdkFpgaStatusName(call_st));
    tap_ok(err[0] == 0, "without $NDKFPGA_DEBUG nothing on stderr%s%.200s", err[0] ? ": " : "", err);
    tap_ok(open_msg[0] && call_msg[0], "NdkFpgaErrorMessage still says why (\"%s\"; \"%s\")", open_msg, call_msg);

    setenv("NDKFPGA_DEBUG", "1", 1);
    err = captured(failures);
    tap_ok(strncmp(err, "ndkfpga: ", 9) == 0 && strstr(err, open_msg) != NULL,
           "with NDKFPGA_DEBUG=1 the failures are printed: %.200s", err);

    got_n = 0;
    NdkFpgaSetLogCallback(on_log, &got_n, NDKFPGA_LOG_ERROR);
    err = captured(failures);
    tap_ok(err[0] == 0, "with a callback nothing on stderr, even with $NDKFPGA_DEBUG%s%.200s", err[0] ? ": " : "",
           err);
    tap_ok(got_n >= 2 && !got_bad_level && !got_newline && strstr(got_first, open_msg) != NULL,
           "the callback got %d messages, one line each, with their level and context (first: \"%s\")", got_n,
           got_first);
    int at_error = got_n;

    got_n = 0;
    NdkFpgaSetLogCallback(on_log, &got_n, NDKFPGA_LOG_NONE);
    err = captured(failures);
    tap_ok(got_n == 0 && err[0] == 0, "level NDKFPGA_LOG_NONE: the callback gets nothing (%d), stderr empty", got_n);

    NdkFpgaSetLogCallback(NULL, NULL, 0);
    unsetenv("NDKFPGA_DEBUG");
    got_n = 0;
    err = captured(failures);
    tap_ok(got_n == 0 && err[0] == 0, "callback removed, no $NDKFPGA_DEBUG: quiet again (callback %d, %d before)",
           got_n, at_error);
    return tap_done();
}
