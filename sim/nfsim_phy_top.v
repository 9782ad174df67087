// SPDX-License-Identifier: Apache-2.0
// nfsim's top for a build at the board's PHY pins (nfsim-rgmii, nfsim-rmii): nf_soc behind
// nf_phy_rgmii or nf_phy_rmii (PHY 1 or 2), its phy_ce from the port as on the boards; the
// harness drives the pins and PHY clocks (sim/nfsim_phy.h). The module keeps nfsim_top's
// name and its u_soc, so the harness reaches the same members in either build.
// Clock-domain crossings: those inside the PHY port (CDC "rgmii rx"/"rgmii tx" or
// CDC "rmii rx"/"rmii tx"); the pins here are in the PHY clocks.
`default_nettype none
/* verilator lint_off DECLFILENAME */
module nfsim_top #(
    parameter CPU    = "vexriscv",                  // nf_soc's CPU
    parameter FW_HEX = "build/firmware/nf_fw.hex",  // nf_soc's firmware image
    parameter integer CPU_CLOCK_GATE = 1,           // nf_soc's CPU_CLOCK_GATE
    parameter integer PHY = 1                       // the PHY port: 1 nf_phy_rgmii, 2 nf_phy_rmii (nfsim's NFSIM_PHY)
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        uart_rx,
    output wire        uart_tx,
    input  wire [15:0] uart_period,
    output wire [7:0]  leds,
    output wire        trap,
    input  wire [31:0] mac_seed,     // NET.MAC_SEED: set before reset, constant after
    output wire        mdc,          // PHY management (sim/nf_mii_phy.h answers): mdio_i registered like the rest
    output wire        mdio_o,
    output wire        mdio_oe,
    input  wire        mdio_i,
    // RGMII (PHY = "rgmii"): the PHY's RX clock and the PLL's 125 MHz for TX
    input  wire        rgmii_rx_clk,
    input  wire [3:0]  rgmii_rxd,
    input  wire        rgmii_rx_ctl,
    input  wire        clk_tx,
    output wire        rgmii_tx_clk,
    output wire [3:0]  rgmii_txd,
    output wire        rgmii_tx_ctl,
    // RMII (PHY = "rmii")
    input  wire        rmii_ref_clk,
    input  wire        rmii_crs_dv,
    input  wire [1:0]  rmii_rxd,
    output wire        rmii_tx_en,
    output wire [1:0]  rmii_txd,
    output wire        phy_drop      // a frame dropped by the port's FIFOs (either way), one clk pulse
);
    generate
        if (PHY != 1 && PHY != 2) begin : g_bad_phy
            $error("nfsim_top: PHY must be 1 (RGMII) or 2 (RMII)");
        end
    endgenerate

    // The system-side pins registered, as in sim/nfsim_top.v.
    reg        rst_q    = 1'b1;
    reg        rx_q     = 1'b1;
    reg [15:0] period_q = 16'd0;
    reg [31:0] seed_q   = 32'd0;
    reg        mdio_q   = 1'b1;
    always @(posedge clk) begin
        rst_q    <= rst;
        rx_q     <= uart_rx;
        period_q <= uart_period;
        seed_q   <= mac_seed;
        mdio_q   <= mdio_i;
    end

    wire [7:0] rxd, txd;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [7:0] unused_link_txd;  // the host link's Ethernet port: not in this build
    wire       unused_link_tx_en, unused_link_tx_er;
    /* verilator lint_on UNUSEDSIGNAL */
    wire       rx_dv, rx_er, tx_en, tx_er, rx_drop, tx_drop;
    wire       phy_ce;  // the PHY port's byte times
    nf_soc #(.CPU(CPU), .FW_HEX(FW_HEX), .CPU_CLOCK_GATE(CPU_CLOCK_GATE)) u_soc (
        .clk(clk), .rst(rst_q), .uart_rx(rx_q), .uart_tx(uart_tx), .uart_period(period_q),
        .leds(leds), .trap(trap),
        .phy_ce(phy_ce), .gmii_rxd(rxd), .gmii_rx_dv(rx_dv), .gmii_rx_er(rx_er),
        .gmii_txd(txd), .gmii_tx_en(tx_en), .gmii_tx_er(tx_er),
        .mdc(mdc), .mdio_o(mdio_o), .mdio_oe(mdio_oe), .mdio_i(mdio_q),
        .net_mac_seed(seed_q),
        // no host-link Ethernet port in this build (nf_soc LINK_UDP 0)
        .link_phy_ce(1'b0), .link_gmii_rxd(8'd0), .link_gmii_rx_dv(1'b0), .link_gmii_rx_er(1'b0),
        .link_mac(48'd0), .link_ip(32'd0),
        .link_gmii_txd(unused_link_txd), .link_gmii_tx_en(unused_link_tx_en), .link_gmii_tx_er(unused_link_tx_er)
    );
    assign phy_drop = rx_drop | tx_drop;

    generate
        if (PHY == 1) begin : g_rgmii
            nf_phy_rgmii u_phy (
                .clk(clk), .rst(rst_q), .phy_ce(phy_ce),
                .gmii_rxd(rxd), .gmii_rx_dv(rx_dv), .gmii_rx_er(rx_er),
                .gmii_txd(txd), .gmii_tx_en(tx_en), .gmii_tx_er(tx_er),
                .rx_drop(rx_drop), .tx_drop(tx_drop),
                .clk_tx(clk_tx), .clk_tx90(1'b0),
                .rgmii_rx_clk(rgmii_rx_clk), .rgmii_rxd(rgmii_rxd), .rgmii_rx_ctl(rgmii_rx_ctl),
                .rgmii_tx_clk(rgmii_tx_clk), .rgmii_txd(rgmii_txd), .rgmii_tx_ctl(rgmii_tx_ctl)
            );
            assign rmii_tx_en = 1'b0;
            assign rmii_txd   = 2'b00;
            wire unused = &{1'b0, rmii_ref_clk, rmii_crs_dv, rmii_rxd};
        end else begin : g_rmii
            nf_phy_rmii u_phy (
                .clk(clk), .rst(rst_q), .phy_ce(phy_ce),
                .gmii_rxd(rxd), .gmii_rx_dv(rx_dv), .gmii_rx_er(rx_er),
                .gmii_txd(txd), .gmii_tx_en(tx_en), .gmii_tx_er(tx_er),
                .rx_drop(rx_drop), .tx_drop(tx_drop),
                .rmii_ref_clk(rmii_ref_clk), .rmii_crs_dv(rmii_crs_dv), .rmii_rxd(rmii_rxd),
                .rmii_tx_en(rmii_tx_en), .rmii_txd(rmii_txd)
            );
            assign rgmii_tx_clk = 1'b0;
            assign rgmii_txd    = 4'd0;
            assign rgmii_tx_ctl = 1'b0;
            wire unused = &{1'b0, rgmii_rx_clk, rgmii_rxd, rgmii_rx_ctl, clk_tx};
        end
    endgenerate
endmodule
/* verilator lint_on DECLFILENAME */
`default_nettype wire
