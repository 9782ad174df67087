/* SPDX-License-Identifier: Apache-2.0 */
/* The link's lock and condition: a mutex and a broadcast-only condition variable on
 * futexes, the one lock type of the link. The posting path takes it once per work
 * request, and bench-host's budget of instructions per post holds with it, not with
 * glibc's pthread_mutex_t. The mutex is the three-state futex mutex (0 free, 1 held,
 * 2 held and maybe waited for: only then does unlock make a system call), as in
 * U. Drepper, "Futexes Are Tricky". The condition is a sequence number: a waiter
 * reads it under the mutex, and a broadcast (under the mutex, the only way it is used
 * here) bumps it, so a wait that starts after the broadcast returns at once; waiters
 * loop on their predicate, as with pthread_cond_wait. Zero-initialized is ready. */
#ifndef NF_LOCK_H
#define NF_LOCK_H

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* clang's -Wthread-safety checks every function that takes the mutex releases it
 * before it returns (make test-thread-safety); other compilers ignore these. */
#if defined(__clang__)
#define NF_CAPABILITY(x) __attribute__((capability(x)))
#define NF_ACQUIRE(m) __attribute__((acquire_capability(m)))
#define NF_RELEASE(m) __attribute__((release_capability(m)))
#define NF_REQUIRES(m) __attribute__((requires_capability(m)))
#define NF_LOCK_PRIMITIVE __attribute__((no_thread_safety_analysis))
#else
#define NF_CAPABILITY(x)
#define NF_ACQUIRE(m)
#define NF_RELEASE(m)
#define NF_REQUIRES(m)
#define NF_LOCK_PRIMITIVE
#endif

struct NF_CAPABILITY("mutex") nf_mutex {
    int v;
};

struct nf_cond {
    unsigned seq;
    unsigned waiters; /* under the mutex: a broadcast with none makes no system call */
};

static inline void nf_futex(void *addr, int op, int val)
{
    syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static inline void nf_mutex_lock(struct nf_mutex *m) NF_ACQUIRE(m) NF_LOCK_PRIMITIVE
{
    int c = 0;
    if (__atomic_compare_exchange_n(&m->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    if (c != 2)
        c = __atomic_exchange_n(&m->v, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        nf_futex(&m->v, FUTEX_WAIT_PRIVATE, 2);
        c = __atomic_exchange_n(&m->v, 2, __ATOMIC_ACQUIRE);
    }
}

static inline void nf_mutex_unlock(struct nf_mutex *m) NF_RELEASE(m) NF_LOCK_PRIMITIVE
{
    if (__atomic_exchange_n(&m->v, 0, __ATOMIC_RELEASE) == 2)
        nf_futex(&m->v, FUTEX_WAKE_PRIVATE, 1);
}

/* Under m: release m until a broadcast (or spuriously), then take it again. */
static inline void nf_cond_wait(struct nf_cond *cv, struct nf_mutex *m) NF_REQUIRES(m)
{
    unsigned seq = __atomic_load_n(&cv->seq, __ATOMIC_RELAXED);
    cv->waiters++;
    nf_mutex_unlock(m);
    nf_futex(&cv->seq, FUTEX_WAIT_PRIVATE, (int)seq);
    nf_mutex_lock(m);
    cv->waiters--;
}

/* Under the mutex the waiters use. */
static inline void nf_cond_broadcast(struct nf_cond *cv)
{
    if (cv->waiters) {
        __atomic_fetch_add(&cv->seq, 1u, __ATOMIC_RELEASE);
        nf_futex(&cv->seq, FUTEX_WAKE_PRIVATE, INT_MAX);
    }
}

#endif
