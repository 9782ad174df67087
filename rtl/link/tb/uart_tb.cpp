/* SPDX-License-Identifier: Apache-2.0 */
// UART testbench: the RTL receiver is fed by the bit-level driver and the RTL
// transmitter is decoded by the bit-level sampler (sim/nf_uart_bits.h), at several
// bit periods including fractional ones, with back-to-back bytes and baud mismatch.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "Vnf_uart_tb.h"
#include "nf_tb_clock.h"
#include "nf_uart_bits.h"
#include "verilated.h"

extern "C" {
#include "tap.h"
}

namespace {

struct Bench {
    Vnf_uart_tb top;
    uint64_t cycle = 0;

    explicit Bench(uint32_t period)
    {
        top.uart_period = static_cast<uint16_t>(period);
        top.rx_pin = 1;
        top.tx_valid = 0;
        tb_reset(&top, 4, [this] { tick(); });
    }
    void tick() { tb_tick(&top, cycle); }
};

uint32_t rng_state = 12345;
uint8_t rnd8()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return static_cast<uint8_t>(rng_state);
}

// Host drives the RTL receiver. drive_period may differ from the RTL's (mismatch).
void test_rx(uint32_t period, uint32_t drive_period, int nbytes, const char *what)
{
    Bench b(period);
    nfuart::Driver drv(drive_period);
    std::vector<uint8_t> sent, got;
    for (int i = 0; i < nbytes; i++) {
        uint8_t v = i < 4 ? static_cast<uint8_t>(i == 0 ? 0x00 : i == 1 ? 0xFF : i == 2 ? 0x55 : 0xAA) : rnd8();
        sent.push_back(v);
        drv.push(v);
    }
    int errors = 0;
    uint64_t limit = b.cycle + static_cast<uint64_t>(nbytes + 2) * 10 * drive_period / 16 + 100;
    while (b.cycle < limit) {
        b.top.rx_pin = static_cast<uint8_t>(drv.level(b.cycle));
        b.tick();
        if (b.top.rx_valid)
            got.push_back(b.top.rx_data);
        if (b.top.rx_error)
            errors++;
    }
    tap_ok(got == sent && errors == 0, "uart rx %s: period %u/16 driven at %u/16, %d back-to-back bytes (got %zu, %d framing errors)",
           what, period, drive_period, nbytes, got.size(), errors);
}

// RTL transmitter decoded by the sampler; also checks the total duration: N bytes
// back to back take N * 10 * period clocks, to within one clock.
void test_tx(uint32_t period, int nbytes)
{
    Bench b(period);
    nfuart::Sampler smp(period);
    std::vector<uint8_t> sent, got;
    for (int i = 0; i < nbytes; i++)
        sent.push_back(rnd8());
    size_t next = 0;
    int errors = 0;
    uint64_t first_start = 0, last_start = 0;
    bool started = false;
    uint64_t limit = b.cycle + static_cast<uint64_t>(nbytes + 2) * 10 * period / 16 + 100;
    while (b.cycle < limit) {
        b.top.tx_valid = next < sent.size();
        b.top.tx_data = next < sent.size() ? sent[next] : 0;
        b.top.clk = 0;
        b.top.eval();
        bool taken = b.top.tx_valid && b.top.tx_ready;
        b.top.clk = 1;
        b.top.eval();
        b.cycle++;
        if (taken)
            next++;
        uint8_t byte;
        int prev_busy = smp.busy();
        int r = smp.sample(b.cycle, b.top.tx_pin, &byte);
        if (!prev_busy && smp.busy()) {
            if (!started)
                first_start = smp.last_start();
            started = true;
            last_start = smp.last_start();
        }
        if (r == 1)
            got.push_back(byte);
        else if (r < 0)
            errors++;
    }
    tap_ok(got == sent && errors == 0, "uart tx: period %u/16, %d back-to-back bytes decoded", period, nbytes);
    // Start edges of byte k are at k * 10 * period (fixed point), rounded up to a clock.
    double ideal = (nbytes - 1) * 10.0 * period / 16.0;
    double span = static_cast<double>(last_start - first_start);
    tap_ok(span >= ideal - 1.0 && span <= ideal + 1.0,
           "uart tx: period %u/16, no gaps: last start edge after %.0f clocks (ideal %.2f)", period, span, ideal);
}

void test_rx_false_start(uint32_t period)
{
    // A low glitch shorter than half a bit is not a start bit; a real byte after it is.
    Bench b(period);
    int got = 0, bad = 0;
    uint8_t value = 0;
    for (int i = 0; i < 2; i++) {
        b.top.rx_pin = 0;
        b.tick();
    }
    b.top.rx_pin = 1;
    nfuart::Driver drv(period);
    for (int i = 0; i < 3 * static_cast<int>(period) / 16; i++)
        b.tick();
    drv.push(0xA5);
    uint64_t limit = b.cycle + 12 * period / 16 + 10;
    while (b.cycle < limit) {
        b.top.rx_pin = static_cast<uint8_t>(drv.level(b.cycle));
        b.tick();
        if (b.top.rx_valid) {
            got++;
            value = b.top.rx_data;
        }
        bad += b.top.rx_error;
    }
    tap_ok(got == 1 && value == 0xA5 && bad == 0, "uart rx: glitch ignored, next byte received (%d bytes, %d errors)", got, bad);
}

void test_rx_framing_error(uint32_t period)
{
    // Stop bit held low: reported as a framing error, no byte.
    Bench b(period);
    int got = 0, bad = 0;
    uint64_t start = b.cycle;
    while (b.cycle < start + 12 * period / 16) {
        uint64_t bit = ((b.cycle - start) * 16) / period;
        b.top.rx_pin = bit == 0 ? 0 : bit <= 8 ? 1 : 0;
        b.tick();
        got += b.top.rx_valid;
        bad += b.top.rx_error;
    }
    tap_ok(got == 0 && bad == 1, "uart rx: low stop bit is a framing error (%d bytes, %d errors)", got, bad);
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    // 16.0, 50 MHz / 3 MBd (16.667 -> 267/16), 4.25, 2.0 and a slow 100.5 clocks per bit.
    const uint32_t periods[] = {256, nfuart::period_q4(NF_SOC_CPU_CLK_SIM_HZ, 3000000), 68, 32, 1608};
    for (uint32_t p : periods) {
        test_rx(p, p, 200, "exact");
        test_tx(p, 200);
    }
    // Baud mismatch of about +-2.5% on a 16.667-clock bit: resync on every start bit.
    test_rx(267, 274, 200, "sender slow");
    test_rx(267, 260, 200, "sender fast");
    test_rx_false_start(267);
    test_rx_framing_error(267);
    return tap_done();
}
