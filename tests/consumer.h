/* Helpers shared by the programs that use the library as a consumer would (the
 * conformance suite, tests/conformance/, and the stress suite, tests/stress/). */
#ifndef NDK_TESTS_CONSUMER_H
#define NDK_TESTS_CONSUMER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* The CLOCK_REALTIME instant ms milliseconds from now (for pthread_cond_timedwait). */
static inline void deadline_in(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* 127.0.0.1:port. */
static inline struct sockaddr_in loopback_addr(uint16_t port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

#endif
