/* SPDX-License-Identifier: Apache-2.0 */
/* Objects of the NDKPI provider: the registry of live handles (every adapter of the
 * process), reference counting, close ordering, and the event queue the callback
 * thread (ndk_event.c) drains. Calls nothing of the other ndk_*.c files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndk_internal.h"

/* ------------------------------------------------------------------------- */
/* Registry of live objects (every adapter of the process): a handle handed to any
 * call is used only when it is one this library created and has not freed, never
 * because its memory looks right. Open addressing over the header's address;
 * lookups take no lock (the posting path): an insertion or removal is one atomic
 * store, a rebuild (rare: tombstones) bumps ndk_reg_seq around it so a lookup that
 * overlapped one looks again. */
#define REG_SIZE (1u << NDK_REG_BITS)
#define REG_TOMB NDK_REG_TOMB
uintptr_t ndk_reg_slot[REG_SIZE]; /* ndk_obj_ok (ndk_internal.h) looks here inline */
unsigned ndk_reg_seq;
static uint32_t reg_live, reg_tombs;
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;

int ndk_live(const void *obj)
{
    uintptr_t k = (uintptr_t)obj;
    if (k <= REG_TOMB)
        return 0;
    for (;;) {
        unsigned s0 = __atomic_load_n(&ndk_reg_seq, __ATOMIC_ACQUIRE);
        int found = 0;
        if (!(s0 & 1u)) {
            for (uint32_t i = ndk_reg_hash(k), n = 0; n < REG_SIZE; i = (i + 1u) & (REG_SIZE - 1u), n++) {
                uintptr_t v = __atomic_load_n(&ndk_reg_slot[i], __ATOMIC_ACQUIRE);
                if (v == k) {
                    found = 1;
                    break;
                }
                if (v == 0)
                    break;
            }
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (!(s0 & 1u) && __atomic_load_n(&ndk_reg_seq, __ATOMIC_RELAXED) == s0)
            return found;
    }
}

static void reg_put(uintptr_t k)
{
    uint32_t i = ndk_reg_hash(k);
    while (ndk_reg_slot[i] > REG_TOMB)
        i = (i + 1u) & (REG_SIZE - 1u);
    if (ndk_reg_slot[i] == REG_TOMB)
        reg_tombs--;
    __atomic_store_n(&ndk_reg_slot[i], k, __ATOMIC_RELEASE);
}

int ndk_registry_add(const void *obj)
{
    pthread_mutex_lock(&reg_mu);
    if (reg_live >= REG_SIZE / 2u) {
        pthread_mutex_unlock(&reg_mu);
        return 0;
    }
    if (reg_live + reg_tombs >= REG_SIZE / 4u * 3u) {
        /* Rebuild without the tombstones (lookups meanwhile retry). */
        static uintptr_t keep[REG_SIZE];
        uint32_t n = 0;
        for (uint32_t i = 0; i < REG_SIZE; i++)
            if (ndk_reg_slot[i] > REG_TOMB)
                keep[n++] = ndk_reg_slot[i];
        __atomic_store_n(&ndk_reg_seq, ndk_reg_seq + 1u, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        for (uint32_t i = 0; i < REG_SIZE; i++)
            __atomic_store_n(&ndk_reg_slot[i], 0, __ATOMIC_RELAXED);
        reg_tombs = 0;
        for (uint32_t i = 0; i < n; i++)
            reg_put(keep[i]);
        __atomic_store_n(&ndk_reg_seq, ndk_reg_seq + 1u, __ATOMIC_RELEASE);
    }
    reg_put((uintptr_t)obj);
    reg_live++;
    pthread_mutex_unlock(&reg_mu);
    return 1;
}

void ndk_registry_del(const void *obj)
{
    uintptr_t k = (uintptr_t)obj;
    pthread_mutex_lock(&reg_mu);
    for (uint32_t i = ndk_reg_hash(k), n = 0; n < REG_SIZE && ndk_reg_slot[i] != 0; i = (i + 1u) & (REG_SIZE - 1u), n++) {
        if (ndk_reg_slot[i] == k) {
            __atomic_store_n(&ndk_reg_slot[i], REG_TOMB, __ATOMIC_RELEASE);
            reg_live--;
            reg_tombs++;
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

/* ------------------------------------------------------------------------- */
/* Object lifetime                                                            */

void ndk_core_init(struct ndk_adapter *ad, struct ndk_core *c, NDK_OBJECT_HEADER *hdr, NDK_OBJECT_TYPE type,
                   struct ndk_core *p0, struct ndk_core *p1, struct ndk_core *p2)
{
    memset(c, 0, sizeof(*c));
    c->ad = ad;
    c->hdr = hdr;
    c->parents[0] = p0;
    c->parents[1] = p1;
    c->parents[2] = p2;
    memset(hdr, 0, sizeof(*hdr));
    hdr->Version.Major = NDKFPGA_NDK_VERSION_MAJOR;
    hdr->Version.Minor = NDKFPGA_NDK_VERSION_MINOR;
    hdr->ObjectType = type;
}

void *ndk_obj_new(struct ndk_adapter *ad, const struct ndk_type *t, struct ndk_core *p0, struct ndk_core *p1,
                  struct ndk_core *p2)
{
    void *obj = calloc(1, t->size);
    if (!obj)
        return NULL;
    struct ndk_core *c = (struct ndk_core *)(void *)((char *)obj + t->core_off);
    ndk_core_init(ad, c, obj, t->type, p0, p1, p2); /* the header is first in every object */
    c->type = t;
    return obj;
}

void ndk_core_destroy(struct ndk_core *c)
{
    if (c->type->fini)
        c->type->fini(c);
    free((char *)c - c->type->core_off);
}

NTSTATUS ndk_obj_publish(struct ndk_core *c)
{
    pthread_mutex_lock(&c->ad->lock);
    int linked = ndk_core_link(c);
    pthread_mutex_unlock(&c->ad->lock);
    if (linked)
        return STATUS_SUCCESS;
    ndk_core_destroy(c);
    return STATUS_INSUFFICIENT_RESOURCES;
}

int ndk_registry_has_room(void)
{
    pthread_mutex_lock(&reg_mu);
    int room = reg_live < REG_SIZE / 2u;
    pthread_mutex_unlock(&reg_mu);
    return room;
}

int ndk_core_link(struct ndk_core *c)
{
    struct ndk_adapter *ad = c->ad;
    c->registered = ndk_registry_add(c->hdr);
    if (!c->registered)
        return 0;
    for (int i = 0; i < 3; i++)
        if (c->parents[i])
            c->parents[i]->refs++;
    c->next = ad->objects.next;
    c->prev = &ad->objects;
    ad->objects.next->prev = c;
    ad->objects.next = c;
    return 1;
}

/* From here on no call takes the object (ndk_live fails). */
void ndk_core_unregister(struct ndk_core *c)
{
    if (c->registered) {
        ndk_registry_del(c->hdr);
        c->registered = 0;
    }
}

static void core_unlink(struct ndk_core *c)
{
    ndk_core_unregister(c);
    if (c->next) {
        c->next->prev = c->prev;
        c->prev->next = c->next;
        c->next = c->prev = NULL;
    }
}

void ndk_ref(struct ndk_core *c)
{
    c->refs++;
}

void ndk_event_append(struct ndk_event **head, struct ndk_event **tail, struct ndk_event *ev)
{
    ev->next = NULL;
    if (*tail)
        (*tail)->next = ev;
    else
        *head = ev;
    *tail = ev;
}

void ndk_queue_event(struct ndk_adapter *ad, struct ndk_event *ev)
{
    ndk_event_append(&ad->ev_head, &ad->ev_tail, ev);
    pthread_cond_signal(&ad->ev_cond);
}

static void queue_close(struct ndk_core *c)
{
    c->close_queued = 1;
    c->close_ev.kind = EV_CLOSE;
    c->close_ev.embedded = 1;
    c->close_ev.core = c;
    ndk_queue_event(c->ad, &c->close_ev);
}

void ndk_unref_locked(struct ndk_core *c)
{
    if (--c->refs == 0 && c->closing && !c->close_queued)
        queue_close(c);
}

/* Drop the parents' references and free; under ad->lock. */
void ndk_core_release(struct ndk_core *c)
{
    core_unlink(c);
    struct ndk_core *p[3] = {c->parents[0], c->parents[1], c->parents[2]};
    ndk_core_destroy(c);
    for (int i = 0; i < 3; i++)
        if (p[i])
            ndk_unref_locked(p[i]);
}

/* Adapter close: objects the consumer left open are freed without their close
 * callbacks (no thread runs callbacks any more). */
void ndk_free_leftovers(struct ndk_adapter *ad)
{
    while (ad->objects.next != &ad->objects) {
        struct ndk_core *c = ad->objects.next;
        core_unlink(c);
        ndk_core_destroy(c);
    }
}

NTSTATUS ndk_close(struct ndk_core *c, NDK_FN_CLOSE_COMPLETION cb, void *ctx)
{
    struct ndk_adapter *ad = c->ad;
    pthread_mutex_lock(&ad->lock);
    if (c->closing) {
        /* A second close of the same object: nothing more to do. */
        pthread_mutex_unlock(&ad->lock);
        return STATUS_SUCCESS;
    }
    c->closing = 1;
    c->close_cb = cb;
    c->close_ctx = ctx;
    if (c->refs > 0) {
        pthread_mutex_unlock(&ad->lock);
        return STATUS_PENDING;
    }
    c->close_queued = 1; /* finished inline: no event */
    pthread_mutex_unlock(&ad->lock);
    ndk_core_teardown(c);
    pthread_mutex_lock(&ad->lock);
    ndk_core_release(c);
    pthread_mutex_unlock(&ad->lock);
    return STATUS_SUCCESS;
}

NTSTATUS ndk_close_as(NDK_OBJECT_HEADER *obj, const struct ndk_type *t, NDK_FN_CLOSE_COMPLETION cb, void *ctx)
{
    if (!ndk_obj_ok(obj, t->type))
        return STATUS_SUCCESS; /* not a live object of this type (a close never fails) */
    return ndk_close((struct ndk_core *)(void *)((char *)obj + t->core_off), cb, ctx);
}

void ndk_core_teardown(struct ndk_core *c)
{
    if (c->type && c->type->teardown)
        c->type->teardown(c);
}

/* No extension interfaces: refused before any argument is read or written. */
NTSTATUS ndk_query_extension(NDK_OBJECT_HEADER *obj, GUID *id, NDK_VERSION version, NDK_EXTENSION_INTERFACE *iface)
{
    (void)obj;
    (void)id;
    (void)version;
    (void)iface;
    return STATUS_NOT_SUPPORTED;
}

void ndk_event_set(struct ndk_event *ev, int kind, void (*fn)(void), void *ctx, NTSTATUS st,
                   NDK_OBJECT_HEADER *obj, struct ndk_core *core)
{
    *ev = (struct ndk_event){.kind = kind, .fn = fn, .ctx = ctx, .status = st, .obj = obj, .core = core};
    if (core)
        ndk_ref(core);
}

struct ndk_event *ndk_event_new(int kind, void (*fn)(void), void *ctx, NTSTATUS st, NDK_OBJECT_HEADER *obj,
                                struct ndk_core *core)
{
    struct ndk_event *ev = calloc(1, sizeof(*ev));
    if (!ev) {
        /* Cannot happen in practice; losing the callback would hang the consumer,
         * so say so loudly. */
        nf_log(NF_LOG_ERROR, "out of memory queueing a callback");
        abort();
    }
    ndk_event_set(ev, kind, fn, ctx, st, obj, core);
    return ev;
}

void ndk_queue_request_cb(struct ndk_adapter *ad, NDK_FN_REQUEST_COMPLETION fn, void *ctx, NTSTATUS st,
                          struct ndk_core *core)
{
    ndk_queue_event(ad, ndk_event_new(EV_REQUEST, (void (*)(void))fn, ctx, st, NULL, core));
}

void ndk_queue_create_cb(struct ndk_adapter *ad, NDK_FN_CREATE_COMPLETION fn, void *ctx, NTSTATUS st,
                         NDK_OBJECT_HEADER *obj, struct ndk_core *core)
{
    ndk_queue_event(ad, ndk_event_new(EV_CREATE, (void (*)(void))fn, ctx, st, obj, core));
}
