// SPDX-License-Identifier: Apache-2.0
// DMA engine: moves LEN bytes from source to destination, each side named by
// (token, VA, access, PD) through the key-check pipeline, or by a LOGICAL/SYSTEM
// adapter address checked here against its region.
//  1. Both whole ranges are checked (source first, then destination; SIDE says which
//     refused); a refusal moves nothing. LEN = 0 stops after these checks.
//  2. The data moves in chunks that never cross a 4 KiB adapter page on either side.
//     The first chunk uses the addresses the whole-range checks translated; every
//     later chunk is translated by fresh checks of exactly that chunk on each side
//     (its size follows from where the previous chunk ended; if a check shows other
//     page offsets, one-byte probes find the size first, as the C model does), so an
//     entry invalidated or shortened meanwhile stops the transfer with STOPPED
//     (BYTES = bytes written before). A side checked through a memory window also
//     reports the window's parent (from its latest check result), so invalidating the
//     parent MR waits for, and by the parent rule of the next check stops, the DMA.
//  3. A chunk streams 64-bit words: reads run ahead through a FIFO, and a two-word
//     window shifted by the source/destination byte misalignment feeds the writes
//     (byte enables trim the first and last destination word), one word per clock.
// Within a chunk, overlapping source and destination ranges move like memmove.
`default_nettype none
`include "nf_layout.vh"
module nf_dma #(
    parameter integer MEM_BYTES = `NF_PROFILE_SIM_MEM_BYTES,  // adapter memory, bytes (a multiple of the 8-byte port)
    parameter integer USER_BASE = `NF_PROFILE_SIM_USER_BASE,  // first byte of the user region (LOGICAL mode), bytes; below it the link slots
    parameter integer WAW       = $clog2(MEM_BYTES / `NF_ENGINE_HW_MEM_PORT_BYTES)  // width of a memory word address (8-byte words); derived, do not set
) (
    input  wire           clk,
    input  wire           rst,
    input  wire           start,            // one-cycle pulse, ignored while busy
    input  wire [`NF_DMA_SIDE_BITS-1:0] src,  // source side (DMA_SIDE fields)
    input  wire [`NF_DMA_SIDE_BITS-1:0] dst,  // destination side
    input  wire [31:0]    len,
    output reg            busy,
    output reg            side,
    output reg  [3:0]     code,
    output reg  [31:0]    bytes,
    output wire [`NF_DMA_HOLD_BITS-1:0] hold, // entries in use, for ordering invalidations
    // key-check pipeline
    output wire           kc_req,
    output wire [`NF_KC_REQ_BITS-1:0] kc_ask,  // the check asked (KC_REQ fields)
    input  wire           kc_gnt,
    input  wire           kc_res_valid,     // a result of this DMA's check
    input  wire [3:0]     kc_res_code,
    input  wire [31:0]    kc_res_addr,
    input  wire           kc_res_window,    // the checked entry is a window ...
    input  wire [15:0]    kc_res_parent,    // ... over this entry
    // adapter memory
    output wire           rd_req,
    output wire [WAW-1:0] rd_addr,
    input  wire           rd_gnt,
    input  wire           rd_valid,
    input  wire [63:0]    rd_data,
    output wire           wr_req,
    output wire [WAW-1:0] wr_addr,
    output wire [63:0]    wr_data,
    output wire [7:0]     wr_be,
    input  wire           wr_gnt
);
    localparam [3:0] R_BAD_ADDRESS = `NF_REFUSE_BAD_ADDRESS;
    localparam [3:0] R_OK = `NF_REFUSE_OK;
    localparam [3:0] R_STOPPED = `NF_REFUSE_STOPPED;
    localparam integer PS    = `NF_ADAPTER_PAGE_SHIFT;
    localparam integer PAGE  = `NF_ADAPTER_PAGE_SIZE;
    localparam integer WLSB  = $clog2(`NF_ENGINE_HW_MEM_PORT_BYTES);
    localparam integer DEPTH = 4;
    localparam integer FAW   = $clog2(DEPTH);
    localparam integer CNW   = PS + 1;              // chunk byte count (1..PAGE)
    localparam integer WCW   = PS - WLSB + 2;       // words of a chunk (1..PAGE/8+1)
    localparam [1:0] M_TOKEN   = `NF_DMA_MODE_TOKEN;
    localparam [1:0] M_LOGICAL = `NF_DMA_MODE_LOGICAL;
    localparam [1:0] M_SYSTEM  = `NF_DMA_MODE_SYSTEM;
    localparam [31:0] USER_BASE_32 = USER_BASE;
    localparam [31:0] MEM_BYTES_32 = MEM_BYTES;
    wire [31:0] user_base_32 = USER_BASE_32;
    wire [31:0] mem_bytes_32 = MEM_BYTES_32;
    wire [32:0] user_base_33 = {1'b0, user_base_32};
    wire [32:0] mem_bytes_33 = {1'b0, mem_bytes_32};
    localparam [31:0] DEPTH_32 = DEPTH;
    localparam [31:0] PAGE_32  = PAGE;
    localparam [FAW+1:0] FIFO_DEPTH = DEPTH_32[FAW+1:0];
    localparam [CNW-1:0] PAGE_BYTES = PAGE_32[CNW-1:0];

    localparam [2:0] S_IDLE = 3'd0, S_ISSUE = 3'd1, S_WAIT = 3'd2, S_DECIDE = 3'd3, S_SUB = 3'd4,
                     S_MOVE = 3'd5, S_SUB0 = 3'd6;

    reg [2:0]  st;
    reg        whole;                     // checking the whole ranges (else a chunk)
    reg        probe;                     // chunk: checking 1 byte to find the chunk's size
    reg [CNW-1:0] n_chk;                  // chunk: its size (from the probe or predicted)
    reg [PS-1:0]  pred_s, pred_d;         // predicted page offsets of the next chunk
    reg [1:0]  smode, dmode;
    reg [1:0]  sacc, dacc;
    reg [31:0] stok, dtok, spd, dpd;
    reg [63:0] sva, dva;                  // current VA or adapter address of each side
    reg [31:0] remaining;
    reg        s_issued, d_issued;        // this round's checks accepted by the pipeline
    reg        s_got, d_got;              // their results received
    reg [3:0]  s_code, d_code;
    reg [31:0] s_xaddr, d_xaddr;          // translated adapter address of the first byte
    reg        s_win, d_win;              // latest check result: through a window ...
    reg [15:0] s_par, d_par;              // ... over this parent entry

    wire [31:0] src_mode = src[`NF_DMA_SIDE_MODE];
    wire [31:0] dst_mode = dst[`NF_DMA_SIDE_MODE];
    wire s_tok = (smode == M_TOKEN);
    wire d_tok = (dmode == M_TOKEN);

    // LOGICAL / SYSTEM region rule for a side: lo <= addr, addr <= MEM_BYTES,
    // len <= MEM_BYTES - addr, high word 0.
    function [3:0] region_code(input [1:0] mode, input [63:0] a, input [31:0] n);
        reg [32:0] lo;
        begin
            lo = (mode == M_LOGICAL) ? user_base_33 : 33'd0;
            if (mode != M_LOGICAL && mode != M_SYSTEM)
                region_code = `NF_REFUSE_BAD_COMMAND;
            else if (a[63:32] != 32'd0 || {1'b0, a[31:0]} < lo || {1'b0, a[31:0]} > mem_bytes_33 ||
                     {1'b0, n} > mem_bytes_33 - {1'b0, a[31:0]})
                region_code = `NF_REFUSE_BAD_ADDRESS;
            else
                region_code = `NF_REFUSE_OK;
        end
    endfunction

    // ---- checks ---------------------------------------------------------------------
    wire issue_src = (st == S_ISSUE) && s_tok && !s_issued;
    wire issue_dst = (st == S_ISSUE) && d_tok && !d_issued && (!s_tok || s_issued);
    assign kc_req    = issue_src || issue_dst;
    assign kc_ask[`NF_KC_REQ_TOKEN]  = issue_src ? stok : dtok;
    assign kc_ask[`NF_KC_REQ_VA]     = issue_src ? sva : dva;
    assign kc_ask[`NF_KC_REQ_LEN]    = whole ? remaining : probe ? 32'd1 : {{(32-CNW){1'b0}}, n_chk};
    assign kc_ask[`NF_KC_REQ_ACCESS] = issue_src ? sacc : dacc;
    assign kc_ask[`NF_KC_REQ_PD]     = issue_src ? spd : dpd;

    assign hold[`NF_DMA_HOLD_SRC_TOK_BUSY] = busy && s_tok;   assign hold[`NF_DMA_HOLD_SRC_TOK_INDEX] = stok[`NF_TOKEN_INDEX];
    assign hold[`NF_DMA_HOLD_DST_TOK_BUSY] = busy && d_tok;   assign hold[`NF_DMA_HOLD_DST_TOK_INDEX] = dtok[`NF_TOKEN_INDEX];
    assign hold[`NF_DMA_HOLD_SRC_PAR_BUSY] = busy && s_tok && s_win;  assign hold[`NF_DMA_HOLD_SRC_PAR_INDEX] = s_par;
    assign hold[`NF_DMA_HOLD_DST_PAR_BUSY] = busy && d_tok && d_win;  assign hold[`NF_DMA_HOLD_DST_PAR_INDEX] = d_par;

    // ---- chunk move -----------------------------------------------------------------
    reg [31:0]    sa, da;                 // adapter addresses of the chunk's first byte
    reg [CNW-1:0] n;                      // chunk bytes
    reg [CNW-1:0] gap;                    // sub-chunk size limit (see S_SUB)
    reg [CNW-1:0] sub_end;                // chunk bytes [0, sub_end) still to move
    reg [CNW-1:0] sub_k;                  // first chunk byte of the running sub-chunk
    reg [WCW-1:0] n_rd;                   // source words of the chunk
    reg [WCW-1:0] n_wr;                   // destination words
    reg [WCW-1:0] rd_issued;
    reg [WCW-1:0] k;                      // stream step
    reg [WAW-1:0] rd_word, wr_word;
    reg           lag;                    // 1: destination word j needs source words j and j+1
    reg [2:0]     rot;                    // byte shift of the two-word window
    reg [2:0]     first_lo, last_lo;      // destination byte lanes of the first/last byte
    reg [63:0]    prev;
    reg           g1;                     // a read granted last clock (its word arrives next clock)

    wire [FAW:0] fifo_count;
    wire [63:0]  head;
    wire         empty;
    wire         step;
    wire         need_word = (k < n_rd);
    wire         in_move   = (st == S_MOVE);
    nf_word_fifo #(.DEPTH(DEPTH)) u_fifo (
        .clk(clk), .rst(rst), .clear(!in_move),
        .push(rd_valid && in_move), .push_data(rd_data),
        .pop(step && need_word), .head(head), .empty(empty), .count(fifo_count)
    );

    reg           rd_more;                // rd_issued != n_rd, kept in a register
    // Room in the FIFO for one more read (count + in flight < DEPTH), computed a clock ahead
    // from the FIFO's next count and the next in-flight reads and kept in a register
    // (rd_room): the read request then comes from registers through one LUT, since it
    // selects the address that fans out to every adapter-memory block RAM.
    wire          f_push  = rd_valid && in_move && ({1'b0, fifo_count} != FIFO_DEPTH);
    wire          f_pop   = step && need_word && !empty;
    wire [FAW:0]  count_nx = !in_move ? {(FAW+1){1'b0}} :
                             fifo_count + {{FAW{1'b0}}, f_push} - {{FAW{1'b0}}, f_pop};
    wire [1:0]    inflight_nx = {1'b0, rd_req && rd_gnt} + {1'b0, g1};
    reg           rd_room;
    assign rd_req  = in_move && rd_more && rd_room;
    assign rd_addr = rd_word;

    wire [63:0]  cur     = need_word ? head : 64'd0;
    // The low word of {cur, prev} >> 8 * rot, in 64 bits (no 128-bit shift to simulate).
    wire [63:0]  window  = (prev >> {rot, 3'b000}) | ((rot == 3'd0) ? 64'd0 : cur << {3'd0 - rot, 3'b000});
    wire         emit    = lag ? (k != {WCW{1'b0}}) : 1'b1;
    wire [WCW-1:0] j     = lag ? k - 1'b1 : k;
    wire         data_ok = !need_word || !empty;
    wire [7:0]   be_first = (j == {WCW{1'b0}}) ? (8'hFF << first_lo) : 8'hFF;
    wire [7:0]   be_last  = (j == n_wr - 1'b1) ? (8'hFF >> (3'd7 - last_lo)) : 8'hFF;
    assign wr_req  = in_move && emit && data_ok;
    assign wr_addr = wr_word;
    assign wr_data = window;
    assign wr_be   = be_first & be_last;
    assign step    = in_move && data_ok && (!emit || wr_gnt);
    wire   last_step = (k == (lag ? n_wr : n_wr - 1'b1));

    // What S_DECIDE decides on is computed from registers one clock ahead, in
    // registers: S_DECIDE always follows a clock of S_WAIT, in which s_xaddr, d_xaddr,
    // remaining, pred_s and pred_d already hold their final values (results land only
    // while a side's got flag is still 0), so these are exact in S_DECIDE and keep the
    // subtractions and comparisons out of its paths.
    // Chunk size: the remaining bytes, cut at the next page boundary of either side.
    wire [CNW-1:0] s_room = PAGE_BYTES - {1'b0, s_xaddr[PS-1:0]};
    wire [CNW-1:0] d_room = PAGE_BYTES - {1'b0, d_xaddr[PS-1:0]};
    wire [CNW-1:0] sd_room = (s_room < d_room) ? s_room : d_room;
    reg  [CNW-1:0] chunk;
    // A chunk never crosses a page and memory is whole pages: inside iff it starts inside.
    reg            s_inside, d_inside;
    // A chunk whose destination starts inside its own source range moves like memmove:
    // sub-chunks of at most (destination - source) bytes, last one first, so no
    // sub-chunk overwrites source bytes still to be read.
    wire [31:0]    sd_gap_w = d_xaddr - s_xaddr;
    reg            d_above;               // d_xaddr > s_xaddr
    reg            gap_small;             // d_xaddr - s_xaddr < PAGE_BYTES
    reg  [CNW-1:0] sd_gap;                // d_xaddr - s_xaddr, low bits
    reg            moved;                 // the page offsets differ from the prediction
    always @(posedge clk) begin
        chunk     <= (remaining < {{(32-CNW){1'b0}}, sd_room}) ? remaining[CNW-1:0] : sd_room;
        s_inside  <= ({1'b0, s_xaddr} < mem_bytes_33);
        d_inside  <= ({1'b0, d_xaddr} < mem_bytes_33);
        d_above   <= (d_xaddr > s_xaddr);
        gap_small <= (sd_gap_w[31:CNW] == {(32-CNW){1'b0}});
        sd_gap    <= sd_gap_w[CNW-1:0];
        moved     <= (s_xaddr[PS-1:0] != pred_s) || (d_xaddr[PS-1:0] != pred_d);
    end
    wire [CNW-1:0] chunk_now = whole ? chunk : n_chk;
    // Prediction of the next chunk when this one ends, in two register stages: sa, da,
    // n and remaining are set when S_DECIDE starts a chunk and hold through S_MOVE,
    // which the clocks of S_SUB0 and S_SUB always precede.
    reg  [PS-1:0]  next_s_off, next_d_off;
    reg  [31:0]    next_rem;
    reg  [CNW-1:0] next_chunk;
    reg            last_chunk;            // remaining == n: this chunk ends the DMA
    wire [CNW-1:0] next_s_room = PAGE_BYTES - {1'b0, next_s_off};
    wire [CNW-1:0] next_d_room = PAGE_BYTES - {1'b0, next_d_off};
    wire [CNW-1:0] next_room   = (next_s_room < next_d_room) ? next_s_room : next_d_room;
    always @(posedge clk) begin
        next_s_off <= sa[PS-1:0] + n[PS-1:0];
        next_d_off <= da[PS-1:0] + n[PS-1:0];
        next_rem   <= remaining - {{(32-CNW){1'b0}}, n};
        next_chunk <= (next_rem < {{(32-CNW){1'b0}}, next_room}) ? next_rem[CNW-1:0] : next_room;
        last_chunk <= (remaining == {{(32-CNW){1'b0}}, n});
    end
    wire           overlap = d_above && gap_small && (sd_gap < chunk_now);

    // The running sub-chunk: m bytes from chunk byte sub_k0, in registers that S_SUB0
    // (one clock after gap and sub_end are set) leaves exact for S_SUB.
    wire [CNW-1:0] m_w = (gap < sub_end) ? gap : sub_end;
    reg  [CNW-1:0] m, sub_k0;
    always @(posedge clk) begin
        m      <= m_w;
        sub_k0 <= sub_end - m_w;
    end
    wire [31:0]    ssa    = sa + {{(32-CNW){1'b0}}, sub_k0};
    wire [31:0]    sda    = da + {{(32-CNW){1'b0}}, sub_k0};
    wire [CNW+2:0] s_span = {3'd0, m} + {{CNW{1'b0}}, ssa[WLSB-1:0]} - 1'b1;
    wire [CNW+2:0] d_span = {3'd0, m} + {{CNW{1'b0}}, sda[WLSB-1:0]} - 1'b1;
    wire [WCW-1:0] s_words = s_span[WLSB +: WCW];   // words of the sub-chunk, minus one
    wire [WCW-1:0] d_words = d_span[WLSB +: WCW];
    wire [3:0]     mis    = {1'b0, ssa[WLSB-1:0]} - {1'b0, sda[WLSB-1:0]};

    always @(posedge clk) begin
        if (rst) begin
            st        <= S_IDLE;
            busy      <= 1'b0;
            side      <= 1'b0;
            code      <= `NF_REFUSE_OK;
            bytes     <= 32'd0;
            whole     <= 1'b0;
            probe     <= 1'b1;
            n_chk     <= {CNW{1'b0}};
            pred_s    <= {PS{1'b0}};
            pred_d    <= {PS{1'b0}};
            smode     <= M_TOKEN;
            dmode     <= M_TOKEN;
            sacc      <= 2'd0;
            dacc      <= 2'd0;
            stok      <= 32'd0;
            dtok      <= 32'd0;
            spd       <= 32'd0;
            dpd       <= 32'd0;
            sva       <= 64'd0;
            dva       <= 64'd0;
            remaining <= 32'd0;
            s_issued  <= 1'b0;
            d_issued  <= 1'b0;
            s_got     <= 1'b0;
            d_got     <= 1'b0;
            s_code    <= 4'd0;
            d_code    <= 4'd0;
            s_xaddr   <= 32'd0;
            d_xaddr   <= 32'd0;
            s_win     <= 1'b0;
            d_win     <= 1'b0;
            s_par     <= 16'd0;
            d_par     <= 16'd0;
            sa        <= 32'd0;
            da        <= 32'd0;
            n         <= {CNW{1'b0}};
            gap       <= {CNW{1'b0}};
            sub_end   <= {CNW{1'b0}};
            sub_k     <= {CNW{1'b0}};
            n_rd      <= {WCW{1'b0}};
            n_wr      <= {WCW{1'b0}};
            rd_issued <= {WCW{1'b0}};
            rd_more   <= 1'b0;
            k         <= {WCW{1'b0}};
            rd_word   <= {WAW{1'b0}};
            wr_word   <= {WAW{1'b0}};
            lag       <= 1'b0;
            rot       <= 3'd0;
            first_lo  <= 3'd0;
            last_lo   <= 3'd0;
            prev      <= 64'd0;
            g1        <= 1'b0;
            rd_room   <= 1'b1;
        end else begin
            g1 <= rd_req && rd_gnt;
            rd_room <= {1'b0, count_nx} + {{FAW{1'b0}}, inflight_nx} < FIFO_DEPTH;
            case (st)
                S_IDLE: if (start) begin
                    busy      <= 1'b1;
                    side      <= 1'b0;
                    code      <= `NF_REFUSE_OK;
                    bytes     <= 32'd0;
                    whole     <= 1'b1;
                    smode     <= src_mode[`NF_DMA_SIDE_MODE_MODE];
                    dmode     <= dst_mode[`NF_DMA_SIDE_MODE_MODE];
                    sacc      <= src_mode[`NF_DMA_SIDE_MODE_ACCESS];
                    dacc      <= dst_mode[`NF_DMA_SIDE_MODE_ACCESS];
                    stok      <= src[`NF_DMA_SIDE_TOKEN];
                    dtok      <= dst[`NF_DMA_SIDE_TOKEN];
                    spd       <= src[`NF_DMA_SIDE_PD];
                    dpd       <= dst[`NF_DMA_SIDE_PD];
                    sva       <= src[`NF_DMA_SIDE_ADDR];
                    dva       <= dst[`NF_DMA_SIDE_ADDR];
                    remaining <= len;
                    s_issued  <= 1'b0;
                    d_issued  <= 1'b0;
                    s_got     <= 1'b0;
                    d_got     <= 1'b0;
                    s_win     <= 1'b0;
                    d_win     <= 1'b0;
                    st        <= S_ISSUE;
                end
                S_ISSUE: begin
                    // Address sides answer at once; token sides go through the pipeline.
                    if (!s_tok) begin
                        s_got   <= 1'b1;
                        s_code  <= whole ? region_code(smode, sva, remaining) : R_OK;
                        s_xaddr <= sva[31:0];
                    end
                    if (!d_tok) begin
                        d_got   <= 1'b1;
                        d_code  <= whole ? region_code(dmode, dva, remaining) : R_OK;
                        d_xaddr <= dva[31:0];
                    end
                    if (issue_src && kc_gnt) s_issued <= 1'b1;
                    if (issue_dst && kc_gnt) d_issued <= 1'b1;
                    if ((!s_tok || s_issued || (issue_src && kc_gnt && !d_tok)) &&
                        (!d_tok || d_issued || (issue_dst && kc_gnt)))
                        st <= S_WAIT;
                end
                S_WAIT: if (s_got && d_got) st <= S_DECIDE;
                S_DECIDE: begin
                    if (s_code != R_OK || d_code != R_OK) begin
                        side <= (s_code == R_OK);
                        code <= whole ? ((s_code != R_OK) ? s_code : d_code)
                                      : R_STOPPED;
                        busy <= 1'b0;
                        st   <= S_IDLE;
                    end else if (remaining == 32'd0) begin
                        busy <= 1'b0;
                        st   <= S_IDLE;
                    end else if (!whole && !probe && moved) begin
                        // The entry changed its page layout: find the chunk's size again.
                        probe    <= 1'b1;
                        s_issued <= 1'b0;
                        d_issued <= 1'b0;
                        s_got    <= 1'b0;
                        d_got    <= 1'b0;
                        st       <= S_ISSUE;
                    end else if (!whole && probe) begin
                        // The probe's addresses give the chunk; now check exactly it.
                        n_chk    <= chunk;
                        probe    <= 1'b0;
                        s_issued <= 1'b0;
                        d_issued <= 1'b0;
                        s_got    <= 1'b0;
                        d_got    <= 1'b0;
                        st       <= S_ISSUE;
                    end else if (!s_inside || !d_inside) begin
                        // An MTT page outside adapter memory (only MTT_WRITE can put
                        // one there): refuse that side, move no more.
                        side <= s_inside;
                        code <= R_BAD_ADDRESS;
                        busy <= 1'b0;
                        st   <= S_IDLE;
                    end else begin
                        sa        <= s_xaddr;
                        da        <= d_xaddr;
                        n         <= chunk_now;
                        sub_end   <= chunk_now;
                        gap       <= overlap ? sd_gap : chunk_now;
                        st        <= S_SUB0;
                    end
                end
                S_SUB0: st <= S_SUB;
                S_SUB: begin
                        sub_k     <= sub_k0;
                        n_rd      <= s_words + 1'b1;
                        n_wr      <= d_words + 1'b1;
                        rd_issued <= {WCW{1'b0}};
                        rd_more   <= 1'b1;    // n_rd >= 1
                        k         <= {WCW{1'b0}};
                        rd_word   <= ssa[WLSB +: WAW];
                        wr_word   <= sda[WLSB +: WAW];
                        lag       <= !mis[3];
                        rot       <= mis[2:0];
                        first_lo  <= sda[WLSB-1:0];
                        last_lo   <= d_span[WLSB-1:0];
                        prev      <= 64'd0;
                        st        <= S_MOVE;
                end
                S_MOVE: begin
                    if (rd_req && rd_gnt) begin
                        rd_issued <= rd_issued + 1'b1;
                        rd_more   <= (rd_issued + 1'b1 != n_rd);
                        rd_word   <= rd_word + 1'b1;
                    end
                    if (step) begin
                        prev <= cur;
                        k    <= k + 1'b1;
                        if (emit) wr_word <= wr_word + 1'b1;
                        if (last_step && sub_k != {CNW{1'b0}}) begin
                            sub_end <= sub_k;
                            st      <= S_SUB0;
                        end else if (last_step) begin
                            bytes     <= bytes + {{(32-CNW){1'b0}}, n};
                            remaining <= remaining - {{(32-CNW){1'b0}}, n};
                            sva       <= sva + {{(64-CNW){1'b0}}, n};
                            dva       <= dva + {{(64-CNW){1'b0}}, n};
                            whole     <= 1'b0;
                            // The next chunk continues where this one ended on both
                            // sides, so its page offsets and size are known without a
                            // probe; the chunk's checks confirm the offsets.
                            probe     <= 1'b0;
                            pred_s    <= next_s_off;
                            pred_d    <= next_d_off;
                            n_chk     <= next_chunk;
                            s_issued  <= 1'b0;
                            d_issued  <= 1'b0;
                            s_got     <= 1'b0;
                            d_got     <= 1'b0;
                            if (last_chunk) begin
                                busy <= 1'b0;
                                st   <= S_IDLE;
                            end else begin
                                st <= S_ISSUE;
                            end
                        end
                    end
                end
                default: st <= S_IDLE;
            endcase
            // Check results return in issue order (source first); the source's may
            // arrive while the destination's check still waits to be issued.
            if (kc_res_valid && (st == S_ISSUE || st == S_WAIT)) begin
                if (s_tok && !s_got) begin
                    s_got   <= 1'b1;
                    s_code  <= kc_res_code;
                    s_xaddr <= kc_res_addr;
                    s_win   <= kc_res_window;
                    s_par   <= kc_res_parent;
                end else begin
                    d_got   <= 1'b1;
                    d_code  <= kc_res_code;
                    d_xaddr <= kc_res_addr;
                    d_win   <= kc_res_window;
                    d_par   <= kc_res_parent;
                end
            end
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, src_mode, dst_mode, ssa[31:WLSB+WAW], sda[31:WLSB+WAW], s_span[CNW+2:WLSB+WCW], s_span[WLSB-1:0],
                    d_span[CNW+2:WLSB+WCW], 1'b0};
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
