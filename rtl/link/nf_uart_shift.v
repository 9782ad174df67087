// SPDX-License-Identifier: Apache-2.0
// One character in progress on a UART pin, shared by the receiver and the transmitter:
// the busy flag, the bit clock (nf_uart_bitclk), and a shift register that moves one
// bit per bit period, LSB first, with a count of the bits still to come. The user
// decides when a bit is shifted (step) and when the character ends (stop).
`default_nettype none
module nf_uart_shift #(
    parameter integer W = 8,                  // shift register width, bits
    parameter [W-1:0] RESET_DATA = {W{1'b0}}  // shift register value after reset
) (
    input  wire         clk,
    input  wire         rst,
    input  wire [15:0]  uart_period,  // clocks per bit, 12.4 fixed point
    input  wire         start,        // begin a character from idle (wins over step and stop)
    input  wire         chain,        // begin the next character in the cycle the last one ends (wins too)
    input  wire [16:0]  start_phase,  // bit clock phase at start, 12.4 fixed point clocks
    input  wire [W-1:0] start_data,
    input  wire [3:0]   start_count,
    input  wire         step,         // shift serial_in in at the top, count one bit
    input  wire         serial_in,
    input  wire         stop,         // the character is over: back to idle
    output reg          busy,
    output wire         bit_end,      // while busy: the current bit ends in this cycle
    output reg  [W-1:0] data,
    output reg  [3:0]   bits_left
);
    // A chained character lets the bit clock run on, so back-to-back characters keep
    // the exact fractional rhythm.
    nf_uart_bitclk u_bitclk (
        .clk(clk), .rst(rst), .uart_period(uart_period), .run(busy), .load(start),
        .load_phase(start_phase), .bit_end(bit_end)
    );

    always @(posedge clk) begin
        if (rst) begin
            busy      <= 1'b0;
            data      <= RESET_DATA;
            bits_left <= 4'd0;
        end else if (start || chain) begin
            busy      <= 1'b1;
            data      <= start_data;
            bits_left <= start_count;
        end else begin
            if (stop)
                busy <= 1'b0;
            if (step) begin
                data      <= {serial_in, data[W-1:1]};
                bits_left <= bits_left - 4'd1;
            end
        end
    end
endmodule
`default_nettype wire
