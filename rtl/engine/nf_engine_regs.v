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
    parameter integer MEM_BYTES   = `NF_PROFILE_SIM_MEM_BYTES,
    parameter integer MPT_ENTRIES = `NF_PROFILE_SIM_MPT_ENTRIES,
    parameter integer MTT_ENTRIES = `NF_PROFILE_SIM_MTT_ENTRIES,
    parameter integer USER_BASE   = (`NF_PROFILE_SIM_RX_SLOTS + `NF_PROFILE_SIM_TX_SLOTS) * `NF_LINK_SLOT_BYTES
) (
    input  wire            clk,
    input  wire            rst,
    input  wire            csr_valid,
    input  wire [11:0]     csr_addr,
    input  wire [31:0]     csr_wdata,
    input  wire [3:0]      csr_wstrb,
    output reg             csr_ready,
    output reg  [31:0]     csr_rdata,
    input  wire            tables_ready,
    // firmware table op into the pipeline
    output wire            tbl_req,
    output wire [2:0]      tbl_op,
    output wire [31:0]     tbl_index,
    output wire [7*32-1:0] tbl_entry,
    output wire [31:0]     tbl_mtt_data,
    input  wire            tbl_gnt,
    input  wire            tbl_res_valid,
    // firmware check into the pipeline
    output wire            chk_req,
    output wire [31:0]     chk_token,
    output wire [63:0]     chk_va,
    output wire [31:0]     chk_len,
    output wire [1:0]      chk_access,
    output wire [31:0]     chk_pd,
    input  wire            chk_gnt,
    input  wire            chk_res_valid,
    // pipeline result (for the op whose *_res_valid is set)
    input  wire [3:0]      res_code,
    input  wire [31:0]     res_addr,
    input  wire [7*32-1:0] res_entry,
    input  wire [31:0]     res_mtt_data,
    // loader
    output wire            ld_start,
    output reg  [31:0]     ld_src,
    output reg  [31:0]     ld_mtt_base,
    output reg  [31:0]     ld_count,
    input  wire            ld_busy,
    input  wire [3:0]      ld_code,
    input  wire [15:0]     ld_index,
    // DMA
    output wire            dma_start,
    output reg  [31:0]     dma_src_mode,
    output reg  [31:0]     dma_src_token,
    output wire [63:0]     dma_src_addr,
    output reg  [31:0]     dma_src_pd,
    output reg  [31:0]     dma_dst_mode,
    output reg  [31:0]     dma_dst_token,
    output wire [63:0]     dma_dst_addr,
    output reg  [31:0]     dma_dst_pd,
    output reg  [31:0]     dma_len,
    input  wire            dma_busy,
    input  wire            dma_side,
    input  wire [3:0]      dma_code,
    input  wire [31:0]     dma_bytes,
    input  wire            dma_src_tok_busy,
    input  wire [23:0]     dma_src_tok_index,
    input  wire            dma_dst_tok_busy,
    input  wire [23:0]     dma_dst_tok_index
);
    localparam [11:0] A_TBL_INDEX = `NF_ENGINE_TBL_INDEX;
    localparam [11:0] A_TBL_MTT_DATA = `NF_ENGINE_TBL_MTT_DATA;
    localparam [11:0] A_ENT_W0 = `NF_ENGINE_ENT_W0;
    localparam [11:0] A_ENT_W6 = `NF_ENGINE_ENT_W6;
    localparam [11:0] A_CHK_TOKEN = `NF_ENGINE_CHK_TOKEN;
    localparam [11:0] A_CHK_PD = `NF_ENGINE_CHK_PD;
    localparam [11:0] A_CHK_CTRL = `NF_ENGINE_CHK_CTRL;
    localparam [11:0] A_DMA_CTRL = `NF_ENGINE_DMA_CTRL;
    localparam [11:0] A_LD_CTRL = `NF_ENGINE_LD_CTRL;
    localparam [11:0] A_TBL_CMD = `NF_ENGINE_TBL_CMD;
    localparam [2:0] OPC_MPT_INVALIDATE = `NF_TBL_OP_MPT_INVALIDATE;
    localparam [2:0] OPC_MPT_READ = `NF_TBL_OP_MPT_READ;
    localparam [2:0] OPC_MPT_WRITE = `NF_TBL_OP_MPT_WRITE;
    localparam [2:0] OPC_MTT_READ = `NF_TBL_OP_MTT_READ;
    localparam [3:0] R_OK = `NF_REFUSE_OK;
    localparam [1:0] T_IDLE = 2'd0, T_REQ = 2'd1, T_WAIT = 2'd2, T_DRAIN = 2'd3;
    localparam [1:0] C_IDLE = 2'd0, C_REQ = 2'd1, C_WAIT = 2'd2;

    reg [31:0] tbl_index_r, tbl_mtt_data_r;
    reg [7*32-1:0] ent;       // ENT_W0..W6, W0 in the low word
    reg [31:0] src_lo, src_hi, dst_lo, dst_hi;
    reg [31:0] chk_token_r, chk_va_lo, chk_va_hi, chk_len_r, chk_access_r, chk_pd_r;
    reg [1:0]  tst, cst;
    reg [2:0]  tbl_op_r;
    reg [3:0]  tbl_code, chk_code;
    reg [31:0] chk_addr;

    wire csr_new = csr_valid && !csr_ready;
    wire wr      = csr_new && (csr_wstrb != 4'd0);

    // Byte-lane merge of a register write.
    function [31:0] merge(input [31:0] old, input [31:0] val, input [3:0] strb);
        integer b;
        begin
            for (b = 0; b < 4; b = b + 1)
                merge[8*b +: 8] = strb[b] ? val[8*b +: 8] : old[8*b +: 8];
        end
    endfunction

    wire known_op = (csr_wdata[2:0] >= OPC_MPT_WRITE) &&
                    (csr_wdata[2:0] <= OPC_MTT_READ) && (csr_wdata[31:3] == 29'd0);
    wire tbl_cmd  = wr && (csr_addr == A_TBL_CMD) && (tst == T_IDLE);
    wire chk_cmd  = wr && (csr_addr == A_CHK_CTRL) && (cst == C_IDLE) && (csr_wdata == 32'd1);
    assign ld_start  = wr && (csr_addr == A_LD_CTRL) && !ld_busy && (csr_wdata == 32'd1);
    assign dma_start = wr && (csr_addr == A_DMA_CTRL) && !dma_busy && (csr_wdata == 32'd1);

    assign tbl_req      = (tst == T_REQ);
    assign tbl_op       = tbl_op_r;
    assign tbl_index    = tbl_index_r;
    assign tbl_entry    = ent;
    assign tbl_mtt_data = tbl_mtt_data_r;
    assign chk_req      = (cst == C_REQ);
    assign chk_token    = chk_token_r;
    assign chk_va       = {chk_va_hi, chk_va_lo};
    assign chk_len      = chk_len_r;
    assign chk_access   = chk_access_r[1:0];
    assign chk_pd       = chk_pd_r;
    assign dma_src_addr = {src_hi, src_lo};
    assign dma_dst_addr = {dst_hi, dst_lo};

    wire tbl_staging = (csr_addr == A_TBL_INDEX) || (csr_addr == A_TBL_MTT_DATA) ||
                       (csr_addr >= A_ENT_W0 && csr_addr <= A_ENT_W6);
    wire chk_staging = (csr_addr >= A_CHK_TOKEN && csr_addr <= A_CHK_PD);

    // The invalidated entry may still carry a running DMA's grant.
    wire dma_on_index = (dma_src_tok_busy && {8'd0, dma_src_tok_index} == tbl_index_r) ||
                        (dma_dst_tok_busy && {8'd0, dma_dst_tok_index} == tbl_index_r);

    always @(posedge clk) begin
        if (rst) begin
            tst <= T_IDLE;
            cst <= C_IDLE;
            tbl_op_r <= 3'd0;
            tbl_code <= `NF_REFUSE_OK;
            chk_code <= `NF_REFUSE_OK;
            chk_addr <= 32'd0;
            tbl_index_r <= 32'd0;
            tbl_mtt_data_r <= 32'd0;
            ent <= {7*32{1'b0}};
            ld_src <= 32'd0; ld_mtt_base <= 32'd0; ld_count <= 32'd0;
            dma_src_mode <= 32'd0; dma_src_token <= 32'd0; src_lo <= 32'd0; src_hi <= 32'd0;
            dma_src_pd <= 32'd0;
            dma_dst_mode <= 32'd0; dma_dst_token <= 32'd0; dst_lo <= 32'd0; dst_hi <= 32'd0;
            dma_dst_pd <= 32'd0; dma_len <= 32'd0;
            chk_token_r <= 32'd0; chk_va_lo <= 32'd0; chk_va_hi <= 32'd0; chk_len_r <= 32'd0;
            chk_access_r <= 32'd0; chk_pd_r <= 32'd0;
        end else begin
            // Staging registers of a running table op or check hold still (the op may
            // still be waiting for the pipeline): such writes are dropped.
            if (wr && !(tbl_staging && tst != T_IDLE) && !(chk_staging && cst != C_IDLE)) begin
                case (csr_addr)
                    `NF_ENGINE_TBL_INDEX:       tbl_index_r    <= merge(tbl_index_r, csr_wdata, csr_wstrb);
                    `NF_ENGINE_TBL_MTT_DATA:    tbl_mtt_data_r <= merge(tbl_mtt_data_r, csr_wdata, csr_wstrb);
                    `NF_ENGINE_ENT_W0:          ent[0*32 +: 32] <= merge(ent[0*32 +: 32], csr_wdata, csr_wstrb);
                    `NF_ENGINE_ENT_W1:          ent[1*32 +: 32] <= merge(ent[1*32 +: 32], csr_wdata, csr_wstrb);
                    `NF_ENGINE_ENT_W2:          ent[2*32 +: 32] <= merge(ent[2*32 +: 32], csr_wdata, csr_wstrb);
                    `NF_ENGINE_ENT_W3:          ent[3*32 +: 32] <= merge(ent[3*32 +: 32], csr_wdata, csr_wstrb);
                    `NF_ENGINE_ENT_W4:          ent[4*32 +: 32] <= merge(ent[4*32 +: 32], csr_wdata, csr_wstrb);
                    `NF_ENGINE_ENT_W5:          ent[5*32 +: 32] <= merge(ent[5*32 +: 32], csr_wdata, csr_wstrb);
                    `NF_ENGINE_ENT_W6:          ent[6*32 +: 32] <= merge(ent[6*32 +: 32], csr_wdata, csr_wstrb);
                    `NF_ENGINE_LD_SRC:          ld_src      <= merge(ld_src, csr_wdata, csr_wstrb);
                    `NF_ENGINE_LD_MTT_BASE:     ld_mtt_base <= merge(ld_mtt_base, csr_wdata, csr_wstrb);
                    `NF_ENGINE_LD_COUNT:        ld_count    <= merge(ld_count, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_SRC_MODE:    dma_src_mode  <= merge(dma_src_mode, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_SRC_TOKEN:   dma_src_token <= merge(dma_src_token, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_SRC_ADDR_LO: src_lo        <= merge(src_lo, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_SRC_ADDR_HI: src_hi        <= merge(src_hi, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_SRC_PD:      dma_src_pd    <= merge(dma_src_pd, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_DST_MODE:    dma_dst_mode  <= merge(dma_dst_mode, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_DST_TOKEN:   dma_dst_token <= merge(dma_dst_token, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_DST_ADDR_LO: dst_lo        <= merge(dst_lo, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_DST_ADDR_HI: dst_hi        <= merge(dst_hi, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_DST_PD:      dma_dst_pd    <= merge(dma_dst_pd, csr_wdata, csr_wstrb);
                    `NF_ENGINE_DMA_LEN:         dma_len       <= merge(dma_len, csr_wdata, csr_wstrb);
                    `NF_ENGINE_CHK_TOKEN:       chk_token_r  <= merge(chk_token_r, csr_wdata, csr_wstrb);
                    `NF_ENGINE_CHK_VA_LO:       chk_va_lo    <= merge(chk_va_lo, csr_wdata, csr_wstrb);
                    `NF_ENGINE_CHK_VA_HI:       chk_va_hi    <= merge(chk_va_hi, csr_wdata, csr_wstrb);
                    `NF_ENGINE_CHK_LEN:         chk_len_r    <= merge(chk_len_r, csr_wdata, csr_wstrb);
                    `NF_ENGINE_CHK_ACCESS:      chk_access_r <= merge(chk_access_r, csr_wdata, csr_wstrb);
                    `NF_ENGINE_CHK_PD:          chk_pd_r     <= merge(chk_pd_r, csr_wdata, csr_wstrb);
                    default: ;
                endcase
            end

            // Table operations.
            case (tst)
                T_IDLE: if (tbl_cmd) begin
                    if (known_op) begin
                        tbl_op_r <= csr_wdata[2:0];
                        tst      <= T_REQ;
                    end else begin
                        tbl_code <= `NF_REFUSE_BAD_COMMAND;
                    end
                end
                T_REQ: if (tbl_gnt) tst <= T_WAIT;
                T_WAIT: if (tbl_res_valid) begin
                    tbl_code <= res_code;
                    if (res_code == R_OK) begin
                        if (tbl_op_r == OPC_MPT_READ)
                            ent <= res_entry;
                        if (tbl_op_r == OPC_MTT_READ)
                            tbl_mtt_data_r <= res_mtt_data;
                    end
                    tst <= (tbl_op_r == OPC_MPT_INVALIDATE &&
                            res_code == R_OK) ? T_DRAIN : T_IDLE;
                end
                T_DRAIN: if (!dma_on_index) tst <= T_IDLE;
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

    // Status words.
    wire [31:0] tbl_status = {24'd0, tbl_code, 3'd0, (tst != T_IDLE) || !tables_ready};
    wire [31:0] chk_status = {24'd0, chk_code, 3'd0, (cst != C_IDLE)};
    wire [31:0] ld_status  = {ld_index, 8'd0, ld_code, 3'd0, ld_busy};
    wire [31:0] dma_status = {24'd0, dma_code, 2'd0, dma_side, dma_busy};

    reg [31:0] rd;
    always @(*) begin
        case (csr_addr)
            `NF_ENGINE_ID:              rd = `NF_ENGINE_HW_ID_VALUE;
            `NF_ENGINE_CFG_MPT:         rd = MPT_ENTRIES;
            `NF_ENGINE_CFG_MTT:         rd = MTT_ENTRIES;
            `NF_ENGINE_CFG_MEM:         rd = MEM_BYTES;
            `NF_ENGINE_CFG_USER:        rd = USER_BASE;
            `NF_ENGINE_TBL_STATUS:      rd = tbl_status;
            `NF_ENGINE_TBL_INDEX:       rd = tbl_index_r;
            `NF_ENGINE_TBL_MTT_DATA:    rd = tbl_mtt_data_r;
            `NF_ENGINE_ENT_W0:          rd = ent[0*32 +: 32];
            `NF_ENGINE_ENT_W1:          rd = ent[1*32 +: 32];
            `NF_ENGINE_ENT_W2:          rd = ent[2*32 +: 32];
            `NF_ENGINE_ENT_W3:          rd = ent[3*32 +: 32];
            `NF_ENGINE_ENT_W4:          rd = ent[4*32 +: 32];
            `NF_ENGINE_ENT_W5:          rd = ent[5*32 +: 32];
            `NF_ENGINE_ENT_W6:          rd = ent[6*32 +: 32];
            `NF_ENGINE_LD_SRC:          rd = ld_src;
            `NF_ENGINE_LD_MTT_BASE:     rd = ld_mtt_base;
            `NF_ENGINE_LD_COUNT:        rd = ld_count;
            `NF_ENGINE_LD_STATUS:       rd = ld_status;
            `NF_ENGINE_DMA_SRC_MODE:    rd = dma_src_mode;
            `NF_ENGINE_DMA_SRC_TOKEN:   rd = dma_src_token;
            `NF_ENGINE_DMA_SRC_ADDR_LO: rd = src_lo;
            `NF_ENGINE_DMA_SRC_ADDR_HI: rd = src_hi;
            `NF_ENGINE_DMA_SRC_PD:      rd = dma_src_pd;
            `NF_ENGINE_DMA_DST_MODE:    rd = dma_dst_mode;
            `NF_ENGINE_DMA_DST_TOKEN:   rd = dma_dst_token;
            `NF_ENGINE_DMA_DST_ADDR_LO: rd = dst_lo;
            `NF_ENGINE_DMA_DST_ADDR_HI: rd = dst_hi;
            `NF_ENGINE_DMA_DST_PD:      rd = dma_dst_pd;
            `NF_ENGINE_DMA_LEN:         rd = dma_len;
            `NF_ENGINE_DMA_STATUS:      rd = dma_status;
            `NF_ENGINE_DMA_BYTES:       rd = dma_bytes;
            `NF_ENGINE_CHK_TOKEN:       rd = chk_token_r;
            `NF_ENGINE_CHK_VA_LO:       rd = chk_va_lo;
            `NF_ENGINE_CHK_VA_HI:       rd = chk_va_hi;
            `NF_ENGINE_CHK_LEN:         rd = chk_len_r;
            `NF_ENGINE_CHK_ACCESS:      rd = chk_access_r;
            `NF_ENGINE_CHK_PD:          rd = chk_pd_r;
            `NF_ENGINE_CHK_STATUS:      rd = chk_status;
            `NF_ENGINE_CHK_ADDR:        rd = chk_addr;
            default:                    rd = 32'd0;
        endcase
    end

    always @(posedge clk) begin
        if (rst) begin
            csr_ready <= 1'b0;
            csr_rdata <= 32'd0;
        end else begin
            csr_ready <= csr_new;
            csr_rdata <= rd;
        end
    end
endmodule
`default_nettype wire
