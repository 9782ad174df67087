// SPDX-License-Identifier: Apache-2.0
// Colorlight i9 (v7.2) board top on its extension board: 25 MHz oscillator -> PLL -> the
// system clock and the 125 MHz RGMII transmit clock of the same VCO; the SoC's UART on the
// extension board's USB serial; port 0's Broadcom B50612D through nf_phy_rgmii at 1 Gb/s,
// the RDMA wire; with HOST_LINK_UDP, port 1's through another nf_phy_rgmii as a second host
// link (nf_link_udp: the link's bytes in UDP datagrams to LINK_IP, the udp: transport),
// beside the UART; without, port 1's pins idle.
// The B50612D delays its own TX clock (TXC edge-aligned with the data, no shifted copy),
// and its RX clock arrives edge-aligned, so the receive pins go through RX_DELAY taps.
// The adapter sizes come from the board's profile (nf_board_core, set by tools/bitstream.sh).
`default_nettype none
module nf_board_colorlight_i9 #(
    parameter         FW_HEX        = "nf_fw.hex",  // firmware image ($readmemh words) of the CPU's RAM
    parameter integer BAUD          = 3000000,      // UART bit rate, bit/s
    // System clock = 25 MHz / PLL_CLKI_DIV * PLL_CLKFB_DIV, VCO = it * PLL_CLKOP_DIV, and the
    // RGMII TX clock = VCO / PLL_CLKOS_DIV, which must be 125 MHz (1 Gb/s).
    parameter integer PLL_CLKI_DIV  = 2,            // PLL input divider (phase detector 25 MHz / this, >= 3.125 MHz)
    parameter integer PLL_CLKFB_DIV = 5,            // PLL feedback divider
    parameter integer PLL_CLKOP_DIV = 10,           // PLL output divider: VCO = system clock * this (400..800 MHz)
    parameter integer PLL_CLKOS_DIV = 5,            // VCO / this = the 125 MHz RGMII TX clock
    parameter integer PORT_CE_DIV   = 2,            // system clocks per byte time of port 0 toward nf_net (nf_phy_rgmii CE_DIV)
    parameter integer RX_DELAY      = 80,           // DELAYG taps on the receive pins (the FPGA delays RX, not the PHY)
    parameter integer HOST_LINK_UDP = 1,            // 1: port 1 is a host link (nf_link_udp); 0: port 1 idle
    parameter [31:0]  MAC_SEED      = 32'h69390001, // port 0's default MAC: 02:6e:<these bytes> (NET.MAC_SEED)
    parameter [47:0]  LINK_MAC      = 48'h026e69390002,  // port 1's MAC (the host link's), locally administered
    parameter [31:0]  LINK_IP       = 32'hC0A82532  // port 1's IPv4 address (the udp: transport's HOST): 192.168.37.50
) (
    input  wire       clk_25mhz,
    input  wire       uart_rx,       // host -> FPGA (extension board's USB serial)
    output wire       uart_tx,       // FPGA -> host
    output wire       led_n,         // the module's LED, lit when low: CPU trapped or link error
    output wire       eth_rst_n,     // both PHYs' reset, released once the PLL has locked
    output wire       eth_mdc,       // both PHYs' management bus (port 0's PHY answers first)
    inout  wire       eth_mdio,
    input  wire       eth0_rx_clk,
    input  wire [3:0] eth0_rxd,
    input  wire       eth0_rx_ctl,
    output wire       eth0_tx_clk,
    output wire [3:0] eth0_txd,
    output wire       eth0_tx_ctl,
    input  wire       eth1_rx_clk,
    input  wire [3:0] eth1_rxd,
    input  wire       eth1_rx_ctl,
    output wire       eth1_tx_clk,
    output wire [3:0] eth1_txd,
    output wire       eth1_tx_ctl
);
    localparam integer VCO_HZ = 25000000 / PLL_CLKI_DIV * PLL_CLKFB_DIV * PLL_CLKOP_DIV;
    generate if (VCO_HZ / PLL_CLKOS_DIV != 125000000 || VCO_HZ % PLL_CLKOS_DIV != 0) begin : g_bad_tx_clk
        // Elaboration fails here: the RGMII TX clock is not 125 MHz.
        nf_board_colorlight_i9_tx_clock_not_125mhz u_fail ();
    end endgenerate

    wire [7:0] leds;
    wire       clk, rst, clk_tx, phy_ce, link_phy_ce;
    wire       mdio_o, mdio_oe;
    /* verilator lint_off UNUSEDSIGNAL */
    wire       clk_os2;             // no shifted TX clock: the PHY delays TXC
    wire       rx_drop, tx_drop;    // frames the PHY FIFOs dropped (the MAC's counters see the gaps)
    wire       rx1_drop, tx1_drop;  // the same on port 1 (the link's ARQ repairs a lost datagram)
    wire       unused_eth1 = ^{eth1_rx_clk, eth1_rxd, eth1_rx_ctl};  // port 1's inputs when idle
    wire [5:0] leds_unused = leds[6:1];  // one LED on the module: LED 0 (RX) and 7 (trap) only
    /* verilator lint_on UNUSEDSIGNAL */
    wire [7:0] gmii_rxd, gmii_txd;
    wire       gmii_rx_dv, gmii_rx_er, gmii_tx_en, gmii_tx_er;
    wire [7:0] link_rxd;
    wire       link_rx_dv, link_rx_er;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [7:0] link_txd;                         // unused while port 1 is idle
    wire       link_tx_en, link_tx_er;
    /* verilator lint_on UNUSEDSIGNAL */
    nf_board_core #(
        .OSC_HZ(25000000), .PLL_CLKI_DIV(PLL_CLKI_DIV), .PLL_CLKFB_DIV(PLL_CLKFB_DIV), .PLL_CLKOP_DIV(PLL_CLKOP_DIV),
        .PLL_CLKOS_DIV(PLL_CLKOS_DIV), .BAUD(BAUD), .FW_HEX(FW_HEX), .LINK_UDP(HOST_LINK_UDP)
    ) core (
        .clk_osc(clk_25mhz), .uart_rx(uart_rx), .uart_tx(uart_tx), .leds(leds),
        .clk(clk), .rst(rst), .clk_os(clk_tx), .clk_os2(clk_os2),
        .phy_ce(phy_ce), .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
        .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
        .mdc(eth_mdc), .mdio_o(mdio_o), .mdio_oe(mdio_oe), .mdio_i(eth_mdio),
        .net_mac_seed(MAC_SEED),
        .link_phy_ce(link_phy_ce), .link_gmii_rxd(link_rxd), .link_gmii_rx_dv(link_rx_dv), .link_gmii_rx_er(link_rx_er),
        .link_gmii_txd(link_txd), .link_gmii_tx_en(link_tx_en), .link_gmii_tx_er(link_tx_er),
        .link_mac(LINK_MAC), .link_ip(LINK_IP)
    );
    nf_phy_rgmii #(.RX_DELAY(RX_DELAY), .TX_CLK_SHIFTED(0), .CE_DIV(PORT_CE_DIV)) phy0 (
        .clk(clk), .rst(rst), .phy_ce(phy_ce),
        .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
        .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
        .rx_drop(rx_drop), .tx_drop(tx_drop),
        .clk_tx(clk_tx), .clk_tx90(clk_tx),
        .rgmii_rx_clk(eth0_rx_clk), .rgmii_rxd(eth0_rxd), .rgmii_rx_ctl(eth0_rx_ctl),
        .rgmii_tx_clk(eth0_tx_clk), .rgmii_txd(eth0_txd), .rgmii_tx_ctl(eth0_tx_ctl)
    );
    generate if (HOST_LINK_UDP != 0) begin : g_port1
        nf_phy_rgmii #(.RX_DELAY(RX_DELAY), .TX_CLK_SHIFTED(0), .CE_DIV(1)) phy1 (
            .clk(clk), .rst(rst), .phy_ce(link_phy_ce),
            .gmii_rxd(link_rxd), .gmii_rx_dv(link_rx_dv), .gmii_rx_er(link_rx_er),
            .gmii_txd(link_txd), .gmii_tx_en(link_tx_en), .gmii_tx_er(link_tx_er),
            .rx_drop(rx1_drop), .tx_drop(tx1_drop),
            .clk_tx(clk_tx), .clk_tx90(clk_tx),
            .rgmii_rx_clk(eth1_rx_clk), .rgmii_rxd(eth1_rxd), .rgmii_rx_ctl(eth1_rx_ctl),
            .rgmii_tx_clk(eth1_tx_clk), .rgmii_txd(eth1_txd), .rgmii_tx_ctl(eth1_tx_ctl)
        );
    end else begin : g_port1_idle
        // No frame from port 1 reaches the SoC and none leaves: the PHY sees an idle link.
        assign {link_rxd, link_rx_dv, link_rx_er} = 10'd0;
        assign {rx1_drop, tx1_drop}               = 2'b00;
        assign link_phy_ce                        = 1'b0;
        assign {eth1_tx_clk, eth1_txd, eth1_tx_ctl} = 6'd0;
    end endgenerate
    assign eth_rst_n = !rst;
    assign eth_mdio  = mdio_oe ? mdio_o : 1'bz;  // open between frames: the pad's pull-up holds it high
    assign led_n     = !(leds[7] | leds[0]);  // one LED: frames received (LED 0), or lit by a trap (LED 7)
endmodule
`default_nettype wire
