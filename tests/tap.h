/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal TAP-style reporting for C tests: the test runner (tools/testrun.py)
 * counts every "ok - name" and "not ok - name" line. */
#ifndef NF_TAP_H
#define NF_TAP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

static int tap_failures;
static int tap_count;

/* Reports one case whose name starts with tap_prefix; returns cond so callers can
 * stop early. A test binary run twice in one suite (plain and sanitizer build)
 * passes a prefix so the two runs' case names differ. */
static inline int tap_vokp(int cond, const char *tap_prefix, const char *fmt, va_list ap)
{
    printf("%s - %s", cond ? "ok" : "not ok", tap_prefix);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    tap_count++;
    if (!cond)
        tap_failures++;
    return cond;
}

static inline int tap_okp(int cond, const char *tap_prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int tap_result = tap_vokp(cond, tap_prefix, fmt, ap);
    va_end(ap);
    return tap_result;
}

/* Reports one case (no prefix); returns cond. */
#define tap_ok(cond, ...) tap_okp((cond), "", __VA_ARGS__)

/* Exit status for main(): non-zero when anything failed or nothing ran. */
static inline int tap_done(void)
{
    if (tap_count == 0) {
        printf("not ok - no test case ran\n");
        return 1;
    }
    return tap_failures ? 1 : 0;
}

/* Deterministic pseudo-random numbers (xorshift64) for test data: a failing
 * run repeats exactly. */
static uint64_t tap_rng_state = 88172645463325252ull;
static inline uint32_t tap_rnd32(void)
{
    tap_rng_state ^= tap_rng_state << 13;
    tap_rng_state ^= tap_rng_state >> 7;
    tap_rng_state ^= tap_rng_state << 17;
    return (uint32_t)(tap_rng_state >> 16);
}

#endif
