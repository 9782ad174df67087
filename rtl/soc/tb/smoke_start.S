/* SPDX-License-Identifier: Apache-2.0 */
/* Start-up for the SoC smoke program: PicoRV32 sets sp (STACKADDR) at reset. */
    .section .text.start
    .global _start
_start:
    call main
1:  j 1b
