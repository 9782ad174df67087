/* SPDX-License-Identifier: Apache-2.0 */
/* nf_unix.h: a UNIX-domain socket connected to a path, the one way the library reaches a
 * local process (a simulator's host link, a segment's switch). */
#ifndef NF_UNIX_H
#define NF_UNIX_H

/* A socket of type (SOCK_STREAM, SOCK_SEQPACKET), close-on-exec, connected to path: its
 * fd, or -1 with errno set (ENAMETOOLONG when path does not fit sun_path). */
int nf_unix_connect(const char *path, int type);

#endif
