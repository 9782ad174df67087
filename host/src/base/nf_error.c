/* SPDX-License-Identifier: Apache-2.0 */
/* The library's messages: the last failure of each thread (nf_error_message), and
 * every message (failures, warnings, debug detail) handed to the consumer's log
 * callback, or printed to stderr only when $NDKFPGA_DEBUG asks for it: a library
 * writes nothing on its own. A leaf that every layer above calls. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "nf_error.h"

static _Thread_local char last_error[256];

/* The consumer's callback (NdkFpgaSetLogCallback); log_lock guards the three. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static nf_log_fn log_fn;
static void *log_ctx;
static uint32_t log_level;

void nf_log_set(nf_log_fn fn, void *ctx, uint32_t level)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_ctx = ctx;
    log_level = level > NF_LOG_DEBUG ? NF_LOG_DEBUG : level;
    pthread_mutex_unlock(&log_lock);
}

/* $NDKFPGA_DEBUG: unset or empty prints nothing; "1".."3" that level and below; any
 * other value everything. Read at each message, so a program may set it any time. */
static uint32_t env_level(void)
{
    const char *v = getenv("NDKFPGA_DEBUG");
    if (!v || !*v)
        return NF_LOG_NONE;
    if (v[0] >= '0' && v[0] <= '3' && v[1] == '\0')
        return (uint32_t)(v[0] - '0');
    return NF_LOG_DEBUG;
}

int nf_log_stderr(uint32_t level)
{
    pthread_mutex_lock(&log_lock);
    int yes = !log_fn && level != NF_LOG_NONE && level <= env_level();
    pthread_mutex_unlock(&log_lock);
    return yes;
}

int nf_log_enabled(uint32_t level)
{
    pthread_mutex_lock(&log_lock);
    uint32_t max = log_fn ? log_level : env_level();
    pthread_mutex_unlock(&log_lock);
    return level != NF_LOG_NONE && level <= max;
}

/* One message, one line (text without a newline) with its status name when status is
 * not 0: to the callback when one is installed (called outside log_lock, so it may call
 * the library), else to stderr when $NDKFPGA_DEBUG allows the level. */
static void emit(uint32_t level, NTSTATUS status, const char *text)
{
    pthread_mutex_lock(&log_lock);
    nf_log_fn fn = log_fn;
    void *ctx = log_ctx;
    uint32_t max = fn ? log_level : env_level();
    pthread_mutex_unlock(&log_lock);
    if (level == NF_LOG_NONE || level > max)
        return;
    char line[320];
    if (status)
        snprintf(line, sizeof(line), "%s (%s)", text, nf_status_name(status));
    else
        snprintf(line, sizeof(line), "%s", text);
    if (fn)
        fn(ctx, level, line);
    else
        fprintf(stderr, "ndkfpga: %s\n", line);
}

void nf_log(uint32_t level, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    emit(level, 0, text);
}

const char *nf_error_message(void)
{
    return last_error;
}

void nf_error_set_text(const char *text)
{
    snprintf(last_error, sizeof(last_error), "%s", text);
}

NTSTATUS nf_set_error(NTSTATUS status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof(last_error), fmt, ap);
    va_end(ap);
    emit(NF_LOG_ERROR, status, last_error);
    return status;
}
