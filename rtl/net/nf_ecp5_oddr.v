// SPDX-License-Identifier: Apache-2.0
// One ECP5 output DDR flip-flop pair (ODDRX1F) on a pin: d_rise (taken at a rising edge of
// clk) drives the pin for the high half of that clock, d_fall for its low half. Simulation
// compiles sim/models/ODDRX1F.v in place of the cell.
`default_nettype none
module nf_ecp5_oddr (
    input  wire clk,
    input  wire d_rise,
    input  wire d_fall,
    output wire q
);
    ODDRX1F u_oddr (.D0(d_rise), .D1(d_fall), .SCLK(clk), .RST(1'b0), .Q(q));
endmodule
`default_nettype wire
