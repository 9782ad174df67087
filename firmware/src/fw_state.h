/* SPDX-License-Identifier: Apache-2.0 */
/* Adapter state every firmware module reads: the sizes read at boot and the counters
 * INFO and STATS report. The bottom layer: it calls nothing above hal.h.
 *   fw_main -> fw_link -> fw_msg -> fw_wr -> fw_tables -> fw_state -> hal */
#ifndef FW_STATE_H
#define FW_STATE_H

#include <stdint.h>

#include "nf_layout.h"

/* Adapter sizes read from SYS/LINK/ENGINE at boot (fw_main.c). */
struct fw_cfg {
    uint32_t clk_hz, uart_period, mem_bytes, user_base;
    uint32_t eng_wait_max; /* cycles an engine operation may take at most (fw_main.c), then it has failed */
    uint32_t mpt_entries, mtt_entries, max_frmr_pages;
    uint32_t rx_slots, tx_slots;
    uint32_t recv_entries; /* receive pool (fw_tables.c) */
    uint32_t profile; /* NF_PROFILE_*_INDEX whose sizes these are, or NF_PROFILE_NONE */
};

/* Counters reported by INFO and STATS (since boot: a link RESET keeps them). Each is
 * counted where the work is done; fw_state_put_stats only copies them. */
struct fw_stats {
    uint32_t retransmits, rx_dup, last_wr_op, last_wr_cycles, last_wr_fw_cycles;
    /* Work requests answered short without running (an overflowing frame's rest): the
     * work-request count is ops[] over the work requests less these (fw_stats_wr_count),
     * so a work request costs one counter. */
    uint32_t wr_short;
    uint32_t tx_overflow; /* replies that found no TX room (unreachable: every message's reply room is checked first) */
    uint32_t tx_stalls;   /* received frames held (no more messages taken from the link) for want of TX room */
    uint32_t wait_timeouts; /* bounded waits that ran out (engine operation, TX slot drain) */
    uint32_t faults;        /* traps taken: nonzero, the adapter is faulted (fw_fault) */
    uint32_t fault_cause, fault_pc; /* mcause and mepc of the last trap */
    /* The network port's IPv4 layer (fw_net.c): frames taken, answers, cache fills,
     * frames released unanswered, replies with no free TX slot, resolutions that failed. */
    uint32_t net_rx, net_arp_answered, net_arp_learned, net_icmp_answered, net_unhandled, net_tx_dropped;
    uint32_t net_resolve_timeouts;
    uint32_t rc_retransmits; /* RC go-back-N restarts (fw_rc.c) */
    uint32_t cm_resends;     /* CM MADs sent again (fw_cm.c) */
    uint32_t ops_unknown;                       /* messages with an op the firmware does not know */
    uint32_t refused_other;                     /* failure statuses NF_STAT_STATUS_LIST does not name */
    uint32_t ops[NF_STATS_OPS_COUNT];           /* messages handled, by NF_STAT_OP_* */
    uint32_t refused[NF_STATS_REFUSED_COUNT];   /* replies and CQEs with a failure status, by NF_STAT_STATUS_* */
    uint32_t refuse_codes[NF_STATS_REFUSE_CODES_COUNT]; /* CQEs with an engine refusal, by NF_REFUSE_* code */
};
_Static_assert(NF_STATS_OPS_COUNT == NF_STAT_OP_COUNT && NF_STATS_REFUSED_COUNT == NF_STAT_STATUS_COUNT,
               "STATS arrays are sized by their index enums");

/* What only session setup (an NdkRegisterMr region, a memory window's bind), teardown
 * or a loss runs: out of line and built for size (the firmware shares a small RAM),
 * leaving the work-request path short. */
#define FW_COLD __attribute__((noinline, cold))
/* What runs on every request and between requests: the idle poll, the link, the message
 * walk, a work request's success path and the status queries a host polls with. One
 * stretch at the image's start that must fit the instruction cache (firmware/link.ld),
 * so none of it evicts another part. Changes no code, only where it lies. */
#define FW_HOT __attribute__((section(".text.hot")))
/* The usual outcome of a test on the work-request path: the compiler lays it out as the
 * straight line, which VexRiscv's static prediction (a forward branch not taken) then
 * guesses. Changes no result. */
#define FW_LIKELY(c) __builtin_expect(!!(c), 1)
#define FW_UNLIKELY(c) __builtin_expect(!!(c), 0)

extern struct fw_cfg fw_cfg;
extern struct fw_stats fw_stats;

/* a x b, all 64 bits of it. The firmware is rv32i (PicoRV32 is built without its
 * multiplier: nf_cpu_picorv32.v) and multiplies only at boot and for the link's timeout,
 * never on a work request's path; shifts and adds, not libgcc's routines, which the FW
 * RAM has no room for. */
uint64_t fw_mul64(uint32_t a, uint32_t b);
/* A trap (cause: mcause; pc: the faulting instruction's address): recorded for STATS.
 * From then on every request but PING, INFO and STATS fails DEVICE_HARDWARE_ERROR: the
 * state the trap interrupted cannot be trusted. */
void fw_fault(uint32_t cause, uint32_t pc);
/* Work requests executed (INFO.wr_count). */
uint32_t fw_stats_wr_count(void);
/* Count one reply or CQE sent with a failure status (not SUCCESS) under its status. */
void fw_stats_refused(uint32_t status);
/* Fill an INFO struct at adapter address at. */
void fw_state_put_info(uint32_t at);
/* Fill a STATS struct at adapter address at. */
void fw_state_put_stats(uint32_t at);

#endif
