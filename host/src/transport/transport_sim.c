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

#include "nf_devopts.h"
#include "nf_segment.h"
#include "base/nf_unix.h"
#include "nf_transport_priv.h"

#ifdef NF_RELOCATABLE
/* Relative to the install prefix. */
#undef NF_SIM_DEFAULT_PATH
#undef NF_MODEL_DEFAULT_PATH
#undef NF_WIRE_DEFAULT_PATH
#define NF_SIM_DEFAULT_PATH "libexec/ndkfpga/nfsim"
#define NF_MODEL_DEFAULT_PATH "libexec/ndkfpga/nfmodel"
#define NF_WIRE_DEFAULT_PATH "libexec/ndkfpga/nfwire"
#define NF_SIM_FIRMWARE "share/ndkfpga/nf_fw.hex"
#endif
#ifndef NF_SIM_DEFAULT_PATH
#define NF_SIM_DEFAULT_PATH "nfsim"
#endif
#ifndef NF_MODEL_DEFAULT_PATH
#define NF_MODEL_DEFAULT_PATH "nfmodel"
#endif
#ifndef NF_WIRE_DEFAULT_PATH
#define NF_WIRE_DEFAULT_PATH "nfwire"
#endif

extern char **environ;

#define MAX_EXTRA_ARGS 32
/* How long a started simulator may take to open its socket ($NDKFPGA_SIM_START_MS). */
#define START_TIMEOUT_MS_DEFAULT 30000

struct kind_env {
    const char *kind, *socket_env, *binary_env, *args_env, *default_path, *what;
};

/* [0] "sim", [1] "model": see the open functions below; [2] "wire", the segment switch
 * a net= option starts (nf_segment.h), never opened as a transport. */
static const struct kind_env kinds[] = {
    {"sim", "NDKFPGA_SIM_SOCKET", "NDKFPGA_SIM", "NDKFPGA_SIM_ARGS", NF_SIM_DEFAULT_PATH, "simulator"},
    {"model", "NDKFPGA_MODEL_SOCKET", "NDKFPGA_MODEL", "NDKFPGA_MODEL_ARGS", NF_MODEL_DEFAULT_PATH, "software adapter"},
    {"wire", NULL, "NDKFPGA_WIRE", NULL, NF_WIRE_DEFAULT_PATH, "segment switch"},
};

static NTSTATUS attach(const char *path, const char *kind, struct nf_transport **out)
{
    int fd = nf_unix_connect(path, SOCK_STREAM);
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

#define MAX_NET_ARGS 6

/* Start kind k on a private socket; net_args (NULL-terminated, at most MAX_NET_ARGS)
 * come before the words of $ARGS. */
static NTSTATUS start(const struct kind_env *k, char *const *net_args, struct nf_transport **out)
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
    char *argv[7 + MAX_NET_ARGS + MAX_EXTRA_ARGS + 1];
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
    for (int i = 0; net_args && net_args[i] && i < MAX_NET_ARGS; i++)
        argv[argc++] = net_args[i];
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
        fd = nf_unix_connect(sock, SOCK_STREAM);
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
        int fd = nf_unix_connect(sock, SOCK_STREAM);
        if (fd >= 0) {
            char name[160];
            snprintf(name, sizeof(name), "%s:%s", k->kind, sock);
            return nf_transport_from_fd(fd, name, out);
        }
        /* Set but not accepting: fall through and start our own. */
    }
    return start(k, NULL, out);
}

/* A started adapter whose port joins segment o->net: the segment first (so a bad
 * pcap= or a switch that cannot start leaves no adapter behind), then the adapter. */
static NTSTATUS open_net(const struct kind_env *k, const struct nf_devopts *o, struct nf_transport **out)
{
    if (o->pcap[0]) {
        /* The switch writes it; refuse now what it could not create. */
        int fd = open(o->pcap, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return nf_set_error(STATUS_ACCESS_DENIED, "pcap=%s: %s", o->pcap, strerror(errno));
        close(fd);
    }
    char wire_bin[PATH_MAX];
    if (binary_path(&kinds[2], wire_bin, sizeof(wire_bin)) != 0)
        return nf_set_error(STATUS_NO_SUCH_FILE, "segment switch: cannot locate it (set $NDKFPGA_WIRE)");
    char sock[PATH_MAX];
    int keeper = -1;
    NTSTATUS st = nf_segment_join(wire_bin, o, env_ms("NDKFPGA_SIM_START_MS", START_TIMEOUT_MS_DEFAULT), sock,
                                  sizeof(sock), &keeper);
    if (st != STATUS_SUCCESS)
        return st;
    char seed[16], hello[NF_DEVOPTS_HELLO_MAX];
    snprintf(seed, sizeof(seed), "%u", (unsigned)nf_devopts_mac_seed(o));
    nf_devopts_port_hello(o, hello, sizeof(hello));
    char *args[MAX_NET_ARGS + 1];
    int n = 0;
    args[n++] = "--wire";
    args[n++] = sock;
    args[n++] = "--mac-seed";
    args[n++] = seed;
    if (hello[0]) {
        args[n++] = "--wire-opts";
        args[n++] = hello;
    }
    args[n] = NULL;
    st = start(k, args, out);
    if (st != STATUS_SUCCESS) {
        close(keeper);
        return st;
    }
    nf_transport_fd_set_keeper(*out, keeper);
    (*out)->net.set = 1;
    memcpy((*out)->net.ipv4, o->ip, 4);
    (*out)->net.prefix = o->prefix;
    (*out)->net.has_mac = o->has_mac;
    memcpy((*out)->net.mac, o->mac, 6);
    return STATUS_SUCCESS;
}

NTSTATUS nf_transport_open_sim(const char *arg, struct nf_transport **out)
{
    return open_kind(&kinds[0], arg, out);
}

NTSTATUS nf_transport_open_model(const char *arg, struct nf_transport **out)
{
    return open_kind(&kinds[1], arg, out);
}

NTSTATUS nf_transport_open_sim_net(const struct nf_devopts *o, struct nf_transport **out)
{
    return open_net(&kinds[0], o, out);
}

NTSTATUS nf_transport_open_model_net(const struct nf_devopts *o, struct nf_transport **out)
{
    return open_net(&kinds[1], o, out);
}
