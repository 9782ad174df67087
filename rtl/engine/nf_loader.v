// SPDX-License-Identifier: Apache-2.0
// Page-list loader: copies LD_COUNT 64-bit page addresses from adapter memory at LD_SRC
// into MTT[LD_MTT_BASE ...] as page numbers, one entry per clock (the memory read port
// feeds a small FIFO; every entry becomes an MTT_WRITE op of the key-check pipeline, so
// it is ordered with every check and table op).
// Up front: LD_MTT_BASE + LD_COUNT > MTT entries -> BAD_MTT; LD_SRC unaligned or the
// list not inside adapter memory -> BAD_ADDRESS; nothing written. Then entry i must be
// page aligned and inside [USER_BASE, MEM_BYTES) (high word 0), else BAD_ADDRESS with
// INDEX = i and the load stops (entries before i are written).
`default_nettype none
`include "nf_layout.vh"
module nf_loader #(
    parameter integer MEM_BYTES   = `NF_PROFILE_SIM_MEM_BYTES,  // adapter memory, bytes (a multiple of the 8-byte port)
    parameter integer MTT_ENTRIES = `NF_PROFILE_SIM_MTT_ENTRIES,  // translation-table entries
    parameter integer USER_BASE   = `NF_PROFILE_SIM_USER_BASE,  // first byte of the user region, bytes: listed pages must lie at or above it
    parameter integer WAW         = $clog2(MEM_BYTES / `NF_ENGINE_HW_MEM_PORT_BYTES)  // width of a memory word address (8-byte words); derived, do not set
) (
    input  wire           clk,
    input  wire           rst,
    input  wire           start,          // one-cycle pulse, ignored while busy
    input  wire [`NF_LD_CMD_BITS-1:0] cmd,  // the load (LD_CMD fields)
    output reg            busy,
    output reg  [3:0]     code,
    output reg  [15:0]    index,
    // adapter memory read port
    output wire           rd_req,
    output wire [WAW-1:0] rd_addr,
    input  wire           rd_gnt,
    input  wire           rd_valid,       // data of this loader's read granted 2 clocks ago
    input  wire [63:0]    rd_data,
    // MTT writes into the key-check pipeline
    output wire           kc_req,
    output wire [31:0]    kc_index,
    output wire [31:0]    kc_data,
    input  wire           kc_gnt
);
    localparam integer PS    = `NF_ADAPTER_PAGE_SHIFT;
    localparam integer WLSB  = $clog2(`NF_ENGINE_HW_MEM_PORT_BYTES);
    localparam integer DEPTH = 4;
    localparam integer AW_F  = $clog2(DEPTH);
    localparam [31:0] MTT_32  = MTT_ENTRIES;
    localparam [31:0] MEM_32  = MEM_BYTES;
    wire [31:0] mtt_32  = MTT_32;
    wire [31:0] mem_32  = MEM_32;
    wire [32:0] mtt_end = {1'b0, mtt_32};
    wire [35:0] mem_end = {4'd0, mem_32};
    localparam [31:0] DEPTH_32 = DEPTH;
    localparam [AW_F+1:0] FIFO_DEPTH = DEPTH_32[AW_F+1:0];

    wire [31:0] src      = cmd[`NF_LD_CMD_SRC];
    wire [31:0] mtt_base = cmd[`NF_LD_CMD_MTT_BASE];
    wire [31:0] count    = cmd[`NF_LD_CMD_COUNT];

    reg [31:0]    n_total;     // entries to load
    reg [31:0]    n_issued;    // reads granted
    reg [31:0]    n_done;      // entries written
    reg [WAW-1:0] rd_word;
    reg [31:0]    mtt_next;

    // Up-front checks (33/36-bit sums cannot wrap).
    wire        bad_mtt  = ({1'b0, mtt_base} + {1'b0, count}) > mtt_end;
    wire [35:0] list_end = {4'd0, src} + {1'b0, count, 3'd0};
    wire        bad_src  = (src[WLSB-1:0] != {WLSB{1'b0}}) || (list_end > mem_end);

    // Entry rule: page aligned, high word 0, inside the user region. Judged as the word
    // enters the FIFO, which keeps the verdict with the page number: the rule's compares
    // are then off the path from the FIFO head through the key-check arbitration.
    wire rd_ok = (rd_data[63:32] == 32'd0) && (rd_data[PS-1:0] == {PS{1'b0}}) &&
                 (rd_data[31:0] >= USER_BASE) && (rd_data[31:0] < MEM_BYTES);
    wire [AW_F:0] fifo_count;
    wire [32-PS:0] head;       // {entry rule met, the entry's page number}
    wire          empty;
    // Reads granted 1 and 2 clocks ago (the second's word arrives now). A new start drops
    // both, so a word still in flight from a stopped load never enters the new load's FIFO.
    reg           g1, g2;
    wire [1:0]    inflight = {1'b0, g1} + {1'b0, g2};
    wire          pop;
    nf_word_fifo #(.DEPTH(DEPTH), .WIDTH(33 - PS)) u_fifo (
        .clk(clk), .rst(rst), .clear(start && !busy),
        .push(rd_valid && g2 && busy), .push_data({rd_ok, rd_data[31:PS]}),
        .pop(pop), .head(head), .empty(empty), .count(fifo_count)
    );

    reg           rd_more;     // n_issued != n_total, kept in a register (off the RAM's address path)
    assign rd_req  = busy && rd_more &&
                     ({1'b0, fifo_count} + {{AW_F{1'b0}}, inflight} < FIFO_DEPTH);
    assign rd_addr = rd_word;

    wire entry_ok = head[32-PS];
    wire have     = busy && !empty;
    assign kc_req   = have && entry_ok;
    assign kc_index = mtt_next;
    assign kc_data  = {{PS{1'b0}}, head[31-PS:0]};
    assign pop      = have && (!entry_ok || kc_gnt);

    always @(posedge clk) begin
        if (rst) begin
            busy     <= 1'b0;
            code     <= `NF_REFUSE_OK;
            index    <= 16'd0;
            g1       <= 1'b0;
            g2       <= 1'b0;
            n_total  <= 32'd0;
            n_issued <= 32'd0;
            rd_more  <= 1'b0;
            n_done   <= 32'd0;
            rd_word  <= {WAW{1'b0}};
            mtt_next <= 32'd0;
        end else begin
            g1 <= rd_req && rd_gnt;
            g2 <= g1;
            if (!busy) begin
                if (start) begin
                    g2 <= 1'b0;
                    index <= 16'd0;
                    if (bad_mtt) begin
                        code <= `NF_REFUSE_BAD_MTT;
                    end else if (bad_src) begin
                        code <= `NF_REFUSE_BAD_ADDRESS;
                    end else begin
                        code     <= `NF_REFUSE_OK;
                        busy     <= (count != 32'd0);
                        n_total  <= count;
                        n_issued <= 32'd0;
                        rd_more  <= (count != 32'd0);
                        n_done   <= 32'd0;
                        rd_word  <= src[WLSB +: WAW];
                        mtt_next <= mtt_base;
                    end
                end
            end else begin
                if (rd_req && rd_gnt) begin
                    n_issued <= n_issued + 32'd1;
                    rd_more  <= (n_issued + 32'd1 != n_total);
                    rd_word  <= rd_word + 1'b1;
                end
                if (pop) begin
                    if (!entry_ok) begin
                        // Stop; a read still in flight lands in the FIFO, which the
                        // next start clears.
                        code  <= `NF_REFUSE_BAD_ADDRESS;
                        index <= n_done[15:0];
                        busy  <= 1'b0;
                    end else begin
                        n_done   <= n_done + 32'd1;
                        mtt_next <= mtt_next + 32'd1;
                        if (n_done + 32'd1 == n_total) busy <= 1'b0;
                    end
                end
            end
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, src[31:WLSB+WAW], n_done[31:16], 1'b0};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
