/* SPDX-License-Identifier: Apache-2.0 */
/* Fake FTDI bridge on umockdev's ioctl handler (see fake_ftdi.h). The handler runs
 * on umockdev's worker thread; the test thread pushes data and unplugs; a mutex
 * guards the shared state. URB memory is reached through UMockdevIoctlData so
 * changes are synced back to the client when an ioctl completes. */
#include "fake_ftdi.h"

#include <errno.h>
#include <linux/ioctl.h>
#include <linux/usbdevice_fs.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <umockdev.h>
#include <unistd.h>

#define MAX_CTRL 64
#define MAX_PENDING 64
#define LATENCY_US 1000 /* status-only packet when idle this long (the latency timer) */

struct pending {
    UMockdevIoctlData *urb; /* resolved struct usbdevfs_urb (its buffer resolved too) */
    gint64 since;
};

struct fake_ftdi {
    UMockdevTestbed *bed;
    UMockdevIoctlBase *handler;
    char devnode[64];
    uint16_t pid;
    int max_packet;
    uint8_t ep_in, ep_out;

    pthread_mutex_t lock;
    int unplugged, hold_out;
    struct fake_ctrl ctrl[MAX_CTRL];
    size_t n_ctrl;
    int claimed, detached, released, reattached;
    struct pending in[MAX_PENDING];   /* IN URBs waiting for data */
    int n_in, max_in;
    UMockdevIoctlData *done[MAX_PENDING * 2]; /* URBs ready to reap */
    int n_done;
    struct pending held[MAX_PENDING]; /* OUT URBs held (hold_out) */
    int n_held;
    uint8_t *tx; /* chip -> host queue */
    size_t tx_len, tx_cap;
    uint8_t *rx; /* host -> chip record */
    size_t rx_len, rx_cap;
    long status_only, data_packets, out_urbs;
    /* UART pacing (baud > 0): OUT URBs finish when the line has sent their bytes,
     * IN bytes become available as the line delivers them. */
    uint32_t baud;
    gint64 out_line_free; /* when the TX line has sent everything accepted so far */
    gint64 in_tail;       /* when the last byte queued for the host has arrived */
    struct pending paced[MAX_PENDING]; /* OUT URBs on the line, .since = when done */
    int n_paced;

    int relay_fd;
    pthread_t relay_thread;
    int relay_started, relay_stop;
};

static void append(uint8_t **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n)
            c *= 2;
        uint8_t *nb = realloc(*buf, c);
        if (!nb)
            abort();
        *buf = nb;
        *cap = c;
    }
    memcpy(*buf + *len, p, n);
    *len += n;
}

static void push_done(struct fake_ftdi *f, UMockdevIoctlData *urb)
{
    if (f->n_done < (int)(sizeof(f->done) / sizeof(f->done[0])))
        f->done[f->n_done++] = urb;
}

/* Fill an IN URB from the TX queue: packets of max_packet, each starting with the
 * modem and line status bytes; a status-only packet when the queue is empty. */
/* Microseconds the line needs for n bytes (start, 8 data, stop bits). */
static gint64 line_us(const struct fake_ftdi *f, size_t n)
{
    return (gint64)((double)n * 10.0 * 1e6 / f->baud);
}

/* Bytes of the TX queue that have crossed the line by now. */
static size_t in_available(const struct fake_ftdi *f, gint64 now)
{
    if (!f->baud || f->in_tail <= now)
        return f->tx_len;
    size_t on_line = (size_t)((double)(f->in_tail - now) * f->baud / 10e6) + 1;
    return on_line >= f->tx_len ? 0 : f->tx_len - on_line;
}

static void fill_in(struct fake_ftdi *f, struct usbdevfs_urb *urb, size_t avail)
{
    uint8_t *b = urb->buffer;
    int cap = urb->buffer_length, len = 0;
    size_t used = 0;
    do {
        if (len + 2 > cap)
            break;
        b[len++] = 0x01; /* modem status: CTS etc., value irrelevant to the host */
        b[len++] = 0x60; /* line status: THRE | TEMT, no errors */
        size_t room = (size_t)(f->max_packet - 2);
        if (room > (size_t)(cap - len))
            room = (size_t)(cap - len);
        size_t take = avail - used < room ? avail - used : room;
        if (take)
            memcpy(b + len, f->tx + used, take);
        len += (int)take;
        used += take;
        if (take < (size_t)(f->max_packet - 2))
            break; /* a short packet ends the transfer */
    } while (used < avail);
    if (used) {
        memmove(f->tx, f->tx + used, f->tx_len - used);
        f->tx_len -= used;
    }
    if (used == 0)
        f->status_only++;
    else
        f->data_packets++;
    urb->actual_length = len;
    urb->status = 0;
}

/* The chip takes an OUT URB's bytes: record them, pass them to the relay. */
static void take_out(struct fake_ftdi *f, UMockdevIoctlData *ud)
{
    struct usbdevfs_urb *urb = (struct usbdevfs_urb *)ud->data;
    append(&f->rx, &f->rx_len, &f->rx_cap, urb->buffer, (size_t)urb->buffer_length);
    if (f->relay_fd >= 0) {
        const uint8_t *p = urb->buffer;
        size_t n = (size_t)urb->buffer_length;
        while (n > 0) {
            ssize_t w = write(f->relay_fd, p, n);
            if (w <= 0 && errno != EINTR)
                break;
            if (w > 0)
                p += w, n -= (size_t)w;
        }
    }
    urb->actual_length = urb->buffer_length;
    urb->status = 0;
    push_done(f, ud);
}


/* Complete URB addr with -ENOENT if it is in list (n entries) and take it out. */
static int discard_urb(struct fake_ftdi *f, struct pending *list, int *n, gulong addr)
{
    for (int i = 0; i < *n; i++)
        if (list[i].urb->client_addr == addr) {
            ((struct usbdevfs_urb *)list[i].urb->data)->status = -ENOENT;
            ((struct usbdevfs_urb *)list[i].urb->data)->actual_length = 0;
            push_done(f, list[i].urb);
            memmove(list + i, list + i + 1, (size_t)(*n - i - 1) * sizeof(list[0]));
            (*n)--;
            return 1;
        }
    return 0;
}

static gboolean on_ioctl(UMockdevIoctlBase *handler, UMockdevIoctlClient *client, gpointer user)
{
    struct fake_ftdi *f = user;
    (void)handler;
    gulong request = umockdev_ioctl_client_get_request(client);
    UMockdevIoctlData *arg = umockdev_ioctl_client_get_arg(client);
    pthread_mutex_lock(&f->lock);
    int gone = f->unplugged;
    long res = 0;
    int err = 0;

    switch (request) {
    case USBDEVFS_GET_CAPABILITIES: {
        UMockdevIoctlData *d = umockdev_ioctl_data_resolve(arg, 0, sizeof(guint32), NULL);
        *(guint32 *)d->data = USBDEVFS_CAP_BULK_CONTINUATION | USBDEVFS_CAP_NO_PACKET_SIZE_LIM |
                              USBDEVFS_CAP_REAP_AFTER_DISCONNECT | USBDEVFS_CAP_ZERO_PACKET;
        g_object_unref(d);
        break;
    }
    case USBDEVFS_DISCONNECT_CLAIM: {
        UMockdevIoctlData *d = umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_disconnect_claim), NULL);
        const struct usbdevfs_disconnect_claim *dc = (const void *)d->data;
        if (gone) {
            res = -1, err = ENODEV;
        } else {
            f->detached = (int)dc->interface;
            f->claimed = (int)dc->interface;
        }
        g_object_unref(d);
        break;
    }
    case USBDEVFS_CLAIMINTERFACE:
    case USBDEVFS_RELEASEINTERFACE: {
        UMockdevIoctlData *d = umockdev_ioctl_data_resolve(arg, 0, sizeof(unsigned int), NULL);
        unsigned int ifno = *(unsigned int *)d->data;
        g_object_unref(d);
        if (gone)
            res = -1, err = ENODEV;
        else if (request == USBDEVFS_CLAIMINTERFACE)
            f->claimed = (int)ifno;
        else
            f->released = (int)ifno;
        break;
    }
    case USBDEVFS_GETDRIVER:
        res = -1, err = gone ? ENODEV : ENODATA; /* no kernel driver bound */
        break;
    case USBDEVFS_IOCTL: { /* DISCONNECT / CONNECT of the kernel driver */
        UMockdevIoctlData *d = umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_ioctl), NULL);
        const struct usbdevfs_ioctl *io = (const void *)d->data;
        if (gone)
            res = -1, err = ENODEV;
        else if (io->ioctl_code == (int)USBDEVFS_CONNECT)
            f->reattached = io->ifno;
        else if (io->ioctl_code == (int)USBDEVFS_DISCONNECT)
            f->detached = io->ifno;
        g_object_unref(d);
        break;
    }
    case USBDEVFS_SUBMITURB: {
        UMockdevIoctlData *ud = umockdev_ioctl_data_resolve(arg, 0, sizeof(struct usbdevfs_urb), NULL);
        struct usbdevfs_urb *urb = (struct usbdevfs_urb *)ud->data;
        UMockdevIoctlData *bd = umockdev_ioctl_data_resolve(ud, G_STRUCT_OFFSET(struct usbdevfs_urb, buffer),
                                                            (gsize)urb->buffer_length, NULL);
        if (gone) {
            res = -1, err = ENODEV;
            g_object_unref(bd);
            g_object_unref(ud);
            break;
        }
        if (urb->type == USBDEVFS_URB_TYPE_CONTROL) {
            const uint8_t *s = bd->data;
            if (f->n_ctrl < MAX_CTRL) {
                struct fake_ctrl c = {s[0], s[1], (uint16_t)(s[2] | s[3] << 8), (uint16_t)(s[4] | s[5] << 8),
                                      (uint16_t)(s[6] | s[7] << 8)};
                f->ctrl[f->n_ctrl++] = c;
            }
            urb->actual_length = 0;
            urb->status = 0;
            push_done(f, ud);
        } else if (urb->type == USBDEVFS_URB_TYPE_BULK && urb->endpoint == f->ep_out) {
            f->out_urbs++;
            if (f->hold_out && f->n_held < MAX_PENDING) {
                f->held[f->n_held].urb = ud;
                f->held[f->n_held++].since = g_get_monotonic_time();
            } else if (f->baud && f->n_paced < MAX_PENDING) {
                gint64 start = MAX(g_get_monotonic_time(), f->out_line_free);
                f->out_line_free = start + line_us(f, (size_t)urb->buffer_length);
                f->paced[f->n_paced].urb = ud;
                f->paced[f->n_paced++].since = f->out_line_free;
            } else {
                take_out(f, ud);
            }
        } else if (urb->type == USBDEVFS_URB_TYPE_BULK && urb->endpoint == f->ep_in && f->n_in < MAX_PENDING) {
            f->in[f->n_in].urb = ud;
            f->in[f->n_in++].since = g_get_monotonic_time();
            if (f->n_in > f->max_in)
                f->max_in = f->n_in;
        } else {
            res = -1, err = EINVAL;
            g_object_unref(ud);
        }
        g_object_unref(bd); /* ud keeps the resolved buffer alive */
        break;
    }
    case USBDEVFS_REAPURB:
    case USBDEVFS_REAPURBNDELAY: {
        UMockdevIoctlData *urb = NULL;
        gint64 now = g_get_monotonic_time();
        while (f->n_paced > 0 && f->paced[0].since <= now && !gone) {
            take_out(f, f->paced[0].urb);
            memmove(f->paced, f->paced + 1, (size_t)(f->n_paced - 1) * sizeof(f->paced[0]));
            f->n_paced--;
        }
        size_t avail = in_available(f, now);
        if (f->n_done > 0) {
            urb = f->done[0];
            memmove(f->done, f->done + 1, (size_t)(f->n_done - 1) * sizeof(f->done[0]));
            f->n_done--;
        } else if (f->n_in > 0 && !gone && (avail > 0 || now - f->in[0].since >= LATENCY_US)) {
            urb = f->in[0].urb;
            memmove(f->in, f->in + 1, (size_t)(f->n_in - 1) * sizeof(f->in[0]));
            f->n_in--;
            fill_in(f, (struct usbdevfs_urb *)urb->data, avail);
        }
        if (!urb) {
            res = -1, err = gone ? ENODEV : EAGAIN;
            break;
        }
        UMockdevIoctlData *p = umockdev_ioctl_data_resolve(arg, 0, sizeof(gpointer), NULL);
        umockdev_ioctl_data_set_ptr(p, 0, urb);
        g_object_unref(p);
        g_object_unref(urb);
        break;
    }
    case USBDEVFS_DISCARDURB: {
        gulong addr = (gulong) * (void **)arg->data;
        int found = 0;
        struct pending *lists[] = {f->in, f->paced, f->held};
        int *lens[] = {&f->n_in, &f->n_paced, &f->n_held};
        for (int k = 0; k < 3 && !found; k++)
            found = discard_urb(f, lists[k], lens[k], addr);
        if (!found)
            res = -1, err = EINVAL;
        break;
    }
    default:
        fprintf(stderr, "fake_ftdi: unhandled ioctl 0x%lx\n", (unsigned long)request);
        res = -1, err = ENOTTY;
        break;
    }
    pthread_mutex_unlock(&f->lock);
    umockdev_ioctl_client_complete(client, res, err);
    return TRUE;
}

static const char *descriptors(uint16_t vid, uint16_t pid, int *max_packet, uint8_t *ep_in, uint8_t *ep_out,
                               char *buf, size_t cap)
{
    if (vid == 0x0403 && pid == 0x6010) {
        *max_packet = 512, *ep_in = 0x83, *ep_out = 0x04;
        snprintf(buf, cap, "1201000200000040030410600007010203010902370002010080fa"
                           "0904000002ffffff020705810200020007050202000200"
                           "0904010002ffffff020705830200020007050402000200");
        return "480";
    }
    *max_packet = 64, *ep_in = 0x81, *ep_out = 0x02;
    snprintf(buf, cap,
             "12010002000000%02x%02x%02x%02x%02x00100102030109022000010100a02d"
             "0904000002ffffff02"
             "07058102400000"
             "07050202400000",
             0x40, vid & 0xFF, vid >> 8, pid & 0xFF, pid >> 8);
    return "12";
}

/* umockdev_in_mock_environment() answers 0 here even under the wrapper, so look
 * for the preload library the way the wrapper installs it. */
static int mock_active(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "libumockdev-preload.so") != NULL;
}

static struct fake_ftdi *alloc_bed(void)
{
    struct fake_ftdi *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    pthread_mutex_init(&f->lock, NULL);
    f->claimed = f->detached = f->released = f->reattached = -1;
    f->relay_fd = -1;
    f->bed = umockdev_testbed_new();
    return f;
}

struct fake_ftdi *fake_ftdi_new_empty(void)
{
    if (!mock_active())
        return NULL;
    return alloc_bed();
}

struct fake_ftdi *fake_ftdi_new(uint16_t vid, uint16_t pid, int bus, int addr)
{
    if (!mock_active())
        return NULL;
    struct fake_ftdi *f = alloc_bed();
    if (!f)
        return NULL;
    f->pid = pid;
    char desc[512];
    const char *speed = descriptors(vid, pid, &f->max_packet, &f->ep_in, &f->ep_out, desc, sizeof(desc));
    snprintf(f->devnode, sizeof(f->devnode), "/dev/bus/usb/%03d/%03d", bus, addr);
    f->handler = umockdev_ioctl_base_new();
    g_signal_connect(f->handler, "handle-ioctl", G_CALLBACK(on_ioctl), f);
    if (!umockdev_testbed_attach_ioctl(f->bed, f->devnode, f->handler, NULL)) {
        fake_ftdi_free(f);
        return NULL;
    }
    char *text = g_strdup_printf("P: /devices/pci0000:00/0000:00:14.0/usb%d/%d-%d\n"
                                 "N: bus/usb/%03d/%03d\n"
                                 "E: SUBSYSTEM=usb\n"
                                 "E: DEVTYPE=usb_device\n"
                                 "E: DRIVER=usb\n"
                                 "E: BUSNUM=%03d\n"
                                 "E: DEVNUM=%03d\n"
                                 "E: DEVNAME=/dev/bus/usb/%03d/%03d\n"
                                 "E: PRODUCT=%x/%x/1000\n"
                                 "A: busnum=%d\\n\n"
                                 "A: devnum=%d\\n\n"
                                 "A: bConfigurationValue=1\\n\n"
                                 "A: speed=%s\\n\n"
                                 "H: descriptors=%s\n",
                                 bus, bus, addr, bus, addr, bus, addr, bus, addr, vid, pid, bus, addr, speed, desc);
    gboolean ok = umockdev_testbed_add_from_string(f->bed, text, NULL);
    g_free(text);
    if (!ok) {
        fake_ftdi_free(f);
        return NULL;
    }
    return f;
}

void fake_ftdi_free(struct fake_ftdi *f)
{
    if (!f)
        return;
    if (f->relay_started) {
        pthread_mutex_lock(&f->lock);
        f->relay_stop = 1;
        pthread_mutex_unlock(&f->lock);
        pthread_join(f->relay_thread, NULL);
    }
    if (f->handler && f->devnode[0])
        umockdev_testbed_detach_ioctl(f->bed, f->devnode, NULL);
    for (int i = 0; i < f->n_in; i++)
        g_object_unref(f->in[i].urb);
    for (int i = 0; i < f->n_held; i++)
        g_object_unref(f->held[i].urb);
    for (int i = 0; i < f->n_paced; i++)
        g_object_unref(f->paced[i].urb);
    for (int i = 0; i < f->n_done; i++)
        g_object_unref(f->done[i]);
    if (f->handler)
        g_object_unref(f->handler);
    g_object_unref(f->bed);
    free(f->tx);
    free(f->rx);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

int fake_ftdi_deny_access(struct fake_ftdi *f)
{
    char *root = umockdev_testbed_get_root_dir(f->bed);
    char *path = g_strconcat(root, f->devnode, NULL);
    int r = chmod(path, 0);
    g_free(path);
    g_free(root);
    return r;
}

void fake_ftdi_push(struct fake_ftdi *f, const void *buf, size_t len)
{
    pthread_mutex_lock(&f->lock);
    append(&f->tx, &f->tx_len, &f->tx_cap, buf, len);
    if (f->baud)
        f->in_tail = MAX(g_get_monotonic_time(), f->in_tail) + line_us(f, len);
    pthread_mutex_unlock(&f->lock);
}

size_t fake_ftdi_received(struct fake_ftdi *f, size_t off, void *buf, size_t cap)
{
    pthread_mutex_lock(&f->lock);
    size_t n = 0;
    if (off < f->rx_len) {
        n = f->rx_len - off < cap ? f->rx_len - off : cap;
        memcpy(buf, f->rx + off, n);
    }
    pthread_mutex_unlock(&f->lock);
    return n;
}

void fake_ftdi_hold_out(struct fake_ftdi *f, int hold)
{
    pthread_mutex_lock(&f->lock);
    f->hold_out = hold;
    if (!hold && !f->unplugged) {
        for (int i = 0; i < f->n_held; i++)
            take_out(f, f->held[i].urb);
        f->n_held = 0;
    }
    pthread_mutex_unlock(&f->lock);
}

void fake_ftdi_unplug(struct fake_ftdi *f)
{
    pthread_mutex_lock(&f->lock);
    f->unplugged = 1;
    /* What the kernel does on disconnect: every URB in flight ends with ENODEV
     * (libusb maps it to LIBUSB_TRANSFER_NO_DEVICE). */
    struct pending *lists[] = {f->in, f->held, f->paced};
    int *lens[] = {&f->n_in, &f->n_held, &f->n_paced};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < *lens[k]; i++) {
            struct usbdevfs_urb *u = (struct usbdevfs_urb *)lists[k][i].urb->data;
            u->status = -ENODEV;
            u->actual_length = 0;
            push_done(f, lists[k][i].urb);
        }
        *lens[k] = 0;
    }
    pthread_mutex_unlock(&f->lock);
}

void fake_ftdi_pace(struct fake_ftdi *f, uint32_t baud)
{
    pthread_mutex_lock(&f->lock);
    f->baud = baud;
    pthread_mutex_unlock(&f->lock);
}

size_t fake_ftdi_controls(struct fake_ftdi *f, struct fake_ctrl *out, size_t cap)
{
    pthread_mutex_lock(&f->lock);
    size_t n = f->n_ctrl < cap ? f->n_ctrl : cap;
    memcpy(out, f->ctrl, n * sizeof(*out));
    pthread_mutex_unlock(&f->lock);
    return n;
}

#define GETTER(type, name, field)                                                                                      \
    type fake_ftdi_##name(struct fake_ftdi *f)                                                                         \
    {                                                                                                                  \
        pthread_mutex_lock(&f->lock);                                                                                  \
        type v = (type)f->field;                                                                                       \
        pthread_mutex_unlock(&f->lock);                                                                                \
        return v;                                                                                                      \
    }
GETTER(int, claimed, claimed)
GETTER(int, detached, detached)
GETTER(int, released, released)
GETTER(int, reattached, reattached)
GETTER(int, max_in_flight, max_in)
GETTER(int, in_pending, n_in)
GETTER(long, status_only, status_only)
GETTER(long, in_packets_with_data, data_packets)
GETTER(long, out_urbs, out_urbs)

static int relay_stopping(struct fake_ftdi *f)
{
    pthread_mutex_lock(&f->lock);
    int stop = f->relay_stop;
    pthread_mutex_unlock(&f->lock);
    return stop;
}

static void *relay_main(void *arg)
{
    struct fake_ftdi *f = arg;
    uint8_t buf[4096];
    while (!relay_stopping(f)) {
        struct pollfd pfd = {.fd = f->relay_fd, .events = POLLIN};
        if (poll(&pfd, 1, 20) <= 0)
            continue;
        ssize_t n = read(f->relay_fd, buf, sizeof(buf));
        if (n <= 0)
            break; /* the simulated board went away */
        fake_ftdi_push(f, buf, (size_t)n);
    }
    return NULL;
}

int fake_ftdi_relay(struct fake_ftdi *f, int fd)
{
    pthread_mutex_lock(&f->lock);
    f->relay_fd = fd;
    pthread_mutex_unlock(&f->lock);
    if (pthread_create(&f->relay_thread, NULL, relay_main, f) != 0)
        return -1;
    f->relay_started = 1;
    return 0;
}
