/* SPDX-License-Identifier: Apache-2.0 */
/* The Unix-domain listener of nfmodel, nfsim and nfwire. Its socket appears under its name
 * only once it listens (bound under a temporary name, then renamed over the path), so a
 * client that sees the path can connect: no window between bind and listen. C and C++. */
#ifndef NF_LISTEN_H
#define NF_LISTEN_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* A nonblocking listener of type (SOCK_STREAM, SOCK_SEQPACKET) on path, replacing a stale
 * socket there; -1 (said on stderr, as `who`) when path is something else or too long. */
static inline int nf_listen_unix(const char *who, const char *path, int type, int backlog)
{
    struct sockaddr_un addr;
    char tmp[sizeof(addr.sun_path)];
    struct stat st;
    memset(&addr, 0, sizeof(addr));
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        fprintf(stderr, "%s: socket path too long: %s\n", who, path);
        return -1;
    }
    if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
        fprintf(stderr, "%s: %s exists and is not a socket\n", who, path);
        return -1;
    }
    int fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        fprintf(stderr, "%s: socket: %s\n", who, strerror(errno));
        return -1;
    }
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, tmp, (size_t)n + 1);
    unlink(tmp);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, backlog) < 0 || rename(tmp, path) < 0) {
        fprintf(stderr, "%s: cannot listen on %s: %s\n", who, path, strerror(errno));
        unlink(tmp);
        close(fd);
        return -1;
    }
    return fd;
}

#endif
