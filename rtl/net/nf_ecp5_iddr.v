// SPDX-License-Identifier: Apache-2.0
// One ECP5 input DDR flip-flop pair (IDDRX1F) on a pin: q_rise is the pin sampled at a
// rising edge of clk, q_fall the pin at the falling edge after it, both presented together
// at the next rising edge. Simulation compiles sim/models/IDDRX1F.v in place of the cell.
`default_nettype none
module nf_ecp5_iddr (
    input  wire clk,
    input  wire d,
    output wire q_rise,
    output wire q_fall
);
    IDDRX1F u_iddr (.D(d), .SCLK(clk), .RST(1'b0), .Q0(q_rise), .Q1(q_fall));
endmodule
`default_nettype wire
