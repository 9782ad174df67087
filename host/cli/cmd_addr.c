/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga addr: the network port's MAC and IPv4 address, read or set through
 * NdkFpgaPortAddress (NET_CONFIG on the link). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_addr(struct cli *c, int argc, char **argv)
{
    /* The address and --mac first; the rest (common options, DEVICE) as every command. */
    NDKFPGA_PORT_ADDRESS want;
    memset(&want, 0, sizeof(want));
    ULONG flags = 0;
    char **rest = calloc((size_t)argc + 1, sizeof(*rest));
    if (!rest)
        return cli_report(c, CLI_EXIT_FAILED, "out of memory");
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *mac = !strcmp(a, "--mac") ? (i + 1 < argc ? argv[++i] : "") : !strncmp(a, "--mac=", 6) ? a + 6 : NULL;
        if (mac) {
            if (NdkFpgaParsePortAddress(mac, NDKFPGA_PORT_SET_MAC, &want) != STATUS_SUCCESS) {
                free(rest);
                return cli_report(c, CLI_EXIT_USAGE, "--mac takes a unicast XX:XX:XX:XX:XX:XX, not \"%s\"", mac);
            }
            flags |= NDKFPGA_PORT_SET_MAC;
        } else if (i > 0 && isdigit((unsigned char)a[0])) {
            /* No device name starts with a digit: this is the address. */
            if ((flags & NDKFPGA_PORT_SET_IPV4) ||
                NdkFpgaParsePortAddress(a, NDKFPGA_PORT_SET_IPV4, &want) != STATUS_SUCCESS) {
                free(rest);
                return cli_report(c, CLI_EXIT_USAGE, "the address is one A.B.C.D[/N] with N 8..32, not \"%s\"", a);
            }
            flags |= NDKFPGA_PORT_SET_IPV4;
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
    NDKFPGA_PORT_ADDRESS got = want;
    NTSTATUS st = NdkFpgaPortAddress(ad, flags, &got);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(c, ad, flags ? "NdkFpgaPortAddress (set)" : "NdkFpgaPortAddress", st);
        NdkFpgaCloseAdapter(ad);
        return code;
    }
    NdkFpgaCloseAdapter(ad);
    char mac[18], ip[16];
    snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", got.Mac[0], got.Mac[1], got.Mac[2], got.Mac[3],
             got.Mac[4], got.Mac[5]);
    snprintf(ip, sizeof(ip), "%u.%u.%u.%u", got.Ipv4[0], got.Ipv4[1], got.Ipv4[2], got.Ipv4[3]);
    if (c->json) {
        printf("{\"mac\": \"%s\", \"ipv4\": ", mac);
        if (got.PrefixLength)
            printf("\"%s\", \"prefix_length\": %lu}\n", ip, (unsigned long)got.PrefixLength);
        else
            printf("null, \"prefix_length\": null}\n");
        return CLI_EXIT_OK;
    }
    printf("mac  %s\n", mac);
    if (got.PrefixLength)
        printf("inet %s/%lu\n", ip, (unsigned long)got.PrefixLength);
    else
        printf("inet (not set)\n");
    return CLI_EXIT_OK;
}
