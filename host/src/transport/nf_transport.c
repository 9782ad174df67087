/* SPDX-License-Identifier: Apache-2.0 */
/* Transport dispatch: one table maps a device string's prefix to the transport that
 * opens it ("PREFIX" or "PREFIX:ARG"). Every transport is always linked (the library
 * and every test program link the same sources), so the table is fixed and complete;
 * calls only go down from here: nf_transport.c -> transport_{sim,usb,tty,udp}.c ->
 * transport_fd.c -> nf_error.c. */
#include "nf_transport.h"

#include <stdlib.h>
#include <string.h>

#include "nf_devopts.h"
#include "nf_transport_priv.h"
#include "transport_board.h"

struct transport_kind {
    const char *prefix;
    /* arg: the text after "PREFIX:", or NULL for the bare prefix. */
    NTSTATUS (*open)(const char *arg, struct nf_transport **out);
    /* "PREFIX,OPTS" (a started adapter with a network port), or NULL: no options. */
    NTSTATUS (*open_net)(const struct nf_devopts *o, struct nf_transport **out);
    /* For "auto": is such a device there? NULL: never chosen by "auto". */
    int (*present)(void);
};

static const struct transport_kind kinds[] = {
    {"usb", nf_transport_open_usb, NULL, nf_board_present},
    {"tty", nf_transport_open_tty, NULL, NULL},
    {"sim", nf_transport_open_sim, nf_transport_open_sim_net, NULL},
    {"model", nf_transport_open_model, nf_transport_open_model_net, NULL},
    {"udp", nf_transport_open_udp, NULL, NULL},
};

NTSTATUS nf_transport_open(const char *device, struct nf_transport **out)
{
    if (!out)
        return nf_set_error(STATUS_INVALID_PARAMETER, "nf_transport_open: out is NULL");
    *out = NULL;
    if (!device || strcmp(device, "auto") == 0 || strcmp(device, "") == 0) {
        /* A board when one is plugged in, else the simulator. */
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
            if (kinds[i].present && kinds[i].present())
                return kinds[i].open(NULL, out);
        return nf_transport_open_sim(NULL, out);
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        size_t n = strlen(kinds[i].prefix);
        if (strncmp(device, kinds[i].prefix, n) != 0)
            continue;
        if (device[n] == '\0')
            return kinds[i].open(NULL, out);
        if (device[n] == ':' && device[n + 1] != '\0')
            return kinds[i].open(device + n + 1, out);
        if (device[n] == ',') {
            if (!kinds[i].open_net)
                return nf_set_error(STATUS_INVALID_PARAMETER, "device \"%s\": %s takes no options", device,
                                    kinds[i].prefix);
            struct nf_devopts *o = malloc(sizeof(*o));
            if (!o)
                return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory");
            NTSTATUS st = nf_devopts_parse(device + n + 1, o);
            if (st == STATUS_SUCCESS)
                st = kinds[i].open_net(o, out);
            free(o);
            return st;
        }
    }
    return nf_set_error(STATUS_INVALID_PARAMETER,
                        "unknown device \"%s\" (use sim, sim:SOCKET, sim,net=NAME,ip=A.B.C.D[/N][,...], model, "
                        "model:SOCKET, model,net=..., usb, usb:BUS-ADDR, tty:PATH, udp:HOST[:PORT] or auto)",
                        device);
}
