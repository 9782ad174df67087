/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga neigh: the network port's ARP cache through NdkFpgaQueryNeighbors (NET_NEIGH
 * on the link), in the manner of `ip neigh`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *state_name(ULONG state)
{
    switch (state) {
    case NDKFPGA_NEIGHBOR_INCOMPLETE:
        return "incomplete";
    case NDKFPGA_NEIGHBOR_REACHABLE:
        return "reachable";
    case NDKFPGA_NEIGHBOR_FAILED:
        return "failed";
    default:
        return "unknown";
    }
}

int cmd_neigh(struct cli *c, int argc, char **argv)
{
    int code = cli_parse_options(c, argc, argv, 1, NULL, 0);
    if (code >= 0)
        return code;
    NDK_ADAPTER *ad = cli_open(c, &code);
    if (!ad)
        return code;
    /* The adapter's cache is small: one call with room for more than it holds. */
    NDKFPGA_NEIGHBOR n[64];
    ULONG count = sizeof(n) / sizeof(n[0]);
    NTSTATUS st = NdkFpgaQueryNeighbors(ad, n, &count);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(c, ad, "NdkFpgaQueryNeighbors", st);
        NdkFpgaCloseAdapter(ad);
        return code;
    }
    NdkFpgaCloseAdapter(ad);
    if (c->json)
        printf("{\"neighbors\": [");
    else if (count == 0)
        printf("(the ARP cache is empty)\n");
    for (ULONG i = 0; i < count; i++) {
        char ip[16], mac[18];
        snprintf(ip, sizeof(ip), "%u.%u.%u.%u", n[i].Ipv4[0], n[i].Ipv4[1], n[i].Ipv4[2], n[i].Ipv4[3]);
        snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", n[i].Mac[0], n[i].Mac[1], n[i].Mac[2],
                 n[i].Mac[3], n[i].Mac[4], n[i].Mac[5]);
        int known = n[i].State == NDKFPGA_NEIGHBOR_REACHABLE;
        if (c->json) {
            printf("%s{\"ipv4\": \"%s\", \"mac\": ", i ? ", " : "", ip);
            if (known)
                printf("\"%s\"", mac);
            else
                printf("null");
            printf(", \"state\": \"%s\", \"tries\": %lu, \"age_ms\": %lu}", state_name(n[i].State),
                   (unsigned long)n[i].Tries, (unsigned long)n[i].AgeMs);
        } else {
            printf("%-15s lladdr %-17s %-10s age %lu ms%s", ip, known ? mac : "-", state_name(n[i].State),
                   (unsigned long)n[i].AgeMs, n[i].State == NDKFPGA_NEIGHBOR_REACHABLE ? "" : ", ");
            if (n[i].State != NDKFPGA_NEIGHBOR_REACHABLE)
                printf("%lu request%s sent", (unsigned long)n[i].Tries, n[i].Tries == 1 ? "" : "s");
            printf("\n");
        }
    }
    if (c->json)
        printf("]}\n");
    return CLI_EXIT_OK;
}
