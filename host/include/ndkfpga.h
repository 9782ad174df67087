/* SPDX-License-Identifier: Apache-2.0 */
/* ndkfpga.h: the platform calls of libndkfpga that Windows does through NDIS:
 * opening and closing an adapter, and allocating adapter memory for buffers.
 * Everything else goes through the NDKPI dispatch tables of ndkpi.h.
 *
 * Every call returns an NTSTATUS (or nothing); every error is a documented code.
 * Build with `pkg-config --cflags --libs ndkfpga`.
 */
#ifndef NDKFPGA_H
#define NDKFPGA_H

#include "ndkpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The NDKPI version this provider reports in NDK_ADAPTER_INFO and every object header:
 * 2.1, whose NDK_RESULT_EX (ProviderErrorCode) and connector table (NdkCompleteConnectEx,
 * NdkAcceptEx) ndkpi.h declares. */
#define NDKFPGA_NDK_VERSION_MAJOR 2
#define NDKFPGA_NDK_VERSION_MINOR 1

#if defined(__GNUC__)
#define NDKFPGA_API __attribute__((visibility("default")))
#else
#define NDKFPGA_API
#endif

/* Open an adapter and reset it (every MR, QP and key-table entry of a previous
 * session is freed on the board).
 *
 * Device names:
 *   NULL or "auto"     the first USB board found, else the simulation ("sim")
 *   "sim"              start the Verilator board model (nfsim) and connect to it
 *   "sim:PATH"         connect to an nfsim already listening on Unix socket PATH
 *   "model"            start the software adapter (nfmodel: firmware host build)
 *   "model:PATH"       connect to an nfmodel listening on PATH
 *   "usb"              the first supported FTDI board; "usb:BUS-ADDRESS" a given one
 *   "tty:PATH"         a serial device (e.g. /dev/ttyUSB0)
 *   "sim,net=NAME,ip=A.B.C.D[/N][,OPT...]", "model,net=...": start one whose network
 *                      port is on segment NAME (shared by every adapter the user opens
 *                      with that NAME, in any process); the library sets ip (prefix N,
 *                      default 24) and mac=XX:XX:XX:XX:XX:XX if given. Per-port options:
 *                      loss=P dup=P reorder=P corrupt=P (on the frames it sends),
 *                      pcap=FILE (its frames both ways), tap=IFNAME (a TAP device on the
 *                      segment; root). host/README.md "Device strings" has the details.
 *
 * Returns
 *   STATUS_SUCCESS                *Adapter is open
 *   STATUS_INVALID_PARAMETER      Adapter is NULL, Device is not a valid name, or a bad
 *                                 option (NdkFpgaErrorMessage(NULL) names it; nothing is
 *                                 started)
 *   STATUS_ACCESS_DENIED          pcap= cannot be written, or no private socket directory
 *   STATUS_INSUFFICIENT_RESOURCES out of memory or threads
 *   STATUS_NETWORK_UNREACHABLE    the device could not be opened or started
 *   STATUS_IO_TIMEOUT             the device did not answer the link reset
 *   STATUS_NOT_SUPPORTED          the device runs an incompatible layout version, or net= was
 *                                 given for an adapter without a network port
 */
NDKFPGA_API NTSTATUS NdkFpgaOpenAdapter(const char *Device, NDK_ADAPTER **Adapter);

/* Close the adapter. Blocks until every callback on every child object has returned
 * and the link is shut down (replies still on their way get up to 1 s, then the link
 * stops, even with a frozen or dead adapter: the close takes about 1 s at most plus
 * the consumer's callbacks); requests still outstanding then complete with
 * STATUS_CANCELLED first, each exactly once; objects the consumer left open are freed
 * (their close callbacks do not run). Must not be called from a callback. NULL is
 * ignored.
 *
 * Every request and work request has a deadline: unanswered for 30 s on a live link
 * ($NDKFPGA_REQUEST_TIMEOUT_MS) it completes STATUS_IO_TIMEOUT, and a late answer is
 * dropped. docs/guarantees.md lists every guarantee and bound.
 *
 * If the link dies while the adapter is open (board unplugged, simulator killed),
 * every outstanding request and work request completes with the link's status
 * (STATUS_CONNECTION_RESET or STATUS_IO_TIMEOUT) and later calls fail with it or
 * with STATUS_CONNECTION_INVALID (work requests: the QPs are no longer connected). */
NDKFPGA_API VOID NdkFpgaCloseAdapter(NDK_ADAPTER *Adapter);

/* Close any NDK object through its dispatch table (the adapter: NdkFpgaCloseAdapter,
 * then STATUS_SUCCESS). Returns STATUS_SUCCESS (closed, no callback follows) or
 * STATUS_PENDING (CloseCompletion runs once the object's children are closed and its
 * outstanding requests have completed). A close never fails. */
NDKFPGA_API NTSTATUS NdkCloseObject(NDK_OBJECT_HEADER *Object, NDK_FN_CLOSE_COMPLETION CloseCompletion, PVOID Context);

/* Allocate Length bytes of adapter memory (user region), whole pages, and describe
 * them with an MDL. The MDL's virtual address is a unique, page-aligned host address
 * range reserved with mmap(PROT_NONE): it names the buffer in NdkRegisterMr and
 * NDK_SGE.VirtualAddress; it is never dereferenced. MmGetMdlPfnArray(*Mdl) holds the
 * adapter page numbers (adapter address >> PAGE_SHIFT) of the pages; pages of one
 * buffer need not be adjacent in adapter memory. The memory's content is undefined.
 *
 * Returns
 *   STATUS_SUCCESS                *Mdl describes the buffer
 *   STATUS_INVALID_PARAMETER      NULL argument or Length 0
 *   STATUS_INSUFFICIENT_RESOURCES not enough free adapter pages (or host memory)
 */
NDKFPGA_API NTSTATUS NdkFpgaAllocateBuffer(NDK_ADAPTER *Adapter, SIZE_T Length, MDL **Mdl);

/* Same, with the pages placed in adapter memory in the reverse of their virtual
 * order, so the buffer is virtually contiguous but physically scattered (tests and
 * examples of fast-register over non-contiguous pages). */
NDKFPGA_API NTSTATUS NdkFpgaAllocateScatteredBuffer(NDK_ADAPTER *Adapter, SIZE_T Length, MDL **Mdl);

/* Free a buffer from NdkFpgaAllocateBuffer. Its pages return to the adapter; the
 * consumer must have deregistered or invalidated every MR over them. NULL is ignored,
 * as is an MDL this adapter did not allocate. Buffers still allocated when the
 * adapter closes are freed by NdkFpgaCloseAdapter. */
NDKFPGA_API VOID NdkFpgaFreeBuffer(NDK_ADAPTER *Adapter, MDL *Mdl);

/* Copy Length bytes from Data into the buffer described by Mdl, starting Offset bytes
 * after MmGetMdlVirtualAddress(Mdl) (MEM_WRITE messages, split to fit the link's
 * frames and pages). Blocks until the adapter has written them.
 *
 * Returns
 *   STATUS_SUCCESS                done
 *   STATUS_INVALID_PARAMETER      NULL argument, MDL not from this adapter, or the
 *                                 range goes past MmGetMdlByteCount(Mdl)
 *   STATUS_CONNECTION_RESET, STATUS_IO_TIMEOUT, STATUS_CONNECTION_ABORTED
 *                                 the link to the adapter is lost
 *   (any status the adapter answered with, e.g. STATUS_INVALID_PARAMETER)
 */
NDKFPGA_API NTSTATUS NdkFpgaWriteBuffer(NDK_ADAPTER *Adapter, MDL *Mdl, SIZE_T Offset, const VOID *Data, SIZE_T Length);

/* Copy Length bytes of the buffer, from Offset, into Data (MEM_READ messages).
 * Statuses as NdkFpgaWriteBuffer. */
NDKFPGA_API NTSTATUS NdkFpgaReadBuffer(NDK_ADAPTER *Adapter, MDL *Mdl, SIZE_T Offset, VOID *Data, SIZE_T Length);

/* ------------------------------------------------------------------------- */
/* Buffers in ordinary host memory. These stand in for the kernel's IoAllocateMdl and
 * MmBuildMdlForNonPagedPool, so a consumer keeps its data where its CPU reads and
 * writes it: NdkBuildLAM, NdkRegisterMr and SGEs (through the MR's token or the
 * privileged token and a LAM's addresses) accept such MDLs, and the library moves the
 * bytes between host memory and adapter memory where NDK hands a buffer's ownership
 * between consumer and adapter (docs/host-memory.md):
 *   into the adapter   when a request that reads local memory is posted (Send, the
 *                      source of a Write) and when a region is registered or
 *                      fast-registered;
 *   back to host       before the completion of a request that wrote local memory
 *                      (Receive: the bytes the Send brought; the sink of a Read) is
 *                      delivered, and when a region is invalidated (NdkInvalidate, a
 *                      peer's SendAndInvalidate), deregistered or closed.
 * The consumer does not touch a region the peer may write until it is invalidated,
 * nor a buffer a posted request uses until that request completes (NDK's own rule).
 * NdkBuildLAM over host memory takes adapter pages for the LAM's life (released by
 * NdkReleaseLAM); NdkRegisterMr takes them for the registration's.              */

/* An MDL describing Length bytes of host memory at VirtualAddress (mapped, readable
 * and writable, for as long as the MDL is used). SecondaryBuffer must be FALSE and
 * Irp NULL (there are no IRPs here); ChargeQuota is ignored. NULL: a NULL address,
 * Length 0, a range that wraps, SecondaryBuffer or Irp given, or no memory. */
NDKFPGA_API MDL *IoAllocateMdl(PVOID VirtualAddress, ULONG Length, BOOLEAN SecondaryBuffer, BOOLEAN ChargeQuota,
                               PVOID Irp);
/* Fill the MDL's page array (host page numbers); the MDL is usable from then on. An MDL
 * IoAllocateMdl did not return is ignored. */
NDKFPGA_API VOID MmBuildMdlForNonPagedPool(MDL *Mdl);
/* Free an MDL from IoAllocateMdl (not the memory it describes). A region registered over
 * it keeps what it needs; NULL and other MDLs are ignored. */
NDKFPGA_API VOID IoFreeMdl(MDL *Mdl);
/* The host address of a host-memory MDL's first byte (Priority is ignored; the kernel's
 * priorities and MdlMappingNoExecute exist so that consumer code compiles unchanged). */
typedef enum _MM_PAGE_PRIORITY { LowPagePriority = 0, NormalPagePriority = 16, HighPagePriority = 32 } MM_PAGE_PRIORITY;
#define MdlMappingNoExecute 0x40000000u
#define MmGetSystemAddressForMdlSafe(Mdl, Priority) ((void)(Priority), MmGetMdlVirtualAddress(Mdl))

/* Adapter counters and the firmware's cost of the last work request, fresh from the
 * board (INFO). Returns STATUS_SUCCESS, STATUS_INVALID_PARAMETER (NULL argument) or
 * the link's failure (as NdkFpgaWriteBuffer). Every counter, by kind and by status, is
 * in NdkFpgaQueryCounters. */
typedef struct _NDKFPGA_STATS {
    UINT32 FirmwareVersion;
    UINT32 ClockHz;
    UINT32 WorkRequests;        /* work requests executed by the firmware */
    UINT32 LastWorkRequestOp;   /* OP_WR_* of the last one */
    UINT32 LastWorkRequestCycles;   /* frame arrival to CQE posted */
    UINT32 LastWorkRequestFwCycles; /* of which firmware (not waiting on the engine) */
    UINT32 LinkRxOk, LinkRxBad, LinkRxDrop, LinkRetransmits;
    UINT64 Cycle;
} NDKFPGA_STATS;
NDKFPGA_API NTSTATUS NdkFpgaQueryStats(NDK_ADAPTER *Adapter, NDKFPGA_STATS *Stats);

/* Readable name of a status ("STATUS_ACCESS_VIOLATION"); never NULL. */
NDKFPGA_API const char *NdkFpgaStatusName(NTSTATUS Status);

/* ------------------------------------------------------------------------- */
/* Diagnostics: devices, adapter details, counters, link round trips (what the
 * ndkfpga command-line tool shows).                                          */

/* One line saying why a call failed, for people (the library also logs it, level
 * NDKFPGA_LOG_ERROR: see NdkFpgaSetLogCallback; it prints nothing by default). With Adapter NULL:
 * the last failure of a library call on this thread (e.g. why NdkFpgaOpenAdapter
 * could not open the device); with an adapter whose link is lost: why it was lost,
 * else as with NULL. "" when there is nothing to say; never NULL. The text stays
 * valid until the next call into the library on this thread (or the adapter is
 * closed). */
NDKFPGA_API const char *NdkFpgaErrorMessage(NDK_ADAPTER *Adapter);

/* The library's own messages, one line each (no newline), by level. */
#define NDKFPGA_LOG_NONE 0u    /* none */
#define NDKFPGA_LOG_ERROR 1u   /* a call failed: the text NdkFpgaErrorMessage returns, and its status */
#define NDKFPGA_LOG_WARNING 2u /* something went wrong that no call's status reports */
#define NDKFPGA_LOG_DEBUG 3u   /* detail for developers (and the output of the nfsim/nfmodel it starts) */
typedef VOID (*NDKFPGA_LOG_CALLBACK)(PVOID Context, ULONG Level, const char *Message);

/* Where the library's messages go. By default nowhere: the library writes nothing to
 * stderr unless $NDKFPGA_DEBUG is set ("1", "2", "3": up to that NDKFPGA_LOG_ level;
 * any other non-empty value: all), then each is one line "ndkfpga: MESSAGE".
 * With a Callback, the messages up to Level (NDKFPGA_LOG_*) go to it instead, from any
 * thread of the library (the link's, the callback thread, the caller's) and maybe from
 * several at once; $NDKFPGA_DEBUG is then ignored. The callback must not block; it may
 * call the library. Callback NULL goes back to the default. Process-wide (every
 * adapter); a message being delivered while this is called may still reach the old
 * callback. NdkFpgaErrorMessage works either way. */
NDKFPGA_API VOID NdkFpgaSetLogCallback(NDKFPGA_LOG_CALLBACK Callback, PVOID Context, ULONG Level);

/* A device NdkFpgaOpenAdapter can open. */
#define NDKFPGA_DEVICE_USB 1u   /* a board on USB (FT231X: ULX3S, FT2232H: ECP5-EVN) */
#define NDKFPGA_DEVICE_SIM 2u   /* the Verilator board model nfsim, started by the library */
#define NDKFPGA_DEVICE_MODEL 3u /* the software adapter nfmodel, started by the library */
typedef struct _NDKFPGA_DEVICE {
    ULONG Kind;             /* NDKFPGA_DEVICE_* */
    NTSTATUS Status;        /* STATUS_SUCCESS: it can be opened (as far as can be told without opening it);
                               STATUS_ACCESS_DENIED: a board this user may not open (install the udev
                               rule tools/99-ndkfpga.rules); STATUS_NO_SUCH_FILE: the binary the library
                               would start is missing or not executable */
    char Name[32];          /* the device name for NdkFpgaOpenAdapter: "usb:001-007", "sim", "model" */
    char Description[64];   /* "FT231X (ULX3S)", "Verilator board model (nfsim)", ... */
    char Path[256];         /* USB: the usbfs node (/dev/bus/usb/001/007); sim, model: the binary the
                               library starts ($NDKFPGA_SIM / $NDKFPGA_MODEL first), "" when none found */
} NDKFPGA_DEVICE;

/* List the boards on USB (in bus order), then "sim" and "model", opening nothing.
 * Fills up to *Count entries of Devices (Devices may be NULL when *Count is 0) and
 * sets *Count to the number of devices there are. Boards are left out when USB
 * cannot be listed (no usbfs, library built without the board transports).
 *
 * Returns
 *   STATUS_SUCCESS                every device is in Devices
 *   STATUS_BUFFER_TOO_SMALL       *Count (set to the number needed) is more than was given;
 *                                 the first entries are filled
 *   STATUS_INVALID_PARAMETER      Count is NULL, or Devices is NULL with *Count above 0
 */
NDKFPGA_API NTSTATUS NdkFpgaListDevices(NDKFPGA_DEVICE *Devices, ULONG *Count);

/* What the adapter is: versions, sizes and the build profile, mostly from the INFO the
 * board sent when the adapter was opened. */
#define NDKFPGA_PROFILE_NONE 0xFFFFFFFFu
typedef struct _NDKFPGA_ADAPTER_DETAILS {
    UINT32 FirmwareVersion;   /* major << 16 | minor */
    UINT32 HardwareVersion;   /* major << 16 | minor */
    UINT32 LayoutVersion;     /* version of the host/board message layouts (both sides agree, or the open fails) */
    UINT32 ClockHz;           /* the adapter's system clock */
    UINT32 LinkBaud;          /* the UART's bit rate (from its bit period in clocks) */
    UINT32 MemoryBytes;       /* adapter memory */
    UINT32 UserMemoryBytes;   /* of which buffers may use (NdkFpgaAllocateBuffer); the rest holds link slots */
    UINT32 PageSize;          /* PAGE_SIZE */
    UINT32 MptEntries;        /* key-table entries: MRs that may exist at once */
    UINT32 MttEntries;        /* translation-table entries: pages registered at once */
    UINT32 MaxFrmrPages;      /* the firmware's page limit of one fast-register MR (FRMRPageCount is the
                                 smaller of it and what one link frame carries) */
    UINT32 MaxQps;            /* queue pairs */
    UINT32 MaxSge;            /* SGEs per RDMA Read/Write */
    UINT32 LinkRxSlots;       /* frames the board buffers from the host (the host keeps one free) */
    UINT32 LinkTxSlots;       /* frames the board keeps in flight to the host */
    UINT32 LinkMaxPayload;    /* bytes of messages in one frame */
    UINT32 Profile;           /* index of the build profile (proto/profiles.toml) the sizes are, or
                                 NDKFPGA_PROFILE_NONE (sizes of no profile, or firmware too old to say) */
    char ProfileName[24];     /* its name ("SIM", "ULX3S_85K", "ULX3S_25K"); "" with NDKFPGA_PROFILE_NONE */
    char Device[160];         /* what was opened: "model (/path/to/nfmodel, pid 1234)", "usb:001-007", ... */
} NDKFPGA_ADAPTER_DETAILS;

/* Fill *Details. Asks the adapter for its profile (one STATS request).
 *
 * Returns
 *   STATUS_SUCCESS                *Details is filled
 *   STATUS_INVALID_PARAMETER      NULL argument
 *   STATUS_CONNECTION_RESET, STATUS_IO_TIMEOUT, STATUS_CONNECTION_ABORTED
 *                                 the link to the adapter is lost
 */
NDKFPGA_API NTSTATUS NdkFpgaQueryAdapterDetails(NDK_ADAPTER *Adapter, NDKFPGA_ADAPTER_DETAILS *Details);

/* One adapter counter. The board's counters count since it booted (opening the adapter
 * does not clear them) and wrap at 2^32; the host link's count since this adapter was
 * opened. Names are stable, lower case, unique within a group. */
#define NDKFPGA_COUNTER_LINK 1u           /* the board's side of the link: frames received, dropped, sent */
#define NDKFPGA_COUNTER_HOST_LINK 2u      /* this library's side of the link to this adapter */
#define NDKFPGA_COUNTER_OPERATION 3u      /* requests and work requests the firmware executed, by kind
                                             ("wr_fast_register", "mr_register", ...), whatever the outcome */
#define NDKFPGA_COUNTER_REFUSAL 4u        /* replies and completions the firmware sent with a failure status,
                                             by status ("access_violation", ...; "other") */
#define NDKFPGA_COUNTER_ACCESS_REFUSAL 5u /* completions carrying an engine refusal, by reason
                                             (NDK_RESULT_EX.ProviderErrorCode: "not_valid", "bad_key", ...) */
#define NDKFPGA_COUNTER_HOST 6u          /* what this library itself did with completions and requests, since
                                             open: "cq_overflows" (CQs that overflowed: each reported once
                                             with STATUS_BUFFER_OVERFLOW), "cq_dropped" (completions that
                                             found their CQ full or overflowed), "request_timeouts" and
                                             "wr_timeouts" (completed STATUS_IO_TIMEOUT: no answer in time),
                                             "close_cancelled" (work requests completed STATUS_CANCELLED by
                                             a QP's close or the adapter's) */
typedef struct _NDKFPGA_COUNTER {
    ULONG Group;              /* NDKFPGA_COUNTER_* */
    NTSTATUS Status;          /* REFUSAL: the status counted (STATUS_SUCCESS for "other" and other groups) */
    ULONG ProviderErrorCode;  /* ACCESS_REFUSAL: the reason counted; 0 otherwise */
    const char *Name;         /* static storage */
    const char *Description;  /* one line for people; static storage */
    UINT64 Value;
} NDKFPGA_COUNTER;

/* Read every counter: fills up to *Count entries of Counters and sets *Count to the
 * number of counters there are (the same for every adapter of this library). Call with
 * *Count = 0 to learn it without asking the adapter.
 *
 * Returns
 *   STATUS_SUCCESS                every counter is in Counters (fresh from the board: one STATS request)
 *   STATUS_BUFFER_TOO_SMALL       *Count (set to the number needed) is more than was given; nothing
 *                                 was asked of the adapter
 *   STATUS_INVALID_PARAMETER      NULL Adapter or Count, or Counters NULL with *Count above 0
 *   STATUS_NOT_SUPPORTED          the firmware predates the STATS request (rebuild the bitstream)
 *   STATUS_CONNECTION_RESET, STATUS_IO_TIMEOUT, STATUS_CONNECTION_ABORTED
 *                                 the link to the adapter is lost
 */
NDKFPGA_API NTSTATUS NdkFpgaQueryCounters(NDK_ADAPTER *Adapter, NDKFPGA_COUNTER *Counters, ULONG *Count);

/* Link round trips: PING messages, which the firmware echoes with their payload. */
#define NDKFPGA_PING_MAX_PAYLOAD 4064u /* LINK_MAX_PAYLOAD - MSG_HDR */
typedef struct _NDKFPGA_PING_RESULT {
    ULONG Replies;            /* pings answered and checked */
    UINT64 MinNs, MaxNs;      /* shortest and longest round trip (send to reply) */
    UINT64 TotalNs;           /* sum of the round trips (average = TotalNs / Replies) */
    UINT64 ElapsedNs;         /* first send to last reply */
} NDKFPGA_PING_RESULT;

/* Send Count pings of PayloadBytes each (rounded up to a multiple of 8), keeping up to
 * InFlight unanswered (1: one round trip at a time; more: the message rate the link
 * sustains), and wait for every reply; each must echo its payload. *Result is filled
 * with what was measured, also on failure.
 *
 * Returns
 *   STATUS_SUCCESS                every ping was answered with its payload
 *   STATUS_INVALID_PARAMETER      NULL argument, Count or InFlight 0, PayloadBytes above
 *                                 NDKFPGA_PING_MAX_PAYLOAD
 *   STATUS_INSUFFICIENT_RESOURCES out of memory
 *   STATUS_INTERNAL_ERROR         a reply did not carry its ping's payload back
 *   STATUS_CONNECTION_RESET, STATUS_IO_TIMEOUT, STATUS_CONNECTION_ABORTED
 *                                 the link to the adapter is lost
 *   (any status the adapter answered a ping with)
 */
NDKFPGA_API NTSTATUS NdkFpgaPing(NDK_ADAPTER *Adapter, ULONG Count, ULONG InFlight, ULONG PayloadBytes,
                                 NDKFPGA_PING_RESULT *Result);

/* The network port's addresses (NET_CONFIG on the link). */
typedef struct _NDKFPGA_PORT_ADDRESS {
    UCHAR Mac[6];       /* the port's MAC: at boot 02:6e:<the adapter's seed> */
    UCHAR Ipv4[4];      /* in wire order ({10, 0, 0, 2} is 10.0.0.2); zero until set */
    ULONG PrefixLength; /* the netmask's length, 8..32; 0 until set */
} NDKFPGA_PORT_ADDRESS;

#define NDKFPGA_PORT_SET_IPV4 1u /* set Ipv4 and PrefixLength */
#define NDKFPGA_PORT_SET_MAC 2u  /* set Mac (unicast, not all zero) */

/* Read the port's addresses into *Address (Flags 0), or set those Flags names from
 * *Address first and then read them back. The settings last until the adapter resets.
 *
 * Returns
 *   STATUS_SUCCESS                *Address holds the settings in effect
 *   STATUS_INVALID_PARAMETER      NULL argument, unknown Flags, or an address the
 *                                 adapter refuses (multicast or zero MAC, prefix out of
 *                                 range, a network or broadcast address...)
 *   STATUS_NOT_SUPPORTED          the adapter has no network port (the boards today)
 *   STATUS_CONNECTION_RESET, STATUS_IO_TIMEOUT   the link to the adapter is lost
 */
NDKFPGA_API NTSTATUS NdkFpgaPortAddress(NDK_ADAPTER *Adapter, ULONG Flags, NDKFPGA_PORT_ADDRESS *Address);

/* Parse an address as device strings write it (host/README.md, "Device strings") into
 * *Address: "A.B.C.D[/N]" (N 8..32, 24 when absent) into Ipv4 and PrefixLength with
 * NDKFPGA_PORT_SET_IPV4, or "XX:XX:XX:XX:XX:XX" (unicast, not all zero) into Mac with
 * NDKFPGA_PORT_SET_MAC; other fields are left as they are. Nothing is asked of an adapter.
 *
 * Returns
 *   STATUS_SUCCESS                the field is set
 *   STATUS_INVALID_PARAMETER      NULL argument, Flags not exactly one of the two, or text
 *                                 that is not such an address
 */
NDKFPGA_API NTSTATUS NdkFpgaParsePortAddress(const char *Text, ULONG Flags, NDKFPGA_PORT_ADDRESS *Address);

/* One entry of the network port's ARP cache. */
#define NDKFPGA_NEIGHBOR_INCOMPLETE 1u /* an ARP request is out, no answer yet */
#define NDKFPGA_NEIGHBOR_REACHABLE 2u  /* the MAC is known */
#define NDKFPGA_NEIGHBOR_FAILED 3u     /* no answer to the retries: connects to it fail HOST_UNREACHABLE for a while */
typedef struct _NDKFPGA_NEIGHBOR {
    UCHAR Ipv4[4]; /* in wire order, as NDKFPGA_PORT_ADDRESS */
    UCHAR Mac[6];  /* all zero unless REACHABLE */
    USHORT Reserved;
    ULONG State;   /* NDKFPGA_NEIGHBOR_* */
    ULONG Tries;   /* ARP requests sent since the entry was last filled */
    ULONG AgeMs;   /* since the entry was filled or its last request went out */
} NDKFPGA_NEIGHBOR;

/* Read the port's ARP cache (NET_NEIGH on the link): fills up to *Count entries of
 * Neighbors and sets *Count to the number of entries there are.
 *
 * Returns
 *   STATUS_SUCCESS                every entry is in Neighbors
 *   STATUS_BUFFER_TOO_SMALL       *Count (set to the number there are) is more than was
 *                                 given; the first entries are filled
 *   STATUS_INVALID_PARAMETER      NULL Adapter or Count, or Neighbors NULL with *Count above 0
 *   STATUS_NOT_SUPPORTED          the adapter has no network port (the boards today)
 *   STATUS_CONNECTION_RESET, STATUS_IO_TIMEOUT   the link to the adapter is lost
 */
NDKFPGA_API NTSTATUS NdkFpgaQueryNeighbors(NDK_ADAPTER *Adapter, NDKFPGA_NEIGHBOR *Neighbors, ULONG *Count);

/* The network port's PHY, managed over MDIO (IEEE 802.3 clause 22). */
#define NDKFPGA_PHY_QUERY 0u        /* read its status only */
#define NDKFPGA_PHY_LOOPBACK_ON 1u  /* loopback: every frame the port sends comes back to it, none leaves */
#define NDKFPGA_PHY_LOOPBACK_OFF 2u /* loopback off, auto-negotiation on and restarted */
#define NDKFPGA_PHY_LINK 0x1u         /* Flags: link up (BMSR) */
#define NDKFPGA_PHY_LOOPBACK 0x2u     /* Flags: in loopback (BMCR) */
#define NDKFPGA_PHY_FULL_DUPLEX 0x4u  /* Flags: full duplex */
#define NDKFPGA_PHY_AUTONEG 0x8u      /* Flags: auto-negotiation enabled (BMCR) */
#define NDKFPGA_PHY_AUTONEG_DONE 0x10u /* Flags: auto-negotiation complete (BMSR) */
typedef struct _NDKFPGA_PHY_STATUS {
    ULONG Address;   /* its MDIO address, 0..31 (the first whose PHYID1 is not 0xFFFF) */
    ULONG Id;        /* PHYID1 << 16 | PHYID2: OUI, model, revision */
    ULONG SpeedMbps; /* 10, 100 or 1000: BMCR's when auto-negotiation is off, else the best mode both
                        ends advertise; 0 while auto-negotiation has not completed */
    ULONG Flags;     /* NDKFPGA_PHY_* bits */
    USHORT Bmcr, Bmsr; /* registers 0 and 1 as read after the action */
} NDKFPGA_PHY_STATUS;

/* Put the port's PHY in or out of loopback (Action NDKFPGA_PHY_LOOPBACK_ON/OFF), or only
 * read it (NDKFPGA_PHY_QUERY), then fill Status (NET_PHY on the link). In loopback a
 * connection to the adapter's own address over the wire (QP_CONNECT_WIRE) runs through
 * the whole port and back without a cable: the check of a board alone.
 *
 * Returns
 *   STATUS_SUCCESS                Status holds the PHY after the action
 *   STATUS_INVALID_PARAMETER      NULL Adapter or Status, or an Action not listed above
 *                                 (the adapter refuses it; nothing changed)
 *   STATUS_NOT_SUPPORTED          the adapter has no network port
 *   STATUS_INVALID_DEVICE_STATE   no PHY answers on the MDIO bus (nothing changed)
 *   STATUS_INTERNAL_ERROR         the MDIO master did not finish a frame
 *   STATUS_CONNECTION_RESET, STATUS_IO_TIMEOUT   the link to the adapter is lost
 */
NDKFPGA_API NTSTATUS NdkFpgaPhyControl(NDK_ADAPTER *Adapter, ULONG Action, NDKFPGA_PHY_STATUS *Status);

#ifdef __cplusplus
}
#endif

#endif /* NDKFPGA_H */
