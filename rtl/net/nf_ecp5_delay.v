// SPDX-License-Identifier: Apache-2.0
// A fixed ECP5 input delay (DELAYG, user-defined taps) on a pin, or a plain wire for
// TAPS = 0. Simulation compiles sim/models/DELAYG.v (no delay) in place of the cell.
`default_nettype none
module nf_ecp5_delay #(
    parameter integer TAPS = 0  // DELAYG taps, 0..127; 0: no delay cell
) (
    input  wire a,
    output wire z
);
    generate
        if (TAPS < 0 || TAPS > 127) begin : g_bad_taps
            $error("nf_ecp5_delay: TAPS must be 0..127");
        end
        if (TAPS == 0) begin : g_none
            assign z = a;
        end else begin : g_delay
            DELAYG #(.DEL_MODE("USER_DEFINED"), .DEL_VALUE(TAPS)) u_delay (.A(a), .Z(z));
        end
    endgenerate
endmodule
`default_nettype wire
