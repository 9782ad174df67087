/* SPDX-License-Identifier: Apache-2.0 */
/* Buffer I/O over the udp: transport against nfsim --link-udp (run by
 * tests/conformance/udp_sim.sh, the device in $NDKFPGA_DEVICE): buffers of one link
 * frame and of many, written and read back with every byte checked, and the board's
 * link receiver sees no bad frame (no datagram was lost on the way in). The
 * all-flag buffer makes every frame stuffed to twice its length. TAP output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndkfpga.h"
#include "tap.h"

/* Write then read back len bytes of buffer mdl; fill: 0 random, else the byte itself. */
static void round_trip(NDK_ADAPTER *a, MDL *mdl, uint32_t len, int fill)
{
    uint8_t *src = malloc(len), *dst = calloc(1, len);
    if (!src || !dst) {
        tap_ok(0, "%u bytes: out of memory", len);
        free(src);
        free(dst);
        return;
    }
    for (uint32_t i = 0; i < len; i++)
        src[i] = fill ? (uint8_t)fill : (uint8_t)tap_rnd32();
    NTSTATUS w = NdkFpgaWriteBuffer(a, mdl, 0, src, len);
    NTSTATUS r = w == STATUS_SUCCESS ? NdkFpgaReadBuffer(a, mdl, 0, dst, len) : w;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < len; i++)
        bad += src[i] != dst[i];
    tap_ok(w == STATUS_SUCCESS && r == STATUS_SUCCESS && bad == 0,
           "%u bytes (%s) written and read back: write 0x%08x, read 0x%08x, %u bytes differ (%s)", len,
           fill ? "every byte a flag" : "random", (unsigned)w, (unsigned)r, bad,
           w == STATUS_SUCCESS && r == STATUS_SUCCESS ? "-" : NdkFpgaErrorMessage(a));
    free(src);
    free(dst);
}

int main(void)
{
    const char *dev = getenv("NDKFPGA_DEVICE");
    NDK_ADAPTER *a = NULL;
    if (!dev || strncmp(dev, "udp:", 4) != 0) {
        tap_ok(0, "NDKFPGA_DEVICE is a udp: device (%s)", dev ? dev : "unset");
        return tap_done();
    }
    if (!tap_ok(NdkFpgaOpenAdapter(dev, &a) == STATUS_SUCCESS, "open %s", dev))
        return tap_done();
    MDL *mdl = NULL;
    if (tap_ok(NdkFpgaAllocateBuffer(a, 65536, &mdl) == STATUS_SUCCESS, "a 64 KiB buffer")) {
        round_trip(a, mdl, 4096, 0);
        round_trip(a, mdl, 16384, 0);
        round_trip(a, mdl, 65536, 0);
        round_trip(a, mdl, 65536, 0x7E);
        NdkFpgaFreeBuffer(a, mdl);
    }
    NDKFPGA_STATS s;
    NTSTATUS st = NdkFpgaQueryStats(a, &s);
    tap_ok(st == STATUS_SUCCESS && s.LinkRxBad == 0 && s.LinkRxDrop == 0,
           "the board's link receiver: %u frames, %u bad, %u dropped, %u retransmitted", s.LinkRxOk, s.LinkRxBad,
           s.LinkRxDrop, s.LinkRetransmits);
    NdkFpgaCloseAdapter(a);
    return tap_done();
}
