// SPDX-License-Identifier: Apache-2.0
// Testbench top for rtl/net: the MAC transmitter, the MAC receiver and the ICRC unit side
// by side with independent ports (the C++ harness wires them into chains when it wants),
// and the CRC at four data widths fed from one 64-bit word.
`default_nettype none
module nf_net_tb (
    input  wire        clk,
    input  wire        rst,
    // nf_eth_mac_tx
    input  wire [7:0]  tx_tdata,
    input  wire        tx_tvalid,
    output wire        tx_tready,
    input  wire        tx_tlast,
    input  wire        tx_tuser,
    input  wire        tx_phy_ce,
    output wire [7:0]  tx_txd,
    output wire        tx_en,
    output wire        tx_er,
    output wire        tx_busy,
    output wire        tx_underflow,
    // nf_eth_mac_rx
    input  wire        rx_phy_ce,
    input  wire [7:0]  rx_rxd,
    input  wire        rx_dv,
    input  wire        rx_er,
    output wire [7:0]  rx_tdata,
    output wire        rx_tvalid,
    output wire        rx_tlast,
    output wire        rx_tuser,
    output wire        rx_fcs_error,
    output wire        rx_runt,
    // nf_roce_icrc
    input  wire [7:0]  ic_tdata,
    input  wire        ic_tvalid,
    input  wire        ic_tlast,
    output wire [31:0] ic_icrc,
    output wire        ic_field,
    output wire [7:0]  ic_byte,
    output wire        ic_done,
    output wire        ic_roce,
    output wire        ic_ok,
    // nf_eth_crc32 at DATA_W 8, 16, 32, 64: en_w folds the low w bits of crc_data
    input  wire        crc_clear,
    input  wire [63:0] crc_data,
    input  wire        crc_en8,
    input  wire        crc_en16,
    input  wire        crc_en32,
    input  wire        crc_en64,
    output wire [31:0] crc_fcs8,
    output wire [31:0] crc_fcs16,
    output wire [31:0] crc_fcs32,
    output wire [31:0] crc_fcs64,
    output wire [3:0]  crc_residue_ok
);
    nf_eth_mac_tx u_tx (
        .clk(clk), .rst(rst), .s_tdata(tx_tdata), .s_tvalid(tx_tvalid), .s_tready(tx_tready),
        .s_tlast(tx_tlast), .s_tuser(tx_tuser), .phy_ce(tx_phy_ce), .gmii_txd(tx_txd),
        .gmii_tx_en(tx_en), .gmii_tx_er(tx_er), .busy(tx_busy), .underflow(tx_underflow)
    );
    nf_eth_mac_rx u_rx (
        .clk(clk), .rst(rst), .phy_ce(rx_phy_ce), .gmii_rxd(rx_rxd), .gmii_rx_dv(rx_dv),
        .gmii_rx_er(rx_er), .m_tdata(rx_tdata), .m_tvalid(rx_tvalid), .m_tlast(rx_tlast),
        .m_tuser(rx_tuser), .fcs_error(rx_fcs_error), .runt(rx_runt)
    );
    nf_roce_icrc u_icrc (
        .clk(clk), .rst(rst), .s_tdata(ic_tdata), .s_tvalid(ic_tvalid), .s_tlast(ic_tlast),
        .icrc(ic_icrc), .icrc_field(ic_field), .icrc_byte(ic_byte), .done(ic_done),
        .roce(ic_roce), .icrc_ok(ic_ok)
    );

    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] reg8, reg16, reg32, reg64;  // the harness reads the FCS outputs
    /* verilator lint_on UNUSEDSIGNAL */
    nf_eth_crc32 #(.DATA_W(8)) u_crc8 (
        .clk(clk), .rst(rst), .clear(crc_clear), .en(crc_en8), .data(crc_data[7:0]),
        .crc(reg8), .fcs(crc_fcs8), .residue_ok(crc_residue_ok[0]));
    nf_eth_crc32 #(.DATA_W(16)) u_crc16 (
        .clk(clk), .rst(rst), .clear(crc_clear), .en(crc_en16), .data(crc_data[15:0]),
        .crc(reg16), .fcs(crc_fcs16), .residue_ok(crc_residue_ok[1]));
    nf_eth_crc32 #(.DATA_W(32)) u_crc32 (
        .clk(clk), .rst(rst), .clear(crc_clear), .en(crc_en32), .data(crc_data[31:0]),
        .crc(reg32), .fcs(crc_fcs32), .residue_ok(crc_residue_ok[2]));
    nf_eth_crc32 #(.DATA_W(64)) u_crc64 (
        .clk(clk), .rst(rst), .clear(crc_clear), .en(crc_en64), .data(crc_data),
        .crc(reg64), .fcs(crc_fcs64), .residue_ok(crc_residue_ok[3]));
endmodule
`default_nettype wire
