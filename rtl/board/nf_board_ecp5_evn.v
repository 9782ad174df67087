// SPDX-License-Identifier: Apache-2.0
// Lattice ECP5-EVN board top: 12 MHz oscillator -> PLL -> system clock, the SoC's UART
// on the FT2232H channel B pins (needs the board's UART resistor and EEPROM changes,
// see docs/boards.md), active-low LEDs. No PHY: the host link only. The adapter sizes
// come from the board's profile (nf_board_core, set by tools/bitstream.sh).
`default_nettype none
module nf_board_ecp5_evn #(
    parameter         FW_HEX = "nf_fw.hex",  // firmware image ($readmemh words) of the CPU's RAM
    parameter integer BAUD   = 12000000      // UART bit rate, bit/s (FT2232H maximum)
) (
    input  wire       clk_12mhz,
    input  wire       uart_rx,     // host -> FPGA
    output wire       uart_tx,     // FPGA -> host
    output wire [7:0] led_n
);
    // System clock = 12 MHz / 2 * 13 = 78 MHz (phase detector 6 MHz), VCO 624 MHz: the
    // clock the -8 part places at with margin (docs/boards.md).
    wire [7:0] leds;
    /* verilator lint_off UNUSEDSIGNAL */
    wire       clk, rst, clk_os, clk_os2;  // no PHY adapter to clock
    wire [7:0] unused_txd;                 // the network port's transmit side: no PHY
    wire       unused_tx_en, unused_tx_er;
    wire [7:0] unused_link_txd;            // no host link on Ethernet (LINK_UDP 0)
    wire       unused_link_tx_en, unused_link_tx_er;
    wire       unused_mdc, unused_mdio_o, unused_mdio_oe;  // no PHY to manage
    /* verilator lint_on UNUSEDSIGNAL */
    nf_board_core #(
        .OSC_HZ(12000000), .PLL_CLKI_DIV(2), .PLL_CLKFB_DIV(13), .PLL_CLKOP_DIV(8),
        .BAUD(BAUD), .FW_HEX(FW_HEX)
    ) core (
        .clk_osc(clk_12mhz), .uart_rx(uart_rx), .uart_tx(uart_tx), .leds(leds),
        .clk(clk), .rst(rst), .clk_os(clk_os), .clk_os2(clk_os2),
        .phy_ce(1'b0), .gmii_rxd(8'd0), .gmii_rx_dv(1'b0), .gmii_rx_er(1'b0),
        .gmii_txd(unused_txd), .gmii_tx_en(unused_tx_en), .gmii_tx_er(unused_tx_er),
        .mdc(unused_mdc), .mdio_o(unused_mdio_o), .mdio_oe(unused_mdio_oe), .mdio_i(1'b1),
        .net_mac_seed(32'h0),
        .link_phy_ce(1'b0), .link_gmii_rxd(8'd0), .link_gmii_rx_dv(1'b0), .link_gmii_rx_er(1'b0),
        .link_gmii_txd(unused_link_txd), .link_gmii_tx_en(unused_link_tx_en), .link_gmii_tx_er(unused_link_tx_er),
        .link_mac(48'd0), .link_ip(32'd0)
    );
    assign led_n = ~leds;   // the EVN's LEDs light when driven low
endmodule
`default_nettype wire
