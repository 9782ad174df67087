/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga: what every subcommand shares: options and the device, error lines,
 * progress on a terminal, JSON and time. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void cli_usage(const struct cli *c, FILE *f)
{
    const struct cli_command *cmd = cli_command_find(c->cmd);
    if (cmd)
        fputs(cmd->usage, f);
}

int cli_report(const struct cli *c, int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (code == CLI_EXIT_USAGE)
        fprintf(stderr, "ndkfpga %s: %s (see `ndkfpga %s --help`)\n", c->cmd, msg, c->cmd);
    else
        fprintf(stderr, "ndkfpga %s: %s\n", c->cmd, msg);
    return code;
}

/* What getopt_long returned, when it is common to every subcommand (-d, -h, -v,
 * --json, and the unknown-option and missing-value cases: the optstring starts with ':'
 * and opterr is 0, so every message is ours). 1 when it was one, with *exit_code set
 * when the command must stop; 0 when it is the subcommand's own. */
static int common_option(struct cli *c, int opt, char **argv, int *exit_code)
{
    switch (opt) {
    case 'h':
        cli_usage(c, stdout);
        *exit_code = CLI_EXIT_OK;
        return 1;
    case 'd':
        if (!optarg || !*optarg) {
            *exit_code = cli_report(c, CLI_EXIT_USAGE, "-d needs a device name");
            return 1;
        }
        if (c->device_given && strcmp(c->device, optarg) != 0) {
            *exit_code = cli_report(c, CLI_EXIT_USAGE, "two devices given (\"%s\" and \"%s\")", c->device, optarg);
            return 1;
        }
        c->device = optarg;
        c->device_given = 1;
        return 1;
    case 'v':
        c->verbose = 1;
        setenv("NDKFPGA_DEBUG", "1", 0);
        return 1;
    case CLI_OPT_JSON:
        c->json = 1;
        return 1;
    case ':':
        if (optopt > 0 && optopt < 0x100)
            *exit_code = cli_report(c, CLI_EXIT_USAGE, "option -%c needs a value", optopt);
        else
            *exit_code = cli_report(c, CLI_EXIT_USAGE, "option %s needs a value", argv[optind - 1]);
        return 1;
    case '?':
        if (optopt > 0 && optopt < 0x100)
            *exit_code = cli_report(c, CLI_EXIT_USAGE, "unknown option -%c", optopt);
        else
            *exit_code = cli_report(c, CLI_EXIT_USAGE, "unknown option %s", argv[optind - 1]);
        return 1;
    default:
        return 0;
    }
}

/* The subcommand's own option o with getopt's optarg: -1 to go on, else the exit code. */
static int own_option(const struct cli *c, const struct cli_option *o)
{
    if (o->flag) {
        *o->flag = 1;
        return -1;
    }
    char name[40];
    if (o->key < 0x100)
        snprintf(name, sizeof(name), "-%c", o->key);
    else
        snprintf(name, sizeof(name), "--%s", o->name);
    uint64_t v;
    int bad = cli_parse_u64(optarg, o->min, o->max, o->binary, &v);
    if (o->step > 1 && (bad || v % o->step))
        return cli_report(c, CLI_EXIT_USAGE, "%s needs a multiple of %llu bytes (e.g. 4k, 64k, 1M), not \"%s\"", name,
                          (unsigned long long)o->step, optarg);
    if (bad)
        return cli_report(c, CLI_EXIT_USAGE, "%s needs %s from %llu to %llu, not \"%s\"", name, o->what,
                          (unsigned long long)o->min, (unsigned long long)o->max, optarg);
    *o->value = v;
    return -1;
}

int cli_parse_options(struct cli *c, int argc, char **argv, int takes_device, const struct cli_option *own, size_t n)
{
    static const struct option common[] = {{"help", no_argument, NULL, 'h'},
                                           {"verbose", no_argument, NULL, 'v'},
                                           {"json", no_argument, NULL, CLI_OPT_JSON},
                                           {"device", required_argument, NULL, 'd'}};
    if (n > CLI_MAX_OPTIONS)
        return cli_report(c, CLI_EXIT_FAILED, "%zu options are more than the parser takes", n);
    struct option longs[CLI_MAX_OPTIONS + 5];
    char shorts[2 * CLI_MAX_OPTIONS + 8];
    size_t nl = takes_device ? 4u : 3u, ns;
    memcpy(longs, common, nl * sizeof(common[0]));
    strcpy(shorts, takes_device ? ":hvd:" : ":hv");
    ns = strlen(shorts);
    for (size_t i = 0; i < n; i++) {
        longs[nl++] = (struct option){own[i].name, own[i].flag ? no_argument : required_argument, NULL, own[i].key};
        if (own[i].key < 0x100) {
            shorts[ns++] = (char)own[i].key;
            if (!own[i].flag)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longs[nl] = (struct option){NULL, 0, NULL, 0};
    int opt, code = -1;
    while (code < 0 && (opt = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (common_option(c, opt, argv, &code))
            continue;
        for (size_t i = 0; i < n; i++)
            if (own[i].key == opt)
                code = own_option(c, &own[i]);
    }
    if (code >= 0)
        return code;
    if (!takes_device) {
        if (optind < argc)
            return cli_report(c, CLI_EXIT_USAGE, "unexpected argument \"%s\" (%s takes no device)", argv[optind],
                              c->cmd);
        return -1;
    }
    if (optind >= argc)
        return -1;
    if (argc - optind > 1)
        return cli_report(c, CLI_EXIT_USAGE, "unexpected argument \"%s\" (only one device may be named)",
                          argv[optind + 1]);
    if (c->device_given && strcmp(c->device, argv[optind]) != 0)
        return cli_report(c, CLI_EXIT_USAGE, "two devices given (\"%s\" and \"%s\")", c->device, argv[optind]);
    c->device = argv[optind];
    c->device_given = 1;
    return -1;
}

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, int binary, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t unit = 1;
    if (*end == 'k' || *end == 'K')
        unit = binary ? 1024u : 1000u;
    else if (*end == 'M')
        unit = binary ? 1024u * 1024u : 1000000u;
    if (unit != 1) {
        end++;
        if (binary && (!strcmp(end, "iB") || !strcmp(end, "B")))
            end += strlen(end);
    }
    if (*end || (v && (uint64_t)v * unit / unit != v))
        return -1;
    uint64_t r = (uint64_t)v * unit;
    if (r < min || r > max)
        return -1;
    *out = r;
    return 0;
}

/* What to do about a status, for the error line. */
static const char *hint(NTSTATUS st, int opening)
{
    switch (st) {
    case STATUS_NETWORK_UNREACHABLE:
    case STATUS_NO_SUCH_FILE:
        return "check the device name and what is there with `ndkfpga list`";
    case STATUS_ACCESS_DENIED:
        return "install the udev rule tools/99-ndkfpga.rules and replug the board";
    case STATUS_IO_TIMEOUT:
        return opening ? "the device did not answer: is the board powered and its bitstream loaded?"
                       : "the adapter stopped answering: is it still powered and connected?";
    case STATUS_NOT_SUPPORTED:
        return opening ? "the board runs firmware of another layout version: rebuild the bitstream "
                         "(make bitstream) or use the matching library"
                       : "the adapter's firmware does not support this: rebuild the bitstream";
    case STATUS_CONNECTION_RESET:
    case STATUS_CONNECTION_ABORTED:
        return "the link to the adapter was lost (board unplugged, simulator stopped)";
    case STATUS_INSUFFICIENT_RESOURCES:
        return "out of host memory or adapter resources";
    case STATUS_INVALID_PARAMETER:
        return opening ? "device names: auto, sim, sim:SOCKET, sim,net=NAME,ip=A.B.C.D[/N][,...], model, model:SOCKET, "
                         "model,net=..., usb, usb:BUS-ADDR, tty:PATH"
                       : "";
    default:
        return "";
    }
}

int cli_fail(const struct cli *c, NDK_ADAPTER *a, const char *what, NTSTATUS st)
{
    const char *msg = NdkFpgaErrorMessage(a);
    const char *h = hint(st, 0);
    fprintf(stderr, "ndkfpga %s: %s: %s%s%s%s%s%s\n", c->cmd, what, NdkFpgaStatusName(st), *msg ? " (" : "", msg,
            *msg ? ")" : "", *h ? "; " : "", h);
    return CLI_EXIT_FAILED;
}

NDK_ADAPTER *cli_open(const struct cli *c, int *exit_code)
{
    NDK_ADAPTER *a = NULL;
    NTSTATUS st = NdkFpgaOpenAdapter(c->device, &a);
    if (st == STATUS_SUCCESS)
        return a;
    const char *msg = NdkFpgaErrorMessage(NULL);
    const char *h = hint(st, 1);
    fprintf(stderr, "ndkfpga %s: cannot open \"%s\": %s%s%s%s%s%s\n", c->cmd, c->device, NdkFpgaStatusName(st),
            *msg ? " (" : "", msg, *msg ? ")" : "", *h ? "; " : "", h);
    *exit_code = CLI_EXIT_NO_DEVICE;
    return NULL;
}

/* ---- progress ---- */

static int progress_shown;
static double progress_last_us;

void cli_progress(const char *fmt, ...)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(STDERR_FILENO);
    if (!tty)
        return;
    double now = cli_now_us();
    if (progress_shown && now - progress_last_us < 100000.0)
        return; /* ten updates a second are enough */
    progress_last_us = now;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    progress_shown = 1;
}

void cli_progress_done(void)
{
    if (progress_shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        progress_shown = 0;
    }
}

/* ---- output ---- */

double cli_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void cli_json_number(FILE *f, double v, int decimals)
{
    if (v < 0)
        fputs("null", f);
    else
        fprintf(f, "%.*f", decimals, v);
}

int cli_check(struct cli_failure *f, const char *what, NTSTATUS st)
{
    if (st != STATUS_SUCCESS && !f->call) {
        f->call = what;
        f->status = st;
    }
    return st == STATUS_SUCCESS;
}
