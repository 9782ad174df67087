// Adapter memory: MEM_BYTES of 64-bit words with one registered read port and one
// byte-enable write port (simple dual port, maps to ECP5 DP16KD block RAM), shared by
// the engine (loader, DMA: 64-bit) and the 32-bit system port (CPU window, link).
//
// Arbitration: a system-port request takes the port it needs (read or write) in the
// cycle it is first seen, and the engine's request on that port is not granted for that
// cycle. A system access therefore always completes in 2 clocks (ready the cycle after
// valid), and costs the engine at most one port cycle per system access; since a bus
// master can issue at most every other cycle, the engine always keeps at least half of
// the port, and on a long DMA with no system traffic it keeps all of it.
`default_nettype none
`include "nf_layout.vh"
module nf_adapter_mem #(
    parameter integer MEM_BYTES = `NF_PROFILE_SIM_MEM_BYTES,
    parameter integer WAW       = $clog2(MEM_BYTES / `NF_ENGINE_HW_MEM_PORT_BYTES)  // word address bits
) (
    input  wire        clk,
    input  wire        rst,
    // system port (PicoRV32 native handshake), byte address, word aligned
    input  wire        sys_valid,
    input  wire [31:0] sys_addr,
    input  wire [31:0] sys_wdata,
    input  wire [3:0]  sys_wstrb,
    output reg         sys_ready,
    output wire [31:0] sys_rdata,
    // engine read port: request granted this cycle -> data in rd_data next cycle (rd_valid)
    input  wire           eng_rd_req,
    input  wire [WAW-1:0] eng_rd_addr,
    output wire           eng_rd_gnt,
    output reg            eng_rd_valid,
    output wire [63:0]    eng_rd_data,
    // engine write port: written at the end of a cycle in which it is granted
    input  wire           eng_wr_req,
    input  wire [WAW-1:0] eng_wr_addr,
    input  wire [63:0]    eng_wr_data,
    input  wire [7:0]     eng_wr_be,
    output wire           eng_wr_gnt
);
    localparam integer WORDS    = MEM_BYTES / `NF_ENGINE_HW_MEM_PORT_BYTES;
    localparam integer LANES    = `NF_ENGINE_HW_MEM_PORT_BYTES;
    localparam integer WORD_LSB = $clog2(LANES);     // byte-in-word bits of an address

    reg [63:0] mem [0:WORDS-1];
    reg [63:0] rd_q;

    // A system request is served once, in the first cycle it is seen; sys_ready follows.
    wire sys_new    = sys_valid && !sys_ready;
    wire sys_in_mem = (sys_addr < MEM_BYTES);
    wire sys_rd     = sys_new && (sys_wstrb == 4'd0);
    wire sys_wr     = sys_new && (sys_wstrb != 4'd0);
    wire [WAW-1:0] sys_word = sys_addr[WORD_LSB +: WAW];
    wire           sys_hi   = sys_addr[2];    // upper 32-bit half of the 64-bit word

    assign eng_rd_gnt = eng_rd_req && !sys_rd;
    assign eng_wr_gnt = eng_wr_req && !sys_wr;

    wire           rd_en   = sys_rd || eng_rd_req;
    wire [WAW-1:0] rd_addr = sys_rd ? sys_word : eng_rd_addr;
    wire           wr_en   = (sys_wr && sys_in_mem) || eng_wr_gnt;
    wire [WAW-1:0] wr_addr = sys_wr ? sys_word : eng_wr_addr;
    wire [63:0]    wr_data = sys_wr ? {sys_wdata, sys_wdata} : eng_wr_data;
    wire [7:0]     wr_be   = sys_wr ? (sys_hi ? {sys_wstrb, 4'd0} : {4'd0, sys_wstrb}) : eng_wr_be;

    integer lane;
    always @(posedge clk) begin
        if (wr_en) begin
            for (lane = 0; lane < LANES; lane = lane + 1)
                if (wr_be[lane]) mem[wr_addr][8*lane +: 8] <= wr_data[8*lane +: 8];
        end
        if (rd_en) rd_q <= mem[rd_addr];
    end

    // Who owns the read data this cycle.
    reg sys_rd_q, sys_hi_q, sys_in_mem_q;
    always @(posedge clk) begin
        if (rst) begin
            sys_ready    <= 1'b0;
            eng_rd_valid <= 1'b0;
            sys_rd_q     <= 1'b0;
            sys_hi_q     <= 1'b0;
            sys_in_mem_q <= 1'b0;
        end else begin
            sys_ready    <= sys_new;
            eng_rd_valid <= eng_rd_gnt;
            sys_rd_q     <= sys_rd;
            sys_hi_q     <= sys_hi;
            sys_in_mem_q <= sys_in_mem;
        end
    end

    // Outside adapter memory: writes are dropped and reads return 0.
    assign sys_rdata   = (sys_rd_q && sys_in_mem_q) ? (sys_hi_q ? rd_q[63:32] : rd_q[31:0]) : 32'd0;
    assign eng_rd_data = rd_q;
endmodule
`default_nettype wire
