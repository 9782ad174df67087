// SPDX-License-Identifier: Apache-2.0
// The system side's byte times of a PHY port: phy_ce rises at most once every CE_DIV clocks,
// and only while the TX FIFO has room (tx_room), so nf_net pauses instead of a frame being
// dropped. Both FIFOs of the port move on this strobe.
`default_nettype none
module nf_phy_pace #(
    parameter integer CE_DIV = 2  // system clocks per byte time at least, 1..256
) (
    input  wire clk,
    input  wire rst,
    input  wire tx_room,          // the TX FIFO's w_room: a byte now cannot overflow it
    output wire phy_ce
);
    generate
        if (CE_DIV < 1 || CE_DIV > 256) begin : g_bad_ce_div
            $error("nf_phy_pace: CE_DIV must be 1..256");
        end
    endgenerate
    localparam integer CW = CE_DIV < 2 ? 1 : $clog2(CE_DIV);
    localparam integer CE_LAST = CE_DIV - 1;
    reg [CW-1:0] ce_wait = {CW{1'b0}};  // clocks still to go before the next byte time may come
    assign phy_ce = ce_wait == {CW{1'b0}} && tx_room;
    always @(posedge clk) begin
        if (rst)
            ce_wait <= {CW{1'b0}};
        else if (phy_ce)
            ce_wait <= CE_LAST[CW-1:0];
        else if (ce_wait != {CW{1'b0}})
            ce_wait <= ce_wait - 1'b1;
    end
endmodule
`default_nettype wire
