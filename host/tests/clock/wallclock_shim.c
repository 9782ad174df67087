/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD shim for test_clock: CLOCK_REALTIME reads an hour
 * ahead of the kernel's wall clock, as a deadline taken just before the wall clock is
 * stepped back an hour would be. A timed wait on CLOCK_REALTIME then sleeps for that
 * hour; one on CLOCK_MONOTONIC is untouched. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stddef.h>
#include <time.h>

#define STEP_S 3600

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    static int (*real)(clockid_t, struct timespec *);
    if (!real)
        real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real(clk, ts);
    if (rc == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE))
        ts->tv_sec += STEP_S;
    return rc;
}
