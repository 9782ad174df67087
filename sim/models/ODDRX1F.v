// SPDX-License-Identifier: Apache-2.0
// Behavioral model of the ECP5 ODDRX1F for Verilator (the synthesis flow uses the cell):
// D0 and D1 are taken at a rising edge of SCLK; Q is D0 while SCLK is high and D1 while it
// is low after that. RST clears both.
`default_nettype none
module ODDRX1F (
    input  wire D0,
    input  wire D1,
    input  wire SCLK,
    input  wire RST,
    output wire Q
);
    reg d0 = 1'b0;
    reg d1 = 1'b0;
    always @(posedge SCLK) begin
        d0 <= RST ? 1'b0 : D0;
        d1 <= RST ? 1'b0 : D1;
    end
    assign Q = SCLK ? d0 : d1;
endmodule
`default_nettype wire
