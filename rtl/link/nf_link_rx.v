// SPDX-License-Identifier: Apache-2.0
// Frame receiver: takes bytes from the UART, removes the HDLC stuffing, checks CRC
// and LINK_HDR.len, and writes header + payload (CRC stripped) into the next RX slot
// of adapter memory as little-endian 32-bit words. A slot becomes ready only after
// its last word is written. Bad frames (CRC, length, truncated, oversized, bad escape,
// UART framing error) and good frames that find no free slot are dropped and reported.
`default_nettype none
`include "nf_layout.vh"
module nf_link_rx #(
    parameter integer RX_SLOTS = `NF_PROFILE_SIM_RX_SLOTS,  // receive slots, 1..MAX_SLOTS; slot i at adapter address i * SLOT_BYTES
    parameter integer FIFO_DEPTH = 4  // words waiting for the memory port (a power of two)
) (
    input  wire                   clk,
    input  wire                   rst,
    input  wire                   in_valid,   // byte from the UART
    input  wire [7:0]             in_data,
    input  wire                   in_error,   // UART framing error
    output wire                   in_ready,   // a byte now cannot overflow the write FIFO (the UART does not wait for it)
    input  wire [31:0]            cycle,
    input  wire [RX_SLOTS-1:0]    release_mask,  // firmware is done with these slots
    output reg  [RX_SLOTS-1:0]    ready,         // slot holds a good frame
    input  wire [3:0]             stamp_sel,     // slot whose stamp is read (0..MAX_SLOTS-1)
    output wire [31:0]            stamp,         // cycle slot stamp_sel became ready; 0 past RX_SLOTS
    output reg                    frame_ok,      // pulses
    output reg                    frame_bad,
    output reg                    frame_drop,
    // adapter-memory writes; valid held until ready
    output wire                   wr_valid,
    output wire [31:0]            wr_addr,
    output wire [31:0]            wr_data,
    output wire [3:0]             wr_strb,
    input  wire                   wr_ready
);
    localparam integer HDR     = `NF_LINK_HDR_SIZE;
    localparam integer CRCB    = `NF_LINK_CRC_BYTES;
    localparam integer MAX_RAW = HDR + `NF_LINK_MAX_PAYLOAD + CRCB;  // destuffed bytes incl. CRC
    localparam integer NW      = $clog2(MAX_RAW + 1);
    localparam integer SW      = (RX_SLOTS > 1) ? $clog2(RX_SLOTS) : 1;
    localparam integer FW      = $clog2(FIFO_DEPTH);
    localparam [7:0]   FLAG    = `NF_LINK_FLAG;
    localparam [7:0]   ESC     = `NF_LINK_ESC;
    localparam [7:0]   ESC_XOR = `NF_LINK_ESC_XOR;
    localparam [NW-1:0] MAX_RAW_N = MAX_RAW[NW-1:0];
    localparam [NW-1:0] HDR_N     = HDR[NW-1:0];
    localparam [NW-1:0] CRC_N     = CRCB[NW-1:0];
    localparam [NW-1:0] LEN_LO    = `NF_LINK_HDR_LEN_OFF;
    localparam [NW-1:0] LEN_HI    = `NF_LINK_HDR_LEN_OFF + 1;
    localparam [31:0]  SLOT_BYTES = `NF_LINK_SLOT_BYTES;

    // ---- frame state ------------------------------------------------------------
    reg          in_frame;    // a flag was seen
    reg          escaped;     // last byte was ESC
    reg          broken;      // overflow, FIFO overflow or framing error: frame is bad
    reg          reserved;    // the frame's first byte found the next slot free
    reg [NW-1:0] count;       // destuffed bytes so far (header + payload + CRC)
    // What the verdict and the write FIFO need of count, kept in registers alongside it
    // (set with count at a flag and counted with it), so that the commit and the FIFO's
    // write enable start at flip-flops and not at subtractors and compares of count:
    // that cone was the ULX3S 85F's slowest path.
    reg [NW-1:0] emit_idx;    // count - CRC_N: the byte leaving the delay line
    reg [NW-1:0] payload;     // count - HDR_N - CRC_N: the payload bytes (at the flag)
    reg          count_zero;  // count == 0
    reg          too_long;    // count == MAX_RAW_N
    reg          past_crc;    // count >= CRC_N: a byte leaves the delay line
    reg          past_min;    // count >= HDR_N + CRC_N: long enough for a frame
    reg [31:0]   tail;        // last four destuffed bytes, newest in [31:24]
    reg [15:0]   hdr_len;
    reg [23:0]   word_lo;     // lanes 0..2 of the word being assembled
    reg [SW-1:0] slot;        // slot the next good frame goes to
    reg [RX_SLOTS-1:0] pending;  // good frame accepted, last word not yet written

    // A byte leaves the four-byte delay line once four more have followed: those
    // bytes are header + payload; what is left in the line at the flag is the CRC.
    wire [31:0]   crc_reg;

    // ---- write FIFO ---------------------------------------------------------------
    reg [31:0] f_addr [0:FIFO_DEPTH-1];
    reg [31:0] f_data [0:FIFO_DEPTH-1];
    reg [3:0]  f_strb [0:FIFO_DEPTH-1];
    reg        f_commit [0:FIFO_DEPTH-1];
    reg [SW-1:0] f_slot [0:FIFO_DEPTH-1];
    reg [FW:0] f_rd, f_wr;
    wire       f_empty = f_rd == f_wr;
    wire       f_full  = (f_rd[FW-1:0] == f_wr[FW-1:0]) && (f_rd[FW] != f_wr[FW]);
    wire [FW-1:0] f_head = f_rd[FW-1:0];
    // A commit-only entry (no bytes left over) needs no bus cycle: wstrb 0 is a read.
    wire       head_has_data = f_strb[f_head] != 4'd0;
    assign wr_valid = !f_empty && head_has_data;
    assign wr_addr  = f_addr[f_head];
    assign wr_data  = f_data[f_head];
    assign wr_strb  = f_strb[f_head];
    wire       f_pop = !f_empty && (!head_has_data || wr_ready);
    // A byte pushes at most one word (a full word or the closing flag's commit).
    assign in_ready = !f_full;
    wire [SW-1:0] head_slot = f_slot[f_head];

    // ---- byte classification -----------------------------------------------------
    wire       is_flag   = in_valid && in_data == FLAG;
    wire       is_esc    = in_valid && in_data == ESC && !escaped;
    wire [7:0] data_byte = escaped ? in_data ^ ESC_XOR : in_data;
    wire       take      = in_valid && in_frame && !is_flag && !is_esc && !broken;
    wire       emit      = take && !too_long && past_crc;
    wire [7:0] emit_byte = tail[7:0];
    wire [31:0] slot_base = {{(32 - SW){1'b0}}, slot} * SLOT_BYTES;
    wire [31:0] word_addr = slot_base + {{(32 - NW){1'b0}}, emit_idx[NW-1:2], 2'b00};
    wire       push_word = emit && reserved && emit_idx[1:0] == 2'd3;

    // ---- verdict at the closing flag ---------------------------------------------
    wire       frame_end  = is_flag && in_frame;
    wire       empty      = count_zero && !escaped && !broken;
    wire       good       = !broken && !escaped && past_min &&
                            (crc_reg ^ `NF_LINK_CRC_XOROUT) == tail &&
                            hdr_len == {{(16 - NW){1'b0}}, payload};
    wire       room       = !f_full || f_pop;
    wire       commit_now = frame_end && !empty && good && reserved && room;
    wire [1:0] left_over  = emit_idx[1:0];
    wire [3:0] last_strb  = left_over == 2'd0 ? 4'b0000 : left_over == 2'd1 ? 4'b0001 :
                            left_over == 2'd2 ? 4'b0011 : 4'b0111;
    wire [31:0] last_addr = slot_base + {{(32 - NW){1'b0}}, emit_idx[NW-1:2], 2'b00};
    wire       push = push_word || commit_now;

    nf_crc32 u_crc (
        .clk(clk), .rst(rst), .clear(is_flag), .en(emit), .data(emit_byte), .crc(crc_reg)
    );

    // One stamp is read at a time (the register read): a lookup, not a mux over them all.
    reg [31:0] stamp_r [0:RX_SLOTS-1];
    wire [SW-1:0] stamp_idx = stamp_sel[SW-1:0];
    assign stamp = ({28'd0, stamp_sel} < RX_SLOTS) ? stamp_r[stamp_idx] : 32'd0;

    wire [RX_SLOTS-1:0] slot_onehot = {{(RX_SLOTS - 1){1'b0}}, 1'b1} << slot;
    wire [RX_SLOTS-1:0] head_onehot = {{(RX_SLOTS - 1){1'b0}}, 1'b1} << head_slot;
    wire commit_done = f_pop && f_commit[f_head];

    integer i;
    always @(posedge clk) begin
        if (rst) begin
            in_frame   <= 1'b0;
            escaped    <= 1'b0;
            broken     <= 1'b0;
            reserved   <= 1'b0;
            count      <= {NW{1'b0}};
            emit_idx   <= -CRC_N;
            payload    <= -(HDR_N + CRC_N);
            count_zero <= 1'b1;
            too_long   <= 1'b0;
            past_crc   <= 1'b0;
            past_min   <= 1'b0;
            tail       <= 32'd0;
            hdr_len    <= 16'd0;
            word_lo    <= 24'd0;
            slot       <= {SW{1'b0}};
            pending    <= {RX_SLOTS{1'b0}};
            ready      <= {RX_SLOTS{1'b0}};
            frame_ok   <= 1'b0;
            frame_bad  <= 1'b0;
            frame_drop <= 1'b0;
            f_rd       <= {(FW + 1){1'b0}};
            f_wr       <= {(FW + 1){1'b0}};
            for (i = 0; i < RX_SLOTS; i = i + 1)
                stamp_r[i] <= 32'd0;
        end else begin
            frame_bad  <= 1'b0;
            frame_drop <= 1'b0;
            frame_ok   <= 1'b0;

            // -- bytes in --
            if (is_flag) begin
                if (frame_end && !empty) begin
                    if (!good)
                        frame_bad <= 1'b1;
                    else if (!reserved)
                        frame_drop <= 1'b1;
                    else if (!room)
                        frame_bad <= 1'b1;  // memory port starved: the sender retransmits
                    else
                        slot <= (slot == RX_SLOTS[SW-1:0] - 1'b1) ? {SW{1'b0}} : slot + 1'b1;
                end
                // A closing flag also opens the next frame.
                in_frame   <= 1'b1;
                escaped    <= 1'b0;
                broken     <= 1'b0;
                count      <= {NW{1'b0}};
                emit_idx   <= -CRC_N;
                payload    <= -(HDR_N + CRC_N);
                count_zero <= 1'b1;
                too_long   <= 1'b0;
                past_crc   <= 1'b0;
                past_min   <= 1'b0;
            end else if (in_valid && in_frame && !broken) begin
                if (is_esc) begin
                    escaped <= 1'b1;
                end else begin
                    escaped <= 1'b0;
                    if (too_long) begin
                        broken <= 1'b1;
                    end else begin
                        count      <= count + 1'b1;
                        emit_idx   <= emit_idx + 1'b1;
                        payload    <= payload + 1'b1;
                        count_zero <= 1'b0;
                        too_long   <= count == MAX_RAW_N - 1'b1;
                        past_crc   <= past_crc || count == CRC_N - 1'b1;
                        past_min   <= past_min || count == HDR_N + CRC_N - 1'b1;
                        tail       <= {data_byte, tail[31:8]};
                        if (count_zero)
                            reserved <= !(ready[slot] || pending[slot]);
                    end
                end
            end
            if (in_error && in_frame)
                broken <= 1'b1;

            // -- delayed bytes: header fields and word assembly --
            if (emit) begin
                if (emit_idx == LEN_LO) hdr_len[7:0]  <= emit_byte;
                if (emit_idx == LEN_HI) hdr_len[15:8] <= emit_byte;
                case (emit_idx[1:0])
                    2'd0: word_lo[7:0]   <= emit_byte;
                    2'd1: word_lo[15:8]  <= emit_byte;
                    2'd2: word_lo[23:16] <= emit_byte;
                    default: ;
                endcase
                if (push_word && f_full && !f_pop)
                    broken <= 1'b1;  // no room: the word is lost, so is the frame
            end

            // -- FIFO --
            if (push && (!f_full || f_pop)) begin
                f_addr[f_wr[FW-1:0]]   <= push_word ? word_addr : last_addr;
                f_data[f_wr[FW-1:0]]   <= push_word ? {emit_byte, word_lo} : {8'd0, word_lo};
                f_strb[f_wr[FW-1:0]]   <= push_word ? 4'b1111 : last_strb;
                f_commit[f_wr[FW-1:0]] <= !push_word;
                f_slot[f_wr[FW-1:0]]   <= slot;
                f_wr <= f_wr + 1'b1;
            end
            if (f_pop)
                f_rd <= f_rd + 1'b1;

            // -- slot states --
            if (commit_done) begin
                stamp_r[head_slot] <= cycle;
                frame_ok <= 1'b1;
            end
            pending <= (pending | (commit_now ? slot_onehot : {RX_SLOTS{1'b0}}))
                       & ~(commit_done ? head_onehot : {RX_SLOTS{1'b0}});
            ready   <= (ready | (commit_done ? head_onehot : {RX_SLOTS{1'b0}})) & ~release_mask;
        end
    end
endmodule
`default_nettype wire
