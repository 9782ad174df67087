/* SPDX-License-Identifier: Apache-2.0 */
/* The base of the library, below the link and the transports: the statuses every
 * layer returns, the thread's last error and the library's log (nf_error.c), status
 * names (nf_status.c).
 *
 * Every status is an NTSTATUS (ndkpi.h's STATUS_*, whose numbers are the contract's,
 * nf_ndkpi_check.h). Every failure also leaves a one-line message in
 * nf_error_message() (per thread) and logs it (nf_log: the consumer's callback, or
 * stderr only with $NDKFPGA_DEBUG). */
#ifndef NF_ERROR_H
#define NF_ERROR_H

#include <stdint.h>

#include "ndkpi.h"
#include "nf_layout.h"

/* Not among ndkpi.h's: no board there, or a started simulator that died. */
#ifndef STATUS_DEVICE_NOT_CONNECTED
#define STATUS_DEVICE_NOT_CONNECTED ((NTSTATUS)NF_STATUS_DEVICE_NOT_CONNECTED)
#endif

/* The message of the last failure reported on this thread by nf_transport_* or
 * nf_link_* ("" when none). */
const char *nf_error_message(void);
/* Record a failure message and log it (NF_LOG_ERROR); returns status so callers can
 * `return nf_set_error(STATUS_X, "...", ...)`. */
NTSTATUS nf_set_error(NTSTATUS status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set this thread's nf_error_message() without printing (the text was printed
 * where it arose, e.g. on the link thread). */
void nf_error_set_text(const char *text);

/* The library's messages, by level (the values of ndkfpga.h's NDKFPGA_LOG_*). They go
 * to the callback nf_log_set installed (fn NULL: none), else to stderr only as far as
 * $NDKFPGA_DEBUG allows ("1".."3": up to that level; any other non-empty value: all):
 * by default nothing is printed. */
#define NF_LOG_NONE 0u
#define NF_LOG_ERROR 1u   /* a call failed (the text of nf_error_message) */
#define NF_LOG_WARNING 2u /* something went wrong that no call's status reports */
#define NF_LOG_DEBUG 3u   /* detail for developers */
typedef void (*nf_log_fn)(void *ctx, uint32_t level, const char *line);
void nf_log_set(nf_log_fn fn, void *ctx, uint32_t level);
void nf_log(uint32_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether a message of this level goes anywhere (to skip building it); to stderr. */
int nf_log_enabled(uint32_t level);
int nf_log_stderr(uint32_t level);
/* Name of a status ("STATUS_IO_TIMEOUT"), or "STATUS_(unknown)" (base/nf_status.c). */
const char *nf_status_name(NTSTATUS status);

#endif
