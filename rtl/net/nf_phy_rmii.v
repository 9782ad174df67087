// SPDX-License-Identifier: Apache-2.0
// RMII PHY port at 100 Mb/s for a LAN8720-style PHY (10 Mb/s RMII is not supported) between
// the PHY's pins and nf_soc's GMII-style port, which moves one byte each way on each clock
// of the phy_ce this port gives it. Everything on the PHY side runs on rmii_ref_clk (50 MHz from the module);
// dibits are sampled and driven at its rising edge, least significant dibit of a byte
// first.
// Receive: the preamble's 01 dibits are skipped and the SFD's 11 ends them; the MAC is
// given two preamble bytes, the SFD and then the frame's bytes (a MAC whose clock starts
// with the first byte it sees may miss one). CRS_DV may toggle near the end of a frame
// (low on a nibble's first dibit, high on its second) while the data goes on: the frame
// ends when CRS_DV is low on two clocks in a row, and a trailing partial byte is dropped.
// Transmit: a byte every 4 clocks from the TX FIFO, rmii_tx_en with each of its dibits.
//
// Pacing: phy_ce is high at most once every CE_DIV clocks (nf_net answers its system port in
// time only at a byte every two clocks or slower), and stays low while the TX FIFO has no
// room: the MAC's frames come faster than the wire takes them, so the MAC pauses mid-frame
// rather than the FIFO dropping a frame. The FIFO's reader waits for a frame's end, and
// FIFO_DEPTH holds a longest frame, so the pause ends. Both FIFOs' system sides move on
// phy_ce.
//
// Clock-domain crossings: CDC "rmii rx" (rmii_ref_clk -> clk) and CDC "rmii tx"
// (clk -> rmii_ref_clk) are the two nf_phy_fifo instances; CDC "rmii reset" carries rst
// into rmii_ref_clk through two flip-flops.
`default_nettype none
module nf_phy_rmii #(
    parameter integer FIFO_DEPTH = 2048,  // entries of each direction's nf_phy_fifo (power of two)
    parameter integer RX_IFG     = 2,     // idle byte times (phy_ce clocks) between received frames toward the MAC
    parameter integer CE_DIV     = 2      // system clocks per byte time at least: phy_ce is high once in CE_DIV clocks at most
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
    // PHY pins
    input  wire       rmii_ref_clk,
    input  wire       rmii_crs_dv,
    input  wire [1:0] rmii_rxd,
    output reg        rmii_tx_en,
    output reg  [1:0] rmii_txd
);
    generate
        if (RX_IFG < 1 || RX_IFG > 255) begin : g_bad_ifg
            $error("nf_phy_rmii: RX_IFG must be 1..255");
        end
        if (CE_DIV < 1 || CE_DIV > 256) begin : g_bad_ce_div
            $error("nf_phy_rmii: CE_DIV must be 1..256");
        end
        if (FIFO_DEPTH < 2048) begin : g_bad_depth
            // A frame the TX FIFO cannot hold whole would hold phy_ce low for good.
            $error("nf_phy_rmii: FIFO_DEPTH must be >= 2048 (a longest frame)");
        end
    endgenerate

    // ---- pacing (see the header) ----
    wire tx_room;  // the TX FIFO's w_room
    nf_phy_pace #(.CE_DIV(CE_DIV)) u_pace (.clk(clk), .rst(rst), .tx_room(tx_room), .phy_ce(phy_ce));

    (* ASYNC_REG = "TRUE" *) reg [1:0] prst_s = 2'b11;  // CDC "rmii reset": clk -> rmii_ref_clk
    always @(posedge rmii_ref_clk)
        prst_s <= {prst_s[0], rst};
    wire prst = prst_s[1];

    // ---- receive ----
    // Pins in flip-flops, then one dibit of delay: a dibit is data when CRS_DV was high at
    // it or at the next clock (a toggle's low half), and the frame ends at two lows.
    reg       crs_q, crs_d;
    reg [1:0] rxd_q, rxd_d;
    localparam [1:0] R_IDLE = 2'd0,  // no carrier
                     R_PRE  = 2'd1,  // carrier, waiting for the SFD
                     R_DATA = 2'd2;  // after the SFD: bytes
    reg [1:0] rstate;
    reg [1:0] ndib;       // dibits of the byte being assembled
    reg [1:0] npre;       // preamble bytes still to push before the SFD byte
    reg [5:0] acc;        // its first three dibits, the latest at the top
    reg       w_ce, w_dv;
    reg [7:0] w_data;

    wire dib_valid = crs_d || crs_q;     // the delayed dibit belongs to the carrier
    wire carrier_end = !crs_d && !crs_q;

    always @(posedge rmii_ref_clk) begin
        crs_q <= rmii_crs_dv;
        rxd_q <= rmii_rxd;
        crs_d <= crs_q;
        rxd_d <= rxd_q;
        w_ce  <= 1'b0;
        if (prst) begin
            crs_q  <= 1'b0;
            rxd_q  <= 2'b00;
            crs_d  <= 1'b0;
            rxd_d  <= 2'b00;
            rstate <= R_IDLE;
            ndib   <= 2'd0;
            npre   <= 2'd0;
            acc    <= 6'd0;
            w_ce   <= 1'b0;
            w_dv   <= 1'b0;
            w_data <= 8'd0;
        end else begin
            case (rstate)
                R_IDLE: if (crs_d) rstate <= R_PRE;
                R_PRE: begin
                    if (carrier_end) begin
                        rstate <= R_IDLE;     // a carrier with no SFD (or a false carrier)
                    end else if (dib_valid && rxd_d == 2'b11) begin
                        rstate <= R_DATA;     // the SFD's last dibit: 0x55, 0x55, 0xD5 go first
                        ndib   <= 2'd0;
                        npre   <= 2'd3;
                    end
                end
                default: begin
                    if (npre != 2'd0) begin
                        // The first data byte is 4 dibits after the SFD: room for these three.
                        npre   <= npre - 1'b1;
                        w_ce   <= 1'b1;
                        w_dv   <= 1'b1;
                        w_data <= npre == 2'd1 ? 8'hD5 : 8'h55;
                    end
                    if (carrier_end) begin
                        rstate <= R_IDLE;     // the end of the frame: commit it
                        w_ce   <= 1'b1;
                        w_dv   <= 1'b0;
                    end else begin
                        ndib <= ndib + 1'b1;
                        acc  <= {rxd_d, acc[5:2]};
                        if (ndib == 2'd3) begin
                            w_ce   <= 1'b1;
                            w_dv   <= 1'b1;
                            w_data <= {rxd_d, acc};
                        end
                    end
                end
            endcase
        end
    end

    wire rx_drop_w;  // in rmii_ref_clk: the FIFO's r_drop carries it into clk
    wire rx_room_w;  // in rmii_ref_clk: the wire cannot be paused
    nf_phy_fifo #(.DEPTH(FIFO_DEPTH), .IFG(RX_IFG)) u_rx_fifo (
        .wclk(rmii_ref_clk), .wrst(prst), .w_ce(w_ce), .w_dv(w_dv), .w_data(w_data), .w_er(1'b0),
        .w_drop(rx_drop_w), .w_room(rx_room_w),
        .rclk(clk), .rrst(rst), .r_en(phy_ce), .r_dv(gmii_rx_dv), .r_data(gmii_rxd), .r_er(gmii_rx_er),
        .r_drop(rx_drop)
    );

    // ---- transmit ----
    // The FIFO moves on phase 3; its byte then goes out as dibits on phases 0..3.
    reg  [1:0] ph;
    wire       tx_dv, tx_er;
    wire [7:0] tx_byte;
    wire       tx_drop_r;  // in rmii_ref_clk: tx_drop is the same event in clk
    nf_phy_fifo #(.DEPTH(FIFO_DEPTH), .IFG(12)) u_tx_fifo (
        .wclk(clk), .wrst(rst), .w_ce(phy_ce), .w_dv(gmii_tx_en), .w_data(gmii_txd), .w_er(gmii_tx_er),
        .w_drop(tx_drop), .w_room(tx_room),
        .rclk(rmii_ref_clk), .rrst(prst), .r_en(ph == 2'd3), .r_dv(tx_dv), .r_data(tx_byte), .r_er(tx_er),
        .r_drop(tx_drop_r)
    );

    always @(posedge rmii_ref_clk) begin
        if (prst) begin
            ph         <= 2'd0;
            rmii_tx_en <= 1'b0;
            rmii_txd   <= 2'b00;
        end else begin
            ph         <= ph + 1'b1;
            rmii_tx_en <= tx_dv;
            // RMII has no TX_ER: a byte the MAC marked bad goes out inverted, so the frame's
            // FCS fails at the far end.
            rmii_txd   <= tx_byte[2 * ph +: 2] ^ {2{tx_er}};
        end
    end

    wire unused = &{1'b0, rx_drop_w, rx_room_w, tx_drop_r};
endmodule
`default_nettype wire
