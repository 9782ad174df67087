// SPDX-License-Identifier: Apache-2.0
// ULX3S with a LAN8720 RMII module on GPIO header J1: the ULX3S top's clock, UART and LEDs,
// and the network port at 100 Mb/s through nf_phy_rmii, clocked by the module's 50 MHz
// REF_CLK on gp[0] (a PCLK pin, so it reaches a global clock). MDC is held low and MDIO
// left to the module's pull-up: the LAN8720's straps set auto-negotiation. The wiring is
// in docs/boards.md. The adapter sizes come from the board's profile (nf_board_core).
`default_nettype none
module nf_board_ulx3s_rmii #(
    parameter         FW_HEX        = "nf_fw.hex",   // firmware image ($readmemh words) of the CPU's RAM
    parameter integer BAUD          = 3000000,       // UART bit rate, bit/s (FT231X maximum)
    // System clock = 25 MHz / PLL_CLKI_DIV * PLL_CLKFB_DIV (proto/boards.toml top_params).
    parameter integer PLL_CLKI_DIV  = 2,             // PLL input divider (phase detector 25 MHz / this, >= 3.125 MHz)
    parameter integer PLL_CLKFB_DIV = 5,             // PLL feedback divider
    parameter integer PLL_CLKOP_DIV = 8,             // PLL output divider: VCO = system clock * this (400..800 MHz)
    parameter [31:0]  MAC_SEED      = 32'h75780001   // the port's default MAC: 02:6e:<these bytes> (NET.MAC_SEED)
) (
    input  wire       clk_25mhz,
    input  wire       ftdi_txd,      // host -> FPGA (FPGA RX)
    output wire       ftdi_rxd,      // FPGA -> host (FPGA TX)
    output wire [7:0] led,
    output wire       wifi_gpio0,    // held high so the ESP32 does not reset the board
    input  wire       rmii_ref_clk,  // gp[0]: 50 MHz from the module
    input  wire       rmii_crs_dv,   // gn[0]
    input  wire [1:0] rmii_rxd,      // gp[1], gn[1]
    output wire       rmii_tx_en,    // gp[2]
    output wire [1:0] rmii_txd,      // gn[2], gp[3]
    output wire       rmii_mdc       // gn[3]: the management clock (no MDIO pin: PHY access reads as no PHY)
);
    wire       clk, rst, phy_ce;
    /* verilator lint_off UNUSEDSIGNAL */
    wire       clk_os, clk_os2;     // the PHY brings its own clock
    wire       rx_drop, tx_drop;    // frames the PHY FIFOs dropped (the MAC's counters see the gaps)
    wire [7:0] unused_link_txd;     // no host link on Ethernet (LINK_UDP 0)
    wire       unused_link_tx_en, unused_link_tx_er;
    wire       unused_mdio_o, unused_mdio_oe;  // MDIO is not wired on this header (docs/boards.md)
    /* verilator lint_on UNUSEDSIGNAL */
    wire [7:0] gmii_rxd, gmii_txd;
    wire       gmii_rx_dv, gmii_rx_er, gmii_tx_en, gmii_tx_er;
    nf_board_core #(
        .OSC_HZ(25000000), .PLL_CLKI_DIV(PLL_CLKI_DIV), .PLL_CLKFB_DIV(PLL_CLKFB_DIV), .PLL_CLKOP_DIV(PLL_CLKOP_DIV),
        .BAUD(BAUD), .FW_HEX(FW_HEX)
    ) core (
        .clk_osc(clk_25mhz), .uart_rx(ftdi_txd), .uart_tx(ftdi_rxd), .leds(led),
        .clk(clk), .rst(rst), .clk_os(clk_os), .clk_os2(clk_os2),
        .phy_ce(phy_ce), .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
        .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
        .mdc(rmii_mdc), .mdio_o(unused_mdio_o), .mdio_oe(unused_mdio_oe), .mdio_i(1'b1),
        .net_mac_seed(MAC_SEED),
        .link_phy_ce(1'b0), .link_gmii_rxd(8'd0), .link_gmii_rx_dv(1'b0), .link_gmii_rx_er(1'b0),
        .link_gmii_txd(unused_link_txd), .link_gmii_tx_en(unused_link_tx_en), .link_gmii_tx_er(unused_link_tx_er),
        .link_mac(48'd0), .link_ip(32'd0)
    );
    nf_phy_rmii phy (
        .clk(clk), .rst(rst), .phy_ce(phy_ce),
        .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
        .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
        .rx_drop(rx_drop), .tx_drop(tx_drop),
        .rmii_ref_clk(rmii_ref_clk), .rmii_crs_dv(rmii_crs_dv), .rmii_rxd(rmii_rxd),
        .rmii_tx_en(rmii_tx_en), .rmii_txd(rmii_txd)
    );
    assign wifi_gpio0 = 1'b1;
endmodule
`default_nettype wire
