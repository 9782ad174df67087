/* SPDX-License-Identifier: Apache-2.0 */
// One nf_keycheck pipeline op and how it is presented on the unit's inputs. Shared by
// the key-check testbench and the key-check micro-benchmark (bench/kc_bench.cpp).
#ifndef NF_TB_KEYCHECK_IO_H
#define NF_TB_KEYCHECK_IO_H

#include <cstdint>

#include "Vnf_keycheck.h"

static const uint32_t KC_OP_CHECK = 0;   // in_op of a key check; table ops use TBL_OP values

struct KcOp {
    uint32_t op, tag, token, len, access, pd, index, mtt_data;
    uint64_t va;
    uint32_t entry[7];
};

static inline KcOp kc_check_op(uint32_t token, uint64_t va, uint32_t len, uint32_t access, uint32_t pd)
{
    // Fields in declaration order: op, tag, token, len, access, pd, index, mtt_data, va.
    return KcOp{KC_OP_CHECK, 0, token, len, access, pd, 0, 0, va, {}};
}

// Presents o on the inputs (in_valid set), or nothing when o is null.
static inline void kc_drive(Vnf_keycheck *m, const KcOp *o)
{
    m->in_valid = o != nullptr;
    if (!o) return;
    m->in_op = o->op;
    m->in_tag = o->tag;
    m->in_token = o->token;
    m->in_va = o->va;
    m->in_len = o->len;
    m->in_access = o->access;
    m->in_pd = o->pd;
    m->in_index = o->index;
    m->in_mtt_data = o->mtt_data;
    for (int i = 0; i < 7; i++) m->in_entry[i] = o->entry[i];
}

#endif
