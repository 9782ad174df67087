// SPDX-License-Identifier: Apache-2.0
// Reset for the system clock domain: held while the PLL is unlocked and for
// 2^STRETCH_BITS cycles after it locks, released synchronously.
`default_nettype none
module nf_reset_sync #(
    parameter integer STRETCH_BITS = 4  // reset held 2^this clocks after lock, >= 1
) (
    input  wire clk,
    input  wire locked,
    output wire rst
);
    reg [1:0]            locked_sync = 2'b00;  // LOCK is asynchronous to clk
    reg [STRETCH_BITS:0] count       = 0;
    always @(posedge clk) begin
        locked_sync <= {locked_sync[0], locked};
        if (!locked_sync[1])
            count <= 0;
        else if (!count[STRETCH_BITS])
            count <= count + 1'b1;
    end
    assign rst = !count[STRETCH_BITS];
endmodule
`default_nettype wire
