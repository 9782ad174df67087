/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up code at address 0 (PicoRV32's reset vector): set gp, put the stack at the
 * top of firmware RAM (its size is read from SYS.FW_RAM_BYTES, so one image fits every
 * profile), zero .bss and run main. .data needs no copy: the whole image, data
 * included, is loaded into firmware RAM by the block RAM initialisation. */
#include <stdint.h>

#include "nf_layout.h"

extern uint32_t __bss_start[], __bss_end[];
int main(void);

__attribute__((noreturn, used)) void fw_crt_init(void)
{
    uintptr_t words = ((uintptr_t)__bss_end - (uintptr_t)__bss_start) / sizeof(uint32_t);
    for (uintptr_t i = 0; i < words; i++)
        __bss_start[i] = 0;
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
                     "li t0, %0\n"
                     "lw sp, %1(t0)\n"
                     "j fw_crt_init\n"
                     :
                     : "i"(NF_SYS_BASE), "i"(NF_SYS_FW_RAM_BYTES));
}
