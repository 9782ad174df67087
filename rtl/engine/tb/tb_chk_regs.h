/* SPDX-License-Identifier: Apache-2.0 */
/* The CHK_* staging registers of one key check, in the order the firmware writes them
 * (writing 1 to CHK_CTRL then starts it): the one sequence the model's unit tests, the
 * engine testbench and the differential test drive. wr(off, value) writes one ENGINE
 * register; C and C++ alike, so a macro. Include after nf_layout.h. */
#ifndef NF_TB_CHK_REGS_H
#define NF_TB_CHK_REGS_H

#define TB_CHK_STAGE(wr, token, va, len, access, pd)        \
    do {                                                    \
        wr(NF_ENGINE_CHK_TOKEN, (token));                   \
        wr(NF_ENGINE_CHK_VA_LO, (uint32_t)(va));            \
        wr(NF_ENGINE_CHK_VA_HI, (uint32_t)((va) >> 32));    \
        wr(NF_ENGINE_CHK_LEN, (len));                       \
        wr(NF_ENGINE_CHK_ACCESS, (access));                 \
        wr(NF_ENGINE_CHK_PD, (pd));                         \
    } while (0)

#endif
