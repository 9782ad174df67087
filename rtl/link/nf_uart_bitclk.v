// SPDX-License-Identifier: Apache-2.0
// Bit clock of the UART receiver and transmitter: the time left in the current bit
// goes down by one clock per cycle while running, and a bit ends when it runs out, the
// next one starting with the remainder, so a fractional period (12.4 fixed point,
// e.g. 50 MHz / 3 MBd = 16.667 clocks) averages out exactly, each edge within one clock.
`default_nettype none
`include "nf_layout.vh"
module nf_uart_bitclk (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,  // clocks per bit, 12.4 fixed point
    input  wire        run,          // a bit is in progress: advance by one clock
    input  wire        load,         // start a bit with the phase at load_phase instead
    input  wire [16:0] load_phase,   // 12.4 fixed point clocks already elapsed
    output wire        bit_end       // while running: the bit ends in this cycle
);
    localparam [17:0] ONE_CLOCK = 18'd1 << `NF_SOC_UART_PERIOD_FRAC;

    // left = period - phase - one clock - one LSB, where phase is the time elapsed in the
    // current bit: the bit ends in this cycle (phase + one clock >= period) exactly when
    // left is negative, so bit_end is a register's sign bit and not an adder and a
    // compare, which were the start of the transmitter's slowest path on the boards.
    reg  [17:0] left;
    wire [17:0] period = {2'b00, uart_period};
    assign bit_end = left[17];

    always @(posedge clk) begin
        if (rst)
            left <= 18'd0;
        else if (load)
            left <= period - {1'b0, load_phase} - ONE_CLOCK - 18'd1;
        else if (run)
            left <= bit_end ? left + period - ONE_CLOCK : left - ONE_CLOCK;
    end
endmodule
`default_nettype wire
