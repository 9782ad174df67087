/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper of tests/cli/test_cli.sh: makes the adapter refuse two known work
 * requests through the public API, so `ndkfpga stats` can be checked to count them:
 *   NdkInvalidate of a fast-register MR never registered  -> STATUS_INVALID_DEVICE_STATE
 *   NdkRead through that MR's token                        -> STATUS_ACCESS_VIOLATION,
 *                                                             engine reason NOT_VALID
 * The read goes on the other QP of the loopback pair: the invalidate's error completion
 * broke the first one (NDK: later requests on it complete STATUS_CANCELLED).
 * Usage: cli_refuse DEVICE. Prints what came back; exits 0 when both were refused so. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* common.c names the command's usage; this program has none. */
const struct cli_command *cli_command_find(const char *name)
{
    (void)name;
    return NULL;
}

int main(int argc, char **argv)
{
    struct cli c;
    memset(&c, 0, sizeof(c));
    c.cmd = "refuse";
    c.device = argc > 1 ? argv[1] : "model";
    struct cli_session s;
    int code = cli_session_open(&c, &s, 64, 16);
    if (code)
        return code;
    NTSTATUS st;
    NDK_MR *mr = cli_create_mr(&s, TRUE, &st);
    struct cli_completion w;
    cli_completion_init(&w);
    if (mr)
        st = cli_finish(&w, mr->Dispatch->NdkInitializeFastRegisterMr(mr, 1, TRUE, cli_on_request_done, &w), NULL);
    MDL *buf = NULL;
    if (st == STATUS_SUCCESS)
        st = NdkFpgaAllocateBuffer(s.adapter, PAGE_SIZE, &buf);
    UINT32 privileged = 0;
    if (st == STATUS_SUCCESS)
        s.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(s.pd, &privileged);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(&c, s.adapter, "setup", st);
        cli_session_close(&s);
        return code;
    }
    NDK_QP *qp = s.initiator;
    NDK_RESULT_EX inv, rd;
    memset(&inv, 0, sizeof(inv));
    memset(&rd, 0, sizeof(rd));
    st = qp->Dispatch->NdkInvalidate(qp, (PVOID)1, &mr->Header, 0);
    if (st == STATUS_SUCCESS)
        st = cli_next_result(s.cq, &inv, NULL);
    NDK_SGE sge;
    memset(&sge, 0, sizeof(sge));
    sge.LogicalAddress.QuadPart = (LONGLONG)MmGetMdlPfnArray(buf)[0] << PAGE_SHIFT;
    sge.Length = 8;
    sge.MemoryRegionToken = privileged;
    if (st == STATUS_SUCCESS)
        st = s.target->Dispatch->NdkRead(s.target, (PVOID)2, &sge, 1, 0x50000000u,
                                         mr->Dispatch->NdkGetRemoteTokenFromMr(mr), 0);
    if (st == STATUS_SUCCESS)
        st = cli_next_result(s.cq, &rd, NULL);
    if (st != STATUS_SUCCESS) {
        code = cli_fail(&c, s.adapter, "posting", st);
        cli_session_close(&s);
        return code;
    }
    printf("invalidate: %s\n", NdkFpgaStatusName(inv.Status));
    printf("read: %s, provider error %u\n", NdkFpgaStatusName(rd.Status), (unsigned)rd.ProviderErrorCode);
    cli_session_close(&s);
    return inv.Status == STATUS_INVALID_DEVICE_STATE && rd.Status == STATUS_ACCESS_VIOLATION ? 0 : 1;
}
