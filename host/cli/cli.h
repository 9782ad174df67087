/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga: the command-line tool of libndkfpga. Shared declarations of its parts:
 * common.c (options, device, errors, progress, JSON, time), session.c (an adapter
 * with a CQ, a PD and two connected QPs), one file per group of subcommands, and
 * main.c with the table of subcommands. Only the public headers are used. */
#ifndef NDKFPGA_CLI_H
#define NDKFPGA_CLI_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "ndkfpga.h"
#include "ndkpi.h"

/* Exit status of every subcommand. */
#define CLI_EXIT_OK 0        /* done */
#define CLI_EXIT_FAILED 1    /* the operation failed (the adapter or the library refused, a check failed) */
#define CLI_EXIT_USAGE 2     /* bad command line */
#define CLI_EXIT_NO_DEVICE 3 /* the device could not be opened */

/* The invocation of one subcommand. */
struct cli {
    const char *cmd;     /* subcommand name, for messages */
    const char *device;  /* -d DEVICE, the positional DEVICE, $NDKFPGA_DEVICE, or "auto" */
    int device_given;    /* named on the command line (-d or positional) */
    int json;            /* --json: one JSON document on stdout */
    int verbose;         /* -v: the library's failure messages on ($NDKFPGA_DEBUG=1) */
};

/* One subcommand: fn(cli, argc, argv) with argv[0] the subcommand's name. */
struct cli_command {
    const char *name;
    const char *summary; /* one line for `ndkfpga help` */
    const char *usage;   /* the text of `ndkfpga NAME --help` (starts with the usage line) */
    int (*fn)(struct cli *c, int argc, char **argv);
};
const struct cli_command *cli_command_find(const char *name);

/* ---- options (common.c) ---- */

/* Long-only options: their getopt values. */
#define CLI_OPT_JSON 0x100
#define CLI_OPT_SERIES 0x101
#define CLI_OPT_MIN_SIZE 0x102
#define CLI_OPT_MAX_SIZE 0x103
#define CLI_OPT_PROBE 0x104
#define CLI_OPT_HOST 0x105
#define CLI_OPT_TIMEOUT 0x106
#define CLI_OPT_LOOPBACK 0x107

/* Print the subcommand's usage to f. */
void cli_usage(const struct cli *c, FILE *f);
/* One line on stderr naming the command: a usage error (code CLI_EXIT_USAGE: the line
 * also points to --help) or a failed check without a status (CLI_EXIT_FAILED).
 * Returns code. */
int cli_report(const struct cli *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* One option of a subcommand besides the ones every subcommand takes (-h, -v, --json,
 * and -d when it takes a device): a flag, or a number in [min, max], a multiple of
 * step when step > 1 (a size in bytes: "4k" = 4096 when binary is set). */
struct cli_option {
    const char *name; /* --name */
    int key;          /* the short letter, or a CLI_OPT_* value for a long-only option */
    int *flag;        /* a flag: set to 1 when given; NULL: a number stored in *value */
    uint64_t *value;
    uint64_t min, max, step;
    int binary;
    const char *what; /* the number, for the usage error ("a count") */
};
#define CLI_MAX_OPTIONS 8
/* Parse a subcommand's arguments (argv[0] its name): the common options, its n own
 * ones, then the device as the one positional argument when takes_device (else none
 * is allowed). -1 to go on, else the exit code to stop with (--help: usage printed, 0;
 * a bad command line: CLI_EXIT_USAGE). */
int cli_parse_options(struct cli *c, int argc, char **argv, int takes_device, const struct cli_option *own,
                      size_t n);
/* Parse a decimal count in [min, max] (suffixes k, M, and KiB/MiB-style K for sizes:
 * "4k" = 4096 when binary is set, 4000 otherwise). 0 on success. */
int cli_parse_u64(const char *s, uint64_t min, uint64_t max, int binary, uint64_t *out);

/* ---- the adapter ---- */

/* Open c->device; on failure print why (one line) and return NULL with *exit_code set. */
NDK_ADAPTER *cli_open(const struct cli *c, int *exit_code);
/* A failed call: one line on stderr, "ndkfpga CMD: WHAT: STATUS (library message); hint".
 * Returns CLI_EXIT_FAILED. Adapter may be NULL. */
int cli_fail(const struct cli *c, NDK_ADAPTER *a, const char *what, NTSTATUS st);

/* The first call of a run that failed: check each status with cli_check, go on while
 * call is NULL, report it (cli_fail) at the end. */
struct cli_failure {
    const char *call; /* NULL while all is well */
    NTSTATUS status;
};
/* 1 when st is STATUS_SUCCESS; else 0, and what and st are kept unless one failed before. */
int cli_check(struct cli_failure *f, const char *what, NTSTATUS st);

/* ---- progress on stderr, only when it is a terminal ---- */

void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress_done(void); /* erase the progress line */

/* ---- output ---- */

double cli_now_us(void);                       /* monotonic clock */
void cli_json_string(FILE *f, const char *s);  /* a JSON string literal */
/* A JSON number, or null when v < 0 (not measured / not applicable). */
void cli_json_number(FILE *f, double v, int decimals);

/* ---- subcommands ---- */

int cmd_list(struct cli *c, int argc, char **argv);
int cmd_info(struct cli *c, int argc, char **argv);
int cmd_stats(struct cli *c, int argc, char **argv);
int cmd_ping(struct cli *c, int argc, char **argv);
int cmd_mrlat(struct cli *c, int argc, char **argv);
int cmd_mrrate(struct cli *c, int argc, char **argv);
int cmd_sendlat(struct cli *c, int argc, char **argv);
int cmd_addr(struct cli *c, int argc, char **argv);
int cmd_neigh(struct cli *c, int argc, char **argv);
int cmd_phy(struct cli *c, int argc, char **argv);
/* write_lat, write_bw, read_lat, read_bw, send_lat, send_bw (cmd_perf.c): the test is
 * the command's name. */
int cmd_perf(struct cli *c, int argc, char **argv);

/* ---- session.c: what the registration benchmarks need ---- */

struct cli_session {
    NDK_ADAPTER *adapter;
    NDK_ADAPTER_INFO info;
    NDK_CQ *cq;
    NDK_PD *pd;
    NDK_QP *initiator, *target; /* connected to each other (loopback) */
};

/* Open the device and build a CQ of cq_depth, a PD and two QPs of queue_depth
 * connected to each other. On failure prints why, closes what was opened and returns
 * the exit code; 0 on success. */
int cli_session_open(const struct cli *c, struct cli_session *s, ULONG cq_depth, ULONG queue_depth);
/* Same, each QP with a receive queue of rq_depth (one SGE per receive). */
int cli_session_open_receives(const struct cli *c, struct cli_session *s, ULONG cq_depth, ULONG queue_depth,
                              ULONG rq_depth);
void cli_session_close(struct cli_session *s);

/* A completion callback's result, waited for. */
struct cli_completion {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    NTSTATUS status;
    NDK_OBJECT_HEADER *object;
    double at_us; /* when the callback ran */
};
void cli_completion_init(struct cli_completion *w);
VOID cli_on_request_done(PVOID ctx, NTSTATUS st);
VOID cli_on_create_done(PVOID ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj);
/* The final status of a call that returned st: st itself unless STATUS_PENDING, then the
 * callback's (STATUS_IO_TIMEOUT after timeout_s). *done_us (may be NULL): when it completed. */
NTSTATUS cli_finish(struct cli_completion *w, NTSTATUS st, double *done_us);
/* The object a create call made: set inline (*out) or by its completion callback. */
NTSTATUS cli_created(struct cli_completion *w, NTSTATUS st, void **out);
/* Create an MR (fast register or not) and wait for it; NULL with *st on failure. */
NDK_MR *cli_create_mr(struct cli_session *s, BOOLEAN fast, NTSTATUS *st);
/* Poll the CQ for one result; STATUS_IO_TIMEOUT when none comes. */
NTSTATUS cli_next_result(NDK_CQ *cq, NDK_RESULT_EX *r, double *at_us);

#endif
