// SPDX-License-Identifier: Apache-2.0
// Behavioral model of the ECP5 DELAYG for Verilator: Z follows A with no delay (the
// simulations are cycle-based; the taps matter only on the pins of a board).
`default_nettype none
module DELAYG #(
    /* verilator lint_off UNUSEDPARAM */
    parameter DEL_MODE  = "USER_DEFINED",  // the cell's delay mode (ignored here)
    parameter DEL_VALUE = 0                // the cell's taps (ignored here)
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire A,
    output wire Z
);
    assign Z = A;
endmodule
`default_nettype wire
