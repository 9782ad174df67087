/* The library's error messages: the last failure of each thread, printed once where
 * it arose. A leaf that every other part of the link layer calls. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "nf_transport.h"
#include "nf_transport_priv.h"

static _Thread_local char last_error[256];

const char *nf_error_message(void)
{
    return last_error;
}

void nf_error_set_text(const char *text)
{
    snprintf(last_error, sizeof(last_error), "%s", text);
}

uint32_t nf_set_error(uint32_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    if (!getenv("NDKFPGA_QUIET"))
        fprintf(stderr, "ndkfpga: %s (%s)\n", last_error, nf_status_name(status));
    return status;
}
