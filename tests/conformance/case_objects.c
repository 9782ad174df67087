/* SPDX-License-Identifier: Apache-2.0 */
/* Objects and the rules that need no connection: adapter info, creation limits, MR
 * registration and its MDL rules, work requests on an unconnected QP, connection
 * establishment (refused, rejected, the connector's data and addresses). */
#include "conformance.h"

void test_adapter_info(void)
{
    ULONG size = 0;
    NTSTATUS st = ad->Dispatch->NdkQueryAdapterInfo(ad, NULL, &size);
    conf_ok(st == STATUS_BUFFER_TOO_SMALL && size == sizeof(NDK_ADAPTER_INFO),
            "NdkQueryAdapterInfo with a zero buffer: STATUS_BUFFER_TOO_SMALL and the needed size (%u)", (unsigned)size);
    size = sizeof(info) - 1;
    st = ad->Dispatch->NdkQueryAdapterInfo(ad, &info, &size);
    conf_ok(st == STATUS_BUFFER_TOO_SMALL && size == sizeof(info), "NdkQueryAdapterInfo one byte short: BUFFER_TOO_SMALL");
    size = sizeof(info);
    st = ad->Dispatch->NdkQueryAdapterInfo(ad, &info, &size);
    expect(st, STATUS_SUCCESS, "NdkQueryAdapterInfo");
    conf_ok(info.Version.Major == NDKFPGA_NDK_VERSION_MAJOR && info.Version.Minor == NDKFPGA_NDK_VERSION_MINOR, "NDK version 2.1");
    conf_ok(info.FRMRPageCount >= 16, "FRMRPageCount >= 16 (%u)", (unsigned)info.FRMRPageCount);
    conf_ok((info.AdapterFlags & NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED) &&
                (info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED) &&
                !(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED),
            "AdapterFlags: loopback, read sink not required, no CQ resize (0x%x)", (unsigned)info.AdapterFlags);
    conf_ok(info.MaxInitiatorRequestSge >= 1 && info.MaxCqDepth >= 1 && info.MaxInitiatorQueueDepth >= QP_DEPTH,
            "limits: %u SGE, CQ depth %u, queue depth %u", (unsigned)info.MaxInitiatorRequestSge,
            (unsigned)info.MaxCqDepth, (unsigned)info.MaxInitiatorQueueDepth);
}

void test_create_limits(void)
{
    NDK_CQ *c = NULL;
    expect(ad->Dispatch->NdkCreateCq(ad, 0, NULL, NULL, NULL, create_cb, NULL, &c), STATUS_INVALID_PARAMETER,
           "NdkCreateCq depth 0: INVALID_PARAMETER");
    expect(ad->Dispatch->NdkCreateCq(ad, info.MaxCqDepth + 1, NULL, NULL, NULL, create_cb, NULL, &c),
           STATUS_INVALID_PARAMETER, "NdkCreateCq depth above MaxCqDepth: INVALID_PARAMETER");
    conf_ok(c == NULL, "failed NdkCreateCq returns no object");
    expect(cq->Dispatch->NdkResizeCq(cq, 8, req_cb, NULL), STATUS_NOT_SUPPORTED, "NdkResizeCq: NOT_SUPPORTED");
    expect(cq->Dispatch->NdkControlCqInterruptModeration(cq, 10, 10), STATUS_NOT_SUPPORTED,
           "NdkControlCqInterruptModeration: NOT_SUPPORTED");
    NDK_SHARED_ENDPOINT *se = NULL;
    struct sockaddr_in se_addr = {0};
    se_addr.sin_family = AF_INET;
    expect(ad->Dispatch->NdkCreateSharedEndpoint(ad, (PSOCKADDR)&se_addr, sizeof(se_addr), create_cb, NULL, &se),
           STATUS_NOT_SUPPORTED, "NdkCreateSharedEndpoint: NOT_SUPPORTED");
    conf_ok(se == NULL, "a refused NdkCreateSharedEndpoint leaves its output as it was");
    NDK_QP *qp = NULL;
    expect(pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, info.MaxInitiatorQueueDepth + 1, 0, 1, 0, create_cb, NULL,
                                     &qp),
           STATUS_INVALID_PARAMETER, "NdkCreateQp queue depth above the maximum: INVALID_PARAMETER");
    expect(pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 0, 4, 0, info.MaxInitiatorRequestSge + 1, 0, create_cb, NULL,
                                     &qp),
           STATUS_INVALID_PARAMETER, "NdkCreateQp SGE count above the maximum: INVALID_PARAMETER");
    UINT32 tok = 0;
    pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &tok);
    conf_ok(tok == 0xFFFFFFFFu, "NdkGetPrivilegedMemoryRegionToken: NF_ADAPTER_PRIVILEGED_TOKEN");
}

void test_registration(void)
{
    struct buf b;
    if (!conf_ok(new_buf(&b, 3 * PAGE_SIZE, 0, (ULONG)-1), "allocate a 3-page buffer"))
        return;
    NDK_MR *normal = new_mr(pd, 0), *fast = new_mr(pd, 1);
    if (!conf_ok(normal && fast, "NdkCreateMr normal and fast-register"))
        return;
    UINT32 ftok = fast->Dispatch->NdkGetRemoteTokenFromMr(fast);
    conf_ok(ftok == fast->Dispatch->NdkGetLocalTokenFromMr(fast) && ftok != 0, "fast MR has a token (0x%08x)",
            (unsigned)ftok);

    expect(init_fast(normal, 4, TRUE), STATUS_INVALID_DEVICE_STATE,
           "NdkInitializeFastRegisterMr on a normal MR: INVALID_DEVICE_STATE");
    expect(reg_mr(fast, b.mdl, b.len, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_DEVICE_STATE,
           "NdkRegisterMr on a fast-register MR: INVALID_DEVICE_STATE");
    expect(init_fast(fast, info.FRMRPageCount + 1, TRUE), STATUS_IMPLEMENTATION_LIMIT,
           "NdkInitializeFastRegisterMr above FRMRPageCount: IMPLEMENTATION_LIMIT");
    expect(init_fast(fast, 0, TRUE), STATUS_INVALID_PARAMETER, "NdkInitializeFastRegisterMr of 0 pages: INVALID_PARAMETER");
    expect(init_fast(fast, 4, TRUE), STATUS_SUCCESS, "NdkInitializeFastRegisterMr");
    expect(init_fast(fast, info.FRMRPageCount, FALSE), STATUS_SUCCESS, "NdkInitializeFastRegisterMr again (max pages)");
    /* Two in parallel. */
    struct waiter w1, w2;
    w_init(&w1);
    w_init(&w2);
    NTSTATUS s1 = ASYNC(&w1, fast->Dispatch->NdkInitializeFastRegisterMr(fast, 8, TRUE, req_cb, &w1));
    NTSTATUS s2 = ASYNC(&w2, fast->Dispatch->NdkInitializeFastRegisterMr(fast, 8, TRUE, req_cb, &w2));
    s1 = w_wait(&w1, s1);
    s2 = w_wait(&w2, s2);
    conf_ok(s1 == STATUS_SUCCESS && s2 == STATUS_SUCCESS, "two NdkInitializeFastRegisterMr in parallel: %s, %s",
            NdkFpgaStatusName(s1), NdkFpgaStatusName(s2));
    conf_ok(fast->Dispatch->NdkGetRemoteTokenFromMr(fast) == ftok, "fast MR token stable across initializations");
    expect(dereg_mr(fast), STATUS_INVALID_DEVICE_STATE, "NdkDeregisterMr on a fast-register MR: INVALID_DEVICE_STATE");

    /* MDL rules. */
    expect(reg_mr(normal, b.mdl, b.len + 1, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_PARAMETER,
           "NdkRegisterMr length past the MDL: INVALID_PARAMETER");
    expect(reg_mr(normal, b.mdl, b.len, 0x40), STATUS_INVALID_PARAMETER, "NdkRegisterMr unknown flag: INVALID_PARAMETER");
    MDL zero = *b.mdl;
    zero.StartVa = NULL;
    zero.ProviderContext = NULL;
    expect(reg_mr(normal, &zero, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_PARAMETER,
           "NdkRegisterMr zero-based virtual address: INVALID_PARAMETER");
    /* A chain: first two pages, then the third; contiguous, then with a gap. */
    PFN_NUMBER *pfn = MmGetMdlPfnArray(b.mdl);
    uint8_t *va0 = b.mdl->StartVa;
    MDL gap2 = {NULL, va0 + 3 * PAGE_SIZE, 0, PAGE_SIZE, pfn + 2, NULL}; /* one page gap */
    MDL gap1 = {&gap2, va0, 0, 2 * PAGE_SIZE, pfn, NULL};
    expect(reg_mr(normal, &gap1, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_PARAMETER,
           "NdkRegisterMr MDL chain not virtually contiguous: INVALID_PARAMETER");
    MDL m2 = {NULL, va0 + 2 * PAGE_SIZE, 0, PAGE_SIZE, pfn + 2, NULL};
    MDL m1 = {&m2, va0, 0, 2 * PAGE_SIZE, pfn, NULL};
    expect(reg_mr(normal, &m1, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK),
           STATUS_SUCCESS, "NdkRegisterMr virtually contiguous MDL chain (with RDMA_READ_SINK)");
    expect(reg_mr(normal, b.mdl, b.len, NDK_MR_FLAG_ALLOW_LOCAL_WRITE), STATUS_INVALID_DEVICE_STATE,
           "NdkRegisterMr on a registered MR: INVALID_DEVICE_STATE");
    expect(dereg_mr(normal), STATUS_SUCCESS, "NdkDeregisterMr");
    expect(dereg_mr(normal), STATUS_INVALID_DEVICE_STATE, "NdkDeregisterMr twice: INVALID_DEVICE_STATE");
    expect(reg_mr(normal, b.mdl, b.len, NDK_MR_FLAG_ALLOW_REMOTE_WRITE), STATUS_SUCCESS, "register again after deregister");
    expect(dereg_mr(normal), STATUS_SUCCESS, "deregister again");
    expect(close_obj(&normal->Header), STATUS_SUCCESS, "close normal MR");
    expect(close_obj(&fast->Header), STATUS_SUCCESS, "close fast MR");
    free_buf(&b);
}

void test_unconnected(void)
{
    NTSTATUS st;
    NDK_QP *qp = new_qp(pd, 8, &st);
    if (!conf_ok(qp != NULL, "NdkCreateQp (%s)", NdkFpgaStatusName(st)))
        return;
    NDK_MR *fast = new_mr(pd, 1);
    if (!fast || init_fast(fast, 4, TRUE) != STATUS_SUCCESS) {
        conf_ok(0, "fast MR for the unconnected QP");
        return;
    }
    struct buf b;
    new_buf(&b, PAGE_SIZE, 0, (ULONG)-1);
    NDK_LOGICAL_ADDRESS page = {.QuadPart = (LONGLONG)MmGetMdlPfnArray(b.mdl)[0] << PAGE_SHIFT};
    NDK_SGE sge = {{.VirtualAddress = va_of(&b, 0)}, 16, 0xFFFFFFFFu};
    expect(qp->Dispatch->NdkFastRegister(qp, NULL, fast, 1, &page, 0, PAGE_SIZE, va_of(&b, 0), 0),
           STATUS_CONNECTION_INVALID, "NdkFastRegister on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkInvalidate(qp, NULL, &fast->Header, 0), STATUS_CONNECTION_INVALID,
           "NdkInvalidate on an unconnected QP: CONNECTION_INVALID");
    sge.LogicalAddress = page;
    expect(qp->Dispatch->NdkWrite(qp, NULL, &sge, 1, 0x1000, 0x100, 0), STATUS_CONNECTION_INVALID,
           "NdkWrite on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkRead(qp, NULL, &sge, 1, 0x1000, 0x100, 0), STATUS_CONNECTION_INVALID,
           "NdkRead on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkSend(qp, NULL, &sge, 1, 0), STATUS_CONNECTION_INVALID,
           "NdkSend on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkSendAndInvalidate(qp, NULL, &sge, 1, 0, 0x100), STATUS_CONNECTION_INVALID,
           "NdkSendAndInvalidate on an unconnected QP: CONNECTION_INVALID");
    expect(qp->Dispatch->NdkReceive(qp, NULL, &sge, 1), STATUS_INVALID_PARAMETER,
           "NdkReceive of 1 SGE on a QP without a receive queue (MaxReceiveRequestSge 0): INVALID_PARAMETER");
    expect(qp->Dispatch->NdkBind(qp, NULL, fast, NULL, va_of(&b, 0), 16, 0), STATUS_INVALID_PARAMETER,
           "NdkBind without a window: INVALID_PARAMETER");
    conf_ok(cq_stays_empty(), "inline failures post nothing (CQ empty)");
    close_obj(&qp->Header);
    close_obj(&fast->Header);
    free_buf(&b);
}

void test_connection_rules(void)
{
    NTSTATUS st;
    NDK_QP *qa = new_qp(pd, 4, &st), *qb = new_qp(pd, 4, &st);
    NDK_CONNECTOR *ca = NULL;
    ad->Dispatch->NdkCreateConnector(ad, create_cb, NULL, &ca);
    if (!conf_ok(qa && qb && ca, "QPs and a connector"))
        return;
    struct sockaddr_in nowhere = loopback_addr(9), dst = loopback_addr(LISTEN_PORT), src = loopback_addr(30000);
    struct waiter w;
    w_init(&w);
    st = ASYNC(&w, ca->Dispatch->NdkConnect(ca, qa, (PSOCKADDR)&src, sizeof(src), (PSOCKADDR)&nowhere,
                                            sizeof(nowhere), 0, 0, NULL, 0, req_cb, &w));
    expect(w_wait(&w, st), STATUS_CONNECTION_REFUSED, "connect to an address nobody listens on: CONNECTION_REFUSED");
    close_obj(&ca->Header);
    ad->Dispatch->NdkCreateConnector(ad, create_cb, NULL, &ca);
    uint8_t pdata[5] = {9, 8, 7, 6, 5};
    NTSTATUS cst = ASYNC(&w, ca->Dispatch->NdkConnect(ca, qa, (PSOCKADDR)&src, sizeof(src),
                                                      (PSOCKADDR)&dst, sizeof(dst), 2, 3, pdata, sizeof(pdata),
                                                      req_cb, &w));
    NDK_CONNECTOR *in = wait_incoming();
    if (conf_ok(in != NULL, "connect event delivered")) {
        ULONG ird = 0, ord = 0, plen = 0;
        uint8_t got[16];
        NTSTATUS g1 = in->Dispatch->NdkGetConnectionData(in, &ird, &ord, got, &plen);
        plen = sizeof(got);
        NTSTATUS g2 = in->Dispatch->NdkGetConnectionData(in, &ird, &ord, got, &plen);
        ULONG need = 99;
        NTSTATUS g3 = in->Dispatch->NdkGetConnectionData(in, NULL, NULL, NULL, &need);
        need = 0;
        NTSTATUS g4 = in->Dispatch->NdkGetConnectionData(in, NULL, NULL, NULL, &need);
        conf_ok(g1 == STATUS_BUFFER_TOO_SMALL && g2 == STATUS_SUCCESS && ird == 3 && ord == 2 && plen == 5 &&
                    !memcmp(got, pdata, 5),
                "NdkGetConnectionData: the caller's private data, and its read limits 2/3 seen from this side "
                "(inbound 3, outbound 2)");
        conf_ok(g3 == STATUS_INVALID_PARAMETER && g4 == STATUS_SUCCESS && need == 5,
                "NdkGetConnectionData with no buffer: INVALID_PARAMETER for a length, SUCCESS and the length "
                "needed for 0");
        struct sockaddr_in peer;
        ULONG alen = sizeof(peer);
        st = in->Dispatch->NdkGetPeerAddress(in, (SOCKADDR *)&peer, &alen);
        conf_ok(st == STATUS_SUCCESS && peer.sin_port == src.sin_port, "NdkGetPeerAddress: the caller's address");
        alen = sizeof(peer);
        st = in->Dispatch->NdkGetLocalAddress(in, (PSOCKADDR)&peer, &alen);
        conf_ok(st == STATUS_SUCCESS && peer.sin_port == dst.sin_port, "NdkGetLocalAddress: the listened address");
        expect(in->Dispatch->NdkReject(in, NULL, 0), STATUS_SUCCESS, "NdkReject");
        expect(w_wait(&w, cst), STATUS_CONNECTION_REFUSED,
               "rejected connect completes CONNECTION_REFUSED");
        close_obj(&in->Header);
    }
    close_obj(&ca->Header);
    close_obj(&qa->Header);
    close_obj(&qb->Header);
}
