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
 *
 * Returns
 *   STATUS_SUCCESS                *Adapter is open
 *   STATUS_INVALID_PARAMETER      Adapter is NULL or Device is not a valid name
 *   STATUS_INSUFFICIENT_RESOURCES out of memory or threads
 *   STATUS_NETWORK_UNREACHABLE    the device could not be opened or started
 *   STATUS_IO_TIMEOUT             the device did not answer the link reset
 *   STATUS_NOT_SUPPORTED          the device runs an incompatible layout version
 */
NDKFPGA_API NTSTATUS NdkFpgaOpenAdapter(const char *Device, NDK_ADAPTER **Adapter);

/* Close the adapter. Blocks until every callback on every child object has returned
 * and the link is shut down (replies still on their way get up to 5 s); requests
 * still outstanding then complete with STATUS_CANCELLED first; objects the consumer
 * left open are freed (their close callbacks do not run). Must not be called from a
 * callback. NULL is ignored.
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

/* Adapter counters and the firmware's cost of the last work request, fresh from the
 * board (INFO). Returns STATUS_SUCCESS, STATUS_INVALID_PARAMETER (NULL argument) or
 * the link's failure (as NdkFpgaWriteBuffer). */
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

#ifdef __cplusplus
}
#endif

#endif /* NDKFPGA_H */
