// SPDX-License-Identifier: Apache-2.0
// nfsim's top: nf_soc with its input pins behind a flip-flop, as they would be behind
// the board's wire and pad. Verilator evaluates the logic that a top-level input feeds
// again at every evaluation (whether the input changed or not); with the pins
// registered here that logic is evaluated once, after the clock edge, like the rest.
// The SoC sees the same pins one clock later: the bridge's UART timing moves by one
// clock, the reset lasts one clock longer.
`default_nettype none
module nfsim_top #(
    parameter CPU    = "vexriscv",                  // nf_soc's CPU
    parameter FW_HEX = "build/firmware/nf_fw.hex",  // nf_soc's firmware image
    parameter integer CPU_CLOCK_GATE = 1,           // nf_soc's CPU_CLOCK_GATE (0: the boards' clocks, for sim/tests)
    parameter integer LINK_UDP = 1                  // nf_soc's LINK_UDP: the host link's Ethernet port (nfsim --link-udp)
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        uart_rx,
    output wire        uart_tx,
    input  wire [15:0] uart_period,
    output wire [7:0]  leds,
    output wire        trap,
    // the network port's PHY side (nfsim's wire, sim/nf_wire.h): receive pins registered
    // like the UART's
    input  wire        phy_ce,
    input  wire [7:0]  gmii_rxd,
    input  wire        gmii_rx_dv,
    input  wire        gmii_rx_er,
    output wire [7:0]  gmii_txd,
    output wire        gmii_tx_en,
    output wire        gmii_tx_er,
    input  wire [31:0] mac_seed,     // NET.MAC_SEED (nfsim --mac-seed): set before reset, constant after
    // the host link's Ethernet port (nfsim --link-udp, sim/nf_udp_link.h): receive pins
    // registered like the network port's; its addresses set before reset, constant after
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
    reg        rst_q    = 1'b1;
    reg        rx_q     = 1'b1;
    reg [15:0] period_q = 16'd0;
    reg        ce_q     = 1'b0;
    reg [7:0]  rxd_q    = 8'd0;
    reg        rx_dv_q  = 1'b0;
    reg        rx_er_q  = 1'b0;
    reg [31:0] seed_q   = 32'd0;
    reg        lce_q    = 1'b0;
    reg [7:0]  lrxd_q   = 8'd0;
    reg        lrx_dv_q = 1'b0;
    reg        lrx_er_q = 1'b0;
    reg [47:0] lmac_q   = 48'd0;
    reg [31:0] lip_q    = 32'd0;
    always @(posedge clk) begin
        rst_q    <= rst;
        rx_q     <= uart_rx;
        period_q <= uart_period;
        ce_q     <= phy_ce;
        rxd_q    <= gmii_rxd;
        rx_dv_q  <= gmii_rx_dv;
        rx_er_q  <= gmii_rx_er;
        seed_q   <= mac_seed;
        lce_q    <= link_phy_ce;
        lrxd_q   <= link_gmii_rxd;
        lrx_dv_q <= link_gmii_rx_dv;
        lrx_er_q <= link_gmii_rx_er;
        lmac_q   <= link_mac;
        lip_q    <= link_ip;
    end

    // The CPU's clock stops while it sleeps, the idle engine's with it (nf_soc
    // CPU_CLOCK_GATE): the model then skips their evaluation; the boards run them on clk,
    // clock for clock the same.
    nf_soc #(.CPU(CPU), .FW_HEX(FW_HEX), .CPU_CLOCK_GATE(CPU_CLOCK_GATE), .LINK_UDP(LINK_UDP)) u_soc (
        .clk(clk), .rst(rst_q), .uart_rx(rx_q), .uart_tx(uart_tx), .uart_period(period_q),
        .leds(leds), .trap(trap),
        .phy_ce(ce_q), .gmii_rxd(rxd_q), .gmii_rx_dv(rx_dv_q), .gmii_rx_er(rx_er_q),
        .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
        .net_mac_seed(seed_q),
        .link_phy_ce(lce_q), .link_gmii_rxd(lrxd_q), .link_gmii_rx_dv(lrx_dv_q), .link_gmii_rx_er(lrx_er_q),
        .link_gmii_txd(link_gmii_txd), .link_gmii_tx_en(link_gmii_tx_en), .link_gmii_tx_er(link_gmii_tx_er),
        .link_mac(lmac_q), .link_ip(lip_q)
    );
endmodule
`default_nettype wire
