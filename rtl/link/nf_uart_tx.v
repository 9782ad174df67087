// SPDX-License-Identifier: Apache-2.0
// UART transmitter, 8N1, LSB first. The bit period is given at run time in 12.4
// fixed-point clocks (nf_uart_bitclk), so a fractional period averages out exactly.
`default_nettype none
module nf_uart_tx (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,  // clocks per bit, 12.4 fixed point
    input  wire        in_valid,
    input  wire [7:0]  in_data,
    output wire        in_ready,     // byte accepted in a cycle with in_valid && in_ready
    output reg         tx
);
    localparam [3:0]  DATA_AND_STOP = 4'd9;

    wire       busy;
    wire [3:0] bits_left;  // bits still to send after the current one
    /* verilator lint_off UNUSEDSIGNAL */  // only the bit going out next is read here
    wire [8:0] shift;      // data bits then the stop bit
    /* verilator lint_on UNUSEDSIGNAL */

    wire bit_end;
    // The next byte may start in the cycle the stop bit ends (the bit clock runs on).
    assign in_ready = !busy || (bits_left == 4'd0 && bit_end);
    wire start     = in_valid && in_ready;
    wire next_bit  = busy && bit_end && bits_left != 4'd0;
    // Ones shift in behind the data, so the stop bit and the idle line stay high.
    nf_uart_shift #(.W(9), .RESET_DATA(9'h1FF)) u_shift (
        .clk(clk), .rst(rst), .uart_period(uart_period),
        .start(in_valid && !busy), .chain(start && busy), .start_phase(17'd0), .start_data({1'b1, in_data}),
        .start_count(DATA_AND_STOP), .step(next_bit), .serial_in(1'b1),
        .stop(busy && bit_end && bits_left == 4'd0),  // stop bit done; line stays high
        .busy(busy), .bit_end(bit_end), .data(shift), .bits_left(bits_left)
    );

    always @(posedge clk) begin
        if (rst)
            tx <= 1'b1;
        else if (start)
            tx <= 1'b0;  // start bit
        else if (next_bit)
            tx <= shift[0];
    end
endmodule
`default_nettype wire
