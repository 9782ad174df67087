/* Minimal TAP-style reporting for C tests: the test runner (tools/testrun.py)
 * counts every "ok - name" and "not ok - name" line. */
#ifndef NF_TAP_H
#define NF_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_failures;
static int tap_count;

/* Reports one case; returns cond so callers can stop early. */
static inline int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s - ", cond ? "ok" : "not ok");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    tap_count++;
    if (!cond)
        tap_failures++;
    return cond;
}

/* Exit status for main(): non-zero when anything failed or nothing ran. */
static inline int tap_done(void)
{
    if (tap_count == 0) {
        printf("not ok - no test case ran\n");
        return 1;
    }
    return tap_failures ? 1 : 0;
}

#endif
