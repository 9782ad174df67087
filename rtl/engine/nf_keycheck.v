// SPDX-License-Identifier: Apache-2.0
// Key check and translation pipeline, holding the key table (MPT) and the translation
// table (MTT). Every firmware table operation, every loader MTT write and every check
// (firmware CHK, DMA) enters here, one per clock, and they take effect in issue order:
// a check issued after a write or invalidate sees the new entry (1-deep forwarding
// covers the one op whose MPT write has not yet landed when the check reads the RAM).
//
// op: 0 = check, otherwise an NF_TBL_OP_* table operation.
// Stages (in_valid in cycle t, out_valid in cycle t+4, one op accepted every clock):
//   S0 (t)   index decode, MPT read issued
//   S1 (t+1) entry (forwarded); MPT_WRITE / MPT_INVALIDATE write the MPT here
//   SC (t+2) key, state, PD, right, bounds (VA + len, added in S1, against base +
//            length; first and last byte positions), a window's parent
//            VALID (from the VALID bitmap) -> refusal code
//   S2 (t+3) MTT indices of first and last page, BAD_MTT; MTT read issued;
//            MTT_WRITE writes the MTT here
//   S3 (t+4) result: code, adapter address of the first byte, read data
// After reset both tables are cleared (FREE, all zero): `ready` is 0 for
// max(MPT_ENTRIES, MTT_ENTRIES) clocks and in_valid is ignored meanwhile.
//
// Memory windows (KIND WINDOW): the entry itself carries the window's bounds and
// translation; a check through it grants only for remote access and only while the
// parent entry (MPT_W6.PARENT, the MR the window is bound to) is VALID at the time of
// the check. The parent's state comes from a 1-bit-per-entry VALID bitmap written
// through the MPT's own write port (same data, same clock), so it is in step with the
// table without a second read port or extra latency. The hardware looks only at the
// parent's current state: firmware must invalidate a parent's windows when it
// invalidates the parent, else a window would work again once the parent index is
// re-registered.
`default_nettype none
`include "nf_layout.vh"
module nf_keycheck #(
    parameter integer MPT_ENTRIES = `NF_PROFILE_SIM_MPT_ENTRIES,  // key-table entries, 1..2^24
    parameter integer MTT_ENTRIES = `NF_PROFILE_SIM_MTT_ENTRIES,  // translation-table entries, 1..2^16
    parameter integer TAG_W       = 2  // width of the tag an op carries to its result, bits, >= 1
) (
    input  wire             clk,
    input  wire             rst,
    output wire             ready,
    input  wire             in_valid,
    input  wire [2:0]       in_op,
    input  wire [TAG_W-1:0] in_tag,
    input  wire [31:0]      in_token,
    input  wire [63:0]      in_va,
    input  wire [31:0]      in_len,
    input  wire [1:0]       in_access,
    input  wire [31:0]      in_pd,
    input  wire [31:0]      in_index,      // table ops
    input  wire [7*32-1:0]  in_entry,      // MPT_WRITE: W0..W6, W0 in the low word
    input  wire [31:0]      in_mtt_data,   // MTT_WRITE
    output reg              out_valid,
    output reg  [2:0]       out_op,
    output reg  [TAG_W-1:0] out_tag,
    output reg  [3:0]       out_code,
    output wire [31:0]      out_addr,      // check granted with len > 0: adapter address; else 0
    output reg  [7*32-1:0]  out_entry,     // MPT_READ
    output wire [31:0]      out_mtt_data,  // MTT_READ
    output reg  [31:0]      out_index,     // table index (check: token index)
    output reg              out_window,    // check: the entry was a WINDOW (out_parent valid)
    output reg  [15:0]      out_parent     // check through a window: its parent's index
);
    localparam [1:0] ACC_LOCAL_READ = `NF_ACCESS_LOCAL_READ;
    localparam [1:0] ACC_LOCAL_WRITE = `NF_ACCESS_LOCAL_WRITE;
    localparam [1:0] ACC_REMOTE_READ = `NF_ACCESS_REMOTE_READ;
    localparam [1:0] ACC_REMOTE_WRITE = `NF_ACCESS_REMOTE_WRITE;
    localparam [1:0] KIND_FAST = `NF_MPT_KIND_FAST;
    localparam [1:0] KIND_WINDOW = `NF_MPT_KIND_WINDOW;
    localparam [2:0] OPC_MPT_INVALIDATE = `NF_TBL_OP_MPT_INVALIDATE;
    localparam [2:0] OPC_MPT_READ = `NF_TBL_OP_MPT_READ;
    localparam [2:0] OPC_MPT_WRITE = `NF_TBL_OP_MPT_WRITE;
    localparam [2:0] OPC_MTT_READ = `NF_TBL_OP_MTT_READ;
    localparam [2:0] OPC_MTT_WRITE = `NF_TBL_OP_MTT_WRITE;
    localparam [3:0] R_BAD_INDEX = `NF_REFUSE_BAD_INDEX;
    localparam [3:0] R_BAD_MTT = `NF_REFUSE_BAD_MTT;
    localparam [3:0] R_NOT_VALID = `NF_REFUSE_NOT_VALID;
    localparam [3:0] R_OK = `NF_REFUSE_OK;
    localparam integer EW  = 7 * 32;
    localparam integer MIW = (MPT_ENTRIES > 1) ? $clog2(MPT_ENTRIES) : 1;
    localparam integer TIW = (MTT_ENTRIES > 1) ? $clog2(MTT_ENTRIES) : 1;
    localparam integer CLR = (MPT_ENTRIES > MTT_ENTRIES) ? MPT_ENTRIES : MTT_ENTRIES;
    localparam integer CW  = $clog2(CLR + 1);
    localparam [31:0]   CLR_LAST_32 = CLR - 1;
    localparam [31:0]   MPT_32      = MPT_ENTRIES;
    localparam [31:0]   MTT_32      = MTT_ENTRIES;
    localparam [CW-1:0] CLR_LAST = CLR_LAST_32[CW-1:0];
    localparam [CW-1:0] MPT_END  = MPT_32[CW-1:0];
    localparam [CW-1:0] MTT_END  = MTT_32[CW-1:0];
    localparam [2:0] OP_CHECK = 3'd0;
    localparam [1:0] ST_VALID   = `NF_MPT_STATE_VALID;
    localparam [1:0] ST_INVALID = `NF_MPT_STATE_INVALID;
    localparam integer PS_MSB = `NF_ADAPTER_PAGE_SHIFT - 1;
    localparam integer PS = `NF_ADAPTER_PAGE_SHIFT;

    // ---- tables -------------------------------------------------------------------
    reg [EW-1:0] mpt [0:MPT_ENTRIES-1];
    reg [31:0]   mtt [0:MTT_ENTRIES-1];
    reg [EW-1:0] mpt_q;
    reg [31:0]   mtt_q;

    // Clearing after reset.
    reg          clearing;
    reg [CW-1:0] clr_idx;
    always @(posedge clk) begin
        if (rst) begin
            clearing <= 1'b1;
            clr_idx  <= {CW{1'b0}};
        end else if (clearing) begin
            clr_idx <= clr_idx + 1'b1;
            if (clr_idx == CLR_LAST) clearing <= 1'b0;
        end
    end
    assign ready = !clearing;
    wire take = in_valid && !clearing;

    // ---- S0 -----------------------------------------------------------------------
    wire [31:0] s0_idx = (in_op == OP_CHECK) ? {8'd0, in_token[`NF_TOKEN_INDEX]} : in_index;
    wire [MIW-1:0] mpt_raddr = s0_idx[MIW-1:0];
    always @(posedge clk) mpt_q <= mpt[mpt_raddr];

    reg            s1_valid;
    reg [2:0]      s1_op;
    reg [TAG_W-1:0] s1_tag;
    reg [31:0]     s1_idx;
    reg            s1_bad_mpt, s1_bad_mtt;
    reg [7:0]      s1_key;
    reg [63:0]     s1_va;
    reg [31:0]     s1_len;
    reg [1:0]      s1_access;
    reg [31:0]     s1_pd;
    reg [EW-1:0]   s1_wentry;
    reg [31:0]     s1_mtt_data;
    always @(posedge clk) begin
        if (rst) s1_valid <= 1'b0;
        else     s1_valid <= take;
        s1_op       <= in_op;
        s1_tag      <= in_tag;
        s1_idx      <= s0_idx;
        s1_bad_mpt  <= (s0_idx >= MPT_ENTRIES);
        s1_bad_mtt  <= (s0_idx >= MTT_ENTRIES);
        s1_key      <= in_token[`NF_TOKEN_KEY];
        s1_va       <= in_va;
        s1_len      <= in_len;
        s1_access   <= in_access;
        s1_pd       <= in_pd;
        s1_wentry   <= in_entry;
        s1_mtt_data <= in_mtt_data;
    end

    // ---- S1 -----------------------------------------------------------------------
    // The op one ahead (now in SC) wrote the MPT at the clock edge that also captured
    // this op's RAM read, so its entry is forwarded. Writes take effect here, in order.
    // Only the forwarding and the write are done here: the RAM's clock-to-output is
    // long, so the check itself runs from a register in SC.
    reg            fw_mpt_wr;
    reg [MIW-1:0]  fw_mpt_widx;
    reg [EW-1:0]   fw_mpt_wentry;
    wire [EW-1:0] cur = (fw_mpt_wr && fw_mpt_widx == s1_idx[MIW-1:0]) ? fw_mpt_wentry : mpt_q;
    wire [1:0]    cur_state = cur[`NF_MPT_W0_STATE];

    wire s1_is_write = s1_valid && (s1_op == OPC_MPT_WRITE) && !s1_bad_mpt;
    // An invalidate writes its entry back whatever the state it finds: VALID becomes
    // INVALID, any other state is written back unchanged. So the RAMs' write enables do
    // not wait for the entry's state out of the block RAM (its clock-to-output is long:
    // that was the 25F's slowest path, into the VALID bitmap's write enable); only the
    // written data depends on it.
    wire s1_is_inval = s1_valid && (s1_op == OPC_MPT_INVALIDATE) && !s1_bad_mpt;
    wire [EW-1:0] inval_entry = (cur_state == ST_VALID) ? {cur[EW-1:2], ST_INVALID} : cur;
    wire          s1_mpt_wr   = s1_is_write || s1_is_inval;
    wire [EW-1:0] s1_mpt_wdata = s1_is_write ? s1_wentry : inval_entry;

    // MPT write port: the clear sweep after reset, else S1.
    wire           mpt_we    = clearing ? (clr_idx < MPT_END) : s1_mpt_wr;
    wire [MIW-1:0] mpt_waddr = clearing ? clr_idx[MIW-1:0] : s1_idx[MIW-1:0];
    wire [EW-1:0]  mpt_wdata = clearing ? {EW{1'b0}} : s1_mpt_wdata;
    always @(posedge clk) if (mpt_we) mpt[mpt_waddr] <= mpt_wdata;

    // VALID bitmap: bit i == (MPT[i].STATE == VALID), written with the MPT. Read
    // asynchronously in SC: a write at S1 lands at the clock edge that moves the op
    // one behind into SC, so SC sees exactly the ops issued before it (no forwarding).
    reg vbits [0:MPT_ENTRIES-1];
    // (An invalidate always leaves its entry not VALID: its bit is 0 without the RAM's data.)
    wire vbit_wdata = !clearing && s1_is_write && s1_wentry[`NF_MPT_W0_STATE] == ST_VALID;
    always @(posedge clk)
        if (mpt_we) vbits[mpt_waddr] <= vbit_wdata;

    reg            sc_valid;
    reg [2:0]      sc_op;
    reg [TAG_W-1:0] sc_tag;
    reg [31:0]     sc_idx;
    reg            sc_bad_mpt, sc_bad_mtt;
    reg [7:0]      sc_key;
    reg [63:0]     sc_va;
    reg [31:0]     sc_len;
    reg [1:0]      sc_access;
    reg [31:0]     sc_pd;
    reg [EW-1:0]   sc_ent;        // the entry as this op found it (before its own write)
    reg [31:0]     sc_mtt_data;
    reg [64:0]     sc_end;        // sc_va + sc_len (65 bits: no wrap)
    reg [64:0]     sc_endm1;      // sc_va + sc_len - 1 (mod 2^65; used only when sc_len > 0)
    always @(posedge clk) begin
        if (rst) begin
            sc_valid  <= 1'b0;
            fw_mpt_wr <= 1'b0;
        end else begin
            sc_valid  <= s1_valid;
            fw_mpt_wr <= s1_mpt_wr;
        end
        fw_mpt_widx   <= s1_idx[MIW-1:0];
        fw_mpt_wentry <= s1_mpt_wdata;
        sc_op       <= s1_op;
        sc_tag      <= s1_tag;
        sc_idx      <= s1_idx;
        sc_bad_mpt  <= s1_bad_mpt;
        sc_bad_mtt  <= s1_bad_mtt;
        sc_key      <= s1_key;
        sc_va       <= s1_va;
        sc_len      <= s1_len;
        sc_access   <= s1_access;
        sc_pd       <= s1_pd;
        sc_ent      <= cur;
        sc_mtt_data <= s1_mtt_data;
        // The request's end is known before the entry: adding here leaves SC one
        // comparison against the entry's limit instead of a chain of subtractions.
        sc_end      <= {1'b0, s1_va} + {33'd0, s1_len};
        sc_endm1    <= {1'b0, s1_va} + {33'd0, s1_len} - 65'd1;
    end

    // ---- SC -----------------------------------------------------------------------
    wire [31:0] w0 = sc_ent[0*32 +: 32];
    wire [31:0] w1 = sc_ent[1*32 +: 32];
    wire [63:0] base = {sc_ent[3*32 +: 32], sc_ent[2*32 +: 32]};
    wire [31:0] length = sc_ent[4*32 +: 32];
    wire [31:0] w5 = sc_ent[5*32 +: 32];
    wire [1:0]  state = w0[`NF_MPT_W0_STATE];
    wire        is_fast = (w0[`NF_MPT_W0_KIND] == KIND_FAST);
    wire        is_window = (w0[`NF_MPT_W0_KIND] == KIND_WINDOW);
    wire        remote_ok = !is_fast || w0[`NF_MPT_W0_REMOTE_EN_LSB];
    wire [15:0] parent = sc_ent[6*32 + `NF_MPT_W6_PARENT_LSB +: 16];
    wire [31:0] parent32 = {16'd0, parent};
    wire [MIW-1:0] parent_ra = parent32[MIW-1:0];
    wire        parent_in = (parent32 < MPT_32);
    wire        parent_ok = !is_window || (parent_in && vbits[parent_ra]);

    reg right_ok;
    always @(*) begin
        case (sc_access)
            ACC_LOCAL_READ:   right_ok = !is_window;
            ACC_LOCAL_WRITE:  right_ok = w0[`NF_MPT_W0_LOCAL_WRITE_LSB] && !is_window;
            ACC_REMOTE_READ:  right_ok = w0[`NF_MPT_W0_REMOTE_READ_LSB] && remote_ok;
            ACC_REMOTE_WRITE: right_ok = w0[`NF_MPT_W0_REMOTE_WRITE_LSB] && remote_ok;
            default:          right_ok = 1'b0;
        endcase
    end

    // Bounds: refuse VA < base or VA + len > base + length, both sides 65 bits wide
    // (VA + len from S1), so nothing can wrap. off = VA - base (granted: < 2^32).
    wire [64:0] off65   = {1'b0, sc_va} - {1'b0, base};
    wire        below   = off65[64];
    wire [63:0] off     = off65[63:0];
    wire [64:0] limit   = {1'b0, base} + {33'd0, length};
    wire        oob     = below || (sc_end > limit);

    reg [3:0] sc_code;
    always @(*) begin
        if (sc_op == OP_CHECK) begin
            if (sc_bad_mpt)                                    sc_code = `NF_REFUSE_BAD_INDEX;
            else if (w0[`NF_MPT_W0_KEY] != sc_key)             sc_code = `NF_REFUSE_BAD_KEY;
            else if (state != ST_VALID || !parent_ok)          sc_code = `NF_REFUSE_NOT_VALID;
            else if (sc_pd != {16'd0, w1[`NF_MPT_W1_PD]})      sc_code = `NF_REFUSE_WRONG_PD;
            else if (!right_ok)                                sc_code = `NF_REFUSE_NO_RIGHT;
            else if (oob)                                      sc_code = `NF_REFUSE_OUT_OF_BOUNDS;
            else                                               sc_code = `NF_REFUSE_OK;
        end else begin
            case (sc_op)
                OPC_MPT_WRITE, OPC_MPT_READ:
                    sc_code = sc_bad_mpt ? R_BAD_INDEX : R_OK;
                OPC_MPT_INVALIDATE:
                    sc_code = sc_bad_mpt ? R_BAD_INDEX :
                              (state != ST_VALID) ? R_NOT_VALID : R_OK;
                OPC_MTT_WRITE, OPC_MTT_READ:
                    sc_code = sc_bad_mtt ? R_BAD_MTT : R_OK;
                default:
                    sc_code = `NF_REFUSE_BAD_COMMAND;
            endcase
        end
    end

    // Position of the first byte inside the MR's pages (FBO counts from the first page),
    // and of the last byte: FBO + (VA + len - 1 - base). Both are exact whenever the
    // check is granted with len > 0 (then off + len <= length < 2^32), the only case
    // in which S2 uses the last one.
    wire [32:0] pos      = {21'd0, w1[`NF_MPT_W1_FBO]} + {1'b0, off[31:0]};
    wire [64:0] offl65   = sc_endm1 - {1'b0, base};
    wire [32:0] pos_last = {21'd0, w1[`NF_MPT_W1_FBO]} + {1'b0, offl65[31:0]};

    reg            s2_valid;
    reg [2:0]      s2_op;
    reg [TAG_W-1:0] s2_tag;
    reg [31:0]     s2_idx;
    reg [3:0]      s2_code;
    reg [32:0]     s2_pos;
    reg [32:0]     s2_pos_last;
    reg [31:0]     s2_len;
    reg [15:0]     s2_mtt_base;
    reg [EW-1:0]   s2_entry;
    reg [31:0]     s2_mtt_data;
    reg            s2_window;
    reg [15:0]     s2_parent;
    always @(posedge clk) begin
        if (rst) s2_valid <= 1'b0;
        else     s2_valid <= sc_valid;
        s2_op       <= sc_op;
        s2_tag      <= sc_tag;
        s2_idx      <= sc_idx;
        s2_code     <= sc_code;
        s2_pos      <= pos;
        s2_pos_last <= pos_last;
        s2_len      <= sc_len;
        s2_mtt_base <= w5[`NF_MPT_W5_MTT_BASE];
        s2_entry    <= sc_ent;
        s2_mtt_data <= sc_mtt_data;
        s2_window   <= (sc_op == OP_CHECK) && !sc_bad_mpt && is_window;
        s2_parent   <= parent;
    end

    // ---- S2 -----------------------------------------------------------------------
    // MTT indices of the first and the last byte; the last one is the largest, so it
    // alone decides BAD_MTT for the whole range.
    wire        len_zero  = (s2_len == 32'd0);
    wire [23:0] first_idx = {8'd0, s2_mtt_base} + {3'd0, s2_pos[32:PS]};
    wire [23:0] last_idx  = {8'd0, s2_mtt_base} + {3'd0, s2_pos_last[32:PS]};
    wire        s2_check  = (s2_op == OP_CHECK);
    wire [3:0]  s2_code_f = (s2_check && s2_code == R_OK && !len_zero &&
                             {8'd0, last_idx} >= MTT_ENTRIES) ? R_BAD_MTT : s2_code;
    wire [TIW-1:0] mtt_raddr = s2_check ? first_idx[TIW-1:0] : s2_idx[TIW-1:0];
    always @(posedge clk) mtt_q <= mtt[mtt_raddr];

    wire           s2_mtt_wr = s2_valid && (s2_op == OPC_MTT_WRITE) &&
                               (s2_code == R_OK);
    wire           mtt_we    = clearing ? (clr_idx < MTT_END) : s2_mtt_wr;
    wire [TIW-1:0] mtt_waddr = clearing ? clr_idx[TIW-1:0] : s2_idx[TIW-1:0];
    wire [31:0]    mtt_wdata = clearing ? 32'd0 : s2_mtt_data;
    always @(posedge clk) if (mtt_we) mtt[mtt_waddr] <= mtt_wdata;

    reg        s3_translate;
    reg        s3_mtt_read;
    reg [PS_MSB:0] s3_page_off;
    always @(posedge clk) begin
        if (rst) out_valid <= 1'b0;
        else     out_valid <= s2_valid;
        out_op       <= s2_op;
        out_tag      <= s2_tag;
        out_code     <= s2_code_f;
        out_index    <= s2_idx;
        out_window   <= s2_window;
        out_parent   <= s2_window ? s2_parent : 16'd0;
        out_entry    <= (s2_op == OPC_MPT_READ && s2_code == R_OK) ?
                        s2_entry : {EW{1'b0}};
        s3_translate <= s2_check && s2_code_f == R_OK && !len_zero;
        s3_mtt_read  <= (s2_op == OPC_MTT_READ) && s2_code == R_OK;
        s3_page_off  <= s2_pos[PS_MSB:0];
    end

    // ---- S3 -----------------------------------------------------------------------
    // MTT[...] << PAGE_SHIFT | offset, truncated to 32 bits as the C model computes it.
    assign out_addr     = s3_translate ? {mtt_q[31-PS:0], s3_page_off} : 32'd0;
    assign out_mtt_data = s3_mtt_read ? mtt_q : 32'd0;

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, mtt_q[31:32-PS], first_idx[23:TIW], s1_idx[31:MIW], w0[31:24], w0[15:9], w0[7], parent32[31:MIW],
                     w1[31:28], w5[31:16], s2_pos_last[PS_MSB:0],
                     off[63:32], offl65[64:32], 1'b0};
    /* verilator lint_on UNUSEDSIGNAL */
`ifdef FORMAL
    // ---- formal properties (rtl/engine/formal/nf_keycheck.sby) -------------------------
    // A shadow of one arbitrary entry f_idx is updated from the op semantics alone (not
    // from the RAM or the forwarding path), in issue order at S1. Every grant through
    // f_idx must then satisfy, against the shadow as the check saw it: state VALID, key
    // equal, PD equal, right present, VA >= base and VA + len <= base + length (wide
    // addition here, the design subtracts). A check issued after an invalidate of f_idx
    // completed (and before a new MPT_WRITE of it) must never be granted.
    // Windows: a second arbitrary entry f_pidx has a shadow too; a grant through
    // f_idx when it is a WINDOW needs remote access, a parent inside the table and,
    // when the parent is f_pidx, f_pidx VALID as the ops issued before the check left
    // it. f_pidx being arbitrary, this covers every parent.
    reg f_past_valid = 1'b0;
    always @(posedge clk) f_past_valid <= 1'b1;
    always @(*) if (!f_past_valid) assume(rst);

    // Shadow k (0: f_idx, 1: f_pidx) of one arbitrary entry, updated in issue order at
    // S1, with the invariants that tie the RAM, the read register, the forwarding
    // register and the VALID bitmap to it (they make the properties inductive).
    genvar gk;
    generate for (gk = 0; gk < 2; gk = gk + 1) begin : f_sh
        (* anyconst *) reg [MIW-1:0] idx;
        always @(*) assume({{(32-MIW){1'b0}}, idx} < MPT_ENTRIES);
        reg [EW-1:0] ent;        // the entry as the ops issued so far define it
        wire on = s1_valid && !s1_bad_mpt && (s1_idx[MIW-1:0] == idx);
        wire valid = (ent[`NF_MPT_W0_STATE] == ST_VALID);
        reg [EW-1:0] next;
        always @(*) begin
            next = ent;
            if (on && s1_op == OPC_MPT_WRITE) next = s1_wentry;
            if (on && s1_op == OPC_MPT_INVALIDATE && valid) next = {ent[EW-1:2], ST_INVALID};
        end
        reg read;
        reg [EW-1:0] ent_at_read;
        always @(posedge clk) begin
            if (rst) ent <= {EW{1'b0}};
            else     ent <= next;
            read        <= (mpt_raddr == idx) && !clearing;
            ent_at_read <= ent;
        end
        always @(*) if (f_past_valid && !rst) begin
            if (clearing) begin
                assert(ent == {EW{1'b0}});
                if ({{(CW-MIW){1'b0}}, idx} < clr_idx) assert(mpt[idx] == {EW{1'b0}} && !vbits[idx]);
            end else begin
                assert(mpt[idx] == ent);
                assert(vbits[idx] == valid);
                if (read) assert(mpt_q == ent_at_read);
                if (fw_mpt_wr && fw_mpt_widx == idx) assert(fw_mpt_wentry == ent);
                if (on) assert(cur == ent);
                if (s1_mpt_wr && s1_idx[MIW-1:0] == idx) assert(s1_mpt_wdata == next && on);
            end
        end
    end endgenerate

    wire [MIW-1:0] f_idx = f_sh[0].idx;
    wire [MIW-1:0] f_pidx = f_sh[1].idx;
    wire [EW-1:0] f_ent = f_sh[0].ent;
    wire s1_on_f = f_sh[0].on;
    wire f_state_valid = f_sh[0].valid;
    wire f_pvalid = f_sh[1].valid;   // f_pidx is VALID after the ops issued so far
    reg          f_inv_done;     // f_idx invalidated, not rewritten since
    always @(posedge clk) begin
        if (rst) begin
            f_inv_done <= 1'b0;
        end else begin
            if (s1_on_f && s1_op == OPC_MPT_INVALIDATE && f_state_valid) f_inv_done <= 1'b1;
            if (s1_on_f && s1_op == OPC_MPT_WRITE) f_inv_done <= 1'b0;
        end
    end

    // What each check saw, carried alongside the pipeline (SC, S2, S3).
    reg [EW-1:0] fc_ent, f2_ent, f3_ent;
    reg          fc_on, f2_on, f3_on, fc_after_inv, f2_after_inv, f3_after_inv;
    reg          fc_pvalid, f2_pvalid, f3_pvalid;
    reg [63:0]   fc_va, f2_va, f3_va;
    reg [31:0]   fc_len, f2_len, f3_len, fc_pd, f2_pd, f3_pd;
    reg [1:0]    fc_acc, f2_acc, f3_acc;
    reg [7:0]    fc_key, f2_key, f3_key;
    always @(posedge clk) begin
        fc_pvalid <= f_pvalid;  f2_pvalid <= fc_pvalid;  f3_pvalid <= f2_pvalid;
        fc_ent <= f_ent;  fc_on <= s1_on_f && s1_op == OP_CHECK;  fc_after_inv <= f_inv_done;
        fc_va <= s1_va;   fc_len <= s1_len;  fc_pd <= s1_pd;  fc_acc <= s1_access;  fc_key <= s1_key;
        f2_ent <= fc_ent; f2_on <= fc_on;  f2_after_inv <= fc_after_inv;
        f2_va <= fc_va;   f2_len <= fc_len;  f2_pd <= fc_pd;  f2_acc <= fc_acc;  f2_key <= fc_key;
        f3_ent <= f2_ent; f3_on <= f2_on;  f3_after_inv <= f2_after_inv;
        f3_va <= f2_va;   f3_len <= f2_len;  f3_pd <= f2_pd;  f3_acc <= f2_acc;  f3_key <= f2_key;
    end

    wire [31:0] fw0 = f3_ent[0*32 +: 32];
    wire [31:0] fw1 = f3_ent[1*32 +: 32];
    wire [63:0] fbase = {f3_ent[3*32 +: 32], f3_ent[2*32 +: 32]};
    wire [31:0] flength = f3_ent[4*32 +: 32];
    wire f_fast = (fw0[`NF_MPT_W0_KIND] == KIND_FAST);
    wire f_window = (fw0[`NF_MPT_W0_KIND] == KIND_WINDOW);
    wire [31:0] f_parent = {16'd0, f3_ent[6*32 + `NF_MPT_W6_PARENT_LSB +: 16]};
    wire f_remote = !f_fast || fw0[`NF_MPT_W0_REMOTE_EN_LSB];
    wire f_right = (f3_acc == ACC_LOCAL_READ) ||
                   (f3_acc == ACC_LOCAL_WRITE  && fw0[`NF_MPT_W0_LOCAL_WRITE_LSB]) ||
                   (f3_acc == ACC_REMOTE_READ  && fw0[`NF_MPT_W0_REMOTE_READ_LSB] && f_remote) ||
                   (f3_acc == ACC_REMOTE_WRITE && fw0[`NF_MPT_W0_REMOTE_WRITE_LSB] && f_remote);
    wire f_in_bounds = ({2'b0, f3_va} >= {2'b0, fbase}) &&
                       ({2'b0, f3_va} + {34'd0, f3_len} <= {2'b0, fbase} + {34'd0, flength});
    wire f_grant = out_valid && out_op == OP_CHECK && out_code == R_OK;

    // Not vacuous: a grant through f_idx, and a refusal after its invalidation, happen.
    always @(posedge clk) if (f_past_valid && !rst) begin
        cover(f_grant && f3_on && f_fast && f3_acc == ACC_REMOTE_WRITE);
        cover(out_valid && f3_on && f3_after_inv && out_code == R_NOT_VALID);
        cover(f_grant && f3_on && f_window && f_parent == {{(32-MIW){1'b0}}, f_pidx} && f_pidx != f_idx);
        cover(out_valid && f3_on && f_window && fw0[`NF_MPT_W0_STATE] == ST_VALID &&
              f_parent == {{(32-MIW){1'b0}}, f_pidx} && !f3_pvalid && out_code == R_NOT_VALID);
    end

    always @(posedge clk) if (f_past_valid && !rst) begin
        // Every grant names an index inside the table.
        if (f_grant) assert(out_index < MPT_ENTRIES);
        if (f_grant && f3_on) begin
            assert(fw0[`NF_MPT_W0_STATE] == ST_VALID);
            assert(fw0[`NF_MPT_W0_KEY] == f3_key);
            assert(f3_pd == {16'd0, fw1[`NF_MPT_W1_PD]});
            assert(f_right);
            assert(f_in_bounds);
            assert(!f3_after_inv);
            if (f_window) begin
                // A window: remote access only, inside [base, base + length) (above),
                // and its parent VALID when the check was issued.
                assert(f3_acc == ACC_REMOTE_READ || f3_acc == ACC_REMOTE_WRITE);
                assert(f_parent < MPT_32);
                if (f_parent == {{(32-MIW){1'b0}}, f_pidx}) assert(f3_pvalid);
            end
        end
    end

    always @(*) if (f_past_valid && !rst) begin
        if (clearing)
            assert(!s1_valid && !sc_valid && !s2_valid && !fw_mpt_wr && !f_inv_done &&
                   {{(32-CW){1'b0}}, clr_idx} < CLR);
        if (f_inv_done) assert(!f_state_valid);
        // A check between S1 and SC saw the parent as it is now (it writes nothing).
        if (sc_valid && fc_on) assert(fc_pvalid == f_pvalid);
        // The stages after S1 carry what the check saw.
        if (sc_valid && fc_on)
            assert(sc_ent == fc_ent && sc_key == fc_key && sc_va == fc_va && sc_len == fc_len &&
                   sc_pd == fc_pd && sc_access == fc_acc && sc_op == OP_CHECK && !sc_bad_mpt);
        if (s2_valid && s2_op == OP_CHECK && s2_code == R_OK) assert(s2_idx < MPT_ENTRIES);
        // SC's precomputed end is the request's.
        assert(sc_end == {1'b0, sc_va} + {33'd0, sc_len});
    end
`endif
endmodule
`default_nettype wire
