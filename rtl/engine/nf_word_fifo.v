// SPDX-License-Identifier: Apache-2.0
// Small register FIFO of words: between the adapter-memory read port and a consumer
// (loader, DMA: the reader issues a read only while count + in-flight stays below DEPTH,
// so a push never finds the FIFO full and one word per clock flows), and the SoC's
// window write buffer. A push when full and a pop when empty are ignored.
`default_nettype none
module nf_word_fifo #(
    parameter integer DEPTH = 4,   // entries, >= 2
    parameter integer WIDTH = 64,  // bits per entry
    parameter integer AW    = $clog2(DEPTH)  // address width; derived, do not set
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        clear,     // drop everything (start of a new job)
    input  wire        push,
    input  wire [WIDTH-1:0] push_data,
    input  wire        pop,
    output wire [WIDTH-1:0] head,
    output wire        empty,
    output reg  [AW:0] count
);
    localparam [31:0]   DEPTH_32 = DEPTH;
    localparam [31:0]   LAST_32  = DEPTH - 1;
    localparam [AW:0]   FULL = DEPTH_32[AW:0];
    localparam [AW-1:0] LAST = LAST_32[AW-1:0];
    // Flip-flops, not a LUT RAM (mem2reg): Yosys would otherwise fold the head register
    // below into the RAM's read port and read it through the read pointer again.
    (* mem2reg *)
    reg [WIDTH-1:0] slot [0:DEPTH-1];
    reg [AW-1:0] rd_ptr, wr_ptr;
    wire do_push = push && (count != FULL);
    wire do_pop  = pop && (count != {(AW+1){1'b0}});
    always @(posedge clk) begin
        if (rst || clear) begin
            rd_ptr <= {AW{1'b0}};
            wr_ptr <= {AW{1'b0}};
            count  <= {(AW+1){1'b0}};
        end else begin
            if (do_push) wr_ptr <= (wr_ptr == LAST) ? {AW{1'b0}} : wr_ptr + 1'b1;
            if (do_pop)  rd_ptr <= (rd_ptr == LAST) ? {AW{1'b0}} : rd_ptr + 1'b1;
            count <= count + {{AW{1'b0}}, do_push} - {{AW{1'b0}}, do_pop};
        end
    end
    always @(posedge clk) if (do_push) slot[wr_ptr] <= push_data;
    // The head is a register (the slot the read pointer will point at, read a clock ahead,
    // or the word being pushed into it), so a consumer's logic starts from a flip-flop
    // rather than from the distributed RAM's read through the read pointer: the same
    // word in the same clock as slot[rd_ptr].
    wire [AW-1:0] rd_next = (rst || clear) ? {AW{1'b0}} :
                            do_pop ? ((rd_ptr == LAST) ? {AW{1'b0}} : rd_ptr + 1'b1) : rd_ptr;
    reg [WIDTH-1:0] head_q;
    always @(posedge clk) head_q <= (do_push && wr_ptr == rd_next) ? push_data : slot[rd_next];
    assign head  = head_q;
    assign empty = (count == {(AW+1){1'b0}});
endmodule
`default_nettype wire
