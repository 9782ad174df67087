/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by the transport implementations (not part of the library API). */
#ifndef NF_TRANSPORT_PRIV_H
#define NF_TRANSPORT_PRIV_H

#include <sys/types.h>

#include "nf_transport.h"

/* Give an fd transport a child process to stop and a private socket directory to
 * remove at close (dir and sock are copied; either may be NULL). */
void nf_transport_fd_set_child(struct nf_transport *t, pid_t pid, const char *dir, const char *sock);
/* Give an fd transport the keeper port of its segment (nf_segment.h), closed at close
 * after the child has stopped. */
void nf_transport_fd_set_keeper(struct nf_transport *t, int fd);
/* Make an fd transport move a connected datagram socket: writes go out in datagrams of
 * at most max bytes, reads hand out each datagram's bytes in order (up to
 * NF_TRANSPORT_DGRAM_ROOM of one), and the errors that only mean a datagram was lost
 * are left to the link. STATUS_INSUFFICIENT_RESOURCES when out of memory. */
#define NF_TRANSPORT_DGRAM_ROOM 65536u
NTSTATUS nf_transport_fd_set_dgram(struct nf_transport *t, size_t max);

/* "udp:HOST[:PORT]" (transport_udp.c); arg is the text after "udp:". */
NTSTATUS nf_transport_open_udp(const char *arg, struct nf_transport **out);

/* The sim and model transports (transport_sim.c); arg is the text after "sim:" /
 * "model:" (a socket path), or NULL. The board transports are in transport_board.h. */
NTSTATUS nf_transport_open_sim(const char *arg, struct nf_transport **out);
NTSTATUS nf_transport_open_model(const char *arg, struct nf_transport **out);
/* "sim,OPTS" / "model,OPTS": a started adapter on segment o->net (o parsed already). */
struct nf_devopts;
NTSTATUS nf_transport_open_sim_net(const struct nf_devopts *o, struct nf_transport **out);
NTSTATUS nf_transport_open_model_net(const struct nf_devopts *o, struct nf_transport **out);

#endif
