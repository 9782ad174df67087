/* SPDX-License-Identifier: Apache-2.0 */
/* Hardware-access layer: the only way the firmware touches hardware.
 * Target build: plain 32-bit MMIO on the SoC bus (nf_soc: VexRiscv, or PicoRV32).
 * Host build (NF_HOST_BUILD): the same calls go to the C models of the link and the
 * engine (firmware/host/hw_model.c), so the firmware logic runs and is tested on x86. */
#ifndef FW_HAL_H
#define FW_HAL_H

#include <stdint.h>

#include "nf_layout.h"

#ifdef NF_HOST_BUILD
uint32_t hal_read32(uint32_t addr);
void hal_write32(uint32_t addr, uint32_t value);
#else
static inline uint32_t hal_read32(uint32_t addr)
{
    return *(volatile const uint32_t *)(uintptr_t)addr;
}
static inline void hal_write32(uint32_t addr, uint32_t value)
{
    *(volatile uint32_t *)(uintptr_t)addr = value;
}
#endif

static inline uint32_t sys_rd(uint32_t off) { return hal_read32(NF_SYS_BASE + off); }
static inline void sys_wr(uint32_t off, uint32_t v) { hal_write32(NF_SYS_BASE + off, v); }
static inline uint32_t link_rd(uint32_t off) { return hal_read32(NF_LINK_BASE + off); }
static inline void link_wr(uint32_t off, uint32_t v) { hal_write32(NF_LINK_BASE + off, v); }
static inline uint32_t eng_rd(uint32_t off) { return hal_read32(NF_ENGINE_BASE + off); }
static inline void eng_wr(uint32_t off, uint32_t v) { hal_write32(NF_ENGINE_BASE + off, v); }
/* Adapter memory through the window: adapter byte address, word aligned. */
static inline uint32_t mem_rd(uint32_t addr) { return hal_read32(NF_MAP_ADAPTER_MEM + addr); }
static inline void mem_wr(uint32_t addr, uint32_t v) { hal_write32(NF_MAP_ADAPTER_MEM + addr, v); }
/* Several fields of one struct in adapter memory: take its window address once
 * (mem_win), then win_rd/win_wr with the field offsets, which the compiler folds into
 * the load or store (one instruction per field instead of three). */
#ifdef NF_HOST_BUILD
typedef uint32_t hal_win;
static inline hal_win mem_win(uint32_t addr) { return NF_MAP_ADAPTER_MEM + addr; }
static inline uint32_t win_rd(hal_win win, uint32_t off) { return hal_read32(win + off); }
static inline void win_wr(hal_win win, uint32_t off, uint32_t v) { hal_write32(win + off, v); }
#else
typedef volatile uint32_t *hal_win;
static inline hal_win mem_win(uint32_t addr) { return (hal_win)(uintptr_t)(NF_MAP_ADAPTER_MEM + addr); }
static inline uint32_t win_rd(hal_win win, uint32_t off) { return win[off / 4u]; }
static inline void win_wr(hal_win win, uint32_t off, uint32_t v) { win[off / 4u] = v; }
#endif
/* Execute an illegal instruction (the all-zero word, illegal in every RISC-V encoding):
 * the FAULT_TEST request's way into the trap handler. The host build's model of the
 * CPU records the trap as the handler would (host/hw_model.c) and returns. */
#ifdef NF_HOST_BUILD
void hal_illegal_instruction(void);
#else
static inline void hal_illegal_instruction(void)
{
    __asm__ volatile(".word 0");
}
#endif
/* Low word of the free-running cycle counter; differences of it are exact mod 2^32. */
static inline uint32_t hal_cycles(void) { return sys_rd(NF_SYS_CYCLE_LO); }

#endif
