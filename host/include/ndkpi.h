/* SPDX-License-Identifier: Apache-2.0 */
/* ndkpi.h: Microsoft's NDKPI (Network Direct Kernel Provider Interface) for Linux
 * user space, as implemented by libndkfpga.
 *
 * Names, values, prototypes, structure layouts and dispatch-table order follow the
 * WDK's ndkpi.h (NDKPI 2.1, the version this provider reports) so that consumer code
 * written as `obj->Dispatch->NdkXxx(obj, ...)` compiles unchanged, in C and in C++.
 * Windows base types are mapped to fixed-width types (ULONG is 32 bits even on LP64);
 * the layout checks below hold for 32- and 64-bit targets alike.
 * The platform calls that Windows does through NDIS (opening an adapter, allocating
 * adapter memory) are in ndkfpga.h.
 *
 * Status conventions of every call in this provider:
 *  - STATUS_PENDING: the request was accepted; its completion callback runs exactly
 *    once later, on the library's callback thread.
 *  - any other status: the call finished inline; no callback follows. A failure
 *    changed nothing.
 *  - work requests (NdkFastRegister, NdkInvalidate, NdkRead, NdkWrite, NdkSend,
 *    NdkSendAndInvalidate, NdkReceive) return STATUS_SUCCESS when posted; their outcome
 *    arrives as an NDK_RESULT on the QP's initiator CQ (a receive's on its receive CQ).
 *    A local rule violation returns the documented error inline and posts nothing.
 */
/* This provider's statuses, call by call (in the order checked; a refused call
 * changed nothing). "link" = the link to the adapter is lost: STATUS_CONNECTION_RESET
 * (peer gone), STATUS_IO_TIMEOUT (peer silent), STATUS_CONNECTION_ABORTED.
 *
 * Adapter
 *  NdkQueryAdapterInfo   SUCCESS; INVALID_PARAMETER (NULL size); BUFFER_TOO_SMALL (*pBufferSize = 104).
 *                        MaxWindowSize: the largest MR (registered or fast-registered), at most
 *                        2^32-1 (a window's length is 32 bits in the adapter's key table).
 *  NdkCreateCq           SUCCESS (inline); INVALID_PARAMETER (CqDepth 0 or > MaxCqDepth);
 *                        INSUFFICIENT_RESOURCES.
 *  NdkCreatePd, NdkCreateConnector, NdkCreateListener   SUCCESS (inline); INVALID_PARAMETER;
 *                        INSUFFICIENT_RESOURCES.
 *  NdkCreateSharedEndpoint, NdkQueryExtension (all objects)   NOT_SUPPORTED, before any argument is
 *                        read or written (no shared endpoints, no extension interfaces).
 *  NdkBuildLAM           SUCCESS (inline); INVALID_PARAMETER (as NdkRegisterMr's MDL rules);
 *                        BUFFER_TOO_SMALL (*pLamSize = the size needed); over host memory
 *                        INSUFFICIENT_RESOURCES (not that many free adapter pages to shadow it,
 *                        held until NdkReleaseLAM).
 * PD
 *  NdkCreateMr           PENDING (CreateCompletion: SUCCESS, INSUFFICIENT_RESOURCES, link);
 *                        without a CreateCompletion the call waits and returns the final status.
 *  NdkCreateQp           the same (INSUFFICIENT_RESOURCES: the adapter's receive entries, shared by
 *                        all QPs, cannot hold ReceiveQueueDepth more); inline INVALID_PARAMETER for
 *                        InitiatorQueueDepth 0 or above MaxInitiatorQueueDepth, MaxInitiatorRequestSge
 *                        above the adapter's, ReceiveQueueDepth above MaxReceiveQueueDepth,
 *                        MaxReceiveRequestSge above the adapter's, a receive queue without a receive
 *                        CQ, any inline data (MaxInlineDataSize 0), no initiator CQ.
 *  NdkCreateMw           as NdkCreateMr (a window's key-table entry, invalid until bound);
 *                        NdkCloseMw as NdkCloseMr; NdkGetRemoteTokenFromMw: its token.
 *  NdkCreateSrq, NdkCreateQpWithSrq   NOT_SUPPORTED.
 *  NdkGetPrivilegedMemoryRegionToken   returns nothing (VOID): *pToken = the token for adapter logical
 *                        addresses (local SGEs only); a handle that is not a live PD leaves *pToken as it is.
 * MR (an MR of the wrong kind or state for a call: INVALID_DEVICE_STATE)
 *  NdkRegisterMr         PENDING (RequestCompletion: SUCCESS, INSUFFICIENT_RESOURCES, ...) or inline:
 *                        INVALID_PARAMETER (unknown flag, REMOTE_WRITE without LOCAL_WRITE, Length 0,
 *                        MDL chain not virtually contiguous, Length past the chain, zero-based VA,
 *                        page outside adapter memory or of no buffer this adapter allocated,
 *                        NdkFpgaAllocateBuffer; a host MDL not built by MmBuildMdlForNonPagedPool,
 *                        a chain mixing host and adapter memory); INVALID_DEVICE_STATE (fast-register MR,
 *                        already registered); INSUFFICIENT_RESOURCES (more pages than one
 *                        registration holds); link.
 *  NdkDeregisterMr       PENDING; INVALID_DEVICE_STATE (fast-register MR, not registered).
 *  NdkInitializeFastRegisterMr   PENDING; INVALID_DEVICE_STATE (normal MR); INVALID_PARAMETER
 *                        (0 pages); IMPLEMENTATION_LIMIT (above FRMRPageCount). May be repeated and
 *                        run in parallel; the MR's token never changes.
 *  Without a RequestCompletion these calls wait and return the final status (bounded: the
 *  request's deadline, docs/guarantees.md).
 * CQ
 *  NdkResizeCq, NdkControlCqInterruptModeration   NOT_SUPPORTED.
 *  NdkArmCq              the next completion (ERRORS: the next failed one; SOLICITED: the next failed
 *                        one or the next receive whose Send had SEND_AND_SOLICIT_EVENT) queues one
 *                        CqNotification on the callback thread; completions already waiting notify
 *                        at once.
 *  NdkGetCqResultsEx     NDK_RESULT_EX: Type (a receive that invalidated a token:
 *                        NdkOperationTypeReceiveAndInvalidate, TypeSpecificCompletionOutput = the
 *                        token), BytesTransferred (meaningful for receives), ProviderErrorCode.
 *                        NdkGetCqResults gives the same results without those fields.
 *  Overflow              a completion that finds the CQ full: the CqNotification callback runs once
 *                        with STATUS_BUFFER_OVERFLOW, armed or not; the CQ is then unusable (the
 *                        results it held can still be taken; nothing more is reported, NdkArmCq
 *                        does nothing) and so is every QP using it: their later work requests
 *                        are refused inline with STATUS_CANCELLED. Counted (NdkFpgaQueryCounters,
 *                        group NDKFPGA_COUNTER_HOST: cq_overflows, cq_dropped).
 * QP work requests: never wait (a full link window queues them in the library; the QPs'
 *  depths bound what is queued). Each either is refused inline (and never completes) or
 *  returns SUCCESS and completes exactly once: its CQE, NdkFlush, the QP's close
 *  (STATUS_CANCELLED), link death (the link's status) or its deadline (STATUS_IO_TIMEOUT;
 *  a receive has none: it waits for a Send as long as it takes);
 *  see docs/guarantees.md. A DEFER request with nothing posted after it goes to the adapter
 *  within 2 ms. SUCCESS = posted (the outcome comes as an NDK_RESULT_EX on the initiator CQ:
 *  Status, BytesTransferred, Type, ProviderErrorCode = the engine's refusal reason); inline:
 *  NdkFastRegister       INVALID_PARAMETER (NULL MR or page array, unknown flag, MR of another
 *                        adapter); CONNECTION_INVALID (QP not connected); INVALID_DEVICE_STATE
 *                        (normal MR, or not initialized); ACCESS_VIOLATION (remote access asked, MR
 *                        initialized without RemoteAccess); INVALID_PARAMETER (page count 0 or above
 *                        the MR's, FBO >= PAGE_SIZE, Length 0 or > pages * PAGE_SIZE - FBO,
 *                        BaseVirtualAddress not FBO + n * PAGE_SIZE (so 0 only with FBO 0), the last
 *                        byte VA + Length - 1 wraps, page not PAGE_SIZE aligned or outside adapter
 *                        memory); INSUFFICIENT_RESOURCES (queue full); link. An MR of another PD than
 *                        the QP's is the adapter's to refuse: it completes ACCESS_VIOLATION.
 *  NdkInvalidate         INVALID_PARAMETER (unknown flag, not an MR or a window, one of another
 *                        adapter); CONNECTION_INVALID; INVALID_DEVICE_STATE (an MR registered with
 *                        NdkRegisterMr). An MR or window of another PD completes ACCESS_VIOLATION,
 *                        an already invalid one INVALID_DEVICE_STATE; invalidating a window leaves
 *                        its MR untouched, invalidating an MR invalidates its windows for good.
 *  The flags each request accepts are proto/ndk.toml's KNOWN_FLAGS (the adapter checks the
 *  same masks); DEFER is a hint to this library and never reaches the adapter.
 *  NdkRead, NdkWrite, NdkSend, NdkSendAndInvalidate   INVALID_PARAMETER (unknown flag or INLINE,
 *                        nSge above the QP's, a privileged-token SGE outside adapter memory, total
 *                        above MaxTransferLength); CONNECTION_INVALID; INSUFFICIENT_RESOURCES; link.
 *                        Remote refusals complete with ACCESS_VIOLATION; after any error completion
 *                        later requests on the QP complete with CANCELLED. A Send that finds no
 *                        receive pending at the peer completes IO_TIMEOUT (receiver not ready);
 *                        one the receive cannot hold completes CONNECTION_ABORTED (the receive
 *                        BUFFER_TOO_SMALL); NdkSendAndInvalidate naming a token the peer cannot
 *                        invalidate aborts the connection (both complete CONNECTION_ABORTED).
 *  NdkReceive            INVALID_PARAMETER (nSge above the QP's MaxReceiveRequestSge, NULL SGL);
 *                        INSUFFICIENT_RESOURCES (ReceiveQueueDepth receives pending); CANCELLED (a
 *                        CQ of the QP overflowed); link. Accepted on a QP not connected yet. No
 *                        flags, no deferral. Completes on the receive CQ, in posting order, when a
 *                        Send fills it (the adapter checks its SGEs then).
 *  NdkFlush              sends a flush to the adapter and returns; nothing completes inside the
 *                        call. The adapter runs a QP's requests strictly in posting order, one at
 *                        a time, so: every request posted before NdkFlush has executed when the
 *                        flush takes effect and completes with its real status (SUCCESS: it took
 *                        effect, e.g. the token grants or is invalidated; any other status: it
 *                        changed nothing; a SILENT_SUCCESS request that succeeded still produces
 *                        no result); every request posted after NdkFlush completes CANCELLED
 *                        without touching any MR or memory, until NdkDisconnect (after which
 *                        the QP may be connected again) or close. A QP that is not connected is
 *                        left as it is (no request of it can be pending). Each posted request
 *                        completes exactly once, in posting order. Every receive still pending
 *                        when the flush takes effect completes CANCELLED, in order, on the
 *                        receive CQ (a QP not connected too). NdkFlush may run concurrently with a posting
 *                        call on the same QP (NDK allows it): that request is either before the
 *                        flush (real status) or after it (CANCELLED), never lost.
 *  NdkBind               INVALID_PARAMETER (unknown flag, not a live MR and window of this
 *                        adapter); CONNECTION_INVALID; INSUFFICIENT_RESOURCES; link. The adapter
 *                        completes INVALID_PARAMETER (a token not an MR / not a window, Length 0,
 *                        the range not inside the MR's), ACCESS_VIOLATION (another PD; remote write
 *                        asked of an MR without local write), INVALID_DEVICE_STATE (the MR not
 *                        registered now). A bound window grants remote access only inside its range,
 *                        with its own rights, while it and its MR are valid; re-binding replaces.
 * Connector / listener (loopback on one adapter)
 *  NdkListen             SUCCESS; INVALID_PARAMETER (not AF_INET/AF_INET6); INVALID_DEVICE_STATE
 *                        (already listening); SHARING_VIOLATION (another listener of this adapter
 *                        holds the address and port).
 *  NdkConnect            PENDING (SUCCESS when accepted, CONNECTION_REFUSED when rejected or nobody
 *                        listens, CONNECTION_ABORTED); inline INVALID_PARAMETER,
 *                        INVALID_BUFFER_SIZE (private data above MaxCallerData),
 *                        INVALID_DEVICE_STATE (connector or QP in use).
 *  NdkAccept             PENDING (SUCCESS once the caller completed the connection); inline as
 *                        NdkConnect, CONNECTION_ABORTED (the caller gave up).
 *  NdkCompleteConnect    PENDING; INVALID_DEVICE_STATE (not accepted yet).
 *  NdkCompleteConnectEx, NdkAcceptEx (NDKPI 2.1)   as NdkCompleteConnect and NdkAccept; their
 *                        DisconnectEvent runs once, as the plain one does, with ProviderDisconnectReason 0
 *                        (no reason given).
 *  NdkReject             SUCCESS; INVALID_DEVICE_STATE.   NdkDisconnect   PENDING; CONNECTION_INVALID.
 *  NdkGetConnectionData, NdkGetLocalAddress, NdkGetPeerAddress   SUCCESS; BUFFER_TOO_SMALL (size
 *                        needed returned); INVALID_DEVICE_STATE (nothing known yet).
 * Close (NdkCloseXxx, NdkCloseObject): SUCCESS, or PENDING while children, requests in flight or
 *  queued callbacks remain (CloseCompletion follows). Closing a QP with work requests
 *  outstanding or receives pending flushes them first: each completes (real status or
 *  CANCELLED) before the close does, which then pends. */

#ifndef NDKPI_H
#define NDKPI_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Layout checks below hold in C11 and C++11 alike, on 32- and 64-bit targets. */
#ifdef __cplusplus
#define NDKPI_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#define NDKPI_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif
/* The expected value of a size or offset: ILP32 first, LP64 second. */
#define NDKPI_ILP32_LP64(ilp32, lp64) (sizeof(void *) == 8 ? (size_t)(lp64) : (size_t)(ilp32))

/* ------------------------------------------------------------------------- */
/* Windows base types, fixed width (LLP64: ULONG and LONG are 32 bits)        */

#ifndef CONST
#define CONST const
#endif

typedef void VOID;
typedef void *PVOID;
typedef char CHAR;
typedef uint8_t UCHAR;
typedef uint8_t BOOLEAN;
typedef uint16_t USHORT;
typedef uint32_t ULONG;
typedef int32_t LONG;
typedef int64_t LONGLONG;
typedef uint64_t ULONGLONG;
typedef uint8_t UINT8;
typedef uint16_t UINT16;
typedef uint32_t UINT32;
typedef uint64_t UINT64;
typedef uint64_t ULONG64;
typedef size_t SIZE_T;
typedef uintptr_t ULONG_PTR;
typedef ULONG_PTR KAFFINITY;
typedef LONG NTSTATUS;
typedef UCHAR *PUCHAR;
typedef USHORT *PUSHORT;
typedef ULONG *PULONG;
typedef SIZE_T *PSIZE_T;

typedef struct sockaddr SOCKADDR;
typedef struct sockaddr *PSOCKADDR;
typedef struct sockaddr_in SOCKADDR_IN;
typedef struct sockaddr_in *PSOCKADDR_IN;
typedef struct sockaddr_in6 SOCKADDR_IN6;
typedef struct sockaddr_in6 *PSOCKADDR_IN6;
typedef struct sockaddr_storage SOCKADDR_STORAGE;
typedef struct sockaddr_storage *PSOCKADDR_STORAGE;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/* A 64-bit value seen whole (QuadPart) or as two 32-bit halves, aligned to 8 bytes
 * on every target as Windows aligns it; the halves follow the byte order. */
typedef union __attribute__((aligned(8))) _LARGE_INTEGER {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    struct {
        LONG HighPart;
        ULONG LowPart;
    };
    struct {
        LONG HighPart;
        ULONG LowPart;
    } u;
#else
    struct {
        ULONG LowPart;
        LONG HighPart;
    };
    struct {
        ULONG LowPart;
        LONG HighPart;
    } u;
#endif
    LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;

typedef LARGE_INTEGER PHYSICAL_ADDRESS, *PPHYSICAL_ADDRESS;

typedef struct _GUID {
    ULONG Data1;
    USHORT Data2;
    USHORT Data3;
    UCHAR Data4[8];
} GUID, *PGUID;

typedef struct _GROUP_AFFINITY {
    KAFFINITY Mask;
    USHORT Group;
    USHORT Reserved[3];
} GROUP_AFFINITY, *PGROUP_AFFINITY;

NDKPI_STATIC_ASSERT(sizeof(LARGE_INTEGER) == 8, "LARGE_INTEGER is 8 bytes");
NDKPI_STATIC_ASSERT(offsetof(LARGE_INTEGER, QuadPart) == 0, "LARGE_INTEGER.QuadPart");
NDKPI_STATIC_ASSERT(sizeof(GUID) == 16, "GUID is 16 bytes");
NDKPI_STATIC_ASSERT(sizeof(GROUP_AFFINITY) == NDKPI_ILP32_LP64(12, 16), "GROUP_AFFINITY");

/* ------------------------------------------------------------------------- */
/* NTSTATUS values                                                            */

#define NT_SUCCESS(Status) (((NTSTATUS)(Status)) >= 0)

#define STATUS_SUCCESS                  ((NTSTATUS)0x00000000)
#define STATUS_PENDING                  ((NTSTATUS)0x00000103)
#define STATUS_BUFFER_OVERFLOW          ((NTSTATUS)0x80000005u)
#define STATUS_DEVICE_BUSY              ((NTSTATUS)0x80000011u)
#define STATUS_ACCESS_VIOLATION         ((NTSTATUS)0xC0000005u)
#define STATUS_INVALID_PARAMETER        ((NTSTATUS)0xC000000Du)
#define STATUS_NO_SUCH_FILE             ((NTSTATUS)0xC000000Fu)
#define STATUS_ACCESS_DENIED            ((NTSTATUS)0xC0000022u)
#define STATUS_BUFFER_TOO_SMALL         ((NTSTATUS)0xC0000023u)
#define STATUS_INVALID_PARAMETER_MIX    ((NTSTATUS)0xC0000030u)
#define STATUS_SHARING_VIOLATION        ((NTSTATUS)0xC0000043u)
#define STATUS_INSUFFICIENT_RESOURCES   ((NTSTATUS)0xC000009Au)
#define STATUS_IO_TIMEOUT               ((NTSTATUS)0xC00000B5u)
#define STATUS_NOT_SUPPORTED            ((NTSTATUS)0xC00000BBu)
#define STATUS_INTERNAL_ERROR           ((NTSTATUS)0xC00000E5u)
#define STATUS_CANCELLED                ((NTSTATUS)0xC0000120u)
#define STATUS_REMOTE_RESOURCES         ((NTSTATUS)0xC000013Du)
#define STATUS_INVALID_ADDRESS          ((NTSTATUS)0xC0000141u)
#define STATUS_INVALID_DEVICE_STATE     ((NTSTATUS)0xC0000184u)
#define STATUS_INVALID_BUFFER_SIZE      ((NTSTATUS)0xC0000206u)
#define STATUS_TOO_MANY_ADDRESSES       ((NTSTATUS)0xC0000209u)
#define STATUS_ADDRESS_ALREADY_EXISTS   ((NTSTATUS)0xC000020Au)
#define STATUS_CONNECTION_DISCONNECTED  ((NTSTATUS)0xC000020Cu)
#define STATUS_CONNECTION_RESET         ((NTSTATUS)0xC000020Du)
#define STATUS_CONNECTION_REFUSED       ((NTSTATUS)0xC0000236u)
#define STATUS_ADDRESS_ALREADY_ASSOCIATED ((NTSTATUS)0xC0000238u)
#define STATUS_CONNECTION_INVALID       ((NTSTATUS)0xC000023Au)
#define STATUS_NETWORK_UNREACHABLE      ((NTSTATUS)0xC000023Cu)
#define STATUS_HOST_UNREACHABLE         ((NTSTATUS)0xC000023Du)
#define STATUS_CONNECTION_ABORTED       ((NTSTATUS)0xC0000241u)
#define STATUS_DEVICE_HARDWARE_ERROR    ((NTSTATUS)0xC00002B6u)
#define STATUS_IMPLEMENTATION_LIMIT     ((NTSTATUS)0xC000042Bu)

/* ------------------------------------------------------------------------- */
/* Pages and MDLs                                                             */

#ifndef PAGE_SIZE
#define PAGE_SIZE 4096u
#endif
#ifndef PAGE_SHIFT
#define PAGE_SHIFT 12u
#endif
#define BYTE_OFFSET(Va) ((ULONG)((ULONG_PTR)(Va) & (PAGE_SIZE - 1u)))
#define ADDRESS_AND_SIZE_TO_SPAN_PAGES(Va, Size) \
    ((ULONG)((((ULONG_PTR)(Va) & (PAGE_SIZE - 1u)) + (Size) + (PAGE_SIZE - 1u)) >> PAGE_SHIFT))

typedef ULONG_PTR PFN_NUMBER;

/* A memory descriptor list: a virtual range (StartVa + ByteOffset, ByteCount bytes)
 * and the pages behind it; ADDRESS_AND_SIZE_TO_SPAN_PAGES entries in PfnArray. Two kinds:
 *  - adapter memory (NdkFpgaAllocateBuffer): the virtual range is reserved PROT_NONE (it
 *    names the buffer, it is never dereferenced); PfnArray[i] is the adapter page number
 *    (adapter address >> PAGE_SHIFT) of the i-th page;
 *  - host memory (IoAllocateMdl + MmBuildMdlForNonPagedPool, ndkfpga.h): ordinary memory
 *    the CPU uses; PfnArray[i] is the host page number; the library moves the bytes to and
 *    from adapter memory at each hand-over (docs/host-memory.md).
 * Next chains MDLs of one kind; a chain passed to NdkRegisterMr must be virtually contiguous. */
typedef struct _MDL {
    struct _MDL *Next;
    PVOID StartVa;          /* page aligned */
    ULONG ByteOffset;       /* offset of the first byte in the first page */
    ULONG ByteCount;        /* bytes described */
    PFN_NUMBER *PfnArray;   /* adapter page numbers (host page numbers for host memory) */
    PVOID ProviderContext;  /* owned by the provider (NdkFpgaAllocateBuffer); NULL otherwise */
} MDL, *PMDL;

#define MmGetMdlVirtualAddress(Mdl) ((PVOID)((uint8_t *)((Mdl)->StartVa) + (Mdl)->ByteOffset))
#define MmGetMdlByteCount(Mdl) ((Mdl)->ByteCount)
#define MmGetMdlByteOffset(Mdl) ((Mdl)->ByteOffset)
#define MmGetMdlPfnArray(Mdl) ((Mdl)->PfnArray)

/* ------------------------------------------------------------------------- */
/* Flags and enumerations                                                     */

#define NDK_OP_FLAG_SILENT_SUCCESS             0x00000001u
#define NDK_OP_FLAG_READ_FENCE                 0x00000002u
#define NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT     0x00000004u
#define NDK_OP_FLAG_ALLOW_REMOTE_READ          0x00000008u
#define NDK_OP_FLAG_ALLOW_LOCAL_WRITE          0x00000010u
#define NDK_OP_FLAG_ALLOW_REMOTE_WRITE         0x00000030u /* includes local write */
#define NDK_OP_FLAG_INLINE                     0x00000040u
#define NDK_OP_FLAG_RDMA_READ_SINK             0x00000080u
#define NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE 0x00000100u
#define NDK_OP_FLAG_DEFER                      0x00000200u

#define NDK_MR_FLAG_ALLOW_LOCAL_READ   0x00000000u
#define NDK_MR_FLAG_ALLOW_LOCAL_WRITE  0x00000001u
#define NDK_MR_FLAG_ALLOW_REMOTE_READ  0x00000002u
#define NDK_MR_FLAG_ALLOW_REMOTE_WRITE 0x00000005u /* includes local write */
#define NDK_MR_FLAG_RDMA_READ_SINK     0x00000008u

#define NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED              0x00000001u
#define NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED         0x00000002u
#define NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED   0x00000004u
#define NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED              0x00000008u
#define NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED 0x00000010u
#define NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED                 0x00000100u
#define NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED      0x00010000u

#define NDK_CQ_NOTIFY_ERRORS    0u
#define NDK_CQ_NOTIFY_ANY       1u
#define NDK_CQ_NOTIFY_SOLICITED 2u

typedef enum _NDK_OBJECT_TYPE {
    NdkObjectTypeUndefined = 0,
    NdkObjectTypeAdapter = 1,
    NdkObjectTypeQp = 2,
    NdkObjectTypeCq = 3,
    NdkObjectTypeMr = 4,
    NdkObjectTypeMw = 5,
    NdkObjectTypePd = 6,
    NdkObjectTypeSharedEndpoint = 7,
    NdkObjectTypeConnector = 8,
    NdkObjectTypeListener = 9,
    NdkObjectTypeSrq = 10,
    NdkObjectTypeMax = 11
} NDK_OBJECT_TYPE;

typedef enum _NDK_OPERATION_TYPE {
    NdkOperationTypeReceive = 1,
    NdkOperationTypeReceiveAndInvalidate = 0x8001,
    NdkOperationTypeSend = 2,
    NdkOperationTypeFastRegister = 4,
    NdkOperationTypeBind = 8,
    NdkOperationTypeInvalidate = 16,
    NdkOperationTypeRead = 32,
    NdkOperationTypeWrite = 64
} NDK_OPERATION_TYPE;

typedef enum _NDK_RDMA_TECHNOLOGY {
    NdkUndefined = 0,
    NdkiWarp = 1,
    NdkInfiniBand = 2,
    NdkRoCE = 3,
    NdkRoCEv2 = 4,
    NdkMaxTechnology = 5
} NDK_RDMA_TECHNOLOGY;

/* ------------------------------------------------------------------------- */
/* Structures                                                                 */

/* An adapter page address: consumers read and write it as .QuadPart. */
typedef PHYSICAL_ADDRESS NDK_LOGICAL_ADDRESS;

typedef struct _NDK_VERSION {
    USHORT Major;
    USHORT Minor;
} NDK_VERSION;

typedef struct _NDK_OBJECT_HEADER_RESERVED_BLOCK {
    PVOID rf[4];
} NDK_OBJECT_HEADER_RESERVED_BLOCK;

typedef struct _NDK_OBJECT_HEADER {
    NDK_VERSION Version;
    NDK_OBJECT_TYPE ObjectType;
    NDK_OBJECT_HEADER_RESERVED_BLOCK NdkReserved;
} NDK_OBJECT_HEADER, *PNDK_OBJECT_HEADER;

typedef struct _NDK_RESULT {
    NTSTATUS Status;
    ULONG BytesTransferred;
    PVOID QPContext;
    PVOID RequestContext;
} NDK_RESULT;

/* NDKPI 2.1's layout, the version this provider reports (ProviderErrorCode takes the
 * LP64 padding after Type, so only 32-bit layouts differ from 1.2 and 2.0). */
typedef struct _NDK_RESULT_EX {
    NTSTATUS Status;
    ULONG BytesTransferred;
    PVOID QPContext;
    PVOID RequestContext;
    NDK_OPERATION_TYPE Type;
    ULONG ProviderErrorCode;   /* this provider: the engine's REFUSE code (why an access failed) */
    ULONG_PTR TypeSpecificCompletionOutput;
} NDK_RESULT_EX;

typedef struct _NDK_SGE {
    union {
        PVOID VirtualAddress;
        NDK_LOGICAL_ADDRESS LogicalAddress;
    };
    ULONG Length;
    UINT32 MemoryRegionToken;
} NDK_SGE;

typedef struct _NDK_LOGICAL_ADDRESS_MAPPING {
    PVOID AdapterContext;
    ULONG AdapterPageCount;
    NDK_LOGICAL_ADDRESS AdapterPageArray[1];
} NDK_LOGICAL_ADDRESS_MAPPING;

typedef struct _NDK_ADAPTER_INFO {
    NDK_VERSION Version;
    UINT32 VendorId;
    UINT32 DeviceId;
    SIZE_T MaxRegistrationSize;
    SIZE_T MaxWindowSize;
    ULONG FRMRPageCount;
    ULONG MaxInitiatorRequestSge;
    ULONG MaxReceiveRequestSge;
    ULONG MaxReadRequestSge;
    ULONG MaxTransferLength;
    ULONG MaxInlineDataSize;
    ULONG MaxInboundReadLimit;
    ULONG MaxOutboundReadLimit;
    ULONG MaxReceiveQueueDepth;
    ULONG MaxInitiatorQueueDepth;
    ULONG MaxSrqDepth;
    ULONG MaxCqDepth;
    ULONG LargeRequestThreshold;
    ULONG MaxCallerData;
    ULONG MaxCalleeData;
    ULONG AdapterFlags;
    NDK_RDMA_TECHNOLOGY RdmaTechnology;
} NDK_ADAPTER_INFO;

/* What NdkQueryExtension fills in: the extension's dispatch table. */
typedef struct _NDK_EXTENSION_INTERFACE {
    CONST VOID *Dispatch;
} NDK_EXTENSION_INTERFACE;

/* Windows' layouts, ILP32 then LP64: a consumer's structures and the adapter's agree
 * on every target this header compiles for. */
NDKPI_STATIC_ASSERT(sizeof(NDK_VERSION) == 4, "NDK_VERSION");
NDKPI_STATIC_ASSERT(sizeof(NDK_OBJECT_HEADER) == NDKPI_ILP32_LP64(24, 40), "NDK_OBJECT_HEADER");
NDKPI_STATIC_ASSERT(offsetof(NDK_OBJECT_HEADER, ObjectType) == 4, "NDK_OBJECT_HEADER.ObjectType");
NDKPI_STATIC_ASSERT(offsetof(NDK_OBJECT_HEADER, NdkReserved) == 8, "NDK_OBJECT_HEADER.NdkReserved");
NDKPI_STATIC_ASSERT(sizeof(NDK_RESULT) == NDKPI_ILP32_LP64(16, 24), "NDK_RESULT");
NDKPI_STATIC_ASSERT(offsetof(NDK_RESULT, QPContext) == 8, "NDK_RESULT.QPContext");
NDKPI_STATIC_ASSERT(offsetof(NDK_RESULT, RequestContext) == NDKPI_ILP32_LP64(12, 16), "NDK_RESULT.RequestContext");
NDKPI_STATIC_ASSERT(sizeof(NDK_RESULT_EX) == NDKPI_ILP32_LP64(28, 40), "NDK_RESULT_EX");
NDKPI_STATIC_ASSERT(offsetof(NDK_RESULT_EX, Type) == NDKPI_ILP32_LP64(16, 24), "NDK_RESULT_EX.Type");
NDKPI_STATIC_ASSERT(offsetof(NDK_RESULT_EX, ProviderErrorCode) == NDKPI_ILP32_LP64(20, 28),
                    "NDK_RESULT_EX.ProviderErrorCode");
NDKPI_STATIC_ASSERT(offsetof(NDK_RESULT_EX, TypeSpecificCompletionOutput) == NDKPI_ILP32_LP64(24, 32),
                    "NDK_RESULT_EX.TypeSpecificCompletionOutput");
NDKPI_STATIC_ASSERT(sizeof(NDK_SGE) == 16, "NDK_SGE");
NDKPI_STATIC_ASSERT(offsetof(NDK_SGE, Length) == 8, "NDK_SGE.Length");
NDKPI_STATIC_ASSERT(offsetof(NDK_SGE, MemoryRegionToken) == 12, "NDK_SGE.MemoryRegionToken");
NDKPI_STATIC_ASSERT(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) == NDKPI_ILP32_LP64(16, 24), "NDK_LOGICAL_ADDRESS_MAPPING");
NDKPI_STATIC_ASSERT(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageCount) == NDKPI_ILP32_LP64(4, 8),
                    "NDK_LOGICAL_ADDRESS_MAPPING.AdapterPageCount");
NDKPI_STATIC_ASSERT(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) == NDKPI_ILP32_LP64(8, 16),
                    "NDK_LOGICAL_ADDRESS_MAPPING.AdapterPageArray");
NDKPI_STATIC_ASSERT(sizeof(NDK_ADAPTER_INFO) == NDKPI_ILP32_LP64(88, 104), "NDK_ADAPTER_INFO");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, VendorId) == 4, "NDK_ADAPTER_INFO.VendorId");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, DeviceId) == 8, "NDK_ADAPTER_INFO.DeviceId");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxRegistrationSize) == NDKPI_ILP32_LP64(12, 16),
                    "NDK_ADAPTER_INFO.MaxRegistrationSize");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxWindowSize) == NDKPI_ILP32_LP64(16, 24),
                    "NDK_ADAPTER_INFO.MaxWindowSize");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, FRMRPageCount) == NDKPI_ILP32_LP64(20, 32),
                    "NDK_ADAPTER_INFO.FRMRPageCount");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxInitiatorRequestSge) == NDKPI_ILP32_LP64(24, 36),
                    "NDK_ADAPTER_INFO.MaxInitiatorRequestSge");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxReceiveRequestSge) == NDKPI_ILP32_LP64(28, 40),
                    "NDK_ADAPTER_INFO.MaxReceiveRequestSge");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxReadRequestSge) == NDKPI_ILP32_LP64(32, 44),
                    "NDK_ADAPTER_INFO.MaxReadRequestSge");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxTransferLength) == NDKPI_ILP32_LP64(36, 48),
                    "NDK_ADAPTER_INFO.MaxTransferLength");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxInlineDataSize) == NDKPI_ILP32_LP64(40, 52),
                    "NDK_ADAPTER_INFO.MaxInlineDataSize");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxInboundReadLimit) == NDKPI_ILP32_LP64(44, 56),
                    "NDK_ADAPTER_INFO.MaxInboundReadLimit");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxOutboundReadLimit) == NDKPI_ILP32_LP64(48, 60),
                    "NDK_ADAPTER_INFO.MaxOutboundReadLimit");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxReceiveQueueDepth) == NDKPI_ILP32_LP64(52, 64),
                    "NDK_ADAPTER_INFO.MaxReceiveQueueDepth");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxInitiatorQueueDepth) == NDKPI_ILP32_LP64(56, 68),
                    "NDK_ADAPTER_INFO.MaxInitiatorQueueDepth");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxSrqDepth) == NDKPI_ILP32_LP64(60, 72), "NDK_ADAPTER_INFO.MaxSrqDepth");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxCqDepth) == NDKPI_ILP32_LP64(64, 76), "NDK_ADAPTER_INFO.MaxCqDepth");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, LargeRequestThreshold) == NDKPI_ILP32_LP64(68, 80),
                    "NDK_ADAPTER_INFO.LargeRequestThreshold");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxCallerData) == NDKPI_ILP32_LP64(72, 84),
                    "NDK_ADAPTER_INFO.MaxCallerData");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxCalleeData) == NDKPI_ILP32_LP64(76, 88),
                    "NDK_ADAPTER_INFO.MaxCalleeData");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, AdapterFlags) == NDKPI_ILP32_LP64(80, 92),
                    "NDK_ADAPTER_INFO.AdapterFlags");
NDKPI_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, RdmaTechnology) == NDKPI_ILP32_LP64(84, 96),
                    "NDK_ADAPTER_INFO.RdmaTechnology");
NDKPI_STATIC_ASSERT(sizeof(NDK_EXTENSION_INTERFACE) == sizeof(void *), "NDK_EXTENSION_INTERFACE");

/* ------------------------------------------------------------------------- */
/* Objects (every one starts with the header and its dispatch table)          */

typedef struct _NDK_ADAPTER NDK_ADAPTER;
typedef struct _NDK_PD NDK_PD;
typedef struct _NDK_CQ NDK_CQ;
typedef struct _NDK_MR NDK_MR;
typedef struct _NDK_MW NDK_MW;
typedef struct _NDK_QP NDK_QP;
typedef struct _NDK_SRQ NDK_SRQ;
typedef struct _NDK_CONNECTOR NDK_CONNECTOR;
typedef struct _NDK_LISTENER NDK_LISTENER;
typedef struct _NDK_SHARED_ENDPOINT NDK_SHARED_ENDPOINT;

/* Callbacks. They run on the library's callback thread, one at a time, never inside
 * the call that returned STATUS_PENDING; a callback may call into the library again
 * (post, close), but must not close the adapter. */
typedef VOID (*NDK_FN_REQUEST_COMPLETION)(PVOID Context, NTSTATUS Status);
typedef VOID (*NDK_FN_CREATE_COMPLETION)(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER *pNdkObject);
typedef VOID (*NDK_FN_CLOSE_COMPLETION)(PVOID Context);
typedef VOID (*NDK_FN_CQ_NOTIFICATION_CALLBACK)(PVOID CqNotificationContext, NTSTATUS CqStatus);
typedef VOID (*NDK_FN_SRQ_NOTIFICATION_CALLBACK)(PVOID SrqNotificationContext, NTSTATUS SrqStatus);
typedef VOID (*NDK_FN_CONNECT_EVENT_CALLBACK)(PVOID ConnectEventContext, NDK_CONNECTOR *pNdkConnector);
typedef VOID (*NDK_FN_DISCONNECT_EVENT_CALLBACK)(PVOID DisconnectEventContext);
/* NDKPI 2.1 (NdkCompleteConnectEx, NdkAcceptEx): this provider passes reason 0 ("no
 * reason given"). */
typedef VOID (*NDK_FN_DISCONNECT_EVENT_CALLBACK_EX)(PVOID DisconnectEventContext, ULONG ProviderDisconnectReason);

/* Common entries. */
typedef NTSTATUS (*NDK_FN_CLOSE_OBJECT)(NDK_OBJECT_HEADER *pNdkObject, NDK_FN_CLOSE_COMPLETION CloseCompletion,
                                        PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_QUERY_EXTENSION_INTERFACE)(NDK_OBJECT_HEADER *pNdkObject, GUID *ExtensionInterfaceID,
                                                     NDK_VERSION ExtensionInterfaceVersion,
                                                     NDK_EXTENSION_INTERFACE *pExtensionInterface);

/* Adapter. */
typedef NTSTATUS (*NDK_FN_QUERY_ADAPTER_INFO)(NDK_ADAPTER *pNdkAdapter, NDK_ADAPTER_INFO *pInfo, ULONG *pBufferSize);
/* Declared for source compatibility: no dispatch table holds it. */
typedef NTSTATUS (*NDK_FN_QUERY_ADAPTER_INFO_EX)(NDK_ADAPTER *pNdkAdapter, NDK_VERSION Version, NDK_ADAPTER_INFO *pInfo,
                                                 ULONG *pBufferSize);
typedef NTSTATUS (*NDK_FN_CREATE_CQ)(NDK_ADAPTER *pNdkAdapter, ULONG CqDepth,
                                     NDK_FN_CQ_NOTIFICATION_CALLBACK CqNotification, PVOID CqNotificationContext,
                                     GROUP_AFFINITY *Affinity, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_CQ **ppNdkCq);
typedef NTSTATUS (*NDK_FN_CREATE_PD)(NDK_ADAPTER *pNdkAdapter, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_PD **ppNdkPd);
typedef NTSTATUS (*NDK_FN_CREATE_SHARED_ENDPOINT)(NDK_ADAPTER *pNdkAdapter, CONST PSOCKADDR pAddress,
                                                  ULONG AddressLength, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                                  PVOID RequestContext, NDK_SHARED_ENDPOINT **ppNdkSharedEndpoint);
typedef NTSTATUS (*NDK_FN_CREATE_CONNECTOR)(NDK_ADAPTER *pNdkAdapter, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                            PVOID RequestContext, NDK_CONNECTOR **ppNdkConnector);
typedef NTSTATUS (*NDK_FN_CREATE_LISTENER)(NDK_ADAPTER *pNdkAdapter, NDK_FN_CONNECT_EVENT_CALLBACK ConnectEvent,
                                           PVOID ConnectEventContext, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                           PVOID RequestContext, NDK_LISTENER **ppNdkListener);
typedef NTSTATUS (*NDK_FN_BUILD_LAM)(NDK_ADAPTER *pNdkAdapter, MDL *Mdl, SIZE_T Length,
                                     NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext,
                                     NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM, ULONG *pLAMSize, ULONG *pFBO);
typedef VOID (*NDK_FN_RELEASE_LAM)(NDK_ADAPTER *pNdkAdapter, NDK_LOGICAL_ADDRESS_MAPPING *pNdkLAM);

typedef struct _NDK_ADAPTER_DISPATCH {
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_QUERY_ADAPTER_INFO NdkQueryAdapterInfo;
    NDK_FN_CREATE_CQ NdkCreateCq;
    NDK_FN_CREATE_PD NdkCreatePd;
    NDK_FN_CREATE_SHARED_ENDPOINT NdkCreateSharedEndpoint;
    NDK_FN_CREATE_CONNECTOR NdkCreateConnector;
    NDK_FN_CREATE_LISTENER NdkCreateListener;
    NDK_FN_BUILD_LAM NdkBuildLAM;
    NDK_FN_RELEASE_LAM NdkReleaseLAM;
} NDK_ADAPTER_DISPATCH;

struct _NDK_ADAPTER {
    NDK_OBJECT_HEADER Header;
    CONST NDK_ADAPTER_DISPATCH *Dispatch;
};

/* PD. */
typedef NTSTATUS (*NDK_FN_CREATE_MR)(NDK_PD *pNdkPd, BOOLEAN FastRegister, NDK_FN_CREATE_COMPLETION CreateCompletion,
                                     PVOID RequestContext, NDK_MR **ppNdkMr);
typedef NTSTATUS (*NDK_FN_CREATE_MW)(NDK_PD *pNdkPd, NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                     NDK_MW **ppNdkMw);
typedef NTSTATUS (*NDK_FN_CREATE_SRQ)(NDK_PD *pNdkPd, ULONG SrqDepth, ULONG MaxReceiveRequestSge,
                                      ULONG NotifyThreshold, NDK_FN_SRQ_NOTIFICATION_CALLBACK SrqNotification,
                                      PVOID SrqNotificationContext, GROUP_AFFINITY *Affinity,
                                      NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                      NDK_SRQ **ppNdkSrq);
typedef NTSTATUS (*NDK_FN_CREATE_QP)(NDK_PD *pNdkPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq, PVOID QPContext,
                                     ULONG ReceiveQueueDepth, ULONG InitiatorQueueDepth, ULONG MaxReceiveRequestSge,
                                     ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                     NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                     NDK_QP **ppNdkQp);
typedef NTSTATUS (*NDK_FN_CREATE_QP_WITH_SRQ)(NDK_PD *pNdkPd, NDK_CQ *pReceiveCq, NDK_CQ *pInitiatorCq,
                                              NDK_SRQ *pSrq, PVOID QPContext, ULONG InitiatorQueueDepth,
                                              ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                              NDK_FN_CREATE_COMPLETION CreateCompletion, PVOID RequestContext,
                                              NDK_QP **ppNdkQp);
typedef VOID (*NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN)(NDK_PD *pNdkPd, UINT32 *pToken);

typedef struct _NDK_PD_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkClosePd;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_CREATE_MR NdkCreateMr;
    NDK_FN_CREATE_MW NdkCreateMw;
    NDK_FN_CREATE_SRQ NdkCreateSrq;
    NDK_FN_CREATE_QP NdkCreateQp;
    NDK_FN_CREATE_QP_WITH_SRQ NdkCreateQpWithSrq;
    NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN NdkGetPrivilegedMemoryRegionToken;
} NDK_PD_DISPATCH;

struct _NDK_PD {
    NDK_OBJECT_HEADER Header;
    CONST NDK_PD_DISPATCH *Dispatch;
};

/* MR. */
typedef NTSTATUS (*NDK_FN_REGISTER_MR)(NDK_MR *pNdkMr, MDL *Mdl, SIZE_T Length, ULONG Flags,
                                       NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_DEREGISTER_MR)(NDK_MR *pNdkMr, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                         PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_INITIALIZE_FAST_REGISTER_MR)(NDK_MR *pNdkMr, ULONG AdapterPageCount, BOOLEAN RemoteAccess,
                                                       NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                                       PVOID RequestContext);
typedef UINT32 (*NDK_FN_GET_REMOTE_TOKEN_FROM_MR)(NDK_MR *pNdkMr);
typedef UINT32 (*NDK_FN_GET_LOCAL_TOKEN_FROM_MR)(NDK_MR *pNdkMr);

typedef struct _NDK_MR_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseMr;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_REGISTER_MR NdkRegisterMr;
    NDK_FN_DEREGISTER_MR NdkDeregisterMr;
    NDK_FN_INITIALIZE_FAST_REGISTER_MR NdkInitializeFastRegisterMr;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MR NdkGetRemoteTokenFromMr;
    NDK_FN_GET_LOCAL_TOKEN_FROM_MR NdkGetLocalTokenFromMr;
} NDK_MR_DISPATCH;

struct _NDK_MR {
    NDK_OBJECT_HEADER Header;
    CONST NDK_MR_DISPATCH *Dispatch;
};

/* MW: a window over part of an MR, given its range and rights by NdkBind. */
typedef UINT32 (*NDK_FN_GET_REMOTE_TOKEN_FROM_MW)(NDK_MW *pNdkMw);

typedef struct _NDK_MW_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseMw;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MW NdkGetRemoteTokenFromMw;
} NDK_MW_DISPATCH;

struct _NDK_MW {
    NDK_OBJECT_HEADER Header;
    CONST NDK_MW_DISPATCH *Dispatch;
};

/* CQ. */
typedef NTSTATUS (*NDK_FN_RESIZE_CQ)(NDK_CQ *pNdkCq, ULONG CqDepth, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                     PVOID RequestContext);
typedef VOID (*NDK_FN_ARM_CQ)(NDK_CQ *pNdkCq, ULONG Type);
typedef ULONG (*NDK_FN_GET_CQ_RESULTS)(NDK_CQ *pNdkCq, NDK_RESULT Results[], ULONG nResults);
typedef NTSTATUS (*NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION)(NDK_CQ *pNdkCq, ULONG ModerationInterval,
                                                           ULONG ModerationCount);
typedef ULONG (*NDK_FN_GET_CQ_RESULTS_EX)(NDK_CQ *pNdkCq, NDK_RESULT_EX Results[], ULONG nResults);

typedef struct _NDK_CQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseCq;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_RESIZE_CQ NdkResizeCq;
    NDK_FN_ARM_CQ NdkArmCq;
    NDK_FN_GET_CQ_RESULTS NdkGetCqResults;
    NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION NdkControlCqInterruptModeration;
    NDK_FN_GET_CQ_RESULTS_EX NdkGetCqResultsEx;
} NDK_CQ_DISPATCH;

struct _NDK_CQ {
    NDK_OBJECT_HEADER Header;
    CONST NDK_CQ_DISPATCH *Dispatch;
};

/* QP. NdkFlush: see "NdkFlush" at the top of this file. */
typedef VOID (*NDK_FN_FLUSH)(NDK_QP *pNdkQp);
typedef NTSTATUS (*NDK_FN_SEND)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge, ULONG Flags);
typedef NTSTATUS (*NDK_FN_RECEIVE)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge);
typedef NTSTATUS (*NDK_FN_BIND)(NDK_QP *pNdkQp, PVOID RequestContext, NDK_MR *pMr, NDK_MW *pMw,
                                PVOID VirtualAddress, SIZE_T Length, ULONG Flags);
typedef NTSTATUS (*NDK_FN_FAST_REGISTER)(NDK_QP *pNdkQp, PVOID RequestContext, NDK_MR *pMr, ULONG AdapterPageCount,
                                         CONST NDK_LOGICAL_ADDRESS *AdapterPageArray, ULONG FBO, SIZE_T Length,
                                         PVOID BaseVirtualAddress, ULONG Flags);
typedef NTSTATUS (*NDK_FN_INVALIDATE)(NDK_QP *pNdkQp, PVOID RequestContext, NDK_OBJECT_HEADER *pNdkMrOrMw,
                                      ULONG Flags);
typedef NTSTATUS (*NDK_FN_READ)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge,
                                UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);
typedef NTSTATUS (*NDK_FN_WRITE)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge,
                                 UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);
typedef NTSTATUS (*NDK_FN_SEND_AND_INVALIDATE)(NDK_QP *pNdkQp, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge,
                                               ULONG Flags, UINT32 RemoteToken);

typedef struct _NDK_QP_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseQp;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_FLUSH NdkFlush;
    NDK_FN_SEND NdkSend;
    NDK_FN_RECEIVE NdkReceive;
    NDK_FN_BIND NdkBind;
    NDK_FN_FAST_REGISTER NdkFastRegister;
    NDK_FN_INVALIDATE NdkInvalidate;
    NDK_FN_READ NdkRead;
    NDK_FN_WRITE NdkWrite;
    NDK_FN_SEND_AND_INVALIDATE NdkSendAndInvalidate;
} NDK_QP_DISPATCH;

struct _NDK_QP {
    NDK_OBJECT_HEADER Header;
    CONST NDK_QP_DISPATCH *Dispatch;
};

/* SRQ and shared endpoint: declared for source compatibility; this provider creates
 * neither (their create calls return STATUS_NOT_SUPPORTED). */
typedef NTSTATUS (*NDK_FN_MODIFY_SRQ)(NDK_SRQ *pNdkSrq, ULONG SrqDepth, ULONG NotifyThreshold,
                                      NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_SRQ_RECEIVE)(NDK_SRQ *pNdkSrq, PVOID RequestContext, CONST NDK_SGE *pSgl, ULONG nSge);

typedef struct _NDK_SRQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseSrq;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_MODIFY_SRQ NdkModifySrq;
    NDK_FN_SRQ_RECEIVE NdkSrqReceive;
} NDK_SRQ_DISPATCH;

struct _NDK_SRQ {
    NDK_OBJECT_HEADER Header;
    CONST NDK_SRQ_DISPATCH *Dispatch;
};

typedef NTSTATUS (*NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS)(NDK_SHARED_ENDPOINT *pNdkSharedEndpoint,
                                                             PSOCKADDR pAddress, ULONG *pAddressLength);

typedef struct _NDK_SHARED_ENDPOINT_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseSharedEndpoint;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS NdkGetLocalAddress;
} NDK_SHARED_ENDPOINT_DISPATCH;

struct _NDK_SHARED_ENDPOINT {
    NDK_OBJECT_HEADER Header;
    CONST NDK_SHARED_ENDPOINT_DISPATCH *Dispatch;
};

/* Connector. Addresses and private data are `CONST PSOCKADDR` and `CONST PVOID` as
 * in ndkpi.h: constant pointers to data the provider only reads. */
typedef NTSTATUS (*NDK_FN_CONNECT)(NDK_CONNECTOR *pNdkConnector, NDK_QP *pNdkQp, CONST PSOCKADDR pSrcAddress,
                                   ULONG SrcAddressLength, CONST PSOCKADDR pDestAddress, ULONG DestAddressLength,
                                   ULONG InboundReadLimit, ULONG OutboundReadLimit, CONST PVOID pPrivateData,
                                   ULONG PrivateDataLength, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                   PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_CONNECT_WITH_SHARED_ENDPOINT)(NDK_CONNECTOR *pNdkConnector, NDK_QP *pNdkQp,
                                                        NDK_SHARED_ENDPOINT *pNdkSharedEndpoint,
                                                        CONST PSOCKADDR pDestAddress, ULONG DestAddressLength,
                                                        ULONG InboundReadLimit, ULONG OutboundReadLimit,
                                                        CONST PVOID pPrivateData, ULONG PrivateDataLength,
                                                        NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                                        PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_COMPLETE_CONNECT)(NDK_CONNECTOR *pNdkConnector,
                                            NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent,
                                            PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                            PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_ACCEPT)(NDK_CONNECTOR *pNdkConnector, NDK_QP *pNdkQp, ULONG InboundReadLimit,
                                  ULONG OutboundReadLimit, CONST PVOID pPrivateData, ULONG PrivateDataLength,
                                  NDK_FN_DISCONNECT_EVENT_CALLBACK DisconnectEvent, PVOID DisconnectEventContext,
                                  NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_REJECT)(NDK_CONNECTOR *pNdkConnector, CONST PVOID pPrivateData, ULONG PrivateDataLength);
typedef NTSTATUS (*NDK_FN_GET_CONNECTION_DATA)(NDK_CONNECTOR *pNdkConnector, ULONG *pInboundReadLimit,
                                               ULONG *pOutboundReadLimit, PVOID pPrivateData,
                                               ULONG *pPrivateDataLength);
typedef NTSTATUS (*NDK_FN_GET_LOCAL_ADDRESS)(NDK_CONNECTOR *pNdkConnector, PSOCKADDR pAddress, ULONG *pAddressLength);
typedef NTSTATUS (*NDK_FN_GET_PEER_ADDRESS)(NDK_CONNECTOR *pNdkConnector, PSOCKADDR pAddress, ULONG *pAddressLength);
typedef NTSTATUS (*NDK_FN_DISCONNECT)(NDK_CONNECTOR *pNdkConnector, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                      PVOID RequestContext);
/* Declared for source compatibility: no dispatch table holds it. */
typedef NTSTATUS (*NDK_FN_DISCONNECT_EX)(NDK_CONNECTOR *pNdkConnector, BOOLEAN Abortive,
                                         NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
/* NDKPI 2.1: as NdkCompleteConnect and NdkAccept, with a DisconnectEvent that takes
 * the provider's reason. */
typedef NTSTATUS (*NDK_FN_COMPLETE_CONNECT_EX)(NDK_CONNECTOR *pNdkConnector,
                                               NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
                                               PVOID DisconnectEventContext,
                                               NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_ACCEPT_EX)(NDK_CONNECTOR *pNdkConnector, NDK_QP *pNdkQp, ULONG InboundReadLimit,
                                     ULONG OutboundReadLimit, CONST PVOID pPrivateData, ULONG PrivateDataLength,
                                     NDK_FN_DISCONNECT_EVENT_CALLBACK_EX DisconnectEvent,
                                     PVOID DisconnectEventContext, NDK_FN_REQUEST_COMPLETION RequestCompletion,
                                     PVOID RequestContext);

typedef struct _NDK_CONNECTOR_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseConnector;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_CONNECT NdkConnect;
    NDK_FN_CONNECT_WITH_SHARED_ENDPOINT NdkConnectWithSharedEndpoint;
    NDK_FN_COMPLETE_CONNECT NdkCompleteConnect;
    NDK_FN_ACCEPT NdkAccept;
    NDK_FN_REJECT NdkReject;
    NDK_FN_GET_CONNECTION_DATA NdkGetConnectionData;
    NDK_FN_GET_LOCAL_ADDRESS NdkGetLocalAddress;
    NDK_FN_GET_PEER_ADDRESS NdkGetPeerAddress;
    NDK_FN_DISCONNECT NdkDisconnect;
    NDK_FN_COMPLETE_CONNECT_EX NdkCompleteConnectEx;
    NDK_FN_ACCEPT_EX NdkAcceptEx;
} NDK_CONNECTOR_DISPATCH;

struct _NDK_CONNECTOR {
    NDK_OBJECT_HEADER Header;
    CONST NDK_CONNECTOR_DISPATCH *Dispatch;
};

/* Listener. */
typedef VOID (*NDK_FN_CONTROL_CONNECT_EVENTS)(NDK_LISTENER *pNdkListener, BOOLEAN Pause);
typedef NTSTATUS (*NDK_FN_LISTEN)(NDK_LISTENER *pNdkListener, CONST PSOCKADDR pAddress, ULONG AddressLength,
                                  NDK_FN_REQUEST_COMPLETION RequestCompletion, PVOID RequestContext);
typedef NTSTATUS (*NDK_FN_GET_LISTENER_LOCAL_ADDRESS)(NDK_LISTENER *pNdkListener, PSOCKADDR pAddress,
                                                      ULONG *pAddressLength);

typedef struct _NDK_LISTENER_DISPATCH {
    NDK_FN_CLOSE_OBJECT NdkCloseListener;
    NDK_FN_QUERY_EXTENSION_INTERFACE NdkQueryExtension;
    NDK_FN_LISTEN NdkListen;
    NDK_FN_GET_LISTENER_LOCAL_ADDRESS NdkGetLocalAddress;
    NDK_FN_CONTROL_CONNECT_EVENTS NdkControlConnectEvents;
} NDK_LISTENER_DISPATCH;

struct _NDK_LISTENER {
    NDK_OBJECT_HEADER Header;
    CONST NDK_LISTENER_DISPATCH *Dispatch;
};

/* Every dispatch table is an array of entry points in ndkpi.h's order, and every object
 * is its header then its table's address. */
NDKPI_STATIC_ASSERT(sizeof(NDK_ADAPTER_DISPATCH) == 9 * sizeof(void *), "NDK_ADAPTER_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_PD_DISPATCH) == 8 * sizeof(void *), "NDK_PD_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_MR_DISPATCH) == 7 * sizeof(void *), "NDK_MR_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_MW_DISPATCH) == 3 * sizeof(void *), "NDK_MW_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_CQ_DISPATCH) == 7 * sizeof(void *), "NDK_CQ_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_QP_DISPATCH) == 11 * sizeof(void *), "NDK_QP_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_SRQ_DISPATCH) == 4 * sizeof(void *), "NDK_SRQ_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_SHARED_ENDPOINT_DISPATCH) == 3 * sizeof(void *), "NDK_SHARED_ENDPOINT_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_CONNECTOR_DISPATCH) == 13 * sizeof(void *), "NDK_CONNECTOR_DISPATCH");
NDKPI_STATIC_ASSERT(offsetof(NDK_CONNECTOR_DISPATCH, NdkDisconnect) == 10 * sizeof(void *),
                    "NDK_CONNECTOR_DISPATCH: the 2.1 entries follow NdkDisconnect");
NDKPI_STATIC_ASSERT(sizeof(NDK_LISTENER_DISPATCH) == 5 * sizeof(void *), "NDK_LISTENER_DISPATCH");
NDKPI_STATIC_ASSERT(sizeof(NDK_QP) == NDKPI_ILP32_LP64(28, 48), "an object: header and dispatch pointer");
NDKPI_STATIC_ASSERT(offsetof(NDK_QP, Dispatch) == NDKPI_ILP32_LP64(24, 40), "an object's dispatch pointer");

#ifdef __cplusplus
}
#endif

#endif /* NDKPI_H */
