/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up code at address 0 (the reset vector of both cores, VexRiscv and PicoRV32):
 * set gp, put the stack right after the variables (link.ld), zero .bss, install the trap
 * vector where the CPU has one, and run main. .data needs no copy: the whole image is
 * loaded into firmware RAM by the block RAM initialisation. */
#include <stdint.h>

#include "fw_main.h"
#include "fw_state.h"
#include "hal.h"
#include "nf_layout.h"

#ifndef FW_STACK_RESERVE
#error "FW_STACK_RESERVE (bytes kept for the stack) comes from firmware.mk"
#endif

extern uint32_t __bss_start[], __bss_end[];
/* The stack: after .bss, so the variables and the stack lie together in the data cache
 * (link.ld checks they fit it); tools/fw_stack.py checks the deepest call chain fits. */
__attribute__((section(".stack"), aligned(16), used)) static uint8_t fw_stack[FW_STACK_RESERVE];
int main(void);
void fw_trap_entry(void);

/* A trap (illegal instruction, misaligned access, ebreak) leaves the state it
 * interrupted unknown, so it never returns there: it is recorded (STATS fault_*), and
 * the main loop runs again, faulted, answering every request DEVICE_HARDWARE_ERROR
 * instead of hanging. */
__attribute__((noreturn, used)) void fw_trap(uint32_t cause, uint32_t pc)
{
    fw_fault(cause, pc);
    for (;;)
        (void)fw_poll();
}

/* mtvec in direct mode: 4-byte aligned. A fresh stack from its top (the trapped one may
 * be what failed); gp is never changed, so it is still good. */
__attribute__((naked, noreturn, aligned(4))) void fw_trap_entry(void)
{
    __asm__ volatile(".option push\n"
                     ".option arch, +zicsr\n"
                     "la sp, __stack_top\n"
                     "csrr a0, mcause\n"
                     "csrr a1, mepc\n"
                     "j fw_trap\n"
                     ".option pop\n");
}

__attribute__((noreturn, used)) void fw_crt_init(void)
{
    uintptr_t words = ((uintptr_t)__bss_end - (uintptr_t)__bss_start) / sizeof(uint32_t);
    for (uintptr_t i = 0; i < words; i++)
        __bss_start[i] = 0;
    /* PicoRV32 has no mtvec (a CSR write would halt it): SYS.CPU_TRAPS says which. */
    if (sys_rd(NF_SYS_CPU_TRAPS))
        __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw mtvec, %0\n.option pop" : : "r"(fw_trap_entry));
    (void)main();
    for (;;)
        ;
}

__attribute__((naked, noreturn, section(".text.start"))) void _start(void)
{
    __asm__ volatile(".option push\n"
                     ".option norelax\n"
                     "la gp, __global_pointer$\n"
                     ".option pop\n"
                     "la sp, __stack_top\n"
                     "j fw_crt_init\n");
}
