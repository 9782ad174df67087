// SPDX-License-Identifier: Apache-2.0
// Network port transmitter: sends posted TX slots. A post queues (slot, length); the
// fill side reads the slot's words from adapter memory into a one-frame store (block
// RAM), summing the IPv4 header as it passes, and the send side starts a frame only once
// all of it is stored, so the MAC, which needs a byte at every phy_ce once a frame has
// started, never waits on the system port. On the way out the send side puts the IPv4
// total length (LEN - 14) and header checksum in place for an IPv4 header of IHL 5, and
// the RoCEv2 ICRC in the last four bytes of a UDP 4791 packet (nf_roce_icrc). A slot's
// busy bit falls once its last word has been read: the slot may be rewritten from then.
`default_nettype none
`include "nf_layout.vh"
module nf_net_tx #(
    parameter integer RX_SLOTS  = 8,       // receive slots: the TX slots follow them
    parameter integer TX_SLOTS  = 4,       // transmit slots, a power of two, 1..NET_MAX_SLOTS (also the post queue's depth)
    parameter [31:0]  SLOT_BASE = 32'h0,   // adapter address of RX slot 0, a multiple of 4
    parameter integer BUF_WORDS = 512      // frame store, a power of two holding a longest frame (one ECP5 DP16KD at 512)
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                post_valid,   // one-clock pulse
    input  wire [3:0]          post_slot,
    input  wire [15:0]         post_len,     // frame bytes at NET_FRAME_OFF
    output reg                 post_rejected,
    output reg  [TX_SLOTS-1:0] busy,         // queued or being read
    output reg                 frame_sent,   // pulse with the frame's last byte into the MAC
    // frame stream to nf_eth_mac_tx
    output wire [7:0]          m_tdata,
    output wire                m_tvalid,
    input  wire                m_tready,
    output wire                m_tlast,
    // adapter-memory reads; valid held until ready
    output reg                 rd_valid,
    output wire [31:0]         rd_addr,
    input  wire                rd_ready,
    input  wire [31:0]         rd_data
);
    localparam integer SLOT_BYTES = `NF_NET_SLOT_BYTES;
    localparam integer FRAME_OFF  = `NF_NET_FRAME_OFF;
    localparam integer MAX_FRAME  = `NF_NET_MAX_FRAME;
    localparam integer MIN_FRAME  = `NF_NET_MIN_FRAME;
    localparam integer SLOT_SH    = $clog2(SLOT_BYTES);
    localparam integer WW         = SLOT_SH - 2;              // word index in a slot
    localparam integer LW         = $clog2(MAX_FRAME + 1);    // frame length
    localparam integer SW         = (TX_SLOTS > 1) ? $clog2(TX_SLOTS) : 1;
    localparam integer QW         = $clog2(TX_SLOTS) + 1;     // queue pointers with wrap bit
    localparam integer BW         = $clog2(BUF_WORDS);
    localparam integer LANE0      = FRAME_OFF % 4;            // lane of a frame's first byte
    // Slot words of the EtherType and the IPv4 header (word aligned: see the check below).
    localparam integer W_ETYPE    = (FRAME_OFF + 12) / 4;
    localparam integer W_IP       = (FRAME_OFF + 14) / 4;
    localparam integer MAX_WORDS  = (LANE0 + MAX_FRAME + 3) / 4;

    generate
        if (TX_SLOTS < 1 || TX_SLOTS > `NF_NET_MAX_SLOTS || (1 << $clog2(TX_SLOTS)) != TX_SLOTS) begin : g_bad_slots
            $error("nf_net_tx: TX_SLOTS must be a power of two, 1..NET_MAX_SLOTS");
        end
        if (RX_SLOTS < 1 || RX_SLOTS > `NF_NET_MAX_SLOTS) begin : g_bad_rx
            $error("nf_net_tx: RX_SLOTS must be 1..NET_MAX_SLOTS");
        end
        if (SLOT_BASE[1:0] != 2'b00) begin : g_bad_base
            $error("nf_net_tx: SLOT_BASE must be a multiple of 4");
        end
        if ((1 << BW) != BUF_WORDS || BUF_WORDS < MAX_WORDS) begin : g_bad_buf
            $error("nf_net_tx: BUF_WORDS must be a power of two holding a longest frame");
        end
        if ((FRAME_OFF + 14) % 4 != 0 || (1 << SLOT_SH) != SLOT_BYTES) begin : g_bad_off
            $error("nf_net_tx: the IPv4 header must start a slot word (NET_FRAME_OFF mod 4 = 2), NET_SLOT_BYTES a power of two");
        end
    endgenerate

    localparam [1:0]    LANE0_2  = LANE0[1:0];
    localparam integer  W0_I     = FRAME_OFF / 4;
    localparam [WW-1:0] W0       = W0_I[WW-1:0];
    localparam [LW-1:0] L14      = 14;         // Ethernet header: IPv4 total length = LEN - 14
    localparam integer  RU_I     = LANE0 + 3;
    localparam [LW+1:0] ROUND_UP = RU_I[LW+1:0];  // words of a frame = (LEN + LANE0 + 3) / 4
    localparam [WW-1:0] W_ETYPE_N = W_ETYPE[WW-1:0];
    localparam [WW-1:0] W_IP_N   = W_IP[WW-1:0];
    localparam [LW-1:0] LEN_IPH  = 14 + 20;   // a frame this long holds a whole IPv4 header

    // ---- post queue ---------------------------------------------------------------
    reg [SW-1:0] q_slot [0:TX_SLOTS-1];
    reg [LW-1:0] q_len  [0:TX_SLOTS-1];
    reg [QW-1:0] q_rd, q_wr;
    wire [QW-1:0] q_count = q_wr - q_rd;
    wire q_empty = q_count == {QW{1'b0}};
    wire q_full  = q_count == TX_SLOTS[QW-1:0];
    wire [SW-1:0] q_head_idx = (TX_SLOTS > 1) ? q_rd[SW-1:0] : {SW{1'b0}};
    wire [SW-1:0] q_tail_idx = (TX_SLOTS > 1) ? q_wr[SW-1:0] : {SW{1'b0}};
    wire slot_ok = {28'd0, post_slot} < TX_SLOTS;
    wire [SW-1:0] post_idx = post_slot[SW-1:0];
    wire len_ok  = {16'd0, post_len} >= MIN_FRAME && {16'd0, post_len} <= MAX_FRAME;
    wire accept  = post_valid && slot_ok && len_ok && !q_full && !busy[post_idx];

    // ---- frame store: a ring of words; a frame is sent only once it is all in ----------
    reg [31:0]  buf_mem [0:BUF_WORDS-1];
    reg [BW:0]  b_wr, b_rd;
    wire [BW:0] b_count = b_wr - b_rd;

    // ---- frames stored, waiting to be sent (two: one sending, one ready) ---------------
    reg [LW-1:0] d_len [0:1];
    reg [19:0]   d_sum [0:1];   // the header's sum, folded when its frame starts
    reg          d_ip  [0:1];
    reg [1:0]    d_rd, d_wr;
    wire d_empty = d_rd == d_wr;
    wire d_full  = (d_rd[0] == d_wr[0]) && (d_rd[1] != d_wr[1]);

    // The ones'-complement fold of the next frame's header sum (its checksum is ~fold2).
    wire [19:0]  d_head_sum = d_sum[d_rd[0]];
    wire [16:0]  fold1 = {1'b0, d_head_sum[15:0]} + {13'd0, d_head_sum[19:16]};
    wire [15:0]  fold2 = fold1[15:0] + {15'd0, fold1[16]};

    // ---- fill side ----------------------------------------------------------------
    reg          f_busy;      // reading a slot
    reg [SW-1:0] f_slot;
    reg [LW-1:0] f_len;
    reg [LW-1:0] f_iplen;     // IPv4 total length of this frame: f_len - 14
    reg [WW-1:0] f_widx;      // slot word being read
    reg [WW-1:0] f_wlast;     // the frame's last slot word
    reg [19:0]   f_sum;       // the IPv4 header's 16-bit words summed (checksum as 0)
    reg          f_is_ip;     // EtherType 0x0800
    reg          f_vihl;      // version 4, IHL 5
    wire [31:0]  slot_off = ({{(32 - SW){1'b0}}, f_slot} + RX_SLOTS) << SLOT_SH;
    assign rd_addr = SLOT_BASE + slot_off + {{(32 - WW - 2){1'b0}}, f_widx, 2'b00};
    // The two 16-bit words of a slot word (big-endian halves), the fields filled on the
    // way out replaced as they will be sent: total length, and the checksum as 0.
    wire [15:0]  half0 = {rd_data[7:0], rd_data[15:8]};
    wire [15:0]  half1 = f_widx == W_IP_N ? {{(16 - LW){1'b0}}, f_iplen} :
                         f_widx == W_IP_N + 2 ? 16'd0 : {rd_data[23:16], rd_data[31:24]};
    wire         in_iph = f_widx >= W_IP_N && f_widx < W_IP_N + 5;
    wire [19:0]  f_sum_n = f_sum + (in_iph ? {4'd0, half0} + {4'd0, half1} : 20'd0);
    /* verilator lint_off UNUSEDSIGNAL */
    wire [LW+1:0] words_n = ({2'b00, q_len[q_head_idx]} + ROUND_UP) >> 2;  // the frame's slot words (< 2^WW)
    /* verilator lint_on UNUSEDSIGNAL */
    wire         f_room = b_count != BUF_WORDS[BW:0];
    wire         f_take = rd_valid && rd_ready;
    wire         f_last = f_take && f_widx == f_wlast;

    // ---- send side ----------------------------------------------------------------
    reg          s_busy;      // a frame is being sent
    reg [LW-1:0] s_len;
    reg [15:0]   s_sum;       // the checksum to send
    reg          s_ip;        // fill the IPv4 total length and checksum
    reg [LW-1:0] s_pos;       // frame byte offered now
    reg [1:0]    s_lane;
    reg [LW+1:0] s_fetch;     // words of this frame not yet read from the store
    reg [31:0]   cur, nxt;
    reg          cur_v, nxt_v;
    reg          re_q;        // a store read issued last clock: its word is in b_q
    reg [31:0]   b_q;
    wire         s_re  = s_busy && s_fetch != 0 && !re_q && (!cur_v || !nxt_v);
    wire         beat  = m_tvalid && m_tready;
    wire         s_end = s_pos == s_len - 1'b1;
    wire         s_adv = beat && (s_lane == 2'd3 || s_end);   // cur is used up
    wire [7:0]   raw   = cur[{s_lane, 3'b000} +: 8];
    wire [LW-1:0] tot_len = s_len - L14;
    wire [15:0]  tot16 = {{(16 - LW){1'b0}}, tot_len};
    reg  [7:0]   filled;     // the byte with the IPv4 fields in place (what the ICRC covers)
    always @(*) begin
        filled = raw;
        if (s_ip) begin
            if (s_pos == 16) filled = tot16[15:8];
            if (s_pos == 17) filled = tot16[7:0];
            if (s_pos == 24) filled = s_sum[15:8];
            if (s_pos == 25) filled = s_sum[7:0];
        end
    end
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] icrc_val;   // the ICRC goes out a byte at a time (icrc_byte)
    wire        icrc_done, icrc_roce, icrc_ok;
    /* verilator lint_on UNUSEDSIGNAL */
    wire        icrc_fld;
    wire [7:0]  icrc_byte;
    nf_roce_icrc u_icrc (
        .clk(clk), .rst(rst), .s_tdata(filled), .s_tvalid(beat), .s_tlast(m_tlast),
        .icrc(icrc_val), .icrc_field(icrc_fld), .icrc_byte(icrc_byte), .done(icrc_done),
        .roce(icrc_roce), .icrc_ok(icrc_ok)
    );
    assign m_tvalid = s_busy && cur_v;
    assign m_tdata  = icrc_fld ? icrc_byte : filled;
    assign m_tlast  = s_end;

    // The store's read port is registered (block RAM).
    always @(posedge clk) begin
        if (s_re)
            b_q <= buf_mem[b_rd[BW-1:0]];
        if (f_take)
            buf_mem[b_wr[BW-1:0]] <= rd_data;
    end

    always @(posedge clk) begin
        if (rst) begin
            q_rd          <= {QW{1'b0}};
            q_wr          <= {QW{1'b0}};
            busy          <= {TX_SLOTS{1'b0}};
            post_rejected <= 1'b0;
            frame_sent    <= 1'b0;
            b_wr          <= {(BW + 1){1'b0}};
            b_rd          <= {(BW + 1){1'b0}};
            d_rd          <= 2'd0;
            d_wr          <= 2'd0;
            f_busy        <= 1'b0;
            f_slot        <= {SW{1'b0}};
            f_len         <= {LW{1'b0}};
            f_iplen       <= {LW{1'b0}};
            f_widx        <= {WW{1'b0}};
            f_wlast       <= {WW{1'b0}};
            f_sum         <= 20'd0;
            f_is_ip       <= 1'b0;
            f_vihl        <= 1'b0;
            rd_valid      <= 1'b0;
            s_busy        <= 1'b0;
            s_len         <= {LW{1'b0}};
            s_sum         <= 16'd0;
            s_ip          <= 1'b0;
            s_pos         <= {LW{1'b0}};
            s_lane        <= 2'd0;
            s_fetch       <= {(LW + 2){1'b0}};
            cur           <= 32'd0;
            nxt           <= 32'd0;
            cur_v         <= 1'b0;
            nxt_v         <= 1'b0;
            re_q          <= 1'b0;
        end else begin
            post_rejected <= post_valid && !accept;
            frame_sent    <= beat && s_end;

            if (accept) begin
                q_slot[q_tail_idx] <= post_idx;
                q_len[q_tail_idx]  <= post_len[LW-1:0];
                q_wr <= q_wr + 1'b1;
            end

            // -- fill: one read in flight, only while the store has room for its word --
            if (!f_busy) begin
                if (!q_empty && !d_full) begin
                    f_busy  <= 1'b1;
                    f_slot  <= q_slot[q_head_idx];
                    f_len   <= q_len[q_head_idx];
                    f_iplen <= q_len[q_head_idx] - L14;
                    f_widx  <= W0;
                    f_wlast <= W0 + words_n[WW-1:0] - 1'b1;
                    f_sum   <= 20'd0;
                    f_is_ip <= 1'b0;
                    f_vihl  <= 1'b0;
                    q_rd    <= q_rd + 1'b1;
                end
            end else if (!rd_valid) begin
                if (f_room)
                    rd_valid <= 1'b1;
            end else if (rd_ready) begin
                rd_valid <= 1'b0;
                b_wr     <= b_wr + 1'b1;
                f_widx   <= f_widx + 1'b1;
                f_sum    <= f_sum_n;
                if (f_widx == W_ETYPE_N) f_is_ip <= rd_data[23:16] == 8'h08 && rd_data[31:24] == 8'h00;
                if (f_widx == W_IP_N)    f_vihl  <= rd_data[7:0] == 8'h45;
                if (f_last) begin
                    f_busy <= 1'b0;
                    d_len[d_wr[0]] <= f_len;
                    d_sum[d_wr[0]] <= f_sum_n;
                    d_ip[d_wr[0]]  <= f_is_ip && f_vihl && f_len >= LEN_IPH;
                    d_wr <= d_wr + 1'b1;
                end
            end

            // -- send: start a stored frame, keep one word ahead of the MAC --
            if (!s_busy) begin
                if (!d_empty) begin
                    s_busy  <= 1'b1;
                    s_len   <= d_len[d_rd[0]];
                    s_sum   <= ~fold2;
                    s_ip    <= d_ip[d_rd[0]];
                    s_fetch <= ({2'b00, d_len[d_rd[0]]} + ROUND_UP) >> 2;
                    s_pos   <= {LW{1'b0}};
                    s_lane  <= LANE0_2;
                    d_rd    <= d_rd + 1'b1;
                end
            end else begin
                if (beat) begin
                    s_pos  <= s_pos + 1'b1;
                    s_lane <= s_lane + 1'b1;
                    if (s_end)
                        s_busy <= 1'b0;
                end
            end
            re_q <= s_re;
            if (s_re) begin
                b_rd    <= b_rd + 1'b1;
                s_fetch <= s_fetch - 1'b1;
            end
            // The word that arrives goes behind the ones held; a used-up word leaves cur.
            if (s_adv) begin
                if (nxt_v) begin
                    cur   <= nxt;
                    cur_v <= 1'b1;
                    nxt_v <= re_q;
                    nxt   <= b_q;
                end else begin
                    cur   <= b_q;
                    cur_v <= re_q;
                    nxt_v <= 1'b0;
                end
            end else if (re_q) begin
                if (!cur_v) begin
                    cur   <= b_q;
                    cur_v <= 1'b1;
                end else begin
                    nxt   <= b_q;
                    nxt_v <= 1'b1;
                end
            end

            // Busy: set by an accepted post, cleared when its last word has been read.
            busy <= (busy | (accept ? ({{(TX_SLOTS - 1){1'b0}}, 1'b1} << post_idx) : {TX_SLOTS{1'b0}}))
                    & ~(f_last ? ({{(TX_SLOTS - 1){1'b0}}, 1'b1} << f_slot) : {TX_SLOTS{1'b0}});
        end
    end
endmodule
`default_nettype wire
