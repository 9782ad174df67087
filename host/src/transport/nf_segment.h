/* SPDX-License-Identifier: Apache-2.0 */
/* A named Ethernet segment shared by started adapters (sim/model with net=NAME): the
 * segment's switch (nfwire) on a per-user socket, found or started under a lock.
 *
 * Paths: $XDG_RUNTIME_DIR/ndkfpga-net/NAME.sock when $XDG_RUNTIME_DIR is a writable
 * directory, else /tmp/ndkfpga-UID/net/NAME.sock (a 0700 directory owned by the user);
 * NAME.lock beside it. The switch runs with --idle-exit 0 --lock NAME.lock: it exits
 * when its last endpoint leaves, deciding under the lock so a joiner is never lost. */
#ifndef NF_SEGMENT_H
#define NF_SEGMENT_H

#include <stddef.h>

#include "base/nf_error.h"
#include "nf_devopts.h"

/* Find segment o->net's switch or start `nfwire` (with --tap o->tap when it starts it),
 * and connect a keeper port to it, which holds the segment up until it is closed (the
 * adapter's own port joins later). Writes the socket path into sock. On success
 * *keeper_fd is the keeper (O_CLOEXEC). start_ms bounds the wait for a new switch. */
NTSTATUS nf_segment_join(const char *nfwire, const struct nf_devopts *o, unsigned start_ms, char *sock,
                         size_t sock_len, int *keeper_fd);

/* The directory of the segments' sockets into buf (created when create), 0 or -1. */
int nf_segment_dir(char *buf, size_t len, int create);

#endif
