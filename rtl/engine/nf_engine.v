// SPDX-License-Identifier: Apache-2.0
// Registration engine top: adapter memory behind the system port, the key table and
// translation table in the key-check pipeline, the page-list loader, the DMA engine,
// and the ENGINE register block (docs/architecture.md "Module interfaces" and
// "Engine semantics"; registers in layout.md).
//
// Sharing: the key-check pipeline takes one op per clock, by priority firmware table
// op > loader MTT write > DMA check > firmware check (each holds its request until
// granted; a granted op enters the pipeline one clock later, its result comes back
// tagged 5 clocks after the grant). The adapter memory's read port goes to the DMA
// before the loader, its write port to the DMA; the system port comes first on both
// (see nf_adapter_mem).
`default_nettype none
`include "nf_layout.vh"
module nf_engine #(
    parameter integer MEM_BYTES   = `NF_PROFILE_SIM_MEM_BYTES,  // adapter memory, bytes (a multiple of the 8-byte port)
    parameter integer MPT_ENTRIES = `NF_PROFILE_SIM_MPT_ENTRIES,  // key-table (MPT) entries, 1..2^24 (the token index is 24 bits)
    parameter integer MTT_ENTRIES = `NF_PROFILE_SIM_MTT_ENTRIES,  // translation-table (MTT) entries, 1..2^16 (MPT_W5.MTT_BASE is 16 bits)
    parameter integer USER_BASE   = `NF_PROFILE_SIM_USER_BASE,  // first byte of the user region, bytes (after the link slots)
    parameter integer HEAD_SLOTS  = `NF_PROFILE_SIM_RX_SLOTS  // link slots whose first bytes the system port reads in 1 clock (the RX slots; nf_adapter_mem)
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        csr_valid,
    input  wire [11:0] csr_addr,
    input  wire [31:0] csr_wdata,
    input  wire [3:0]  csr_wstrb,
    output wire        csr_ready,
    output wire [31:0] csr_rdata,
    input  wire        sys_valid,
    input  wire [31:0] sys_addr,
    input  wire [31:0] sys_wdata,
    input  wire [3:0]  sys_wstrb,
    output wire        sys_ready,
    output wire [31:0] sys_rdata,
    input  wire [31:0] sys_head_addr,  // sys_addr for a read of an RX slot's head (nf_adapter_mem)
    // the adapter memory's copy of the RX slots' heads read without a clock (nf_adapter_mem peek_*)
    input  wire [31:0] head_peek_addr,
    output wire        head_peek_hit,
    output wire [31:0] head_peek_rdata,
    // No unit busy: no load, DMA, table op or check in progress, the tables not being
    // cleared, no op entering the key-check pipeline (its 5 stages drain in 5 clocks).
    output wire        idle
);
    localparam [2:0] OPC_MTT_WRITE = `NF_TBL_OP_MTT_WRITE;
    localparam integer WAW = $clog2(MEM_BYTES / `NF_ENGINE_HW_MEM_PORT_BYTES);
    localparam integer EW  = 7 * 32;
    localparam [1:0] TAG_TBL = 2'd0, TAG_LD = 2'd1, TAG_DMA = 2'd2, TAG_CHK = 2'd3;
    localparam [2:0] OP_CHECK = 3'd0;

    // ---- adapter memory ---------------------------------------------------------------
    wire           eng_rd_req, eng_rd_gnt, eng_rd_valid;
    wire [WAW-1:0] eng_rd_addr;
    wire [63:0]    eng_rd_data;
    wire           dma_wr_req, dma_wr_gnt;
    wire [WAW-1:0] dma_wr_addr;
    wire [63:0]    dma_wr_data;
    wire [7:0]     dma_wr_be;
    nf_adapter_mem #(.MEM_BYTES(MEM_BYTES), .HEAD_SLOTS(HEAD_SLOTS)) u_mem (
        .clk(clk), .rst(rst),
        .sys_valid(sys_valid), .sys_addr(sys_addr), .sys_wdata(sys_wdata), .sys_wstrb(sys_wstrb),
        .sys_ready(sys_ready), .sys_rdata(sys_rdata), .sys_head_addr(sys_head_addr),
        .peek_addr(head_peek_addr), .peek_head(head_peek_hit), .peek_rdata(head_peek_rdata),
        .eng_rd_req(eng_rd_req), .eng_rd_addr(eng_rd_addr), .eng_rd_gnt(eng_rd_gnt),
        .eng_rd_valid(eng_rd_valid), .eng_rd_data(eng_rd_data),
        .eng_wr_req(dma_wr_req), .eng_wr_addr(dma_wr_addr), .eng_wr_data(dma_wr_data),
        .eng_wr_be(dma_wr_be), .eng_wr_gnt(dma_wr_gnt)
    );

    wire           dma_rd_req, ld_rd_req;
    wire [WAW-1:0] dma_rd_addr, ld_rd_addr;
    assign eng_rd_req  = dma_rd_req || ld_rd_req;
    assign eng_rd_addr = dma_rd_req ? dma_rd_addr : ld_rd_addr;
    wire   dma_rd_gnt  = eng_rd_gnt && dma_rd_req;
    wire   ld_rd_gnt   = eng_rd_gnt && !dma_rd_req;
    reg    rd_to_dma1;    // owner of the read granted last cycle
    reg    rd_to_dma;     // owner of the read data arriving this cycle (granted 2 clocks ago)
    always @(posedge clk) begin
        if (rst) begin
            rd_to_dma1 <= 1'b0;
            rd_to_dma  <= 1'b0;
        end else begin
            rd_to_dma1 <= dma_rd_req;
            rd_to_dma  <= rd_to_dma1;
        end
    end

    // ---- key-check pipeline -------------------------------------------------------------
    wire          kc_ready;
    wire          tbl_req, chk_req, ld_kc_req, dma_kc_req;
    wire [`NF_TBL_REQ_BITS-1:0] tbl_ask;
    wire [31:0]   ld_kc_index, ld_kc_data;
    wire [`NF_KC_REQ_BITS-1:0] chk_ask, dma_kc_ask;

    wire sel_tbl = tbl_req;
    wire sel_ld  = !tbl_req && ld_kc_req;
    wire sel_dma = !tbl_req && !ld_kc_req && dma_kc_req;
    wire sel_chk = !tbl_req && !ld_kc_req && !dma_kc_req && chk_req;
    wire tbl_gnt = sel_tbl && kc_ready;
    wire ld_gnt  = sel_ld && kc_ready;
    wire dma_gnt = sel_dma && kc_ready;
    wire chk_gnt = sel_chk && kc_ready;

    wire        kc_in_valid = kc_ready && (sel_tbl || sel_ld || sel_dma || sel_chk);
    wire [2:0]  kc_in_op    = sel_tbl ? tbl_ask[`NF_TBL_REQ_OP] : sel_ld ? OPC_MTT_WRITE : OP_CHECK;
    wire [1:0]  kc_in_tag   = sel_tbl ? TAG_TBL : sel_ld ? TAG_LD : sel_dma ? TAG_DMA : TAG_CHK;
    wire [`NF_KC_REQ_BITS-1:0] kc_in_ask = sel_dma ? dma_kc_ask : chk_ask;
    wire [31:0] kc_in_index = sel_ld ? ld_kc_index : tbl_ask[`NF_TBL_REQ_INDEX];
    wire [31:0] kc_in_mttd  = sel_ld ? ld_kc_data : tbl_ask[`NF_TBL_REQ_MTT_DATA];

    // The granted op is registered on its way into the pipeline: the requesters'
    // logic (a loader entry's rule, the DMA's sides, the priority) then ends at these
    // registers instead of running on into the key table's block RAM address. Every op
    // passes here, so issue order is kept; results come one clock later.
    reg           kq_valid;
    reg  [2:0]    kq_op;
    reg  [1:0]    kq_tag;
    reg  [`NF_KC_REQ_BITS-1:0] kq_ask;
    reg  [31:0]   kq_index, kq_mttd;
    reg  [EW-1:0] kq_entry;
    // The request fields load at every clock, not under kc_in_valid: that enable is the
    // end of the arbitration between loader, DMA and registers, and as the clock enable of
    // all these flip-flops it was the slowest path of the ULX3S 25F.
    always @(posedge clk) begin
        if (rst) kq_valid <= 1'b0;
        else     kq_valid <= kc_in_valid;
        {kq_op, kq_tag, kq_ask} <= {kc_in_op, kc_in_tag, kc_in_ask};
        {kq_index, kq_entry, kq_mttd} <= {kc_in_index, tbl_ask[`NF_TBL_REQ_ENTRY], kc_in_mttd};
    end

    wire          res_valid;
    wire [2:0]    res_op;
    wire [1:0]    res_tag;
    wire [3:0]    res_code;
    wire [31:0]   res_addr, res_mtt_data, res_index;
    wire [EW-1:0] res_entry;
    wire          res_window;
    wire [15:0]   res_parent;
    nf_keycheck #(.MPT_ENTRIES(MPT_ENTRIES), .MTT_ENTRIES(MTT_ENTRIES)) u_kc (
        .clk(clk), .rst(rst), .ready(kc_ready),
        .in_valid(kq_valid), .in_op(kq_op), .in_tag(kq_tag), .in_token(kq_ask[`NF_KC_REQ_TOKEN]),
        .in_va(kq_ask[`NF_KC_REQ_VA]), .in_len(kq_ask[`NF_KC_REQ_LEN]), .in_access(kq_ask[`NF_KC_REQ_ACCESS]),
        .in_pd(kq_ask[`NF_KC_REQ_PD]),
        .in_index(kq_index), .in_entry(kq_entry), .in_mtt_data(kq_mttd),
        .out_valid(res_valid), .out_op(res_op), .out_tag(res_tag), .out_code(res_code),
        .out_addr(res_addr), .out_entry(res_entry), .out_mtt_data(res_mtt_data), .out_index(res_index),
        .out_window(res_window), .out_parent(res_parent)
    );

    // ---- loader -------------------------------------------------------------------------
    wire        ld_start, ld_busy;
    wire [`NF_LD_CMD_BITS-1:0] ld_cmd;
    wire [3:0]  ld_code;
    wire [15:0] ld_index;
    nf_loader #(.MEM_BYTES(MEM_BYTES), .MTT_ENTRIES(MTT_ENTRIES), .USER_BASE(USER_BASE)) u_ld (
        .clk(clk), .rst(rst), .start(ld_start), .cmd(ld_cmd),
        .busy(ld_busy), .code(ld_code), .index(ld_index),
        .rd_req(ld_rd_req), .rd_addr(ld_rd_addr), .rd_gnt(ld_rd_gnt),
        .rd_valid(eng_rd_valid && !rd_to_dma), .rd_data(eng_rd_data),
        .kc_req(ld_kc_req), .kc_index(ld_kc_index), .kc_data(ld_kc_data), .kc_gnt(ld_gnt)
    );

    // ---- DMA ----------------------------------------------------------------------------
    wire        dma_start, dma_busy, dma_side;
    wire [`NF_DMA_SIDE_BITS-1:0] dma_src, dma_dst;
    wire [31:0] dma_len, dma_bytes;
    wire [3:0]  dma_code;
    wire [`NF_DMA_HOLD_BITS-1:0] dma_hold;
    nf_dma #(.MEM_BYTES(MEM_BYTES), .USER_BASE(USER_BASE)) u_dma (
        .clk(clk), .rst(rst), .start(dma_start),
        .src(dma_src), .dst(dma_dst), .len(dma_len),
        .busy(dma_busy), .side(dma_side), .code(dma_code), .bytes(dma_bytes), .hold(dma_hold),
        .kc_req(dma_kc_req), .kc_ask(dma_kc_ask), .kc_gnt(dma_gnt),
        .kc_res_valid(res_valid && res_tag == TAG_DMA), .kc_res_code(res_code), .kc_res_addr(res_addr),
        .kc_res_window(res_window), .kc_res_parent(res_parent),
        .rd_req(dma_rd_req), .rd_addr(dma_rd_addr), .rd_gnt(dma_rd_gnt),
        .rd_valid(eng_rd_valid && rd_to_dma), .rd_data(eng_rd_data),
        .wr_req(dma_wr_req), .wr_addr(dma_wr_addr), .wr_data(dma_wr_data), .wr_be(dma_wr_be),
        .wr_gnt(dma_wr_gnt)
    );

    // ---- registers ----------------------------------------------------------------------
    wire regs_idle;
    nf_engine_regs #(.MEM_BYTES(MEM_BYTES), .MPT_ENTRIES(MPT_ENTRIES), .MTT_ENTRIES(MTT_ENTRIES),
                     .USER_BASE(USER_BASE)) u_regs (
        .clk(clk), .rst(rst),
        .csr_valid(csr_valid), .csr_addr(csr_addr), .csr_wdata(csr_wdata), .csr_wstrb(csr_wstrb),
        .csr_ready(csr_ready), .csr_rdata(csr_rdata), .tables_ready(kc_ready),
        .tbl_req(tbl_req), .tbl_ask(tbl_ask), .tbl_gnt(tbl_gnt), .tbl_res_valid(res_valid && res_tag == TAG_TBL),
        .chk_req(chk_req), .chk_ask(chk_ask), .chk_gnt(chk_gnt),
        .chk_res_valid(res_valid && res_tag == TAG_CHK),
        .res_code(res_code), .res_addr(res_addr), .res_entry(res_entry), .res_mtt_data(res_mtt_data),
        .ld_start(ld_start), .ld_cmd(ld_cmd), .ld_busy(ld_busy), .ld_code(ld_code), .ld_index(ld_index),
        .dma_start(dma_start), .dma_src(dma_src), .dma_dst(dma_dst), .dma_len(dma_len),
        .dma_busy(dma_busy), .dma_side(dma_side), .dma_code(dma_code), .dma_bytes(dma_bytes),
        .dma_hold(dma_hold), .idle(regs_idle)
    );
    assign idle = regs_idle && !ld_busy && !dma_busy && kc_ready && !kq_valid;

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, res_op, res_index, 1'b0};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
