/* Internals shared by the transport implementations (not part of the library API). */
#ifndef NF_TRANSPORT_PRIV_H
#define NF_TRANSPORT_PRIV_H

#include <sys/types.h>

#include "nf_transport.h"

/* Give an fd transport a child process to stop and a private socket directory to
 * remove at close (dir and sock are copied; either may be NULL). */
void nf_transport_fd_set_child(struct nf_transport *t, pid_t pid, const char *dir, const char *sock);

/* Set this thread's nf_error_message() without printing (the text was printed
 * where it arose, e.g. on the link thread). */
void nf_error_set_text(const char *text);

/* The sim/model transports (transport_sim.c). kind is "sim" or "model"; arg is the
 * text after "kind:" or NULL. */
uint32_t nf_transport_open_sim(const char *kind, const char *arg, struct nf_transport **out);

/* Wait up to timeout_ms for fd to be readable (data or hang-up) or for wake_fd (an
 * eventfd) to be signalled, whose count is then consumed. Returns 1 when fd has
 * something, 0 on timeout, wake or EINTR, -1 on error. Shared by the fd-based
 * transports (sockets, tty). */
int nf_fd_wait(int fd, int wake_fd, int timeout_ms);

#endif
