// SPDX-License-Identifier: Apache-2.0
// One adapter's port for the wire's test against the RTL (sim/tests/wire_mac.cpp): the
// MAC transmitter and receiver of rtl/net on one phy_ce, their GMII pins at the top.
module wire_mac_tb (
    input  wire       clk,
    input  wire       rst,
    input  wire       phy_ce,
    input  wire [7:0] s_tdata,
    input  wire       s_tvalid,
    output wire       s_tready,
    input  wire       s_tlast,
    input  wire       s_tuser,
    output wire [7:0] gmii_txd,
    output wire       gmii_tx_en,
    output wire       gmii_tx_er,
    input  wire [7:0] gmii_rxd,
    input  wire       gmii_rx_dv,
    input  wire       gmii_rx_er,
    output wire [7:0] m_tdata,
    output wire       m_tvalid,
    output wire       m_tlast,
    output wire       m_tuser,
    output wire       fcs_error
);
    /* verilator lint_off PINCONNECTEMPTY */
    nf_eth_mac_tx tx (
        .clk(clk), .rst(rst), .s_tdata(s_tdata), .s_tvalid(s_tvalid), .s_tready(s_tready),
        .s_tlast(s_tlast), .s_tuser(s_tuser), .phy_ce(phy_ce), .gmii_txd(gmii_txd),
        .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er), .busy(), .underflow()
    );
    nf_eth_mac_rx rx (
        .clk(clk), .rst(rst), .phy_ce(phy_ce), .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv),
        .gmii_rx_er(gmii_rx_er), .m_tdata(m_tdata), .m_tvalid(m_tvalid), .m_tlast(m_tlast),
        .m_tuser(m_tuser), .fcs_error(fcs_error), .runt()
    );
    /* verilator lint_on PINCONNECTEMPTY */
endmodule
