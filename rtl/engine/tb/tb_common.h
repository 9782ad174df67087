// Shared helpers of the engine testbenches and benchmarks: TAP output, the clock of a
// Verilated model and a small deterministic PRNG.
#ifndef NF_ENGINE_TB_COMMON_H
#define NF_ENGINE_TB_COMMON_H

#include <cstdarg>
#include <cstdint>
#include <cstdio>

// (relative: the benchmarks in bench/ include this header by path)
#include "../../include/nf_tb_clock.h"

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

static int tb_failures;
static int tb_count;

static inline bool tb_ok(bool cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::printf("%s - " TB_CASE_PREFIX, cond ? "ok" : "not ok");
    std::vprintf(fmt, ap);
    std::printf("\n");
    va_end(ap);
    std::fflush(stdout);
    tb_count++;
    if (!cond) tb_failures++;
    return cond;
}

static inline int tb_done()
{
    if (tb_count == 0) {
        std::printf("not ok - no test case ran\n");
        return 1;
    }
    return tb_failures ? 1 : 0;
}

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
