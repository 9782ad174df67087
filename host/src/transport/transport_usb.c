/* SPDX-License-Identifier: Apache-2.0 */
/* The board over libusb: the FTDI bridge (FT231X on the ULX3S, FT2232H channel B
 * on the ECP5-EVN) set up by libftdi1's requests as a plain 8N1 UART at the
 * gateware's baud, then driven with libusb's asynchronous bulk transfers, several
 * in flight each way so the line never idles while bytes are queued (libftdi1's
 * own reads and writes wait on the calling thread, one transfer at a time).
 *
 * Threads: an event thread runs libusb's event loop; the transfer callbacks run on
 * it. IN callbacks strip the FTDI status bytes into a receive ring and signal
 * data_fd; read() (the link thread) polls data_fd and wake_fd, so wake() is one
 * write() and async-signal-safe. write() copies into a free OUT transfer and
 * submits it; while all are in flight it stages the bytes, and the next OUT
 * transfer to come back carries them; it waits (bounded) only when the stage is
 * full too. An unplugged device shows
 * as LIBUSB_TRANSFER_NO_DEVICE or a submit failing with LIBUSB_ERROR_NO_DEVICE:
 * the transport goes dead, read() returns -1 and write() CONNECTION_RESET. */
#include <errno.h>
#include <ftdi.h>
#include <libusb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/nf_time.h"
#include "nf_transport.h"
#include "transport_board.h"
#include "usb_board.h"

#define N_IN 4                 /* IN transfers kept in flight */
#define N_OUT 4                /* OUT transfers that may be in flight */
#define IN_PACKETS 8           /* max packets per IN transfer */
#define OUT_BYTES 4096         /* bytes per OUT transfer */
#define RX_RING_PER_IN 4       /* ring holds this many full IN transfers per IN slot */
#define CTRL_TIMEOUT_MS 1000
#define STATUS_BYTES 2u        /* modem and line status open every IN packet */
#define LINE_ERRORS 0x1Eu      /* line status: overrun, parity, framing, break */
#define LATENCY_MS 1           /* the bridge flushes a partial IN packet after this */
#define EVENT_SLICE_US 50000   /* event loop wakes at least this often to notice close */
#define CLOSE_DRAIN_MS 2000    /* cancelled transfers must come back within this */
#define UDEV_RULE_HINT                                                                                          \
    "install the udev rule: sudo cp tools/99-ndkfpga.rules /etc/udev/rules.d/ && sudo udevadm control --reload " \
    "&& replug the board"

struct usb_transport;

struct xfer {
    struct libusb_transfer *t;
    struct usb_transport *u;
    int busy;   /* submitted, callback not yet run */
    int parked; /* IN only: waiting for room in the ring before resubmission */
};

struct usb_transport {
    struct nf_transport base;
    char name[64];
    const struct nf_usb_chip *chip;
    struct ftdi_context *ftdi; /* owns ctx and, once opened, dev */
    libusb_context *ctx;
    libusb_device_handle *dev;
    int claimed;
    uint8_t ep_in, ep_out; /* bulk endpoints of the chip's channel */
    uint16_t max_packet;   /* IN packet size: each one starts with the status bytes */
    pthread_t thread;
    int thread_started;
    int data_fd; /* eventfd: new receive data or the device died */
    int wake_fd; /* eventfd: nf_transport_wake() */

    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* an OUT slot freed, a transfer retired, death */
    int stop;             /* closing: callbacks resubmit nothing */
    int dead;             /* the device is gone */
    int in_flight;        /* submitted transfers whose callback has not run */
    uint8_t *rx;          /* receive ring of stripped payload */
    size_t rx_cap, rx_head, rx_len;
    size_t rx_reserved; /* payload room promised to IN transfers in flight */
    unsigned line_errors;
    /* Bytes written while every OUT transfer was in flight: they leave together in
     * the next transfer that comes back, so small frames do not each wait for a
     * transfer of their own. */
    uint8_t stage[OUT_BYTES];
    size_t stage_len;
    struct xfer in[N_IN];
    struct xfer out[N_OUT];
};

static void signal_fd(int fd)
{
    uint64_t one = 1;
    /* A full counter still signals; nothing else can go wrong that matters. */
    if (write(fd, &one, sizeof(one)) < 0)
        return;
}

static void drain_fd(int fd)
{
    uint64_t v;
    if (read(fd, &v, sizeof(v)) < 0)
        return;
}

/* Bytes of one IN transfer (status bytes included). */
static size_t in_bytes(const struct usb_transport *u)
{
    return (size_t)u->max_packet * IN_PACKETS;
}

/* Move the payload of an IN transfer of len bytes to the start of buf, dropping the
 * status bytes that open every max_packet chunk; *errors gets the line-status error
 * bits seen. Returns the payload length (0 for status-only packets). */
static size_t strip_status(uint8_t *buf, size_t len, size_t max_packet, uint8_t *errors)
{
    size_t n = 0;
    *errors = 0;
    for (size_t off = 0; off + STATUS_BYTES <= len; off += max_packet) {
        size_t chunk = len - off < max_packet ? len - off : max_packet;
        *errors |= (uint8_t)(buf[off + 1] & LINE_ERRORS);
        memmove(buf + n, buf + off + STATUS_BYTES, chunk - STATUS_BYTES);
        n += chunk - STATUS_BYTES;
    }
    return n;
}

static void mark_dead_locked(struct usb_transport *u)
{
    if (!u->dead) {
        u->dead = 1;
        signal_fd(u->data_fd);
        pthread_cond_broadcast(&u->cond);
    }
}

/* May an IN transfer go out now? Only when its whole payload fits in the ring. */
static int in_room_locked(const struct usb_transport *u)
{
    return u->rx_len + u->rx_reserved + in_bytes(u) <= u->rx_cap;
}

/* Submit IN transfer x (caller has marked it busy and reserved its room). */
static void submit_in(struct xfer *x)
{
    struct usb_transport *u = x->u;
    int r = libusb_submit_transfer(x->t);
    if (r == 0)
        return;
    pthread_mutex_lock(&u->lock);
    x->busy = 0;
    u->in_flight--;
    u->rx_reserved -= in_bytes(u);
    if (!u->stop)
        mark_dead_locked(u); /* cannot read any more: the link is useless */
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
}

/* Claim an idle IN slot for submission if the ring has room; returns it or NULL. */
static struct xfer *take_parked_locked(struct usb_transport *u)
{
    if (u->stop || u->dead)
        return NULL;
    for (int i = 0; i < N_IN; i++) {
        struct xfer *x = &u->in[i];
        if (x->parked && in_room_locked(u)) {
            x->parked = 0;
            x->busy = 1;
            u->in_flight++;
            u->rx_reserved += in_bytes(u);
            return x;
        }
    }
    return NULL;
}

static void LIBUSB_CALL in_done(struct libusb_transfer *t)
{
    struct xfer *x = t->user_data;
    struct usb_transport *u = x->u;
    uint8_t errors = 0;
    size_t n = 0;
    if (t->status == LIBUSB_TRANSFER_COMPLETED)
        n = strip_status(t->buffer, (size_t)t->actual_length, u->max_packet, &errors);

    pthread_mutex_lock(&u->lock);
    x->busy = 0;
    u->in_flight--;
    u->rx_reserved -= in_bytes(u);
    if (errors)
        u->line_errors++; /* the link's CRC throws the damaged frame away */
    if (n > 0) {
        /* Room was reserved before submission, so this always fits. */
        size_t tail = (u->rx_head + u->rx_len) % u->rx_cap;
        size_t first = n < u->rx_cap - tail ? n : u->rx_cap - tail;
        memcpy(u->rx + tail, t->buffer, first);
        memcpy(u->rx, t->buffer + first, n - first);
        u->rx_len += n;
        signal_fd(u->data_fd);
    }
    int resubmit = 0;
    switch (t->status) {
    case LIBUSB_TRANSFER_COMPLETED:
    case LIBUSB_TRANSFER_TIMED_OUT:
        resubmit = 1;
        break;
    case LIBUSB_TRANSFER_CANCELLED:
        break;
    default: /* NO_DEVICE, ERROR, STALL, OVERFLOW: the board is gone or broken */
        if (!u->stop)
            mark_dead_locked(u);
        break;
    }
    if (resubmit && !u->stop && !u->dead) {
        if (in_room_locked(u)) {
            x->busy = 1;
            u->in_flight++;
            u->rx_reserved += in_bytes(u);
        } else {
            x->parked = 1; /* read() resubmits it once the consumer made room */
            resubmit = 0;
        }
    } else {
        resubmit = 0;
    }
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
    if (resubmit)
        submit_in(x);
}

/* Submit OUT transfer x carrying n bytes of its buffer. Called with the lock held
 * so transfers go out in the order their bytes were written (libusb takes only
 * its own internal locks here, never ours). 0 or -1 (the transport is dead). */
static int submit_out_locked(struct usb_transport *u, struct xfer *x, size_t n)
{
    x->t->length = (int)n;
    x->busy = 1;
    u->in_flight++;
    if (libusb_submit_transfer(x->t) == 0)
        return 0;
    x->busy = 0;
    u->in_flight--;
    mark_dead_locked(u);
    return -1;
}

static struct xfer *free_out_locked(struct usb_transport *u)
{
    for (int i = 0; i < N_OUT; i++)
        if (!u->out[i].busy)
            return &u->out[i];
    return NULL;
}

/* Send the staged bytes in x (a free OUT transfer); lock held. */
static int flush_stage_locked(struct usb_transport *u, struct xfer *x)
{
    size_t n = u->stage_len;
    memcpy(x->t->buffer, u->stage, n);
    u->stage_len = 0;
    return submit_out_locked(u, x, n);
}

static void LIBUSB_CALL out_done(struct libusb_transfer *t)
{
    struct xfer *x = t->user_data;
    struct usb_transport *u = x->u;
    pthread_mutex_lock(&u->lock);
    x->busy = 0;
    u->in_flight--;
    if (t->status != LIBUSB_TRANSFER_COMPLETED && t->status != LIBUSB_TRANSFER_CANCELLED && !u->stop)
        mark_dead_locked(u);
    if (u->stage_len > 0 && !u->stop && !u->dead)
        flush_stage_locked(u, x);
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
}

static void *event_thread(void *arg)
{
    struct usb_transport *u = arg;
    for (;;) {
        pthread_mutex_lock(&u->lock);
        int done = u->stop && u->in_flight == 0;
        pthread_mutex_unlock(&u->lock);
        if (done)
            break;
        struct timeval tv = {0, EVENT_SLICE_US};
        int r = libusb_handle_events_timeout_completed(u->ctx, &tv, NULL);
        if (r < 0 && r != LIBUSB_ERROR_INTERRUPTED) {
            pthread_mutex_lock(&u->lock);
            if (!u->stop)
                mark_dead_locked(u);
            int give_up = u->stop;
            pthread_mutex_unlock(&u->lock);
            if (give_up)
                break;
            struct timespec ts = {0, EVENT_SLICE_US * 1000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static void deadline_after(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static int ms_until(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (deadline->tv_sec - now.tv_sec) * 1000L + (deadline->tv_nsec - now.tv_nsec) / 1000000L;
    return ms < 0 ? 0 : (int)ms;
}

static NTSTATUS usb_write(struct nf_transport *t, const void *buf, size_t len, int timeout_ms)
{
    struct usb_transport *u = (struct usb_transport *)t;
    const uint8_t *p = buf;
    struct timespec deadline;
    if (timeout_ms >= 0)
        deadline_after(&deadline, timeout_ms);
    pthread_mutex_lock(&u->lock);
    while (len > 0) {
        if (u->dead || u->stop) {
            pthread_mutex_unlock(&u->lock);
            return STATUS_CONNECTION_RESET;
        }
        struct xfer *x = free_out_locked(u);
        if (x && u->stage_len > 0) {
            /* Older staged bytes go first. */
            if (flush_stage_locked(u, x) != 0)
                continue; /* dead now */
            x = free_out_locked(u);
        }
        if (x) {
            size_t n = len < OUT_BYTES ? len : OUT_BYTES;
            memcpy(x->t->buffer, p, n);
            if (submit_out_locked(u, x, n) != 0)
                continue;
            p += n;
            len -= n;
            continue;
        }
        if (u->stage_len < OUT_BYTES) {
            size_t n = len < OUT_BYTES - u->stage_len ? len : OUT_BYTES - u->stage_len;
            memcpy(u->stage + u->stage_len, p, n);
            u->stage_len += n;
            p += n;
            len -= n;
            continue;
        }
        /* Every transfer in flight and the stage full: the chip is not draining. */
        if (timeout_ms < 0) {
            pthread_cond_wait(&u->cond, &u->lock);
        } else if (pthread_cond_timedwait(&u->cond, &u->lock, &deadline) == ETIMEDOUT) {
            pthread_mutex_unlock(&u->lock);
            return STATUS_IO_TIMEOUT;
        }
    }
    pthread_mutex_unlock(&u->lock);
    return STATUS_SUCCESS;
}

static ssize_t usb_read(struct nf_transport *t, void *buf, size_t cap, int timeout_ms)
{
    struct usb_transport *u = (struct usb_transport *)t;
    struct timespec deadline;
    if (timeout_ms > 0)
        deadline_after(&deadline, timeout_ms);
    for (;;) {
        pthread_mutex_lock(&u->lock);
        if (u->rx_len > 0 && cap > 0) {
            size_t n = cap < u->rx_len ? cap : u->rx_len;
            size_t first = n < u->rx_cap - u->rx_head ? n : u->rx_cap - u->rx_head;
            memcpy(buf, u->rx + u->rx_head, first);
            memcpy((uint8_t *)buf + first, u->rx, n - first);
            u->rx_head = (u->rx_head + n) % u->rx_cap;
            u->rx_len -= n;
            struct xfer *resubmit[N_IN];
            int k = 0;
            struct xfer *x;
            while (k < N_IN && (x = take_parked_locked(u)) != NULL)
                resubmit[k++] = x;
            pthread_mutex_unlock(&u->lock);
            for (int i = 0; i < k; i++)
                submit_in(resubmit[i]);
            return (ssize_t)n;
        }
        int dead = u->dead;
        pthread_mutex_unlock(&u->lock);
        if (dead)
            return -1;
        if (timeout_ms == 0)
            return 0;
        struct pollfd pfd[2] = {{.fd = u->data_fd, .events = POLLIN}, {.fd = u->wake_fd, .events = POLLIN}};
        int r = poll(pfd, 2, timeout_ms < 0 ? -1 : ms_until(&deadline));
        if (r < 0 && errno == EINTR)
            return 0;
        if (r < 0)
            return -1;
        if (pfd[1].revents & POLLIN) {
            drain_fd(u->wake_fd);
            return 0;
        }
        if (pfd[0].revents & POLLIN) {
            drain_fd(u->data_fd);
            continue;
        }
        return 0; /* timeout */
    }
}

static void usb_wake(struct nf_transport *t)
{
    signal_fd(((struct usb_transport *)t)->wake_fd);
}

static void usb_free(struct usb_transport *u)
{
    if (u->thread_started) {
        /* Cancel what is in flight and let the event thread collect it. */
        pthread_mutex_lock(&u->lock);
        u->stop = 1;
        pthread_mutex_unlock(&u->lock);
        for (int i = 0; i < N_IN; i++)
            if (u->in[i].t)
                libusb_cancel_transfer(u->in[i].t); /* NOT_FOUND when idle: fine */
        for (int i = 0; i < N_OUT; i++)
            if (u->out[i].t)
                libusb_cancel_transfer(u->out[i].t);
        struct timespec deadline;
        deadline_after(&deadline, CLOSE_DRAIN_MS);
        pthread_mutex_lock(&u->lock);
        while (u->in_flight > 0)
            if (pthread_cond_timedwait(&u->cond, &u->lock, &deadline) == ETIMEDOUT)
                break;
        int leaked = u->in_flight;
        pthread_mutex_unlock(&u->lock);
        if (leaked > 0) {
            /* A transfer never came back: its memory may still be libusb's, so it
             * and the context are left alone rather than freed under it. */
            nf_set_error(STATUS_IO_TIMEOUT, "%s: %d USB transfers did not finish at close", u->name, leaked);
            pthread_detach(u->thread);
            return;
        }
        pthread_join(u->thread, NULL);
    }
    for (int i = 0; i < N_IN; i++)
        libusb_free_transfer(u->in[i].t); /* frees the buffer too (FREE_BUFFER) */
    for (int i = 0; i < N_OUT; i++)
        libusb_free_transfer(u->out[i].t);
    if (u->claimed)
        libusb_release_interface(u->dev, u->ftdi->interface); /* re-attaches ftdi_sio */
    ftdi_free(u->ftdi); /* closes dev, then ctx */
    if (u->data_fd >= 0)
        close(u->data_fd);
    if (u->wake_fd >= 0)
        close(u->wake_fd);
    pthread_cond_destroy(&u->cond);
    pthread_mutex_destroy(&u->lock);
    free(u->rx);
    free(u);
}

static void usb_close(struct nf_transport *t)
{
    usb_free((struct usb_transport *)t);
}

static const struct nf_transport_ops usb_ops = {
    .write = usb_write,
    .read = usb_read,
    .wake = usb_wake,
    .close = usb_close,
};

/* ---- open ------------------------------------------------------------------ */

static NTSTATUS libusb_status(int r)
{
    switch (r) {
    case LIBUSB_ERROR_ACCESS:
        return STATUS_ACCESS_DENIED;
    case LIBUSB_ERROR_NO_DEVICE:
    case LIBUSB_ERROR_NOT_FOUND:
        return STATUS_DEVICE_NOT_CONNECTED;
    case LIBUSB_ERROR_BUSY:
        return STATUS_INVALID_DEVICE_STATE;
    case LIBUSB_ERROR_NO_MEM:
        return STATUS_INSUFFICIENT_RESOURCES;
    case LIBUSB_ERROR_TIMEOUT:
        return STATUS_IO_TIMEOUT;
    default:
        return STATUS_INTERNAL_ERROR;
    }
}

/* A failed libftdi1 call: its own message, the status for its return code. */
static NTSTATUS ftdi_failed(struct usb_transport *u, NTSTATUS st, const char *what)
{
    return nf_set_error(st, "%s: FTDI %s request failed: %s", u->name, what, ftdi_get_error_string(u->ftdi));
}

/* Plain UART at baud: reset, purge, leave bit-bang mode, 8N1, divisor, no flow
 * control, short latency timer. */
static NTSTATUS ftdi_setup(struct usb_transport *u, uint32_t baud)
{
    const struct nf_usb_chip *c = u->chip;
    if (baud > c->max_baud)
        return nf_set_error(STATUS_INVALID_PARAMETER, "%s: the %s cannot run at %u Bd (max %u)", u->name, c->name,
                            (unsigned)baud, (unsigned)c->max_baud);
    struct ftdi_context *f = u->ftdi;
    if (ftdi_usb_reset(f) < 0)
        return ftdi_failed(u, STATUS_INTERNAL_ERROR, "reset");
    if (ftdi_tcioflush(f) < 0)
        return ftdi_failed(u, STATUS_INTERNAL_ERROR, "purge");
    if (ftdi_set_bitmode(f, 0, BITMODE_RESET) < 0)
        return ftdi_failed(u, STATUS_INTERNAL_ERROR, "leave bit-bang mode");
    if (ftdi_set_line_property(f, BITS_8, STOP_BIT_1, NONE) < 0)
        return ftdi_failed(u, STATUS_INTERNAL_ERROR, "8N1");
    int r = ftdi_set_baudrate(f, (int)baud);
    if (r == -1)
        return nf_set_error(STATUS_INVALID_PARAMETER, "%s: the %s cannot run at %u Bd: %s", u->name, c->name,
                            (unsigned)baud, ftdi_get_error_string(f));
    if (r < 0)
        return ftdi_failed(u, STATUS_INTERNAL_ERROR, "baud");
    if (ftdi_setflowctrl(f, SIO_DISABLE_FLOW_CTRL) < 0)
        return ftdi_failed(u, STATUS_INTERNAL_ERROR, "no flow control");
    if (ftdi_set_latency_timer(f, LATENCY_MS) < 0)
        return ftdi_failed(u, STATUS_INTERNAL_ERROR, "latency timer");
    return STATUS_SUCCESS;
}

/* The endpoint's packet size as the device describes it (64 at full speed, 512 at
 * high speed), from its one configuration; < 0 when it has no such endpoint. */
static int packet_size(libusb_device *dev, uint8_t ep)
{
    struct libusb_config_descriptor *cfg;
    if (libusb_get_config_descriptor(dev, 0, &cfg) != 0)
        return -1;
    int size = -1;
    for (int i = 0; i < cfg->bNumInterfaces; i++)
        for (int a = 0; a < cfg->interface[i].num_altsetting; a++) {
            const struct libusb_interface_descriptor *d = &cfg->interface[i].altsetting[a];
            for (int e = 0; e < d->bNumEndpoints; e++)
                if (d->endpoint[e].bEndpointAddress == ep)
                    size = d->endpoint[e].wMaxPacketSize & 0x7FF;
        }
    libusb_free_config_descriptor(cfg);
    return size;
}

static NTSTATUS alloc_transfers(struct usb_transport *u)
{
    for (int i = 0; i < N_IN + N_OUT; i++) {
        int is_in = i < N_IN;
        struct xfer *x = is_in ? &u->in[i] : &u->out[i - N_IN];
        int size = is_in ? (int)in_bytes(u) : OUT_BYTES;
        x->u = u;
        x->t = libusb_alloc_transfer(0);
        uint8_t *buf = malloc((size_t)size);
        if (!x->t || !buf) {
            free(buf);
            return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory for USB transfers");
        }
        libusb_fill_bulk_transfer(x->t, u->dev, is_in ? u->ep_in : u->ep_out, buf, size,
                                  is_in ? in_done : out_done, x, 0);
        x->t->flags = LIBUSB_TRANSFER_FREE_BUFFER;
    }
    return STATUS_SUCCESS;
}

NTSTATUS nf_transport_open_usb(const char *arg, struct nf_transport **out)
{
    if (!out)
        return nf_set_error(STATUS_INVALID_PARAMETER, "nf_transport_open_usb: out is NULL");
    *out = NULL;
    uint32_t baud_env = nf_board_baud(1);
    if (baud_env == 0)
        return nf_set_error(STATUS_INVALID_PARAMETER, "NDKFPGA_BAUD=\"%s\" is not a baud rate",
                            getenv("NDKFPGA_BAUD"));

    struct usb_transport *u = calloc(1, sizeof(*u));
    if (!u)
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory for a transport");
    u->data_fd = u->wake_fd = -1;
    pthread_mutex_init(&u->lock, NULL);
    nf_cond_init(&u->cond); /* deadlines on CLOCK_MONOTONIC (deadline_after) */
    snprintf(u->name, sizeof(u->name), "usb%s%s", arg ? ":" : "", arg ? arg : "");
    u->base.ops = &usb_ops;
    u->base.name = u->name;

    NTSTATUS st;
    u->ftdi = ftdi_new(); /* and its libusb context, which every call here uses */
    if (!u->ftdi) {
        st = nf_set_error(STATUS_INTERNAL_ERROR, "libftdi1 failed to start (libusb_init)");
        goto fail;
    }
    u->ctx = u->ftdi->usb_ctx;
    libusb_device *device = NULL;
    st = nf_usb_find(u->ctx, arg, &device, &u->chip);
    if (st != STATUS_SUCCESS)
        goto fail;
    int bus = libusb_get_bus_number(device), addr = libusb_get_device_address(device);
    snprintf(u->name, sizeof(u->name), "usb:%03d-%03d", bus, addr);
    /* libftdi1 picks the channel's interface, endpoints and request index. */
    int r = ftdi_set_interface(u->ftdi, u->chip->channel);
    if (r == 0)
        r = libusb_open(device, &u->dev);
    libusb_unref_device(device);
    if (r != 0) {
        u->dev = NULL;
        if (r == LIBUSB_ERROR_ACCESS)
            st = nf_set_error(STATUS_ACCESS_DENIED, "%s (%s, bus %d address %d): permission denied; " UDEV_RULE_HINT,
                              u->name, u->chip->name, bus, addr);
        else
            st = nf_set_error(libusb_status(r), "%s (%s): open failed: %s", u->name, u->chip->name,
                              libusb_error_name(r));
        goto fail;
    }
    /* Opened here, not by ftdi_usb_open_dev, so a refusal keeps libusb's reason. */
    ftdi_set_usbdev(u->ftdi, u->dev);
    u->ftdi->type = u->chip->type;
    u->ftdi->usb_write_timeout = CTRL_TIMEOUT_MS;
    /* libftdi1 names endpoints from the chip's side: its in_ep is the host's OUT. */
    u->ep_out = (uint8_t)u->ftdi->in_ep;
    u->ep_in = (uint8_t)u->ftdi->out_ep;
    r = packet_size(libusb_get_device(u->dev), u->ep_in);
    if (r <= (int)STATUS_BYTES) {
        st = nf_set_error(STATUS_INTERNAL_ERROR, "%s: no usable IN endpoint 0x%02x (%d)", u->name, u->ep_in, r);
        goto fail;
    }
    u->max_packet = (uint16_t)r;
    /* The kernel's ftdi_sio owns the interface as a tty: take it over for the
     * session; releasing it at close gives it back. */
    r = libusb_set_auto_detach_kernel_driver(u->dev, 1);
    if (r != 0 && r != LIBUSB_ERROR_NOT_SUPPORTED) {
        st = nf_set_error(libusb_status(r), "%s: cannot detach the kernel driver: %s", u->name, libusb_error_name(r));
        goto fail;
    }
    r = libusb_claim_interface(u->dev, u->ftdi->interface);
    if (r != 0) {
        if (r == LIBUSB_ERROR_ACCESS)
            st = nf_set_error(STATUS_ACCESS_DENIED, "%s: claiming interface %d: permission denied; " UDEV_RULE_HINT,
                              u->name, u->ftdi->interface);
        else if (r == LIBUSB_ERROR_BUSY)
            st = nf_set_error(STATUS_INVALID_DEVICE_STATE,
                              "%s: interface %d is in use by another program (openFPGALoader? a terminal?)", u->name,
                              u->ftdi->interface);
        else
            st = nf_set_error(libusb_status(r), "%s: claiming interface %d failed: %s", u->name, u->ftdi->interface,
                              libusb_error_name(r));
        goto fail;
    }
    u->claimed = 1;
    uint32_t baud = nf_board_baud(u->chip->max_baud);
    st = ftdi_setup(u, baud);
    if (st != STATUS_SUCCESS)
        goto fail;

    u->rx_cap = in_bytes(u) * N_IN * RX_RING_PER_IN;
    u->rx = malloc(u->rx_cap);
    u->data_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    u->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!u->rx || u->data_fd < 0 || u->wake_fd < 0) {
        st = nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory or file descriptors for %s", u->name);
        goto fail;
    }
    st = alloc_transfers(u);
    if (st != STATUS_SUCCESS)
        goto fail;
    if (pthread_create(&u->thread, NULL, event_thread, u) != 0) {
        st = nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "cannot start the USB event thread");
        goto fail;
    }
    u->thread_started = 1;
    /* Keep every IN transfer in flight from now on. */
    for (int i = 0; i < N_IN; i++) {
        pthread_mutex_lock(&u->lock);
        struct xfer *x = &u->in[i];
        x->busy = 1;
        u->in_flight++;
        u->rx_reserved += in_bytes(u);
        pthread_mutex_unlock(&u->lock);
        submit_in(x);
    }
    pthread_mutex_lock(&u->lock);
    int dead = u->dead;
    pthread_mutex_unlock(&u->lock);
    if (dead) {
        st = nf_set_error(STATUS_DEVICE_NOT_CONNECTED, "%s: the board went away during setup", u->name);
        goto fail;
    }
    *out = &u->base;
    return STATUS_SUCCESS;
fail:
    usb_free(u);
    return st;
}
