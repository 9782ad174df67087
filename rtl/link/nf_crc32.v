// SPDX-License-Identifier: Apache-2.0
// CRC-32 (IEEE, reflected) of one byte per clock. crc holds the running register
// (init NF_LINK_CRC_INIT, no final XOR applied; the user XORs NF_LINK_CRC_XOROUT).
`default_nettype none
`include "nf_layout.vh"
module nf_crc32 (
    input  wire        clk,
    input  wire        rst,
    input  wire        clear,  // restart at the initial value (wins over en)
    input  wire        en,     // fold data into the register
    input  wire [7:0]  data,
    output reg  [31:0] crc
);
    localparam [31:0] POLY = `NF_LINK_CRC_POLY;

    // Eight shift/XOR steps unrolled: the same steps proto/c/nf_frame.c takes per byte.
    function [31:0] crc_byte(input [31:0] crc_in, input [7:0] byte_in);
        integer i;
        reg [31:0] c;
        begin
            c = crc_in ^ {24'd0, byte_in};
            for (i = 0; i < 8; i = i + 1)
                c = (c >> 1) ^ (POLY & {32{c[0]}});
            crc_byte = c;
        end
    endfunction

    always @(posedge clk) begin
        if (rst || clear)
            crc <= `NF_LINK_CRC_INIT;
        else if (en)
            crc <= crc_byte(crc, data);
    end
endmodule
`default_nettype wire
