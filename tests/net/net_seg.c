/* SPDX-License-Identifier: Apache-2.0 */
/* Opens adapters with network device strings through the public API, for
 * test_net_seg.sh, which makes the checks:
 *   net_seg addr DEVICE...                 open all, print "MAC IPV4/N" each, close all
 *   net_seg hold READY STOP SECS DEVICE... open all, print them, create READY, close when
 *                                          STOP exists or after SECS seconds
 *   net_seg bad DEVICE                     the open must fail with STATUS_INVALID_PARAMETER:
 *                                          prints "refused: STATUS (message)", exits 0 if so */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ndkfpga.h"

#define MAX_ADAPTERS 8

static int open_all(int n, char **dev, NDK_ADAPTER **a)
{
    for (int i = 0; i < n; i++) {
        NTSTATUS st = NdkFpgaOpenAdapter(dev[i], &a[i]);
        if (st != STATUS_SUCCESS) {
            fprintf(stderr, "net_seg: open %s: %s (%s)\n", dev[i], NdkFpgaStatusName(st), NdkFpgaErrorMessage(NULL));
            while (i-- > 0)
                NdkFpgaCloseAdapter(a[i]);
            return -1;
        }
    }
    for (int i = 0; i < n; i++) {
        NDKFPGA_PORT_ADDRESS p;
        memset(&p, 0, sizeof(p));
        NTSTATUS st = NdkFpgaPortAddress(a[i], 0, &p);
        if (st != STATUS_SUCCESS) {
            fprintf(stderr, "net_seg: NdkFpgaPortAddress %s: %s\n", dev[i], NdkFpgaStatusName(st));
            return -1;
        }
        printf("%02x:%02x:%02x:%02x:%02x:%02x %u.%u.%u.%u/%lu\n", p.Mac[0], p.Mac[1], p.Mac[2], p.Mac[3], p.Mac[4],
               p.Mac[5], p.Ipv4[0], p.Ipv4[1], p.Ipv4[2], p.Ipv4[3], (unsigned long)p.PrefixLength);
    }
    fflush(stdout);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    NDK_ADAPTER *a[MAX_ADAPTERS];
    if (argc == 3 && !strcmp(argv[1], "bad")) {
        NDK_ADAPTER *x = NULL;
        NTSTATUS st = NdkFpgaOpenAdapter(argv[2], &x);
        printf("refused: %s (%s)\n", NdkFpgaStatusName(st), NdkFpgaErrorMessage(NULL));
        if (st == STATUS_SUCCESS)
            NdkFpgaCloseAdapter(x);
        return st == STATUS_INVALID_PARAMETER ? 0 : 1;
    }
    if (argc >= 3 && argc - 2 <= MAX_ADAPTERS && !strcmp(argv[1], "addr")) {
        int n = argc - 2;
        if (open_all(n, argv + 2, a) != 0)
            return 1;
        for (int i = 0; i < n; i++)
            NdkFpgaCloseAdapter(a[i]);
        return 0;
    }
    if (argc >= 6 && argc - 5 <= MAX_ADAPTERS && !strcmp(argv[1], "hold")) {
        int n = argc - 5;
        double secs = atof(argv[4]);
        if (open_all(n, argv + 5, a) != 0)
            return 1;
        FILE *f = fopen(argv[2], "w");
        if (f)
            fclose(f);
        double until = now_s() + secs;
        while (access(argv[3], F_OK) != 0 && now_s() < until)
            usleep(50000);
        for (int i = 0; i < n; i++)
            NdkFpgaCloseAdapter(a[i]);
        return 0;
    }
    fprintf(stderr, "usage: net_seg addr DEVICE... | hold READY STOP SECS DEVICE... | bad DEVICE\n");
    return 2;
}
