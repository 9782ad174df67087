// SPDX-License-Identifier: Apache-2.0
// Behavioral model of the ECP5 IDDRX1F for Verilator (the synthesis flow uses the cell):
// Q0 is D at a rising edge of SCLK, Q1 is D at the falling edge after it, both updated
// together at the next rising edge. RST clears the outputs.
`default_nettype none
module IDDRX1F (
    input  wire D,
    input  wire SCLK,
    input  wire RST,
    output reg  Q0,
    output reg  Q1
);
    reg rise = 1'b0;  // D at the last rising edge
    reg fall = 1'b0;  // D at the last falling edge
    initial begin
        Q0 = 1'b0;
        Q1 = 1'b0;
    end
    always @(negedge SCLK)
        fall <= D;
    always @(posedge SCLK) begin
        if (RST) begin
            rise <= 1'b0;
            Q0   <= 1'b0;
            Q1   <= 1'b0;
        end else begin
            rise <= D;
            Q0   <= rise;
            Q1   <= fall;
        end
    end
endmodule
`default_nettype wire
