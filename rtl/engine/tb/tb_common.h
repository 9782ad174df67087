/* SPDX-License-Identifier: Apache-2.0 */
// Shared helpers of the engine testbenches and benchmarks: TAP output, the clock of a
// Verilated model and a small deterministic PRNG.
#ifndef NF_ENGINE_TB_COMMON_H
#define NF_ENGINE_TB_COMMON_H

#include <cstdarg>
#include <cstdint>
#include <cstdio>

// (relative: the benchmarks in bench/ include this header by path)
#include "../../include/nf_tb_clock.h"
#include "../../../tests/tap.h"

// Case names carry the profile a bench was built for (engine.mk's -DTB_PROFILE), or
// a prefix the includer defines.
#ifndef TB_CASE_PREFIX
#ifdef TB_PROFILE
#define TB_STR_(x) #x
#define TB_STR(x) TB_STR_(x)
#define TB_CASE_PREFIX TB_STR(TB_PROFILE) ": "
#else
#define TB_CASE_PREFIX ""
#endif
#endif

// TAP lines and the exit status: tests/tap.h's, with the case prefix above.
static inline bool tb_ok(bool cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_vokp(cond, TB_CASE_PREFIX, fmt, ap);
    va_end(ap);
    return cond;
}

static inline int tb_done() { return tap_done(); }

// xorshift64*: reproducible random test data.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed ? seed : 1) {}
    uint64_t next()
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
    uint32_t below(uint32_t n) { return (uint32_t)(next() % n); }
};

#endif
