// SPDX-License-Identifier: Apache-2.0
// Asynchronous store-and-forward frame FIFO of GMII-style bytes between a PHY's clock and
// the system clock (either way round). The write side pushes {er, data} while w_dv is high
// on its w_ce clocks and commits the frame when w_dv is low on a w_ce clock; the read side
// starts a frame only once it is committed, then emits one byte with r_dv = 1 on each r_en
// clock up to its last, then holds r_dv = 0 for at least IFG r_en clocks. A frame that does
// not fit (the FIFO full mid-frame) is dropped whole and pulses w_drop (and r_drop later).
// w_room tells the writer that ROOM_MARGIN more w_ce clocks cannot fill the FIFO: a writer
// that moves w_ce only while it is high pauses mid-frame instead of dropping the frame.
//
// Clock-domain crossings (each a gray-coded counter that moves by at most one per clock of
// its own domain, through two flip-flops of the other domain):
// - CDC "fifo frames": the committed-frame count, write clock -> read clock;
// - CDC "fifo free": the read pointer, read clock -> write clock;
// - CDC "fifo drop": a toggle per dropped frame, write clock -> read clock (two drops
//   within a few read clocks may show as one r_drop pulse).
// The buffer itself is a dual-clock block RAM: an entry read ahead is used only if the
// committed count that covers it had crossed when it was read, and an entry is written
// only after the read pointer past it (entries emitted, not merely read ahead) has.
`default_nettype none
module nf_phy_fifo #(
    parameter integer DEPTH = 2048,  // entries (bytes), a power of two: a longest frame and its preamble fit
    parameter integer IFG   = 12     // r_en clocks with r_dv low after each frame
) (
    // write side
    input  wire       wclk,
    input  wire       wrst,         // synchronous to wclk
    input  wire       w_ce,         // a byte time: w_dv/w_data/w_er are sampled
    input  wire       w_dv,
    input  wire [7:0] w_data,
    input  wire       w_er,
    output reg        w_drop,       // one wclk pulse per frame dropped for want of room
    output reg        w_room,       // registered: more than ROOM_MARGIN entries free (as the write side sees the read pointer)
    // read side
    input  wire       rclk,
    input  wire       rrst,         // synchronous to rclk
    input  wire       r_en,         // a byte time on the read side: the outputs move only then
    output reg        r_dv,
    output reg  [7:0] r_data,
    output reg        r_er,
    output reg        r_drop        // one rclk pulse per w_drop (see the CDC note above)
);
    localparam integer AW = $clog2(DEPTH);
    // w_room is a register over wptr a clock old (the read pointer older still, which only
    // understates the room), and each w_ce clock writes at most one entry: a w_ce while it
    // is high always finds room (a margin of 1 would do).
    localparam integer ROOM_MARGIN = 4;

    generate
        if (DEPTH < 16 || (1 << AW) != DEPTH) begin : g_bad_depth
            $error("nf_phy_fifo: DEPTH must be a power of two >= 16");
        end
        if (IFG < 0 || IFG > 255) begin : g_bad_ifg
            $error("nf_phy_fifo: IFG must be 0..255");
        end
    endgenerate

    function automatic [AW:0] to_gray(input [AW:0] b);
        to_gray = b ^ (b >> 1);
    endfunction
    function automatic [AW:0] from_gray(input [AW:0] g);
        integer i;
        begin
            from_gray[AW] = g[AW];
            for (i = AW - 1; i >= 0; i = i - 1)
                from_gray[i] = from_gray[i + 1] ^ g[i];
        end
    endfunction

    // Entry: {last, er, data}. The last byte of a frame is known only when w_dv falls, so
    // each byte waits in `hold` until the next one (or the end) says whether it is last.
    reg [9:0] mem [0:DEPTH-1];

    // ---- write side ----
    reg  [AW:0] wptr;        // next entry to write
    reg  [AW:0] wstart;      // first entry of the frame being written
    reg  [AW:0] wframes;     // frames committed (binary)
    reg  [AW:0] wframes_g;   // CDC "fifo frames": source register
    reg         in_frame;    // a frame is being written
    reg         hold_v;      // hold has a byte
    reg  [8:0]  hold;        // {er, data}
    reg         over;        // this frame ran out of room: drop it at its end
    reg         drop_t;      // CDC "fifo drop": source toggle
    (* ASYNC_REG = "TRUE" *) reg [AW:0] rptr_s1, rptr_s2;  // CDC "fifo free": two flops in wclk
    // The decoded read pointer is a clock older than rptr_s2: it only understates the free
    // space, and keeps the gray decode apart from the compare in the same clock.
    reg  [AW:0] rptr_w;
    wire [AW:0] used   = wptr - rptr_w;
    wire        full   = (wptr ^ rptr_w) == {1'b1, {AW{1'b0}}};

    wire        push_byte = w_ce && w_dv;
    wire        end_frame = w_ce && !w_dv && in_frame;
    // Write hold into the buffer: when a new byte replaces it, or as the last at the end.
    wire        wr        = hold_v && (push_byte || end_frame) && !over && !full;

    always @(posedge wclk) begin
        if (wr)
            mem[wptr[AW-1:0]] <= {end_frame, hold};
    end

    always @(posedge wclk) begin
        rptr_s1 <= rptr_g;
        rptr_s2 <= rptr_s1;
        rptr_w  <= from_gray(rptr_s2);
        w_drop  <= 1'b0;
        w_room  <= !wrst && used < DEPTH[AW:0] - ROOM_MARGIN[AW:0];
        if (wrst) begin
            wptr      <= {(AW + 1){1'b0}};
            wstart    <= {(AW + 1){1'b0}};
            wframes   <= {(AW + 1){1'b0}};
            wframes_g <= {(AW + 1){1'b0}};
            in_frame  <= 1'b0;
            hold_v    <= 1'b0;
            hold      <= 9'd0;
            over      <= 1'b0;
            drop_t    <= 1'b0;
            rptr_s1   <= {(AW + 1){1'b0}};
            rptr_s2   <= {(AW + 1){1'b0}};
            rptr_w    <= {(AW + 1){1'b0}};
        end else begin
            if (wr)
                wptr <= wptr + 1'b1;
            if (hold_v && (push_byte || end_frame) && !over && full)
                over <= 1'b1;
            if (push_byte) begin
                hold     <= {w_er, w_data};
                hold_v   <= 1'b1;
                in_frame <= 1'b1;
            end
            if (end_frame) begin
                in_frame <= 1'b0;
                hold_v   <= 1'b0;
                over     <= 1'b0;
                if (over || full) begin
                    // Not all of it fits: forget its entries, as if it never came.
                    wptr   <= wstart;
                    w_drop <= 1'b1;
                    drop_t <= ~drop_t;
                end else begin
                    wstart    <= wptr + 1'b1;
                    wframes   <= wframes + 1'b1;
                    wframes_g <= to_gray(wframes + 1'b1);
                end
            end
        end
    end

    // ---- read side ----
    // The reader fetches entries ahead into a skid buffer: the RAM's read address is a
    // register (fptr), its output only lands in a register (p), and every decision reads
    // registers, so neither the RAM's output nor its address sits on a long path.
    // Fetching runs ahead over frame ends whose last flag is still in flight; an entry whose
    // frame was not committed when it was fetched is squashed at p with all behind it, and
    // fetching resumes from it.
    reg  [AW:0] rptr;        // next entry to emit: entries before it are consumed
    reg  [AW:0] rptr_g;      // CDC "fifo free": source register
    reg  [AW:0] fptr;        // next entry to fetch
    reg  [AW:0] fdone;       // frames whose last entry has passed p into the skid buffer
    reg  [AW:0] wframes_r;   // the committed count, one clock after its synchronizer
    reg  [AW:0] wframes_d1, wframes_d2;  // wframes_r as it was when the entry now at q, p was fetched
    reg  [9:0]  q;           // mem[fptr] as of the last clock
    reg         q_v;         // q holds a fetched entry
    reg  [AW:0] q_a;         // its address
    reg  [9:0]  p;           // q a clock later
    reg         p_v;
    reg  [AW:0] p_a;
    reg  [9:0]  sk0, sk1, sk2, sk3;  // skid buffer, a ring of four
    reg  [2:0]  sk_wp, sk_rp;        // its write and read positions (one wrap bit)
    reg         r_in;        // a frame is being read
    reg  [7:0]  gap;         // r_en clocks of idle still owed
    (* ASYNC_REG = "TRUE" *) reg [AW:0] wframes_s1, wframes_s2;  // CDC "fifo frames": two flops in rclk
    (* ASYNC_REG = "TRUE" *) reg        drop_s1, drop_s2;        // CDC "fifo drop": two flops in rclk
    reg         drop_s3;

    wire [2:0]  sk_n   = sk_wp - sk_rp;
    wire        head_v = sk_n != 3'd0;
    reg  [9:0]  head;
    always @(*) begin
        case (sk_rp[1:0])
            2'd0:    head = sk0;
            2'd1:    head = sk1;
            2'd2:    head = sk2;
            default: head = sk3;
        endcase
    end
    // The entry at p belongs to frame number fdone; it is good only if that frame was
    // committed when it was fetched (its data is written then, and stays until consumed).
    wire        squash = p_v && fdone == wframes_d2;
    wire        push   = p_v && !squash;
    // Fetched entries not yet consumed never exceed the skid buffer's four.
    wire [2:0]  occ    = sk_n + {2'b00, q_v} + {2'b00, p_v};
    wire        fetch  = !squash && fdone != wframes_r && occ < 3'd4;
    // A frame starts only once its first entry is in the skid buffer; the rest follow it
    // one per clock, so a started frame never waits for the RAM.
    wire        emit   = r_en && head_v && (r_in || gap == 8'd0);
    wire [AW:0] rptr_next = emit ? rptr + 1'b1 : rptr;
    wire [AW:0] fptr_inc  = fptr + 1'b1;

    always @(posedge rclk)
        q <= mem[fptr[AW-1:0]];

    always @(posedge rclk) begin
        p   <= q;
        p_a <= q_a;
        q_a <= fptr;
        if (push) begin
            case (sk_wp[1:0])
                2'd0:    sk0 <= p;
                2'd1:    sk1 <= p;
                2'd2:    sk2 <= p;
                default: sk3 <= p;
            endcase
        end
    end

    always @(posedge rclk) begin
        wframes_s1 <= wframes_g;
        wframes_s2 <= wframes_s1;
        drop_s1    <= drop_t;
        drop_s2    <= drop_s1;
        if (rrst) begin
            rptr       <= {(AW + 1){1'b0}};
            rptr_g     <= {(AW + 1){1'b0}};
            fptr       <= {(AW + 1){1'b0}};
            fdone      <= {(AW + 1){1'b0}};
            wframes_r  <= {(AW + 1){1'b0}};
            wframes_d1 <= {(AW + 1){1'b0}};
            wframes_d2 <= {(AW + 1){1'b0}};
            wframes_s1 <= {(AW + 1){1'b0}};
            wframes_s2 <= {(AW + 1){1'b0}};
            q_v        <= 1'b0;
            p_v        <= 1'b0;
            sk_wp      <= 3'd0;
            sk_rp      <= 3'd0;
            drop_s1    <= 1'b0;
            drop_s2    <= 1'b0;
            drop_s3    <= 1'b0;
            r_in       <= 1'b0;
            gap        <= 8'd0;
            r_dv       <= 1'b0;
            r_data     <= 8'd0;
            r_er       <= 1'b0;
            r_drop     <= 1'b0;
        end else begin
            wframes_r  <= from_gray(wframes_s2);
            wframes_d1 <= wframes_r;
            wframes_d2 <= wframes_d1;
            drop_s3    <= drop_s2;
            r_drop     <= drop_s2 ^ drop_s3;
            // fetch
            // fptr + 1 comes from the register alone, beside the squash compare.
            fptr <= squash ? p_a : fetch ? fptr_inc : fptr;
            q_v  <= fetch;
            p_v  <= q_v && !squash;
            if (push) begin
                sk_wp <= sk_wp + 1'b1;
                if (p[9])
                    fdone <= fdone + 1'b1;
            end
            // emit
            rptr   <= rptr_next;
            rptr_g <= to_gray(rptr_next);
            if (emit) begin
                sk_rp  <= sk_rp + 1'b1;
                r_dv   <= 1'b1;
                r_data <= head[7:0];
                r_er   <= head[8];
                r_in   <= !head[9];
                if (head[9])
                    gap <= IFG[7:0];
            end else if (r_en) begin
                r_dv   <= 1'b0;
                r_er   <= 1'b0;
                if (gap != 8'd0)
                    gap <= gap - 1'b1;
            end
        end
    end
endmodule
`default_nettype wire
