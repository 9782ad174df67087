// SPDX-License-Identifier: Apache-2.0
// ENGINE register block (layout.md): configuration and ID, staging registers, and the
// sequencing of firmware table operations and key checks through the key-check
// pipeline. Loader and DMA run on their own; this block starts them and shows status.
// A command written while its unit is BUSY is ignored; a *_CTRL write other than 1
// is ignored. Table op results: see docs/architecture.md "Engine semantics".
// MPT_INVALIDATE stays BUSY until no DMA that may hold a grant through the entry is
// still running (such a DMA stops at its next chunk's check).
`default_nettype none
`include "nf_layout.vh"
module nf_engine_regs #(
    parameter integer MEM_BYTES   = `NF_PROFILE_SIM_MEM_BYTES,  // adapter memory, bytes (CFG_MEM reads it)
    parameter integer MPT_ENTRIES = `NF_PROFILE_SIM_MPT_ENTRIES,  // key-table entries (CFG_MPT reads it)
    parameter integer MTT_ENTRIES = `NF_PROFILE_SIM_MTT_ENTRIES,  // translation-table entries (CFG_MTT reads it)
    parameter integer USER_BASE   = (`NF_PROFILE_SIM_RX_SLOTS + `NF_PROFILE_SIM_TX_SLOTS) * `NF_LINK_SLOT_BYTES  // first byte of the user region, bytes (CFG_USER reads it)
) (
    input  wire            clk,
    input  wire            rst,
    input  wire            csr_valid,
    input  wire [11:0]     csr_addr,
    input  wire [31:0]     csr_wdata,
    input  wire [3:0]      csr_wstrb,
    output reg             csr_ready,
    output wire [31:0]     csr_rdata,   // registered by the decode (read_capture)
    input  wire            tables_ready,
    // firmware table op into the pipeline
    output wire            tbl_req,
    output wire [`NF_TBL_REQ_BITS-1:0] tbl_ask,  // the op asked (TBL_REQ fields)
    input  wire            tbl_gnt,
    input  wire            tbl_res_valid,
    // firmware check into the pipeline
    output wire            chk_req,
    output wire [`NF_KC_REQ_BITS-1:0] chk_ask,  // the check asked (KC_REQ fields)
    input  wire            chk_gnt,
    input  wire            chk_res_valid,
    // pipeline result (for the op whose *_res_valid is set)
    input  wire [3:0]      res_code,
    input  wire [31:0]     res_addr,
    input  wire [7*32-1:0] res_entry,
    input  wire [31:0]     res_mtt_data,
    // loader
    output wire            ld_start,
    output wire [`NF_LD_CMD_BITS-1:0] ld_cmd,   // LD_CMD fields
    input  wire            ld_busy,
    input  wire [3:0]      ld_code,
    input  wire [15:0]     ld_index,
    // DMA
    output wire            dma_start,
    output wire [`NF_DMA_SIDE_BITS-1:0] dma_src,  // DMA_SIDE fields
    output wire [`NF_DMA_SIDE_BITS-1:0] dma_dst,
    output wire [31:0]     dma_len,
    input  wire            dma_busy,
    input  wire            dma_side,
    input  wire [3:0]      dma_code,
    input  wire [31:0]     dma_bytes,
    input  wire [`NF_DMA_HOLD_BITS-1:0] dma_hold, // entries the running DMA holds
    output wire            idle       // no table op or firmware check in progress
);
    localparam [2:0] OPC_MPT_INVALIDATE = `NF_TBL_OP_MPT_INVALIDATE;
    localparam [2:0] OPC_MPT_READ = `NF_TBL_OP_MPT_READ;
    localparam [2:0] OPC_MPT_WRITE = `NF_TBL_OP_MPT_WRITE;
    localparam [2:0] OPC_MTT_READ = `NF_TBL_OP_MTT_READ;
    localparam [2:0] OPC_MPT_WRITE_LOADED = `NF_TBL_OP_MPT_WRITE_LOADED;
    localparam [3:0] R_OK = `NF_REFUSE_OK;
    // T_LOAD: an MPT_WRITE_LOADED waits for the loader to go idle.
    localparam [2:0] T_IDLE = 3'd0, T_REQ = 3'd1, T_WAIT = 3'd2, T_DRAIN = 3'd3, T_LOAD = 3'd4;
    localparam [1:0] C_IDLE = 2'd0, C_REQ = 2'd1, C_WAIT = 2'd2;

    // The registers' storage (generated from the contract: nf_engine_csr).
    wire [31:0] tbl_index_r, tbl_mtt_data_r;
    wire [7*32-1:0] ent;      // ENT_W0..W6, W0 in the low word
    wire [31:0] ld_src, ld_mtt_base, ld_count;
    wire [31:0] dma_src_mode, dma_src_token, src_lo, src_hi, dma_src_pd;
    wire [31:0] dma_dst_mode, dma_dst_token, dst_lo, dst_hi, dma_dst_pd;
    wire [31:0] chk_token_r, chk_va_lo, chk_va_hi, chk_len_r, chk_access_r, chk_pd_r;
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_access = &{1'b0, chk_access_r[31:2]};  // ACCESS is 2 bits; CHK_ACCESS reads back all 32
    /* verilator lint_on UNUSEDSIGNAL */
    reg [2:0]  tst;
    reg [1:0]  cst;
    reg [2:0]  tbl_op_r;
    reg [3:0]  tbl_code, chk_code;
    reg [31:0] chk_addr;

    reg  wq;           // a register write landing (see wq_*)
    assign idle = tst == T_IDLE && cst == C_IDLE && !wq;

    // A read of a status register (TBL, LD, DMA, CHK_STATUS) while its unit is busy is
    // held, up to STATUS_HOLD clocks: the answer then comes in the clock after the unit
    // finishes, and the firmware reads the outcome once instead of polling over the bus.
    // After STATUS_HOLD clocks it is answered BUSY, so no read waits long whatever the
    // unit does.
    localparam integer STATUS_HOLD = `NF_ENGINE_HW_STATUS_HOLD_CLOCKS;
    wire tbl_busy = (tst != T_IDLE) || !tables_ready;
    wire chk_busy = cst != C_IDLE;
    wire status_busy = (csr_addr == `NF_ENGINE_TBL_STATUS && tbl_busy) ||
                       (csr_addr == `NF_ENGINE_LD_STATUS && ld_busy) ||
                       (csr_addr == `NF_ENGINE_DMA_STATUS && dma_busy) ||
                       (csr_addr == `NF_ENGINE_CHK_STATUS && chk_busy);
    localparam integer HW = $clog2(STATUS_HOLD + 1);
    localparam [HW-1:0] HOLD_LAST = STATUS_HOLD[HW-1:0];
    reg  [HW-1:0] held;   // clocks the current read has been held
    wire hold    = csr_valid && !csr_ready && csr_wstrb == 4'd0 && status_busy && held != HOLD_LAST;
    always @(posedge clk) begin
        if (rst || !hold) held <= {HW{1'b0}};
        else              held <= held + 1'b1;
    end
    wire csr_new = csr_valid && !csr_ready && !hold;
    // A write is never held (hold is for reads): its strobe leaves hold, and so the
    // status decode and the units' busy flags, out of every register's clock enable.
    wire wr      = csr_valid && !csr_ready && (csr_wstrb != 4'd0);
    // A write lands in the clock after its request, from registers (wq_*), and is answered
    // in that clock (csr_ready), so no access comes between and a read after it sees it.
    // The CPU's request and its decode in the SoC then drive these registers only, not the
    // clock enables and data inputs of every register and unit here (the engine sits far
    // from the CPU on the ECP5: that route was the ULX3S 85F's slowest path).
    reg [11:0] wq_addr;
    reg [31:0] wq_data;
    reg [3:0]  wq_strb;
    always @(posedge clk) begin
        if (rst) wq <= 1'b0;
        else     wq <= wr;
        wq_addr <= csr_addr;
        wq_data <= csr_wdata;
        wq_strb <= csr_wstrb;
    end

    // The commands' strobes (generated from the contract, nf_engine_csr).
    wire wr_tbl_cmd, wr_ld_ctrl, wr_dma_ctrl, wr_chk_ctrl;

    wire known_op = (wq_data[2:0] >= OPC_MPT_WRITE) &&
                    (wq_data[2:0] <= OPC_MPT_WRITE_LOADED) && (wq_data[31:3] == 29'd0);
    wire tbl_cmd  = wr_tbl_cmd && (tst == T_IDLE);
    wire chk_cmd  = wr_chk_ctrl && (cst == C_IDLE) && (wq_data == 32'd1);
    assign ld_start  = wr_ld_ctrl && !ld_busy && (wq_data == 32'd1);
    assign dma_start = wr_dma_ctrl && !dma_busy && (wq_data == 32'd1);

    assign tbl_req      = (tst == T_REQ);
    assign tbl_ask[`NF_TBL_REQ_OP]    = tbl_op_r;        assign tbl_ask[`NF_TBL_REQ_INDEX] = tbl_index_r;
    assign tbl_ask[`NF_TBL_REQ_ENTRY] = ent;             assign tbl_ask[`NF_TBL_REQ_MTT_DATA] = tbl_mtt_data_r;
    assign chk_req      = (cst == C_REQ);
    // The staging registers as the buses the units take (proto/engine.toml [[bus]]).
    assign chk_ask[`NF_KC_REQ_TOKEN] = chk_token_r;     assign chk_ask[`NF_KC_REQ_VA] = {chk_va_hi, chk_va_lo};
    assign chk_ask[`NF_KC_REQ_LEN]   = chk_len_r;       assign chk_ask[`NF_KC_REQ_ACCESS] = chk_access_r[1:0];
    assign chk_ask[`NF_KC_REQ_PD]    = chk_pd_r;
    assign ld_cmd[`NF_LD_CMD_SRC]    = ld_src;          assign ld_cmd[`NF_LD_CMD_MTT_BASE] = ld_mtt_base;
    assign ld_cmd[`NF_LD_CMD_COUNT]  = ld_count;
    assign dma_src[`NF_DMA_SIDE_MODE] = dma_src_mode;   assign dma_src[`NF_DMA_SIDE_TOKEN] = dma_src_token;
    assign dma_src[`NF_DMA_SIDE_ADDR] = {src_hi, src_lo}; assign dma_src[`NF_DMA_SIDE_PD] = dma_src_pd;
    assign dma_dst[`NF_DMA_SIDE_MODE] = dma_dst_mode;   assign dma_dst[`NF_DMA_SIDE_TOKEN] = dma_dst_token;
    assign dma_dst[`NF_DMA_SIDE_ADDR] = {dst_hi, dst_lo}; assign dma_dst[`NF_DMA_SIDE_PD] = dma_dst_pd;

    // The invalidated entry may still carry a running DMA's grant, directly or as the
    // parent of the window the DMA runs through.
    wire dma_on_index =
        (dma_hold[`NF_DMA_HOLD_SRC_TOK_BUSY] && {8'd0, dma_hold[`NF_DMA_HOLD_SRC_TOK_INDEX]} == tbl_index_r) ||
        (dma_hold[`NF_DMA_HOLD_DST_TOK_BUSY] && {8'd0, dma_hold[`NF_DMA_HOLD_DST_TOK_INDEX]} == tbl_index_r) ||
        (dma_hold[`NF_DMA_HOLD_SRC_PAR_BUSY] && {16'd0, dma_hold[`NF_DMA_HOLD_SRC_PAR_INDEX]} == tbl_index_r) ||
        (dma_hold[`NF_DMA_HOLD_DST_PAR_BUSY] && {16'd0, dma_hold[`NF_DMA_HOLD_DST_PAR_INDEX]} == tbl_index_r);

    always @(posedge clk) begin
        if (rst) begin
            tst <= T_IDLE;
            cst <= C_IDLE;
            tbl_op_r <= 3'd0;
            tbl_code <= `NF_REFUSE_OK;
            chk_code <= `NF_REFUSE_OK;
            chk_addr <= 32'd0;
        end else begin
            // Table operations.
            case (tst)
                T_IDLE: if (tbl_cmd) begin
                    if (known_op && wq_data[2:0] == OPC_MPT_WRITE_LOADED) begin
                        tbl_op_r <= OPC_MPT_WRITE;  // once the load is in (T_LOAD)
                        tst      <= T_LOAD;
                    end else if (known_op) begin
                        tbl_op_r <= wq_data[2:0];
                        tst      <= T_REQ;
                    end else begin
                        tbl_code <= `NF_REFUSE_BAD_COMMAND;
                    end
                end
                T_REQ: if (tbl_gnt) tst <= T_WAIT;
                T_WAIT: if (tbl_res_valid) begin
                    tbl_code <= res_code;  // a read's result lands in the staging registers (ent_read, mtt_read)
                    tst <= (tbl_op_r == OPC_MPT_INVALIDATE &&
                            res_code == R_OK) ? T_DRAIN : T_IDLE;
                end
                T_DRAIN: if (!dma_on_index) tst <= T_IDLE;
                // The load refused: nothing is written, the status carries its code.
                T_LOAD: if (!ld_busy) begin
                    if (ld_code == R_OK) begin
                        tst <= T_REQ;
                    end else begin
                        tbl_code <= ld_code;
                        tst      <= T_IDLE;
                    end
                end
                default: tst <= T_IDLE;
            endcase

            // Firmware key check.
            case (cst)
                C_IDLE: if (chk_cmd) cst <= C_REQ;
                C_REQ:  if (chk_gnt) cst <= C_WAIT;
                C_WAIT: if (chk_res_valid) begin
                    chk_code <= res_code;
                    chk_addr <= res_addr;
                    cst      <= C_IDLE;
                end
                default: cst <= C_IDLE;
            endcase
        end
    end

    // Status words (STATUS_WORD fields).
    function [31:0] status_word(input busy, input side, input [3:0] code, input [15:0] index);
        begin
            status_word = 32'd0;
            status_word[`NF_STATUS_WORD_BUSY]  = busy;
            status_word[`NF_STATUS_WORD_SIDE]  = side;
            status_word[`NF_STATUS_WORD_CODE]  = code;
            status_word[`NF_STATUS_WORD_INDEX] = index;
        end
    endfunction

    // A table read's result lands in the staging registers it read.
    wire ent_read = tst == T_WAIT && tbl_res_valid && res_code == R_OK && tbl_op_r == OPC_MPT_READ;
    wire mtt_read = tst == T_WAIT && tbl_res_valid && res_code == R_OK && tbl_op_r == OPC_MTT_READ;

    // Writes decode at wq_addr (they land a clock late), reads at the request's csr_addr: a
    // read is never taken in a clock with wq (that clock answers the write), so the read mux
    // needs no choice between the two. Staging registers of a running table op or check
    // hold still (the op may still be waiting for the pipeline): such writes are dropped.
    nf_engine_csr u_csr (
        .clk(clk), .rst(rst), .take(csr_new), .addr(wq_addr), .rd_addr(csr_addr), .we(wq),
        .wdata(wq_data), .wstrb(wq_strb), .hold_tbl(tst != T_IDLE), .hold_chk(cst != C_IDLE),
        .wr_tbl_cmd(wr_tbl_cmd), .q_tbl_index(tbl_index_r),
        .q_tbl_mtt_data(tbl_mtt_data_r), .hwwe_tbl_mtt_data(mtt_read), .hwd_tbl_mtt_data(res_mtt_data),
        .q_ent_w0(ent[0*32 +: 32]), .hwwe_ent_w0(ent_read), .hwd_ent_w0(res_entry[0*32 +: 32]),
        .q_ent_w1(ent[1*32 +: 32]), .hwwe_ent_w1(ent_read), .hwd_ent_w1(res_entry[1*32 +: 32]),
        .q_ent_w2(ent[2*32 +: 32]), .hwwe_ent_w2(ent_read), .hwd_ent_w2(res_entry[2*32 +: 32]),
        .q_ent_w3(ent[3*32 +: 32]), .hwwe_ent_w3(ent_read), .hwd_ent_w3(res_entry[3*32 +: 32]),
        .q_ent_w4(ent[4*32 +: 32]), .hwwe_ent_w4(ent_read), .hwd_ent_w4(res_entry[4*32 +: 32]),
        .q_ent_w5(ent[5*32 +: 32]), .hwwe_ent_w5(ent_read), .hwd_ent_w5(res_entry[5*32 +: 32]),
        .q_ent_w6(ent[6*32 +: 32]), .hwwe_ent_w6(ent_read), .hwd_ent_w6(res_entry[6*32 +: 32]),
        .q_ld_src(ld_src), .q_ld_mtt_base(ld_mtt_base), .q_ld_count(ld_count), .wr_ld_ctrl(wr_ld_ctrl),
        .q_dma_src_mode(dma_src_mode), .q_dma_src_token(dma_src_token),
        .q_dma_src_addr_lo(src_lo), .q_dma_src_addr_hi(src_hi), .q_dma_src_pd(dma_src_pd),
        .q_dma_dst_mode(dma_dst_mode), .q_dma_dst_token(dma_dst_token),
        .q_dma_dst_addr_lo(dst_lo), .q_dma_dst_addr_hi(dst_hi), .q_dma_dst_pd(dma_dst_pd),
        .q_dma_len(dma_len), .wr_dma_ctrl(wr_dma_ctrl),
        .q_chk_token(chk_token_r), .q_chk_va_lo(chk_va_lo), .q_chk_va_hi(chk_va_hi),
        .q_chk_len(chk_len_r), .q_chk_access(chk_access_r), .q_chk_pd(chk_pd_r), .wr_chk_ctrl(wr_chk_ctrl),
        .rd_id(`NF_ENGINE_HW_ID_VALUE), .rd_cfg_mpt(MPT_ENTRIES), .rd_cfg_mtt(MTT_ENTRIES),
        .rd_cfg_mem(MEM_BYTES), .rd_cfg_user(USER_BASE),
        .rd_tbl_status(status_word(tbl_busy, 1'b0, tbl_code, 16'd0)),
        .rd_ld_status(status_word(ld_busy, 1'b0, ld_code, ld_index)),
        .rd_dma_status(status_word(dma_busy, dma_side, dma_code, 16'd0)), .rd_dma_bytes(dma_bytes),
        .rd_chk_status(status_word(chk_busy, 1'b0, chk_code, 16'd0)), .rd_chk_addr(chk_addr),
        .rdata(csr_rdata)
    );

    always @(posedge clk) begin
        if (rst) csr_ready <= 1'b0;
        else     csr_ready <= csr_new;
    end
endmodule
`default_nettype wire
