// SPDX-License-Identifier: Apache-2.0
// Ethernet CRC-32 (polynomial 0x04C11DB7 reflected, LSB of each byte first), DATA_W/8
// bytes per enabled clock; data[7:0] is the first byte on the wire. crc is the running
// register; fcs is its complement, the CRC value, sent least-significant byte first.
`default_nettype none
module nf_eth_crc32 #(
    parameter integer    DATA_W = 8,            // bits folded per enabled clock: 8, 16, 24, ...
    parameter [31:0]     INIT   = 32'hFFFFFFFF  // register after clear (all ones for Ethernet)
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              clear,  // restart at INIT (wins over en)
    input  wire              en,     // fold the DATA_W/8 bytes of data into the register
    input  wire [DATA_W-1:0] data,
    output reg  [31:0]       crc,    // running register (no final XOR)
    output wire [31:0]       fcs,    // ~crc: the CRC value of the bytes folded since clear
    output wire              residue_ok // the bytes folded end in their own FCS, unchanged
);
    localparam [31:0] POLY_REFL = 32'hEDB88320;
    // Register value after folding a message followed by its own FCS (LSB first).
    localparam [31:0] RESIDUE   = 32'hDEBB20E3;

    generate
        if (DATA_W < 8 || DATA_W % 8 != 0) begin : g_bad_width
            $error("nf_eth_crc32: DATA_W must be a positive multiple of 8");
        end
    endgenerate

    // One bit per step, LSB first, bytes in wire order: the whole word unrolled.
    function [31:0] crc_word(input [31:0] crc_in, input [DATA_W-1:0] word);
        integer i;
        reg [31:0] c;
        begin
            c = crc_in;
            for (i = 0; i < DATA_W; i = i + 1)
                c = (c >> 1) ^ (POLY_REFL & {32{c[0] ^ word[i]}});
            crc_word = c;
        end
    endfunction

    always @(posedge clk) begin
        if (rst || clear)
            crc <= INIT;
        else if (en)
            crc <= crc_word(crc, data);
    end

    assign fcs        = ~crc;
    assign residue_ok = (crc == RESIDUE);
endmodule
`default_nettype wire
