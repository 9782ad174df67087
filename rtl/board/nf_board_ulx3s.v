// SPDX-License-Identifier: Apache-2.0
// ULX3S board top: 25 MHz oscillator -> PLL -> system clock, the SoC's UART on the
// FT231X pins, LEDs. No PHY: the host link only (the network port's pins idle). The
// adapter sizes come from the board's profile (nf_board_core, set by tools/bitstream.sh).
`default_nettype none
module nf_board_ulx3s #(
    parameter         FW_HEX        = "nf_fw.hex", // firmware image ($readmemh words) of the CPU's RAM
    parameter integer BAUD          = 3000000,     // UART bit rate, bit/s (FT231X maximum)
    // System clock = 25 MHz / PLL_CLKI_DIV * PLL_CLKFB_DIV; each board of proto/boards.toml
    // sets the dividers for its part (top_params), chosen by timing (docs/boards.md).
    parameter integer PLL_CLKI_DIV  = 2,           // PLL input divider (phase detector 25 MHz / this, >= 3.125 MHz)
    parameter integer PLL_CLKFB_DIV = 5,           // PLL feedback divider
    parameter integer PLL_CLKOP_DIV = 8            // PLL output divider: VCO = system clock * this (400..800 MHz)
) (
    input  wire       clk_25mhz,
    input  wire       ftdi_txd,    // host -> FPGA (FPGA RX)
    output wire       ftdi_rxd,    // FPGA -> host (FPGA TX)
    output wire [7:0] led,
    output wire       wifi_gpio0   // held high so the ESP32 does not reset the board
);
    /* verilator lint_off UNUSEDSIGNAL */
    wire       clk, rst, clk_os, clk_os2;  // no PHY adapter to clock
    wire [7:0] unused_txd;                 // the network port's transmit side: no PHY
    wire       unused_tx_en, unused_tx_er;
    wire [7:0] unused_link_txd;            // no host link on Ethernet (LINK_UDP 0)
    wire       unused_link_tx_en, unused_link_tx_er;
    wire       unused_mdc, unused_mdio_o, unused_mdio_oe;  // no PHY to manage
    /* verilator lint_on UNUSEDSIGNAL */
    nf_board_core #(
        .OSC_HZ(25000000), .PLL_CLKI_DIV(PLL_CLKI_DIV), .PLL_CLKFB_DIV(PLL_CLKFB_DIV), .PLL_CLKOP_DIV(PLL_CLKOP_DIV),
        .BAUD(BAUD), .FW_HEX(FW_HEX)
    ) core (
        .clk_osc(clk_25mhz), .uart_rx(ftdi_txd), .uart_tx(ftdi_rxd), .leds(led),
        .clk(clk), .rst(rst), .clk_os(clk_os), .clk_os2(clk_os2),
        .phy_ce(1'b0), .gmii_rxd(8'd0), .gmii_rx_dv(1'b0), .gmii_rx_er(1'b0),
        .gmii_txd(unused_txd), .gmii_tx_en(unused_tx_en), .gmii_tx_er(unused_tx_er),
        .mdc(unused_mdc), .mdio_o(unused_mdio_o), .mdio_oe(unused_mdio_oe), .mdio_i(1'b1),
        .net_mac_seed(32'h0),
        .link_phy_ce(1'b0), .link_gmii_rxd(8'd0), .link_gmii_rx_dv(1'b0), .link_gmii_rx_er(1'b0),
        .link_gmii_txd(unused_link_txd), .link_gmii_tx_en(unused_link_tx_en), .link_gmii_tx_er(unused_link_tx_er),
        .link_mac(48'd0), .link_ip(32'd0)
    );
    assign wifi_gpio0 = 1'b1;
endmodule
`default_nettype wire
