/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga phy: the network port's PHY through NdkFpgaPhyControl (NET_PHY on the link):
 * its ID, link, speed and duplex, and its loopback on or off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_phy(struct cli *c, int argc, char **argv)
{
    /* "loopback on|off" first; the rest (common options, DEVICE) as every command. */
    ULONG action = NDKFPGA_PHY_QUERY;
    char **rest = calloc((size_t)argc + 1, sizeof(*rest));
    if (!rest)
        return cli_report(c, CLI_EXIT_FAILED, "out of memory");
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "loopback")) {
            const char *v = i + 1 < argc ? argv[++i] : "";
            if (action != NDKFPGA_PHY_QUERY || (strcmp(v, "on") && strcmp(v, "off"))) {
                free(rest);
                return cli_report(c, CLI_EXIT_USAGE, "loopback takes on or off, once, not \"%s\"", v);
            }
            action = !strcmp(v, "on") ? NDKFPGA_PHY_LOOPBACK_ON : NDKFPGA_PHY_LOOPBACK_OFF;
        } else {
            rest[n++] = argv[i];
        }
    }
    int code = cli_parse_options(c, n, rest, 1, NULL, 0);
    free(rest);
    if (code >= 0)
        return code;
    NDK_ADAPTER *ad = cli_open(c, &code);
    if (!ad)
        return code;
    NDKFPGA_PHY_STATUS s;
    NTSTATUS st = NdkFpgaPhyControl(ad, action, &s);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(c, ad, "NdkFpgaPhyControl", st);
        NdkFpgaCloseAdapter(ad);
        return code;
    }
    NdkFpgaCloseAdapter(ad);
    const char *duplex = (s.Flags & NDKFPGA_PHY_FULL_DUPLEX) ? "full" : "half";
    int link = (s.Flags & NDKFPGA_PHY_LINK) != 0, loop = (s.Flags & NDKFPGA_PHY_LOOPBACK) != 0;
    if (c->json) {
        printf("{\"address\": %lu, \"id\": \"0x%08lx\", \"link\": %s, \"speed_mbps\": %lu, \"duplex\": ",
               (unsigned long)s.Address, (unsigned long)s.Id, link ? "true" : "false", (unsigned long)s.SpeedMbps);
        if (s.SpeedMbps)
            printf("\"%s\"", duplex);
        else
            printf("null");
        printf(", \"autoneg\": %s, \"loopback\": %s, \"bmcr\": \"0x%04x\", \"bmsr\": \"0x%04x\"}\n",
               (s.Flags & NDKFPGA_PHY_AUTONEG) ? "true" : "false", loop ? "true" : "false", s.Bmcr, s.Bmsr);
        return CLI_EXIT_OK;
    }
    printf("phy      address %lu, id 0x%08lx (OUI bits 0x%06lx, model 0x%02lx, revision %lu)\n",
           (unsigned long)s.Address, (unsigned long)s.Id, (unsigned long)(s.Id >> 10),
           (unsigned long)(s.Id >> 4 & 0x3F), (unsigned long)(s.Id & 0xF));
    printf("link     %s\n", link ? "up" : "down");
    if (s.SpeedMbps)
        printf("mode     %lu Mb/s %s duplex%s\n", (unsigned long)s.SpeedMbps, duplex,
               (s.Flags & NDKFPGA_PHY_AUTONEG) ? " (auto-negotiated)" : " (forced)");
    else
        printf("mode     (auto-negotiation not complete)\n");
    printf("loopback %s\n", loop ? "on" : "off");
    return CLI_EXIT_OK;
}
