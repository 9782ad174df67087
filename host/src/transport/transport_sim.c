/* SPDX-License-Identifier: Apache-2.0 */
/* "sim" and "model" transports: a Unix stream socket to the Verilator board model
 * (nfsim) or the software adapter (nfmodel), started on a private socket when none
 * is given. Both speak the same protocol: raw link bytes in each direction.
 *
 * Where the binaries are: $NDKFPGA_SIM / $NDKFPGA_MODEL when set; otherwise, in the
 * in-tree library, the build tree's (NF_SIM_DEFAULT_PATH, NF_MODEL_DEFAULT_PATH); in
 * the installed library (NF_RELOCATABLE), PREFIX/libexec/ndkfpga/, where PREFIX is
 * found from the file this code was loaded from (PREFIX/lib/libndkfpga.so.N, or
 * PREFIX/bin/PROGRAM for a static link), so a moved install tree keeps working. The
 * installed nfsim is then given the installed firmware, PREFIX/share/ndkfpga/. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nf_transport_priv.h"

#ifdef NF_RELOCATABLE
/* Relative to the install prefix. */
#undef NF_SIM_DEFAULT_PATH
#undef NF_MODEL_DEFAULT_PATH
#define NF_SIM_DEFAULT_PATH "libexec/ndkfpga/nfsim"
#define NF_MODEL_DEFAULT_PATH "libexec/ndkfpga/nfmodel"
#define NF_SIM_FIRMWARE "share/ndkfpga/nf_fw.hex"
#endif
#ifndef NF_SIM_DEFAULT_PATH
#define NF_SIM_DEFAULT_PATH "nfsim"
#endif
#ifndef NF_MODEL_DEFAULT_PATH
#define NF_MODEL_DEFAULT_PATH "nfmodel"
#endif

extern char **environ;

#define MAX_EXTRA_ARGS 32
/* How long a started simulator may take to open its socket ($NDKFPGA_SIM_START_MS). */
#define START_TIMEOUT_MS_DEFAULT 30000

struct kind_env {
    const char *kind, *socket_env, *binary_env, *args_env, *default_path, *what;
};

static const struct kind_env kinds[] = { /* [0] "sim", [1] "model": see the open functions below */
    {"sim", "NDKFPGA_SIM_SOCKET", "NDKFPGA_SIM", "NDKFPGA_SIM_ARGS", NF_SIM_DEFAULT_PATH, "simulator"},
    {"model", "NDKFPGA_MODEL_SOCKET", "NDKFPGA_MODEL", "NDKFPGA_MODEL_ARGS", NF_MODEL_DEFAULT_PATH, "software adapter"},
};

/* Connect to a Unix socket; returns the fd or -1 with errno set. */
static int connect_unix(const char *path)
{
    struct sockaddr_un sa;
    if (strlen(path) >= sizeof(sa.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static NTSTATUS attach(const char *path, const char *kind, struct nf_transport **out)
{
    int fd = connect_unix(path);
    if (fd < 0)
        return nf_set_error(STATUS_CONNECTION_REFUSED, "%s socket %s: %s", kind, path, strerror(errno));
    char name[160];
    snprintf(name, sizeof(name), "%s:%s", kind, path);
    return nf_transport_from_fd(fd, name, out);
}

static uint32_t env_ms(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    return (*end == '\0' && n > 0 && n < 86400000ul) ? (uint32_t)n : dflt;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#ifdef NF_RELOCATABLE
/* The install prefix: two levels above the file holding this code. */
static int install_prefix(char *buf, size_t len)
{
    Dl_info di;
    char self[PATH_MAX];
    const char *from = NULL;
    if (dladdr((const void *)install_prefix, &di) && di.dli_fname && di.dli_fname[0] == '/')
        from = di.dli_fname;
    else {
        /* Linked into the program itself: dladdr names it as it was invoked. */
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
            return -1;
        self[n] = '\0';
        from = self;
    }
    char real[PATH_MAX];
    if (!realpath(from, real))
        return -1;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(real, '/');
        if (!slash)
            return -1;
        *slash = '\0';
    }
    if (snprintf(buf, len, "%s", real[0] ? real : "/") >= (int)len)
        return -1;
    return 0;
}

static int prefixed(const char *rel, char *buf, size_t len)
{
    char prefix[PATH_MAX];
    if (install_prefix(prefix, sizeof(prefix)) != 0)
        return -1;
    return snprintf(buf, len, "%s/%s", strcmp(prefix, "/") ? prefix : "", rel) < (int)len ? 0 : -1;
}
#endif

/* The binary the library starts for kind k (environment first). */
static int binary_path(const struct kind_env *k, char *buf, size_t len)
{
    const char *bin = getenv(k->binary_env);
    if (bin && *bin)
        return snprintf(buf, len, "%s", bin) < (int)len ? 0 : -1;
#ifdef NF_RELOCATABLE
    return prefixed(k->default_path, buf, len);
#else
    return snprintf(buf, len, "%s", k->default_path) < (int)len ? 0 : -1;
#endif
}

static const struct kind_env *kind_named(const char *kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i].kind, kind) == 0)
            return &kinds[i];
    return NULL;
}

NTSTATUS nf_transport_binary_path(const char *kind, char *buf, size_t len)
{
    const struct kind_env *k = kind ? kind_named(kind) : NULL;
    if (!k || !buf || len == 0)
        return STATUS_INVALID_PARAMETER;
    buf[0] = '\0';
    if (binary_path(k, buf, len) != 0) {
        buf[0] = '\0';
        return STATUS_NO_SUCH_FILE;
    }
    return access(buf, X_OK) == 0 ? STATUS_SUCCESS : STATUS_NO_SUCH_FILE;
}

static NTSTATUS start(const struct kind_env *k, struct nf_transport **out)
{
    char bin[PATH_MAX];
    if (binary_path(k, bin, sizeof(bin)) != 0)
        return nf_set_error(STATUS_NO_SUCH_FILE, "%s binary: cannot locate it (set $%s)", k->what, k->binary_env);
    if (access(bin, X_OK) != 0)
        return nf_set_error(STATUS_NO_SUCH_FILE, "%s binary %s: %s (build it with `make %s`, or set $%s)", k->what,
                            bin, strerror(errno), strcmp(k->kind, "sim") == 0 ? "sim" : "model", k->binary_env);

    const char *base = getenv("XDG_RUNTIME_DIR");
    if (!base || !*base || access(base, W_OK) != 0)
        base = "/tmp";
    char dir[128];
    if (snprintf(dir, sizeof(dir), "%s/ndkfpga-XXXXXX", base) >= (int)sizeof(dir))
        snprintf(dir, sizeof(dir), "/tmp/ndkfpga-XXXXXX");
    if (!mkdtemp(dir))
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "mkdtemp %s: %s", dir, strerror(errno));
    char sock[160];
    snprintf(sock, sizeof(sock), "%s/%s.sock", dir, k->kind);

    /* argv: BIN --socket SOCK --exit-on-disconnect [--quiet] [--firmware F] [words of
     * $ARGS]. The simulator's exit summary would land in the middle of the consumer's
     * output: it is printed only when debug messages go to stderr ($NDKFPGA_DEBUG). */
    char *words = NULL;
    char *argv[7 + MAX_EXTRA_ARGS + 1];
    int argc = 0;
    argv[argc++] = bin;
    argv[argc++] = "--socket";
    argv[argc++] = sock;
    argv[argc++] = "--exit-on-disconnect";
    if (!nf_log_stderr(NF_LOG_DEBUG))
        argv[argc++] = "--quiet";
#ifdef NF_RELOCATABLE
    char firmware[PATH_MAX];
    if (strcmp(k->kind, "sim") == 0 && prefixed(NF_SIM_FIRMWARE, firmware, sizeof(firmware)) == 0) {
        argv[argc++] = "--firmware";
        argv[argc++] = firmware;
    }
#endif
    const int fixed_args = argc;
    const char *extra = getenv(k->args_env);
    if (extra && *extra) {
        words = strdup(extra);
        if (!words) {
            rmdir(dir);
            return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory");
        }
        char *save = NULL;
        for (char *w = strtok_r(words, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
            if (argc >= fixed_args + MAX_EXTRA_ARGS) {
                free(words);
                rmdir(dir);
                return nf_set_error(STATUS_INVALID_PARAMETER, "$%s has more than %d words", k->args_env,
                                    MAX_EXTRA_ARGS);
            }
            argv[argc++] = w;
        }
    }
    argv[argc] = NULL;

    /* The child's stdout goes to our stderr so its reports never mix with a test's
     * TAP lines. */
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t pid;
    int rc = posix_spawn(&pid, bin, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(words);
    if (rc != 0) {
        rmdir(dir);
        return nf_set_error(STATUS_NO_SUCH_FILE, "cannot start %s %s: %s", k->what, bin, strerror(rc));
    }

    uint32_t limit = env_ms("NDKFPGA_SIM_START_MS", START_TIMEOUT_MS_DEFAULT);
    int fd = -1;
    for (uint32_t waited = 0;; waited += 10) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            unlink(sock);
            rmdir(dir);
            if (WIFEXITED(status))
                return nf_set_error(STATUS_DEVICE_NOT_CONNECTED, "%s %s exited with status %d at start", k->what,
                                    bin, WEXITSTATUS(status));
            return nf_set_error(STATUS_DEVICE_NOT_CONNECTED, "%s %s died at start (signal %d)", k->what, bin,
                                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
        fd = connect_unix(sock);
        if (fd >= 0)
            break;
        int last_errno = errno;
        if (waited >= limit) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            unlink(sock);
            rmdir(dir);
            return nf_set_error(STATUS_DEVICE_NOT_CONNECTED, "%s %s did not open its socket %s within %u ms (%s)",
                                k->what, bin, sock, (unsigned)limit, strerror(last_errno));
        }
        sleep_ms(10);
    }
    char name[PATH_MAX + 64];
    snprintf(name, sizeof(name), "%s (%s, pid %d)", k->kind, bin, (int)pid);
    NTSTATUS st = nf_transport_from_fd(fd, name, out);
    if (st != STATUS_SUCCESS) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        unlink(sock);
        rmdir(dir);
        return st;
    }
    /* The connection outlives its path: remove the private socket and directory now,
     * so nothing is left behind even if this process dies without closing. */
    unlink(sock);
    rmdir(dir);
    nf_transport_fd_set_child(*out, pid, NULL, NULL);
    return STATUS_SUCCESS;
}

static NTSTATUS open_kind(const struct kind_env *k, const char *arg, struct nf_transport **out)
{
    if (arg)
        return attach(arg, k->kind, out);
    const char *sock = getenv(k->socket_env);
    if (sock && *sock) {
        int fd = connect_unix(sock);
        if (fd >= 0) {
            char name[160];
            snprintf(name, sizeof(name), "%s:%s", k->kind, sock);
            return nf_transport_from_fd(fd, name, out);
        }
        /* Set but not accepting: fall through and start our own. */
    }
    return start(k, out);
}

NTSTATUS nf_transport_open_sim(const char *arg, struct nf_transport **out)
{
    return open_kind(&kinds[0], arg, out);
}

NTSTATUS nf_transport_open_model(const char *arg, struct nf_transport **out)
{
    return open_kind(&kinds[1], arg, out);
}
