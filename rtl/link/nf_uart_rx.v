// SPDX-License-Identifier: Apache-2.0
// UART receiver, 8N1, LSB first, bit period in 12.4 fixed-point clocks (see
// nf_uart_bitclk). The pin goes through a two-flop synchroniser; each start bit's
// falling edge restarts the bit clock, so the sampling point (mid-bit) never drifts
// by more than the error accumulated over one byte.
`default_nettype none
module nf_uart_rx (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,  // clocks per bit, 12.4 fixed point
    input  wire        rx,
    output reg         out_valid,  // one-cycle pulse: out_data holds a byte
    output reg  [7:0]  out_data,
    output reg         out_error   // one-cycle pulse: stop bit was low (framing error)
);
    localparam [3:0]  DATA_AND_STOP = 4'd9;

    reg        rx_meta, rx_sync;
    reg        in_start;   // next sample is the start bit's middle
    wire       busy;
    wire [3:0] bits_left;  // samples still to take after the start bit
    wire [7:0] shift;

    // A falling edge while idle starts the bit clock half a period in, so each bit
    // ends (is sampled) in its middle.
    wire start   = !busy && !rx_sync;
    wire sample;
    wire at_bit  = busy && sample && !in_start;
    wire at_stop = at_bit && bits_left == 4'd1;
    // Back to idle at a high start bit (a glitch) or at once at the stop bit, so the
    // next start edge resyncs.
    nf_uart_shift #(.W(8)) u_shift (
        .clk(clk), .rst(rst), .uart_period(uart_period),
.start(start), .chain(1'b0), .start_phase({2'b0, uart_period[15:1]}), .start_data(shift),
        .start_count(DATA_AND_STOP), .step(at_bit && !at_stop), .serial_in(rx_sync),
        .stop(at_stop || (busy && sample && in_start && rx_sync)),
        .busy(busy), .bit_end(sample), .data(shift), .bits_left(bits_left)
    );

    always @(posedge clk) begin
        if (rst) begin
            rx_meta   <= 1'b1;
            rx_sync   <= 1'b1;
            in_start  <= 1'b0;
            out_valid <= 1'b0;
            out_data  <= 8'd0;
            out_error <= 1'b0;
        end else begin
            rx_meta   <= rx;
            rx_sync   <= rx_meta;
            out_valid <= 1'b0;
            out_error <= 1'b0;
            if (start) begin
                in_start <= 1'b1;
            end else if (busy && sample) begin
                in_start <= 1'b0;
                if (at_stop) begin
                    out_valid <= rx_sync;
                    out_error <= !rx_sync;
                    out_data  <= shift;
                end
            end
        end
    end
endmodule
`default_nettype wire
