// SPDX-License-Identifier: Apache-2.0
// What every ECP5 board top shares: the board oscillator through the PLL to the system
// clock (and up to two PHY clocks of the same VCO), the reset, the UART bit period for the
// board's baud rate, and the SoC at the sizes of the board's profile. The tops name the
// pins, choose the clocks and, on a board with a PHY, put its adapter on the GMII-style port.
// The sizes are set by tools/bitstream.sh from the board's profile in proto/profiles.toml
// (chparam on this module), so a top never names them; the defaults (ULX3S_85K) are for lint.
`default_nettype none
`include "nf_layout.vh"
module nf_board_core #(
    parameter integer OSC_HZ        = 25000000,   // board oscillator, Hz
    parameter integer PLL_CLKI_DIV  = 5,          // PLL input divider (phase detector = OSC_HZ / this, >= 3.125 MHz)
    parameter integer PLL_CLKFB_DIV = 8,          // PLL feedback divider: system clock = OSC_HZ / CLKI_DIV * this
    parameter integer PLL_CLKOP_DIV = 15,         // PLL output divider: VCO = system clock * this (400..800 MHz)
    parameter integer PLL_CLKOS_DIV    = 0,       // clk_os = VCO / this (a PHY's clock); 0: none
    parameter integer PLL_CLKOS_PHASE  = 0,       // clk_os phase, degrees (nf_ecp5_pll CLKOS_PHASE)
    parameter integer PLL_CLKOS2_DIV   = 0,       // clk_os2 = VCO / this; 0: none
    parameter integer PLL_CLKOS2_PHASE = 0,       // clk_os2 phase, degrees (e.g. 90 for a shifted RGMII TX clock)
    parameter integer BAUD          = 3000000,    // UART bit rate, bit/s
    // The adapter sizes: the board's profile (proto/profiles.toml), set by tools/bitstream.sh.
    parameter integer MEM_BYTES     = `NF_PROFILE_ULX3S_85K_MEM_BYTES,     // adapter memory, bytes
    parameter integer MPT_ENTRIES   = `NF_PROFILE_ULX3S_85K_MPT_ENTRIES,   // key-table entries
    parameter integer MTT_ENTRIES   = `NF_PROFILE_ULX3S_85K_MTT_ENTRIES,   // translation-table entries
    parameter integer RX_SLOTS      = `NF_PROFILE_ULX3S_85K_RX_SLOTS,      // link receive slots
    parameter integer TX_SLOTS      = `NF_PROFILE_ULX3S_85K_TX_SLOTS,      // link transmit slots
    parameter integer NET_RX_SLOTS  = `NF_PROFILE_ULX3S_85K_NET_RX_SLOTS,  // network port receive slots; 0: no port
    parameter integer NET_TX_SLOTS  = `NF_PROFILE_ULX3S_85K_NET_TX_SLOTS,  // network port transmit slots
    parameter integer FW_RAM_BYTES  = `NF_PROFILE_ULX3S_85K_FW_RAM_BYTES,  // firmware RAM, bytes
    // The firmware RAM's bit slices (nf_soc FW_SLICE_BITS, the profile's), loaded from
    // FW_HEX.sNN (tools/fw_slices.py); 0: one 32-bit memory loaded from FW_HEX.
    parameter integer FW_SLICE_BITS = `NF_PROFILE_ULX3S_85K_FW_SLICE_BITS,
    // 1: the host link also takes its bytes in UDP datagrams on the link_* port (nf_soc
    // LINK_UDP, a second Ethernet port); 0: the UART alone, link_* unused.
    parameter integer LINK_UDP      = 0,
    // Firmware image ($readmemh words) of the CPU's RAM. The default is nf_soc's: Yosys
    // elaborates every module with its defaults first, so it must name a file that exists.
    parameter         FW_HEX        = "build/firmware/nf_fw.hex"
) (
    input  wire        clk_osc,
    input  wire        uart_rx,       // host -> FPGA
    output wire        uart_tx,       // FPGA -> host
    output wire [7:0]  leds,          // active high; LED 7 also lit while the CPU is trapped
    // the clocks for the top's PHY adapter: the system clock and its reset, clk_os, clk_os2
    output wire        clk,
    output wire        rst,
    output wire        clk_os,
    output wire        clk_os2,
    // the network port's PHY side (nf_soc's, in the system clock; tie off without a PHY)
    input  wire        phy_ce,
    input  wire [7:0]  gmii_rxd,
    input  wire        gmii_rx_dv,
    input  wire        gmii_rx_er,
    output wire [7:0]  gmii_txd,
    output wire        gmii_tx_en,
    output wire        gmii_tx_er,
    output wire        mdc,           // the port's PHY management (nf_soc's): the top makes the MDIO pad
    output wire        mdio_o,
    output wire        mdio_oe,
    input  wire        mdio_i,        // 1 where no PHY answers
    input  wire [31:0] net_mac_seed,  // the firmware's default MAC (NET.MAC_SEED), constant
    // the host link's Ethernet port (LINK_UDP 1; nf_soc's link_*, in the system clock; tie
    // off without one): its MAC and IPv4 address, constant while running
    input  wire        link_phy_ce,
    input  wire [7:0]  link_gmii_rxd,
    input  wire        link_gmii_rx_dv,
    input  wire        link_gmii_rx_er,
    output wire [7:0]  link_gmii_txd,
    output wire        link_gmii_tx_en,
    output wire        link_gmii_tx_er,
    input  wire [47:0] link_mac,
    input  wire [31:0] link_ip
);
    localparam integer CLK_HZ = OSC_HZ / PLL_CLKI_DIV * PLL_CLKFB_DIV;
    // The UART's bit period in clocks, 12.4 fixed point, rounded to the nearest
    // (32-bit arithmetic: valid for clocks below 134 MHz).
    localparam integer UART_PERIOD_FX = (CLK_HZ * (1 << `NF_SOC_UART_PERIOD_FRAC) + BAUD / 2) / BAUD;
    localparam [15:0]  UART_PERIOD    = UART_PERIOD_FX[15:0];
    generate if (CLK_HZ >= 134000000 || UART_PERIOD_FX < (4 << `NF_SOC_UART_PERIOD_FRAC) ||
                 UART_PERIOD_FX > 65535) begin : g_bad_uart
        // Elaboration fails here: the clock is too fast for the period's arithmetic, or the
        // bit period is below 4 clocks or does not fit 12.4 bits.
        nf_board_core_uart_period_out_of_range u_fail ();
    end endgenerate

    wire locked;
    nf_ecp5_pll #(
        .CLKI_DIV(PLL_CLKI_DIV), .CLKFB_DIV(PLL_CLKFB_DIV), .CLKOP_DIV(PLL_CLKOP_DIV),
        .CLKOS_DIV(PLL_CLKOS_DIV), .CLKOS_PHASE(PLL_CLKOS_PHASE),
        .CLKOS2_DIV(PLL_CLKOS2_DIV), .CLKOS2_PHASE(PLL_CLKOS2_PHASE)
    ) pll (.clk_in(clk_osc), .clk_out(clk), .clk_os(clk_os), .clk_os2(clk_os2), .locked(locked));
    nf_reset_sync reset_sync (.clk(clk), .locked(locked), .rst(rst));

    wire trap;
    wire [7:0] soc_leds;
    nf_soc #(
        .CLK_HZ(CLK_HZ), .FW_HEX(FW_HEX), .FW_RAM_BYTES(FW_RAM_BYTES), .FW_SLICE_BITS(FW_SLICE_BITS),
        .MEM_BYTES(MEM_BYTES), .MPT_ENTRIES(MPT_ENTRIES), .MTT_ENTRIES(MTT_ENTRIES),
        .RX_SLOTS(RX_SLOTS), .TX_SLOTS(TX_SLOTS), .NET_RX_SLOTS(NET_RX_SLOTS), .NET_TX_SLOTS(NET_TX_SLOTS),
        .LINK_UDP(LINK_UDP)
    ) soc (
        .clk(clk), .rst(rst), .uart_rx(uart_rx), .uart_tx(uart_tx), .uart_period(UART_PERIOD),
        .leds(soc_leds), .trap(trap),
        .phy_ce(phy_ce), .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
        .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
        .mdc(mdc), .mdio_o(mdio_o), .mdio_oe(mdio_oe), .mdio_i(mdio_i),
        .net_mac_seed(net_mac_seed),
        .link_phy_ce(link_phy_ce), .link_gmii_rxd(link_gmii_rxd), .link_gmii_rx_dv(link_gmii_rx_dv),
        .link_gmii_rx_er(link_gmii_rx_er), .link_mac(link_mac), .link_ip(link_ip),
        .link_gmii_txd(link_gmii_txd), .link_gmii_tx_en(link_gmii_tx_en), .link_gmii_tx_er(link_gmii_tx_er)
    );
    // LEDs 0..2 as nf_soc drives them (RX, TX, link error or CPU trap); LED 7 lit while
    // the CPU is trapped, so a firmware fault shows even if the firmware set LEDS.
    assign leds = {trap | soc_leds[7], soc_leds[6:0]};
endmodule
`default_nettype wire
