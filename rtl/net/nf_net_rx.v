// SPDX-License-Identifier: Apache-2.0
// Network port receiver: takes the MAC's frame stream (FCS stripped, tuser on the last
// beat for a bad frame), checks the destination, the IPv4 header and the RoCEv2 ICRC on
// the fly, and writes the frame into the next RX slot at NET_FRAME_OFF as little-endian
// words through a FIFO to the system port. A frame that passes every check gets its
// NET_RX_HDR (len, class, flags, arrival cycle) written last, and only once that header
// word is in memory does its slot's ready bit rise. A failed frame is counted by its
// first cause and its slot is reused by the next frame.
`default_nettype none
`include "nf_layout.vh"
module nf_net_rx #(
    parameter integer RX_SLOTS   = 8,        // receive slots, 1..NET_MAX_SLOTS
    parameter [31:0]  SLOT_BASE  = 32'h0,    // adapter address of RX slot 0, a multiple of 4
    parameter integer FIFO_DEPTH = 32        // words waiting for the system port, a power of two >= 4: absorbs its stalls
) (
    input  wire                clk,
    input  wire                rst,
    // frame stream from nf_eth_mac_rx (no backpressure)
    input  wire [7:0]          s_tdata,
    input  wire                s_tvalid,
    input  wire                s_tlast,
    input  wire                s_tuser,
    input  wire [31:0]         cycle,
    input  wire                rx_en,         // CTRL.RX_EN, sampled at a frame's first byte
    input  wire                promisc,       // CTRL.PROMISC
    input  wire [47:0]         mac,           // the adapter's address, [7:0] the first byte on the wire
    input  wire [RX_SLOTS-1:0] release_mask,  // firmware is done with these slots
    output reg  [RX_SLOTS-1:0] ready,         // slot holds a checked frame and its header
    // one-clock pulses: a frame placed, or dropped by its first failed check
    output reg                 frame_ok,
    output reg                 drop_fcs,
    output reg                 drop_addr,
    output reg                 drop_long,
    output reg                 drop_ip,
    output reg                 drop_icrc,
    output reg                 drop_slot,
    output reg                 drop_fifo,
    // adapter-memory writes; valid held until ready
    output wire                wr_valid,
    output wire [31:0]         wr_addr,
    output wire [31:0]         wr_data,
    output wire [3:0]          wr_strb,
    input  wire                wr_ready
);
    localparam integer SLOT_BYTES = `NF_NET_SLOT_BYTES;
    localparam integer FRAME_OFF  = `NF_NET_FRAME_OFF;
    localparam integer MAX_FRAME  = `NF_NET_MAX_FRAME;
    localparam integer SLOT_SH    = $clog2(SLOT_BYTES);
    localparam integer OW         = SLOT_SH;                 // byte offset in a slot
    localparam integer WW         = SLOT_SH - 2;             // word index in a slot
    localparam integer SW         = (RX_SLOTS > 1) ? $clog2(RX_SLOTS) : 1;
    localparam integer FW         = $clog2(FIFO_DEPTH);
    localparam integer PW         = $clog2(MAX_FRAME + 1);   // frame byte index, saturating at MAX_FRAME

    generate
        if (RX_SLOTS < 1 || RX_SLOTS > `NF_NET_MAX_SLOTS) begin : g_bad_slots
            $error("nf_net_rx: RX_SLOTS must be 1..NET_MAX_SLOTS");
        end
        if (SLOT_BASE[1:0] != 2'b00) begin : g_bad_base
            $error("nf_net_rx: SLOT_BASE must be a multiple of 4");
        end
        if (FIFO_DEPTH < 4 || (1 << FW) != FIFO_DEPTH) begin : g_bad_fifo
            $error("nf_net_rx: FIFO_DEPTH must be a power of two >= 4");
        end
        if ((1 << SLOT_SH) != SLOT_BYTES || FRAME_OFF + MAX_FRAME > SLOT_BYTES) begin : g_bad_slot
            $error("nf_net_rx: NET_SLOT_BYTES must be a power of two holding NET_FRAME_OFF + NET_MAX_FRAME");
        end
        if (FRAME_OFF < `NF_NET_RX_HDR_SIZE) begin : g_bad_off
            $error("nf_net_rx: NET_FRAME_OFF must leave room for NET_RX_HDR");
        end
    endgenerate

    localparam [PW-1:0] MAX_P   = MAX_FRAME[PW-1:0];
    localparam [OW-1:0] OFF0    = FRAME_OFF[OW-1:0];
    localparam [7:0] CLASS_OTHER = `NF_NET_KIND_OTHER, CLASS_ARP = `NF_NET_KIND_ARP,
                     CLASS_IPV4  = `NF_NET_KIND_IPV4,  CLASS_ROCE = `NF_NET_KIND_ROCE;
    localparam [7:0] FLAG_BCAST  = `NF_NET_RX_FLAG_BCAST, FLAG_PROMISC = `NF_NET_RX_FLAG_PROMISC;
    localparam [15:0] ROCE_PORT  = `NF_NET_ROCE_PORT;

    // ---- per-frame state ------------------------------------------------------------
    reg          in_frame;   // the next beat is not a frame's first
    reg          active;     // RX_EN was set at this frame's first byte
    reg          reserved;   // this frame's slot was free at its first byte
    reg [PW-1:0] pos;        // index of the current beat in its frame, saturating at MAX_FRAME
    reg [OW-1:0] off;        // slot offset of the current beat
    reg          mac_eq;     // destination bytes so far equal the adapter's MAC
    reg          bcast;      // destination bytes so far are all 0xFF
    reg          is_ip, is_arp;
    reg [7:0]    etype_hi;
    reg          ip_vihl_ok; // IPv4 version 4, IHL 5
    reg [15:0]   csum;       // ones'-complement sum of the IPv4 header so far
    reg [7:0]    csum_hi;    // the first byte of the 16-bit word being summed
    reg          is_udp, port_hi_ok, to_roce;
    reg          too_long;
    reg          overrun;
    reg          bad_mac;    // the MAC flagged the frame (tuser at tlast)
    reg [31:0]   stamp;
    reg [PW-1:0] flen;       // frame bytes, at tlast
    reg [23:0]   word_lo;    // byte lanes assembled so far
    reg [2:0]    lanes;      // which of lanes 0..2 word_lo holds
    reg [SW-1:0] slot;       // slot the next frame goes to
    reg [RX_SLOTS-1:0] pending;  // frame accepted, header not yet written
    reg          fin;        // the clock after a frame's last beat: the verdict

    wire         beat  = s_tvalid;
    wire         first = beat && !in_frame;
    wire         act   = first ? rx_en : active;
    wire [PW-1:0] p    = first ? {PW{1'b0}} : pos;
    wire [OW-1:0] o    = first ? OFF0 : off;

    // The ICRC unit sees every frame; its verdict comes with done, one clock after tlast.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] icrc_val;   // the receiver needs only the comparison
    wire        icrc_fld;
    wire [7:0]  icrc_byte;
    wire        icrc_done, icrc_roce;
    /* verilator lint_on UNUSEDSIGNAL */
    wire        icrc_ok;
    nf_roce_icrc u_icrc (
        .clk(clk), .rst(rst), .s_tdata(s_tdata), .s_tvalid(beat), .s_tlast(s_tlast),
        .icrc(icrc_val), .icrc_field(icrc_fld), .icrc_byte(icrc_byte), .done(icrc_done),
        .roce(icrc_roce), .icrc_ok(icrc_ok)
    );

    // ---- destination check, known from the sixth byte on ----------------------------
    wire [7:0] mac_byte = mac[{p[2:0], 3'b000} +: 8];
    wire       mac_eq_n = (first || mac_eq) && s_tdata == mac_byte;
    wire       bcast_n  = (first || bcast) && s_tdata == 8'hFF;
    // Past the destination, a frame that is neither ours nor broadcast writes nothing.
    wire       addr_out = !promisc && p >= 6 && !mac_eq && !bcast;

    // ---- the FIFO: slot words, then the header words of a good frame ------------------
    localparam integer EW = 1 + 4 + 32 + WW + SW;  // commit, strb, data, word index, slot
    reg [EW-1:0] f_mem [0:FIFO_DEPTH-1];
    reg [FW:0]   f_rd, f_wr;
    wire         f_empty = f_rd == f_wr;
    wire         f_full  = (f_rd[FW-1:0] == f_wr[FW-1:0]) && (f_rd[FW] != f_wr[FW]);
    wire [EW-1:0] head   = f_mem[f_rd[FW-1:0]];
    wire         h_commit = head[EW-1];
    wire [SW-1:0] h_slot  = head[SW-1:0];
    wire [WW-1:0] h_widx  = head[SW +: WW];
    wire [31:0]  slot_off = {{(32 - SW - SLOT_SH){1'b0}}, h_slot, {SLOT_SH{1'b0}}};
    assign wr_valid = !f_empty;
    assign wr_strb  = head[EW-2 -: 4];
    assign wr_data  = head[SW + WW +: 32];
    assign wr_addr  = SLOT_BASE + slot_off + {{(32 - WW - 2){1'b0}}, h_widx, 2'b00};
    wire         f_pop  = !f_empty && wr_ready;
    wire         room   = !f_full || f_pop;

    // Verdict entries: cycle word first, then the header word that commits the slot.
    reg  [1:0]   v_left;   // header entries still to push (2, 1, 0)
    reg  [31:0]  v_hdr;
    reg  [31:0]  v_cycle;
    reg  [SW-1:0] v_slot;
    wire         v_push = v_left != 2'd0 && room;

    // A byte word: the beat's byte completes lane 3, or ends the frame.
    wire [1:0]   lane     = o[1:0];
    // too_long and overrun still hold the last frame's verdict at a first byte: that byte
    // is written whatever they say, or a good frame after a long one lands without it.
    wire         stopped  = !first && (overrun || too_long);
    wire         writing  = act && (first ? (rx_en && !(ready[slot] || pending[slot])) : reserved) &&
                            !stopped && !addr_out && p != MAX_P;
    wire         word_end = beat && writing && (lane == 2'd3 || s_tlast);
    wire         w_push   = word_end && room && !v_push;
    wire [31:0]  w_data;
    wire [3:0]   w_strb;
    assign w_data[7:0]   = lane == 2'd0 ? s_tdata : word_lo[7:0];
    assign w_data[15:8]  = lane == 2'd1 ? s_tdata : word_lo[15:8];
    assign w_data[23:16] = lane == 2'd2 ? s_tdata : word_lo[23:16];
    assign w_data[31:24] = s_tdata;
    assign w_strb = {lane == 2'd3, lanes[2] || lane == 2'd2, lanes[1] || lane == 2'd1, lanes[0] || lane == 2'd0};

    // ---- the verdict, at fin -----------------------------------------------------------
    wire addr_ok  = mac_eq || (bcast && is_arp) || promisc;
    wire ip_ok    = !is_ip || (ip_vihl_ok && csum == 16'hFFFF);
    wire icrc_chk = !(is_ip && to_roce) || icrc_ok;
    wire checked  = !bad_mac && addr_ok && !too_long && ip_ok && icrc_chk;
    wire good     = active && checked && reserved && !overrun;
    wire [7:0] cls   = is_arp ? CLASS_ARP : !is_ip ? CLASS_OTHER : to_roce ? CLASS_ROCE : CLASS_IPV4;
    wire [7:0] flags = (bcast ? FLAG_BCAST : 8'd0) | (!mac_eq && !bcast ? FLAG_PROMISC : 8'd0);
    wire [15:0] len16 = {{(16 - PW){1'b0}}, flen};

    wire [RX_SLOTS-1:0] slot_1h = {{(RX_SLOTS - 1){1'b0}}, 1'b1} << slot;
    wire [RX_SLOTS-1:0] head_1h = {{(RX_SLOTS - 1){1'b0}}, 1'b1} << h_slot;
    wire commit_done = f_pop && h_commit;

    // The 16-bit sum with its carry folded back in (ones' complement).
    wire [16:0] csum_add = {1'b0, csum} + {1'b0, csum_hi, s_tdata};
    wire [15:0] csum_nxt = csum_add[15:0] + {15'd0, csum_add[16]};

    always @(posedge clk) begin
        if (rst) begin
            in_frame   <= 1'b0;
            active     <= 1'b0;
            reserved   <= 1'b0;
            pos        <= {PW{1'b0}};
            off        <= OFF0;
            mac_eq     <= 1'b0;
            bcast      <= 1'b0;
            is_ip      <= 1'b0;
            is_arp     <= 1'b0;
            etype_hi   <= 8'd0;
            ip_vihl_ok <= 1'b0;
            csum       <= 16'd0;
            csum_hi    <= 8'd0;
            is_udp     <= 1'b0;
            port_hi_ok <= 1'b0;
            to_roce    <= 1'b0;
            too_long   <= 1'b0;
            overrun    <= 1'b0;
            bad_mac    <= 1'b0;
            stamp      <= 32'd0;
            flen       <= {PW{1'b0}};
            word_lo    <= 24'd0;
            lanes      <= 3'd0;
            slot       <= {SW{1'b0}};
            pending    <= {RX_SLOTS{1'b0}};
            ready      <= {RX_SLOTS{1'b0}};
            fin        <= 1'b0;
            v_left     <= 2'd0;
            v_hdr      <= 32'd0;
            v_cycle    <= 32'd0;
            v_slot     <= {SW{1'b0}};
            f_rd       <= {(FW + 1){1'b0}};
            f_wr       <= {(FW + 1){1'b0}};
            frame_ok   <= 1'b0;
            drop_fcs   <= 1'b0;
            drop_addr  <= 1'b0;
            drop_long  <= 1'b0;
            drop_ip    <= 1'b0;
            drop_icrc  <= 1'b0;
            drop_slot  <= 1'b0;
            drop_fifo  <= 1'b0;
        end else begin
            frame_ok  <= 1'b0;
            drop_fcs  <= 1'b0;
            drop_addr <= 1'b0;
            drop_long <= 1'b0;
            drop_ip   <= 1'b0;
            drop_icrc <= 1'b0;
            drop_slot <= 1'b0;
            drop_fifo <= 1'b0;
            fin       <= beat && s_tlast && act;

            // -- bytes in: the checks --
            if (beat) begin
                if (first) begin
                    active     <= rx_en;
                    reserved   <= rx_en && !(ready[slot] || pending[slot]);
                    stamp      <= cycle;
                    is_ip      <= 1'b0;
                    is_arp     <= 1'b0;
                    ip_vihl_ok <= 1'b0;
                    csum       <= 16'd0;
                    is_udp     <= 1'b0;
                    port_hi_ok <= 1'b0;
                    to_roce    <= 1'b0;
                    too_long   <= 1'b0;
                    overrun    <= 1'b0;
                    lanes      <= 3'd0;
                end
                in_frame <= !s_tlast;
                if (p != MAX_P) begin
                    pos <= p + 1'b1;
                    off <= o + 1'b1;
                end else begin
                    pos <= p;
                    off <= o;
                    too_long <= 1'b1;
                end
                if (p < 6) begin
                    mac_eq <= mac_eq_n;
                    bcast  <= bcast_n;
                end
                if (p == 12) etype_hi <= s_tdata;
                if (p == 13) begin
                    is_ip  <= etype_hi == 8'h08 && s_tdata == 8'h00;
                    is_arp <= etype_hi == 8'h08 && s_tdata == 8'h06;
                end
                if (p == 14) ip_vihl_ok <= s_tdata == 8'h45;
                if (p >= 14 && p <= 33) begin
                    if (!p[0]) csum_hi <= s_tdata;   // even offsets start a 16-bit word
                    else       csum    <= csum_nxt;
                end
                if (p == 23) is_udp     <= s_tdata == 8'h11;
                if (p == 36) port_hi_ok <= s_tdata == ROCE_PORT[15:8];
                if (p == 37) to_roce    <= is_udp && port_hi_ok && s_tdata == ROCE_PORT[7:0];
                if (s_tlast) begin
                    bad_mac <= s_tuser;
                    flen    <= p + 1'b1;
                end
                // -- word assembly --
                if (word_end) begin
                    lanes <= 3'd0;
                    if (!w_push) overrun <= 1'b1;  // no room: the word is lost, so is the frame
                end else if (writing) begin
                    case (lane)
                        2'd0: begin word_lo[7:0]   <= s_tdata; lanes[0] <= 1'b1; end
                        2'd1: begin word_lo[15:8]  <= s_tdata; lanes[1] <= 1'b1; end
                        default: begin word_lo[23:16] <= s_tdata; lanes[2] <= 1'b1; end
                    endcase
                end
            end

            // -- the verdict: one cause per dropped frame, the first that applies --
            if (fin) begin
                if (bad_mac)              drop_fcs  <= 1'b1;
                else if (!addr_ok)        drop_addr <= 1'b1;
                else if (too_long)        drop_long <= 1'b1;
                else if (!ip_ok)          drop_ip   <= 1'b1;
                else if (!icrc_chk)       drop_icrc <= 1'b1;
                else if (!reserved)       drop_slot <= 1'b1;
                else if (overrun)         drop_fifo <= 1'b1;
                if (good) begin
                    v_left  <= 2'd2;
                    v_hdr   <= {flags, cls, len16};
                    v_cycle <= stamp;
                    v_slot  <= slot;
                    slot    <= (slot == RX_SLOTS[SW-1:0] - 1'b1) ? {SW{1'b0}} : slot + 1'b1;
                end
            end

            // -- FIFO --
            if (v_push) begin
                f_mem[f_wr[FW-1:0]] <= v_left == 2'd2 ?
                    {1'b0, 4'hF, v_cycle, {{(WW - 1){1'b0}}, 1'b1}, v_slot} :
                    {1'b1, 4'hF, v_hdr, {WW{1'b0}}, v_slot};
                v_left <= v_left - 1'b1;
            end else if (w_push) begin
                f_mem[f_wr[FW-1:0]] <= {1'b0, w_strb, w_data, o[OW-1:2], slot};
            end
            if (v_push || w_push)
                f_wr <= f_wr + 1'b1;
            if (f_pop)
                f_rd <= f_rd + 1'b1;

            // -- slot states --
            if (commit_done)
                frame_ok <= 1'b1;
            pending <= (pending | ((fin && good) ? slot_1h : {RX_SLOTS{1'b0}}))
                       & ~(commit_done ? head_1h : {RX_SLOTS{1'b0}});
            ready   <= (ready | (commit_done ? head_1h : {RX_SLOTS{1'b0}})) & ~release_mask;
        end
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused = &{1'b0, icrc_done, 1'b0};  // fin is the same clock as done
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
