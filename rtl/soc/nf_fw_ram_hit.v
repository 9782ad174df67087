// SPDX-License-Identifier: Apache-2.0
// Whether an address is in the firmware RAM (address 0 up to BYTES): its high bits zero,
// and for a size that is no power of two its low bits below the size too. A few LUTs, not
// a 32-bit comparison's carry chain, stand between a core's address and the block RAMs.
`default_nettype none
module nf_fw_ram_hit #(
    parameter integer BYTES = 65536  // the firmware RAM's size, bytes, a multiple of 4
) (
    input  wire [31:0] addr,
    output wire        hit
);
    localparam integer AB   = $clog2(BYTES);
    localparam         POW2 = (BYTES == (1 << AB));
    localparam [31:0]  SIZE = BYTES;
    assign hit = (addr >> AB) == 32'd0 && (POW2 || addr[AB-1:0] < SIZE[AB-1:0]);
endmodule
`default_nettype wire
