/* SPDX-License-Identifier: Apache-2.0 */
/* The suite's driver: opens $NDKFPGA_DEVICE, creates the shared objects and runs the
 * sections in one fixed order, so a run prints the same TAP lines; every file reports
 * through conf_ok, so the exit status counts every case. */
#include <stdarg.h>

#include "conformance.h"
#include "tap.h"

int conf_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = tap_vokp(cond, "", fmt, ap);
    va_end(ap);
    return r;
}

int main(void)
{
    const char *dev = getenv("NDKFPGA_DEVICE");
    if (!dev || !*dev)
        dev = "model";
    slow = strncmp(dev, "sim", 3) == 0 || strncmp(dev, "udp:", 4) == 0; /* the Verilator board */
    if (slow)
        conf_timeout_ms = 120000;
    printf("# NDK conformance against \"%s\"\n", dev);
    NTSTATUS st = NdkFpgaOpenAdapter(dev, &ad);
    if (!expect(st, STATUS_SUCCESS, "NdkFpgaOpenAdapter"))
        return tap_done();
    test_adapter_info();
    st = ad->Dispatch->NdkCreateCq(ad, 1024, NULL, NULL, NULL, create_cb, NULL, &cq);
    expect(st, STATUS_SUCCESS, "NdkCreateCq");
    expect(ad->Dispatch->NdkCreatePd(ad, create_cb, NULL, &pd), STATUS_SUCCESS, "NdkCreatePd");
    expect(ad->Dispatch->NdkCreatePd(ad, create_cb, NULL, &pd2), STATUS_SUCCESS, "NdkCreatePd (second)");
    st = ad->Dispatch->NdkCreateListener(ad, on_connect_event, NULL, create_cb, NULL, &listener);
    struct sockaddr_in any;
    memset(&any, 0, sizeof(any));
    any.sin_family = AF_INET;
    any.sin_port = htons(LISTEN_PORT);
    if (st == STATUS_SUCCESS)
        st = listener->Dispatch->NdkListen(listener, (PSOCKADDR)&any, sizeof(any), req_cb, NULL);
    expect(st, STATUS_SUCCESS, "NdkCreateListener + NdkListen");
    if (!cq || !pd || !pd2 || st != STATUS_SUCCESS) {
        NdkFpgaCloseAdapter(ad);
        return tap_done();
    }
    NDK_LISTENER *l2 = NULL;
    ad->Dispatch->NdkCreateListener(ad, on_connect_event, NULL, create_cb, NULL, &l2);
    if (l2) {
        expect(l2->Dispatch->NdkListen(l2, (PSOCKADDR)&any, sizeof(any), req_cb, NULL),
               STATUS_SHARING_VIOLATION, "second listener on the same address and port: SHARING_VIOLATION");
        close_obj(&l2->Header);
    }

    static const struct {
        const char *name;
        void (*fn)(void);
    } sections[] = {
        {"create limits", test_create_limits},   {"registration", test_registration},
        {"unconnected QP", test_unconnected},     {"connections", test_connection_rules},
        {"fast register and data", test_fast_register_rules}, {"refused accesses", test_refusals},
        {"asynchronous contract", test_async},    {"flush", test_flush},
        {"send and receive", test_send_receive}, {"memory windows", test_windows},
    };
    if (!slow) { /* needs a software adapter of its own */
        test_link_death();
        uint64_t tg = now_ms();
        printf("# --- guarantees\n");
        test_guarantees();
        printf("# guarantees: %llu ms\n", (unsigned long long)(now_ms() - tg));
    }
    for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
        uint64_t t0 = now_ms();
        printf("# --- %s\n", sections[i].name);
        sections[i].fn();
        printf("# %s: %llu ms\n", sections[i].name, (unsigned long long)(now_ms() - t0));
    }

    close_obj(&listener->Header);
    close_obj(&pd->Header);
    close_obj(&pd2->Header);
    close_obj(&cq->Header);
    NdkFpgaCloseAdapter(ad);
    conf_ok(conf_violations == 0, "asynchronous contract over %d callbacks: only after STATUS_PENDING, never inside the "
                                  "call, one callback thread%s%s",
            conf_callbacks, conf_violations ? ": " : "", conf_violation_msg);
    return tap_done();
}
