// SPDX-License-Identifier: Apache-2.0
// What every ECP5 board top shares: the board oscillator through the PLL to the system
// clock, the reset, the UART bit period for the board's baud rate, and the SoC at the
// sizes of one ULX3S profile. The tops name the pins and choose the numbers.
`default_nettype none
`include "nf_layout.vh"
module nf_board_core #(
    parameter integer OSC_HZ        = 25000000,   // board oscillator, Hz
    parameter integer PLL_CLKI_DIV  = 5,          // PLL input divider (phase detector = OSC_HZ / this, >= 3.125 MHz)
    parameter integer PLL_CLKFB_DIV = 8,          // PLL feedback divider: system clock = OSC_HZ / CLKI_DIV * this
    parameter integer PLL_CLKOP_DIV = 15,         // PLL output divider: VCO = system clock * this (400..800 MHz)
    parameter integer BAUD          = 3000000,    // UART bit rate, bit/s
    parameter [0:0]   PROFILE_85K   = 1'b1,       // adapter sizes: 1 profile ULX3S_85K, 0 profile ULX3S_25K
    // Firmware image ($readmemh words) of the CPU's RAM. The default is nf_soc's: Yosys
    // elaborates every module with its defaults first, so it must name a file that exists.
    parameter         FW_HEX        = "build/firmware/nf_fw.hex",
    // 1: the firmware RAM in bit slices (nf_soc FW_SLICE_BITS, the profile's), loaded
    // from FW_HEX.sNN (tools/fw_slices.py); 0: one 32-bit memory.
    parameter [0:0]   FW_SLICED     = 1'b0
) (
    input  wire       clk_osc,
    input  wire       uart_rx,     // host -> FPGA
    output wire       uart_tx,     // FPGA -> host
    output wire [7:0] leds         // active high; LED 7 also lit while the CPU is trapped
);
    localparam integer CLK_HZ = OSC_HZ / PLL_CLKI_DIV * PLL_CLKFB_DIV;
    // The UART's bit period in clocks, 12.4 fixed point, rounded to the nearest
    // (32-bit arithmetic: valid for clocks below 134 MHz).
    localparam integer UART_PERIOD_FX = (CLK_HZ * (1 << `NF_SOC_UART_PERIOD_FRAC) + BAUD / 2) / BAUD;
    localparam [15:0]  UART_PERIOD    = UART_PERIOD_FX[15:0];
    localparam integer FW_RAM_BYTES   = PROFILE_85K ? `NF_PROFILE_ULX3S_85K_FW_RAM_BYTES : `NF_PROFILE_ULX3S_25K_FW_RAM_BYTES;
    localparam integer FW_SLICE_BITS  = !FW_SLICED ? 0 : PROFILE_85K ? `NF_PROFILE_ULX3S_85K_FW_SLICE_BITS : `NF_PROFILE_ULX3S_25K_FW_SLICE_BITS;

    wire clk, locked, rst;
    nf_ecp5_pll #(.CLKI_DIV(PLL_CLKI_DIV), .CLKFB_DIV(PLL_CLKFB_DIV), .CLKOP_DIV(PLL_CLKOP_DIV))
        pll (.clk_in(clk_osc), .clk_out(clk), .locked(locked));
    nf_reset_sync reset_sync (.clk(clk), .locked(locked), .rst(rst));

    wire trap;
    wire [7:0] soc_leds;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [7:0] unused_txd;  // the network port's pins: no port on these boards
    wire       unused_tx_en, unused_tx_er;
    wire [7:0] unused_link_txd;  // the host link's Ethernet port: not on these boards (LINK_UDP 0)
    wire       unused_link_tx_en, unused_link_tx_er;
    wire       unused_mdc, unused_mdio_o, unused_mdio_oe;
    /* verilator lint_on UNUSEDSIGNAL */
    nf_soc #(
        .CLK_HZ(CLK_HZ), .FW_HEX(FW_HEX), .FW_RAM_BYTES(FW_RAM_BYTES), .FW_SLICE_BITS(FW_SLICE_BITS),
        .MEM_BYTES(PROFILE_85K ? `NF_PROFILE_ULX3S_85K_MEM_BYTES : `NF_PROFILE_ULX3S_25K_MEM_BYTES),
        .MPT_ENTRIES(PROFILE_85K ? `NF_PROFILE_ULX3S_85K_MPT_ENTRIES : `NF_PROFILE_ULX3S_25K_MPT_ENTRIES),
        .MTT_ENTRIES(PROFILE_85K ? `NF_PROFILE_ULX3S_85K_MTT_ENTRIES : `NF_PROFILE_ULX3S_25K_MTT_ENTRIES),
        .RX_SLOTS(PROFILE_85K ? `NF_PROFILE_ULX3S_85K_RX_SLOTS : `NF_PROFILE_ULX3S_25K_RX_SLOTS),
        .TX_SLOTS(PROFILE_85K ? `NF_PROFILE_ULX3S_85K_TX_SLOTS : `NF_PROFILE_ULX3S_25K_TX_SLOTS),
        .NET_RX_SLOTS(0), .NET_TX_SLOTS(0)  // no PHY on these boards: no network port
    ) soc (
        .clk(clk), .rst(rst), .uart_rx(uart_rx), .uart_tx(uart_tx), .uart_period(UART_PERIOD),
        .leds(soc_leds), .trap(trap),
        .phy_ce(1'b0), .gmii_rxd(8'd0), .gmii_rx_dv(1'b0), .gmii_rx_er(1'b0),
        .gmii_txd(unused_txd), .gmii_tx_en(unused_tx_en), .gmii_tx_er(unused_tx_er),
        .mdc(unused_mdc), .mdio_o(unused_mdio_o), .mdio_oe(unused_mdio_oe), .mdio_i(1'b1),
        .net_mac_seed(32'h0),
        .link_phy_ce(1'b0), .link_gmii_rxd(8'd0), .link_gmii_rx_dv(1'b0), .link_gmii_rx_er(1'b0),
        .link_mac(48'd0), .link_ip(32'd0),
        .link_gmii_txd(unused_link_txd), .link_gmii_tx_en(unused_link_tx_en), .link_gmii_tx_er(unused_link_tx_er)
    );
    // LEDs 0..2 as nf_soc drives them (RX, TX, link error or CPU trap); LED 7 lit while
    // the CPU is trapped, so a firmware fault shows even if the firmware set LEDS.
    assign leds = {trap | soc_leds[7], soc_leds[6:0]};
endmodule
`default_nettype wire
