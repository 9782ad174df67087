/* nf_time.h: deadlines for the library's timed waits (condition variables wait on
 * CLOCK_REALTIME, polling loops measure CLOCK_MONOTONIC). */
#ifndef NF_TIME_H
#define NF_TIME_H

#include <time.h>

/* *ts = now on clock + ms milliseconds, normalized. */
static inline void nf_deadline_after(struct timespec *ts, clockid_t clock, unsigned ms)
{
    clock_gettime(clock, ts);
    ts->tv_sec += ms / 1000u;
    ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

#endif
