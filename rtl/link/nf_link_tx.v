// SPDX-License-Identifier: Apache-2.0
// Frame transmitter: sends queued TX slots as FLAG, stuffed(header + payload + CRC),
// FLAG, reading the slot's words from adapter memory, and pure ACK frames built in
// hardware (LINK_HDR type ACK, seq 0, ack N, len 0). A pending ACK goes out before
// the next queued frame. Invalid posts (slot out of range or busy, length out of
// range, queue full) are ignored and reported by post_rejected.
`default_nettype none
`include "nf_layout.vh"
module nf_link_tx #(
    parameter integer RX_SLOTS = `NF_PROFILE_SIM_RX_SLOTS,  // receive slots: the TX slots follow them in adapter memory
    parameter integer TX_SLOTS = `NF_PROFILE_SIM_TX_SLOTS  // transmit slots, a power of two, 1..MAX_SLOTS (also the send queue depth)
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                post_valid,   // one-cycle pulse
    input  wire [3:0]          post_slot,
    input  wire [15:0]         post_len,     // header + payload bytes
    output reg                 post_rejected,
    input  wire                ack_valid,    // one-cycle pulse: send a pure ACK
    input  wire [7:0]          ack_num,
    output reg  [TX_SLOTS-1:0] busy,         // queued or being sent
    output reg                 frame_sent,   // pulse when the closing flag is handed to the UART
    // wire bytes to the UART
    output reg                 out_valid,
    output reg  [7:0]          out_data,
    input  wire                out_ready,
    // adapter-memory reads; valid held until ready
    output reg                 rd_valid,
    output reg  [31:0]         rd_addr,
    input  wire                rd_ready,
    input  wire [31:0]         rd_data
);
    localparam integer HDR     = `NF_LINK_HDR_SIZE;
    localparam integer MAX_RAW = HDR + `NF_LINK_MAX_PAYLOAD;
    localparam integer LW      = $clog2(MAX_RAW + 1);
    localparam integer SW      = (TX_SLOTS > 1) ? $clog2(TX_SLOTS) : 1;
    localparam integer QW      = $clog2(TX_SLOTS) + 1;   // queue pointers with wrap bit
    localparam [7:0]   FLAG    = `NF_LINK_FLAG;
    localparam [7:0]   ESC     = `NF_LINK_ESC;
    localparam [7:0]   ESC_XOR = `NF_LINK_ESC_XOR;
    localparam [31:0]  SLOT_BYTES = `NF_LINK_SLOT_BYTES;
    localparam [LW-1:0] HDR_N     = HDR[LW-1:0];
    localparam [LW-1:0] TYPE_OFF  = `NF_LINK_HDR_TYPE_OFF;
    localparam [LW-1:0] ACK_OFF   = `NF_LINK_HDR_ACK_OFF;
    localparam [7:0]   TYPE_ACK   = `NF_LINK_TYPE_ACK;

    localparam [2:0] S_IDLE = 3'd0, S_FETCH = 3'd1, S_BODY = 3'd2, S_CRC = 3'd3,
                     S_CLOSE = 3'd4;

    // ---- post queue ---------------------------------------------------------------
    reg [SW-1:0] q_slot [0:TX_SLOTS-1];
    reg [LW-1:0] q_len  [0:TX_SLOTS-1];
    reg [QW-1:0] q_rd, q_wr;
    wire [QW-1:0] q_count = q_wr - q_rd;
    wire q_empty = q_count == {QW{1'b0}};
    wire q_full  = q_count == TX_SLOTS[QW-1:0];
    // TX_SLOTS is a power of two (every profile's is): pointers wrap by themselves.
    wire [SW-1:0] q_head_idx = (TX_SLOTS > 1) ? q_rd[SW-1:0] : {SW{1'b0}};
    wire [SW-1:0] q_tail_idx = (TX_SLOTS > 1) ? q_wr[SW-1:0] : {SW{1'b0}};

    wire slot_ok = {28'd0, post_slot} < TX_SLOTS;
    wire [SW-1:0] post_idx = post_slot[SW-1:0];
    wire len_ok  = {16'd0, post_len} >= HDR && {16'd0, post_len} <= MAX_RAW;
    wire accept  = post_valid && slot_ok && len_ok && !q_full && !busy[post_idx];

    // ---- frame state --------------------------------------------------------------
    reg [2:0]    state;
    reg          is_ack;      // the frame is a hardware ACK
    reg [7:0]    ack_val;
    reg          ack_pending;
    reg [7:0]    ack_next;
    reg [SW-1:0] cur_slot;
    reg [LW-1:0] cur_len;
    reg [LW-1:0] idx;         // next raw byte
    reg [31:0]   word;
    reg [1:0]    crc_idx;
    reg          esc_pending; // ESC sent, escaped byte still to send
    reg [7:0]    esc_byte;

    wire [31:0]  crc_reg;
    wire [31:0]  crc_out = crc_reg ^ `NF_LINK_CRC_XOROUT;
    wire [7:0]   word_byte = word[{idx[1:0], 3'b000} +: 8];
    wire [7:0]   ack_byte  = idx == TYPE_OFF ? TYPE_ACK : idx == ACK_OFF ? ack_val : 8'd0;
    wire [7:0]   body_byte = is_ack ? ack_byte : word_byte;
    wire [7:0]   crc_byte  = crc_out[{crc_idx, 3'b000} +: 8];
    // The FSM moves only when the output register is free.
    wire         can_emit  = (!out_valid || out_ready) && !esc_pending;
    wire         body_go   = state == S_BODY && can_emit;
    // Header, payload and CRC bytes all go out through the same stuffing step.
    wire [7:0]   raw_byte  = state == S_CRC ? crc_byte : body_byte;
    wire         needs_esc = raw_byte == FLAG || raw_byte == ESC;
    wire [31:0]  slot_base = ({{(32 - SW){1'b0}}, cur_slot} + RX_SLOTS) * SLOT_BYTES;

    nf_crc32 u_crc (
        .clk(clk), .rst(rst), .clear(state == S_IDLE), .en(body_go), .data(body_byte), .crc(crc_reg)
    );

    always @(posedge clk) begin
        if (rst) begin
            q_rd          <= {QW{1'b0}};
            q_wr          <= {QW{1'b0}};
            busy          <= {TX_SLOTS{1'b0}};
            post_rejected <= 1'b0;
            frame_sent    <= 1'b0;
            state         <= S_IDLE;
            is_ack        <= 1'b0;
            ack_val       <= 8'd0;
            ack_pending   <= 1'b0;
            ack_next      <= 8'd0;
            cur_slot      <= {SW{1'b0}};
            cur_len       <= {LW{1'b0}};
            idx           <= {LW{1'b0}};
            word          <= 32'd0;
            crc_idx       <= 2'd0;
            esc_pending   <= 1'b0;
            esc_byte      <= 8'd0;
            out_valid     <= 1'b0;
            out_data      <= 8'd0;
            rd_valid      <= 1'b0;
            rd_addr       <= 32'd0;
        end else begin
            post_rejected <= post_valid && !accept;
            frame_sent    <= 1'b0;
            if (out_valid && out_ready)
                out_valid <= 1'b0;

            if (accept) begin
                q_slot[q_tail_idx] <= post_idx;
                q_len[q_tail_idx]  <= post_len[LW-1:0];
                q_wr <= q_wr + 1'b1;
            end
            if (ack_valid) begin
                ack_pending <= 1'b1;
                ack_next    <= ack_num;  // latest value wins
            end

            if (esc_pending && (!out_valid || out_ready)) begin
                out_valid   <= 1'b1;
                out_data    <= esc_byte;
                esc_pending <= 1'b0;
            end

            case (state)
                S_IDLE: if (can_emit && (ack_pending || ack_valid || !q_empty)) begin
                    out_valid <= 1'b1;
                    out_data  <= FLAG;
                    idx       <= {LW{1'b0}};
                    crc_idx   <= 2'd0;
                    if (ack_pending || ack_valid) begin
                        is_ack      <= 1'b1;
                        ack_val     <= ack_valid ? ack_num : ack_next;
                        ack_pending <= 1'b0;
                        cur_len     <= HDR_N;
                        state       <= S_BODY;
                    end else begin
                        is_ack   <= 1'b0;
                        cur_slot <= q_slot[q_head_idx];
                        cur_len  <= q_len[q_head_idx];
                        q_rd     <= q_rd + 1'b1;
                        state    <= S_FETCH;
                    end
                end
                S_FETCH: begin
                    // One word per four bytes, fetched while the UART still shifts.
                    if (!rd_valid) begin
                        rd_valid <= 1'b1;
                        rd_addr  <= slot_base + {{(32 - LW){1'b0}}, idx[LW-1:2], 2'b00};
                    end else if (rd_ready) begin
                        rd_valid <= 1'b0;
                        word     <= rd_data;
                        state    <= S_BODY;
                    end
                end
                S_BODY, S_CRC: if (can_emit) begin
                    out_valid <= 1'b1;
                    if (needs_esc) begin
                        out_data    <= ESC;
                        esc_pending <= 1'b1;
                        esc_byte    <= raw_byte ^ ESC_XOR;
                    end else begin
                        out_data <= raw_byte;
                    end
                    if (state == S_BODY) begin
                        idx <= idx + 1'b1;
                        if (idx + 1'b1 == cur_len)
                            state <= S_CRC;
                        else if (!is_ack && idx[1:0] == 2'd3)
                            state <= S_FETCH;
                    end else begin
                        crc_idx <= crc_idx + 1'b1;
                        if (crc_idx == 2'd3)
                            state <= S_CLOSE;
                    end
                end
                S_CLOSE: if (can_emit) begin
                    out_valid  <= 1'b1;
                    out_data   <= FLAG;
                    frame_sent <= 1'b1;
                    state      <= S_IDLE;
                end
                default: state <= S_IDLE;
            endcase

            // Busy: set by an accepted post, cleared when its frame is done.
            busy <= (busy | (accept ? ({{(TX_SLOTS - 1){1'b0}}, 1'b1} << post_idx) : {TX_SLOTS{1'b0}}))
                    & ~((state == S_CLOSE && can_emit && !is_ack) ?
                        ({{(TX_SLOTS - 1){1'b0}}, 1'b1} << cur_slot) : {TX_SLOTS{1'b0}});
        end
    end
endmodule
`default_nettype wire
