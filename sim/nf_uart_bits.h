/* SPDX-License-Identifier: Apache-2.0 */
// Bit-level UART (8N1, LSB first) on simulated pins, timed in simulated cycles with
// the same 12.4 fixed-point bit period as the RTL (nf_uart_rx/nf_uart_tx). Used by
// the board model's socket bridge and by the link testbenches, so both exercise the
// real UART and never a shortcut around it.
#ifndef NF_UART_BITS_H
#define NF_UART_BITS_H

#include <cstdint>
#include <deque>

#include "nf_layout_cxx.h"

namespace nfuart {

constexpr uint64_t kOneClock = 1u << NF_SOC_UART_PERIOD_FRAC;
constexpr int kBitsPerByte = 10;  // start, 8 data, stop

// Period in 12.4 fixed point clocks for a clock and a baud rate, rounded.
inline uint32_t period_q4(uint64_t clk_hz, uint64_t baud)
{
    return static_cast<uint32_t>((clk_hz * kOneClock + baud / 2) / baud);
}

// Drives a pin: call level(cycle) once per cycle, in increasing cycle order.
class Driver {
public:
    explicit Driver(uint32_t period) : period_(period) {}
    void push(uint8_t byte)
    {
        queue_.push_back(byte);
        hold_until_ = 0;
    }
    size_t queued() const { return queue_.size() + (active_ ? 1 : 0); }
    bool idle() const { return !active_ && queue_.empty(); }
    // Scale the period (for tests of baud mismatch); takes effect at the next byte.
    void set_period(uint32_t period)
    {
        period_ = period;
        hold_until_ = 0;
    }

    int level(uint64_t cycle)
    {
        const uint64_t now = cycle * kOneClock;
        // The level holds until the current bit ends (or a byte is queued on an idle line).
        if (now < hold_until_)
            return level_;
        level_ = next_level(now);
        return level_;
    }

private:
    int next_level(uint64_t now)
    {
        hold_until_ = UINT64_MAX;  // idle line: until the next push
        if (active_ && now >= start_ + kBitsPerByte * period_) {
            active_ = false;
            // Back to back: the next byte starts exactly where the stop bit ends.
            if (!queue_.empty())
                start_next(start_ + kBitsPerByte * period_);
        }
        if (!active_ && !queue_.empty())
            start_next(now);
        if (!active_)
            return 1;
        const uint64_t bit = (now - start_) / period_;
        hold_until_ = start_ + (bit + 1) * period_;
        if (bit == 0)
            return 0;
        if (bit <= 8)
            return (byte_ >> (bit - 1)) & 1;
        return 1;
    }

    void start_next(uint64_t when)
    {
        byte_ = queue_.front();
        queue_.pop_front();
        start_ = when;
        active_ = true;
    }
    uint32_t period_;
    std::deque<uint8_t> queue_;
    bool active_ = false;
    uint64_t start_ = 0;
    uint8_t byte_ = 0;
    uint64_t hold_until_ = 0;  // 12.4 time before which level_ stands
    int level_ = 1;
};

// Samples a pin in the middle of each bit: call sample(cycle, level) once per cycle.
// Returns 1 with *out set when a byte completed, -1 on a framing error, 0 otherwise.
class Sampler {
public:
    explicit Sampler(uint32_t period) : period_(period) {}
    bool busy() const { return active_; }
    uint64_t last_start() const { return start_ / kOneClock; }

    int sample(uint64_t cycle, int level, uint8_t *out)
    {
        const uint64_t now = cycle * kOneClock;
        if (!active_) {
            if (prev_ && !level) {
                active_ = true;
                start_ = now;
                bit_ = 0;
                byte_ = 0;
                due_ = start_ + period_ / 2;
            }
            prev_ = level;
            return 0;
        }
        prev_ = level;
        if (now < due_)  // start_ + bit_ * period_ + period_ / 2
            return 0;
        int result = 0;
        if (bit_ == 0) {
            if (level)
                active_ = false;  // glitch
        } else if (bit_ <= 8) {
            byte_ |= static_cast<uint8_t>(level << (bit_ - 1));
        } else {
            active_ = false;
            *out = byte_;
            result = level ? 1 : -1;
        }
        bit_++;
        due_ += period_;
        return result;
    }

private:
    uint32_t period_;
    bool active_ = false;
    int prev_ = 1;
    uint64_t start_ = 0;
    uint32_t bit_ = 0;
    uint8_t byte_ = 0;
    uint64_t due_ = 0;  // 12.4 time of the next sample
};

}  // namespace nfuart

#endif
