// SPDX-License-Identifier: Apache-2.0
// RGMII PHY port for ECP5 at 1000 Mb/s (10/100 Mb/s RGMII, a 25/2.5 MHz clock with nibbles,
// is not supported) between the PHY's pins and nf_soc's GMII-style port, which moves one
// byte each way on each clock of the phy_ce this port gives it (see "Pacing"). Receive: rgmii_rx_clk from the PHY, data and control
// through DDR input cells (rising edge: rxd[3:0] and RX_DV; falling edge: rxd[7:4] and
// RX_DV xor RX_ER), optionally behind RX_DELAY taps for a PHY that does not delay its RX
// clock. Transmit: clk_tx (125 MHz from the board's PLL) drives DDR output cells, and the
// TX clock leaves through a DDR cell too, from clk_tx90 when TX_CLK_SHIFTED for a PHY that
// does not delay its TX clock. One store-and-forward nf_phy_fifo per direction crosses
// between the PHY clocks and clk.
//
// Pacing: phy_ce is high at most once every CE_DIV clocks (nf_net answers its system port in
// time only at a byte every two clocks or slower), and stays low while the TX FIFO has no
// room, so the MAC pauses mid-frame rather than the FIFO dropping the frame: the FIFO's
// reader waits for a frame's end, and FIFO_DEPTH holds a longest frame, so the pause ends.
// Both FIFOs' system sides move on phy_ce. Received frames are dropped (rx_drop) when the
// wire brings them faster than phy_ce takes them for longer than the RX FIFO holds.
//
// Clock-domain crossings: CDC "rgmii rx" (rgmii_rx_clk -> clk) and CDC "rgmii tx"
// (clk -> clk_tx) are the two nf_phy_fifo instances; CDC "rgmii rx reset" and CDC "rgmii
// tx reset" carry rst into the PHY clocks through two flip-flops each.
`default_nettype none
module nf_phy_rgmii #(
    parameter integer RX_DELAY       = 0,     // DELAYG taps on rxd/rx_ctl, 0..127; 0: none (the PHY delays RXC)
    parameter integer TX_CLK_SHIFTED = 0,     // 1: TXC from clk_tx90 (the PHY does not delay TXC); 0: from clk_tx
    parameter integer FIFO_DEPTH     = 2048,  // entries of each direction's nf_phy_fifo (power of two)
    parameter integer RX_IFG         = 2,     // idle byte times (phy_ce clocks) between received frames toward the MAC
    parameter integer CE_DIV         = 2      // system clocks per byte time at least: phy_ce is high once in CE_DIV clocks at most
) (
    // system side (nf_soc's GMII-style port, its phy_ce from here)
    input  wire       clk,
    input  wire       rst,
    output wire       phy_ce,        // a byte time: gmii_* move and are sampled only on these clocks
    output wire [7:0] gmii_rxd,
    output wire       gmii_rx_dv,
    output wire       gmii_rx_er,
    input  wire [7:0] gmii_txd,
    input  wire       gmii_tx_en,
    input  wire       gmii_tx_er,
    output wire       rx_drop,       // clk pulse: a received frame did not fit the RX FIFO
    output wire       tx_drop,       // clk pulse: a frame to send did not fit the TX FIFO
    // the board's PLL: 125 MHz and the same shifted by 90 degrees (used when TX_CLK_SHIFTED)
    input  wire       clk_tx,
    input  wire       clk_tx90,
    // PHY pins
    input  wire       rgmii_rx_clk,
    input  wire [3:0] rgmii_rxd,
    input  wire       rgmii_rx_ctl,
    output wire       rgmii_tx_clk,
    output wire [3:0] rgmii_txd,
    output wire       rgmii_tx_ctl
);
    generate
        if (TX_CLK_SHIFTED != 0 && TX_CLK_SHIFTED != 1) begin : g_bad_shift
            $error("nf_phy_rgmii: TX_CLK_SHIFTED must be 0 or 1");
        end
        if (RX_IFG < 1 || RX_IFG > 255) begin : g_bad_ifg
            $error("nf_phy_rgmii: RX_IFG must be 1..255");
        end
        if (CE_DIV < 1 || CE_DIV > 256) begin : g_bad_ce_div
            $error("nf_phy_rgmii: CE_DIV must be 1..256");
        end
        if (FIFO_DEPTH < 2048) begin : g_bad_depth
            // A frame the TX FIFO cannot hold whole would hold phy_ce low for good.
            $error("nf_phy_rgmii: FIFO_DEPTH must be >= 2048 (a longest frame)");
        end
    endgenerate

    // ---- pacing (see the header) ----
    wire tx_room;  // the TX FIFO's w_room
    nf_phy_pace #(.CE_DIV(CE_DIV)) u_pace (.clk(clk), .rst(rst), .tx_room(tx_room), .phy_ce(phy_ce));

    // ---- resets into the PHY clocks ----
    (* ASYNC_REG = "TRUE" *) reg [1:0] rx_rst_s = 2'b11;  // CDC "rgmii rx reset": clk -> rgmii_rx_clk
    (* ASYNC_REG = "TRUE" *) reg [1:0] tx_rst_s = 2'b11;  // CDC "rgmii tx reset": clk -> clk_tx
    always @(posedge rgmii_rx_clk)
        rx_rst_s <= {rx_rst_s[0], rst};
    always @(posedge clk_tx)
        tx_rst_s <= {tx_rst_s[0], rst};
    wire rx_rst = rx_rst_s[1];
    wire tx_rst = tx_rst_s[1];

    // ---- receive ----
    wire [4:0] rx_pin = {rgmii_rx_ctl, rgmii_rxd};
    wire [4:0] rx_rise, rx_fall;
    genvar i;
    generate
        for (i = 0; i < 5; i = i + 1) begin : g_rx
            wire d;
            nf_ecp5_delay #(.TAPS(RX_DELAY)) u_delay (.a(rx_pin[i]), .z(d));
            nf_ecp5_iddr u_iddr (.clk(rgmii_rx_clk), .d(d), .q_rise(rx_rise[i]), .q_fall(rx_fall[i]));
        end
    endgenerate

    reg       rx_dv = 1'b0;
    reg       rx_er = 1'b0;
    reg [7:0] rx_byte = 8'd0;
    always @(posedge rgmii_rx_clk) begin
        rx_dv   <= rx_rise[4] && !rx_rst;
        rx_er   <= rx_rise[4] ^ rx_fall[4];
        rx_byte <= {rx_fall[3:0], rx_rise[3:0]};
    end

    wire rx_drop_w;  // in rgmii_rx_clk: the FIFO's r_drop carries it into clk
    wire rx_room_w;  // in rgmii_rx_clk: the wire cannot be paused
    nf_phy_fifo #(.DEPTH(FIFO_DEPTH), .IFG(RX_IFG)) u_rx_fifo (
        .wclk(rgmii_rx_clk), .wrst(rx_rst), .w_ce(1'b1), .w_dv(rx_dv), .w_data(rx_byte), .w_er(rx_er),
        .w_drop(rx_drop_w), .w_room(rx_room_w),
        .rclk(clk), .rrst(rst), .r_en(phy_ce), .r_dv(gmii_rx_dv), .r_data(gmii_rxd), .r_er(gmii_rx_er),
        .r_drop(rx_drop)
    );

    // ---- transmit ----
    wire       tx_dv, tx_er;
    wire [7:0] tx_byte;
    wire       tx_drop_r;  // in clk_tx: tx_drop is the same event in clk
    nf_phy_fifo #(.DEPTH(FIFO_DEPTH), .IFG(12)) u_tx_fifo (
        .wclk(clk), .wrst(rst), .w_ce(phy_ce), .w_dv(gmii_tx_en), .w_data(gmii_txd), .w_er(gmii_tx_er),
        .w_drop(tx_drop), .w_room(tx_room),
        .rclk(clk_tx), .rrst(tx_rst), .r_en(1'b1), .r_dv(tx_dv), .r_data(tx_byte), .r_er(tx_er),
        .r_drop(tx_drop_r)
    );

    wire [4:0] tx_rise = {tx_dv, tx_byte[3:0]};
    wire [4:0] tx_fall = {tx_dv ^ tx_er, tx_byte[7:4]};
    wire [4:0] tx_pin;
    generate
        for (i = 0; i < 5; i = i + 1) begin : g_tx
            nf_ecp5_oddr u_oddr (.clk(clk_tx), .d_rise(tx_rise[i]), .d_fall(tx_fall[i]), .q(tx_pin[i]));
        end
        if (TX_CLK_SHIFTED == 1) begin : g_txc90
            nf_ecp5_oddr u_txc (.clk(clk_tx90), .d_rise(1'b1), .d_fall(1'b0), .q(rgmii_tx_clk));
        end else begin : g_txc
            nf_ecp5_oddr u_txc (.clk(clk_tx), .d_rise(1'b1), .d_fall(1'b0), .q(rgmii_tx_clk));
        end
    endgenerate
    assign rgmii_txd    = tx_pin[3:0];
    assign rgmii_tx_ctl = tx_pin[4];

    // Unused by design: the PHY-side drop pulses (the other side's are the outputs), the RX
    // FIFO's room, and clk_tx90 when the TX clock is not shifted.
    wire unused = &{1'b0, rx_drop_w, rx_room_w, tx_drop_r, clk_tx90};
endmodule
`default_nettype wire
