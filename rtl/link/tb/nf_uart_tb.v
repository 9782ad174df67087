// SPDX-License-Identifier: Apache-2.0
// Testbench top for the UART pair: the transmitter and the receiver are driven and
// checked independently from C++ (uart_tb.cpp) through their pins.
`default_nettype none
module nf_uart_tb (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,
    input  wire        tx_valid,
    input  wire [7:0]  tx_data,
    output wire        tx_ready,
    output wire        tx_pin,
    input  wire        rx_pin,
    output wire        rx_valid,
    output wire [7:0]  rx_data,
    output wire        rx_error
);
    nf_uart_tx u_tx (
        .clk(clk), .rst(rst), .uart_period(uart_period),
        .in_valid(tx_valid), .in_data(tx_data), .in_ready(tx_ready), .tx(tx_pin)
    );
    nf_uart_rx u_rx (
        .clk(clk), .rst(rst), .uart_period(uart_period), .rx(rx_pin),
        .out_valid(rx_valid), .out_data(rx_data), .out_error(rx_error)
    );
endmodule
`default_nettype wire
