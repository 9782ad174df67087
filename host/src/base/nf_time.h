/* SPDX-License-Identifier: Apache-2.0 */
/* nf_time.h: the library's timed waits run on CLOCK_MONOTONIC, so a step of the wall
 * clock (NTP, an administrator) never stretches or cuts a deadline: every condition
 * variable with a timed wait is made by nf_cond_init, every deadline by nf_deadline_after. */
#ifndef NF_TIME_H
#define NF_TIME_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* A condition variable whose timed waits take CLOCK_MONOTONIC deadlines. */
static inline int nf_cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    int rc = pthread_condattr_init(&a);
    if (rc == 0)
        rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

/* *ts = CLOCK_MONOTONIC now + ms milliseconds, normalized: a deadline for a condition
 * variable made by nf_cond_init. */
static inline void nf_deadline_after(struct timespec *ts, unsigned ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000u;
    ts->tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* CLOCK_MONOTONIC now, in milliseconds: for deadlines of polling loops. */
static inline uint64_t nf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void nf_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif
