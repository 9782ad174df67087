// SPDX-License-Identifier: Apache-2.0
// Adapter memory: MEM_BYTES of 64-bit words with one registered read port and one
// byte-enable write port (simple dual port, maps to ECP5 DP16KD block RAM), shared by
// the engine (loader, DMA: 64-bit) and the 32-bit system port (CPU window, link).
//
// Arbitration: a system-port request takes the port it needs (read or write) for one
// cycle, the cycle after it is first seen, and the engine's request on that port is not
// granted in that cycle. A system read therefore completes in 4 clocks (ready 4 cycles
// after valid), a write in 1 (it needs no data back: answered in the clock it owns the
// write port, it lands in the next, before any later access can read its word); each
// costs the engine at most one port cycle. A bus master can issue at most one read every
// 5 clocks and one write every 2, so the engine keeps at least half of a port, and all
// of it on a long DMA with no system traffic.
// Slot heads: the first HEAD_BYTES of each of the first HEAD_SLOTS link slots (the RX
// slots: a frame's link header, message header and work request) are kept a second time
// in a small LUT RAM, written with every write that lands in memory (system or engine),
// so a system read there is answered in 1 clock, from that copy, and costs the engine no
// port cycle. The firmware reads a work request's fields one word at a time from its RX
// slot, where a port read would take 4 clocks each. A second read of the copy (peek_*), without
// a clock and outside the port, lets the SoC answer its CPU's head read in the clock it
// sees it (nf_soc).
// Reads use the block RAM's output register: the data of a read granted in cycle t is in
// eng_rd_data (eng_rd_valid) in cycle t+2, so the RAM's slow clock-to-output only drives
// a register next to it, and the long routes to the consumers start from that register.
`default_nettype none
`include "nf_layout.vh"
module nf_adapter_mem #(
    parameter integer MEM_BYTES  = `NF_PROFILE_SIM_MEM_BYTES,  // adapter memory, bytes (a multiple of the 8-byte port)
    parameter integer HEAD_SLOTS = `NF_PROFILE_SIM_RX_SLOTS,  // link slots (from address 0, SLOT_BYTES each) whose heads are copied; 0: none
    parameter integer HEAD_BYTES = `NF_ENGINE_HW_RX_HEAD_BYTES,  // bytes copied at the start of each such slot, a power of two, 8..SLOT_BYTES
    parameter integer WAW        = $clog2(MEM_BYTES / `NF_ENGINE_HW_MEM_PORT_BYTES)  // word address bits
) (
    input  wire        clk,
    input  wire        rst,
    // system port (PicoRV32 native handshake), byte address, word aligned
    input  wire        sys_valid,
    input  wire [31:0] sys_addr,
    input  wire [31:0] sys_wdata,
    input  wire [3:0]  sys_wstrb,
    output wire        sys_ready,
    output wire [31:0] sys_rdata,
    // sys_addr again for a read of a copied head, from a path that need not pass the
    // system port's arbiter: it must equal sys_addr in any cycle that asks such a read
    // (checked in simulation). The head copy is read at it, so the arbiter's choice of
    // master stays off the LUT RAM's address (a slowest path of the ULX3S 85F).
    input  wire [31:0] sys_head_addr,
    // the heads' copy read without a clock: peek_head says whether byte address peek_addr
    // is in a copied head, peek_rdata is its word there (with a landing write's bytes);
    // only writes that landed, or land in this clock, are in it (see the system port)
    input  wire [31:0] peek_addr,
    output wire        peek_head,
    output wire [31:0] peek_rdata,
    // engine read port: request granted in cycle t -> data in rd_data in cycle t+2 (rd_valid)
    input  wire           eng_rd_req,
    input  wire [WAW-1:0] eng_rd_addr,
    output wire           eng_rd_gnt,
    output reg            eng_rd_valid,
    output wire [63:0]    eng_rd_data,
    // engine write port: written at the end of a cycle in which it is granted
    input  wire           eng_wr_req,
    input  wire [WAW-1:0] eng_wr_addr,
    input  wire [63:0]    eng_wr_data,
    input  wire [7:0]     eng_wr_be,
    output wire           eng_wr_gnt
);
    localparam integer WORDS    = MEM_BYTES / `NF_ENGINE_HW_MEM_PORT_BYTES;
    localparam integer LANES    = `NF_ENGINE_HW_MEM_PORT_BYTES;
    localparam integer WORD_LSB = $clog2(LANES);     // byte-in-word bits of an address
    localparam integer SLOT_BYTES = `NF_LINK_SLOT_BYTES;
    localparam integer SLOT_LSB   = $clog2(SLOT_BYTES);  // a slot's number starts at this address bit
    localparam integer HEAD_LSB   = $clog2(HEAD_BYTES);  // bits of an offset inside a head
    localparam integer HSW        = HEAD_SLOTS > 1 ? $clog2(HEAD_SLOTS) : 1;  // slot-number bits of a head index
    localparam integer HOW        = HEAD_LSB - WORD_LSB; // word-in-head bits of a head index
    localparam integer HIW        = HSW + HOW;           // head index bits: {slot, word in head}
    generate if (HEAD_SLOTS < 0 || HEAD_SLOTS * SLOT_BYTES > MEM_BYTES || HEAD_BYTES < LANES ||
                 HEAD_BYTES > SLOT_BYTES || HEAD_BYTES != (1 << HEAD_LSB)) begin : g_bad_head
        // Elaboration fails here: the copied heads must be slots inside memory, HEAD_BYTES a power of two.
        nf_adapter_mem_bad_head_parameters u_fail ();
    end endgenerate
    // A byte address is in a copied head: its slot is one of the first HEAD_SLOTS and its
    // offset in the slot below HEAD_BYTES. The slot number is compared in two parts, its
    // HSW low bits with HEAD_SLOTS and the bits above with zero: a compare of the whole
    // slot number becomes a carry chain, on the system port's path into sq_valid.
    localparam [HSW:0] HEAD_SLOTS_HSW = HEAD_SLOTS[HSW:0];
    /* verilator lint_off UNUSEDSIGNAL */
    function in_head(input [31:0] a);
        in_head = HEAD_SLOTS != 0 && a[31:SLOT_LSB+HSW] == 0 && {1'b0, a[SLOT_LSB +: HSW]} < HEAD_SLOTS_HSW &&
                  a[SLOT_LSB-1:HEAD_LSB] == 0;
    endfunction
    function [HIW-1:0] head_index(input [31:0] a);  // its word in the copy
        head_index = {a[SLOT_LSB +: HSW], a[WORD_LSB +: HOW]};
    endfunction
    /* verilator lint_on UNUSEDSIGNAL */
    localparam integer PAD = 32 - WAW - WORD_LSB;  // a word address as a 32-bit byte address: {PAD zeros, word, WORD_LSB zeros}

    // Read during write: no consumed read ever reads the word whose write lands in the
    // same clock (rule below), so Yosys is told not to add its collision logic (a compare of
    // the read address with the write address and a bypass mux in front of the output
    // register): that logic sat on the engine's read-request path into every block RAM.
    //  - an engine read (granted: eng_rd_gnt) never reads a word whose write lands in that
    //    clock: the engine writes a word one clock after its grant and the loader and the
    //    DMA read a word only well after their own writes of it (checked below in
    //    simulation, through the engine, SoC and system testbenches);
    //  - a system read that meets a landing write of its word (the CPU reads a word while
    //    the engine writes it: a race the CPU may lose or win) gets the new bytes: the
    //    collision is seen from registers (sq_word, wr_addr) and the written bytes are
    //    taken from the write's registers, off the engine's paths.
    //  Reads that nobody consumes (the RAM reads every clock) may collide freely.
    (* no_rw_check *)
    reg [63:0] mem [0:WORDS-1];
    reg [63:0] rd_q;     // RAM read, one clock after its address
    reg [63:0] rd_q2;    // the RAM's output register: the read two clocks after its address

    // A system request is taken once, in the first cycle it is seen, into a register;
    // it uses the RAM in the next cycle (ahead of the engine), and its answer is
    // registered again: ready follows valid by 4 clocks. The registers keep the CPU's
    // and the link's address decoding out of the paths into the block RAMs (which are
    // spread over the whole chip), and the RAM's slow clock-to-output out of the CPU.
    reg        sys_busy;                 // a request taken and not yet answered
    reg        sq_valid, sq_rd, sq_hi, sq_in_mem;
    reg [WAW-1:0] sq_word;
    reg [31:0] sq_wdata;
    reg [3:0]  sq_wstrb;
    wire sys_new = sys_valid && !sys_busy;
    // A read of a copied head: answered from the copy in the next clock (see the top).
    wire sys_head_rd = sys_new && sys_wstrb == 4'd0 && in_head(sys_addr);
    wire sq_read  = sq_valid && sq_rd;
    wire sq_write = sq_valid && !sq_rd;
    // sq_read and sq_write again, each from a flip-flop of its own that drives only the
    // engine's grants: sq_valid steers the address of every block RAM and sits where
    // they are, spread over the chip; these sit by the loader and the DMA, whose next
    // request follows their grant within the clock (the slowest path on the 85F).
    reg  sq_read_claim, sq_write_claim;
    always @(posedge clk) begin
        if (rst) begin
            sq_read_claim  <= 1'b0;
            sq_write_claim <= 1'b0;
        end else begin
            sq_read_claim  <= sys_new && sys_wstrb == 4'd0 && !sys_head_rd;
            sq_write_claim <= sys_new && sys_wstrb != 4'd0;
        end
    end

    assign eng_rd_gnt = eng_rd_req && !sq_read_claim;
    assign eng_wr_gnt = eng_wr_req && !sq_write_claim;

    // The RAM reads every clock (no read enable): each consumer samples rd_q2 exactly two
    // clocks after its read (sb_valid, eng_rd_valid), so it never has to hold, and no
    // enable logic sits between the requesters and the block RAMs spread over the chip.
    wire [WAW-1:0] rd_addr = sq_read ? sq_word : eng_rd_addr;
    // The write port is arbitrated as the read port is, and the granted write (the
    // system's or the engine's) is registered: it lands one clock later, straight from
    // these registers, so the requesters' logic stays out of the paths into the block
    // RAMs. No read can miss it: a system access completes after the write has landed,
    // and an engine read never follows the engine's own write of the same word within
    // fewer clocks than a DMA chunk's checks take.
    reg            wr_en;
    reg [WAW-1:0]  wr_addr;
    reg [63:0]     wr_data;
    reg [7:0]      wr_be;
    reg            wr_head;   // the write lands in a copied head too
    reg [HIW-1:0]  wr_hidx;   // its word there
    // A system write answered in the clock before a reset still lands (its master saw it
    // done): under reset only that write, never an engine grant; 0 from the second clock.
    always @(posedge clk) begin
        if (rst) wr_en <= sq_write && sq_in_mem;
        else     wr_en <= (sq_write && sq_in_mem) || eng_wr_gnt;
        wr_addr <= sq_write ? sq_word : eng_wr_addr;
        wr_head <= in_head({{PAD{1'b0}}, sq_write ? sq_word : eng_wr_addr, {WORD_LSB{1'b0}}});
        wr_hidx <= head_index({{PAD{1'b0}}, sq_write ? sq_word : eng_wr_addr, {WORD_LSB{1'b0}}});
        wr_data <= sq_write ? {sq_wdata, sq_wdata} : eng_wr_data;
        wr_be   <= sq_write ? (sq_hi ? {sq_wstrb, 4'd0} : {4'd0, sq_wstrb}) : eng_wr_be;
    end

    integer lane;
    always @(posedge clk) begin
        if (wr_en) begin
            for (lane = 0; lane < LANES; lane = lane + 1)
                if (wr_be[lane]) mem[wr_addr][8*lane +: 8] <= wr_data[8*lane +: 8];
        end
        rd_q  <= mem[rd_addr];
        rd_q2 <= rd_q;
    end

    // The heads' copy (LUT RAM: written as the memory is, read without a clock). A read
    // meeting a landing write of its word gets the new bytes, as a read of the memory does.
    reg [63:0] head [0:(1 << HIW)-1];
    integer hlane;
    always @(posedge clk) begin
        if (wr_en && wr_head) begin
            for (hlane = 0; hlane < LANES; hlane = hlane + 1)
                if (wr_be[hlane]) head[wr_hidx][8*hlane +: 8] <= wr_data[8*hlane +: 8];
        end
    end
    // Its two reads, each meeting a landing write of its word with the new bytes: the
    // system port's (head_word, at sys_addr) and the peek (peek_word, at peek_addr).
    wire [HIW-1:0] sys_hidx  = head_index(sys_head_addr);
    wire [HIW-1:0] peek_hidx = head_index(peek_addr);
    wire           head_col  = wr_en && wr_head && wr_hidx == sys_hidx;
    wire           peek_col  = wr_en && wr_head && wr_hidx == peek_hidx;
    reg  [63:0]    head_word, peek_word;
    always @(*) begin
        for (hlane = 0; hlane < LANES; hlane = hlane + 1) begin
            head_word[8*hlane +: 8] = (head_col && wr_be[hlane]) ? wr_data[8*hlane +: 8] : head[sys_hidx][8*hlane +: 8];
            peek_word[8*hlane +: 8] = (peek_col && wr_be[hlane]) ? wr_data[8*hlane +: 8] : head[peek_hidx][8*hlane +: 8];
        end
    end
    assign peek_head  = in_head(peek_addr);
    assign peek_rdata = peek_addr[2] ? peek_word[63:32] : peek_word[31:0];

    // A system read meeting a landing write of its word (see the rule above): the write's
    // bytes, kept until the read's data is picked (sb_valid, two clocks on).
    wire       sys_col = sq_read && wr_en && sq_word == wr_addr;
    reg        col_a, col_b;
    reg [63:0] col_data_a, col_data_b;
    reg [7:0]  col_be_a, col_be_b;
    always @(posedge clk) begin
        col_a      <= sys_col;
        col_b      <= col_a;
        col_data_a <= wr_data;
        col_data_b <= col_data_a;
        col_be_a   <= wr_be;
        col_be_b   <= col_be_a;
    end
    reg [63:0] sys_word;  // the system read's word: the RAM's, with the colliding write's bytes
    integer    slane;
    always @(*) begin
        for (slane = 0; slane < LANES; slane = slane + 1)
            sys_word[8*slane +: 8] = (col_b && col_be_b[slane]) ? col_data_b[8*slane +: 8] : rd_q2[8*slane +: 8];
    end

`ifndef SYNTHESIS
    // The rule above, checked in every simulation: a granted engine read never meets a
    // landing write of its word (the hardware's data would be undefined then).
    always @(posedge clk) begin
        if (!rst && eng_rd_gnt && wr_en && eng_rd_addr == wr_addr) begin
            $display("nf_adapter_mem: ERROR: engine read of word %0d in the clock its write lands", eng_rd_addr);
            $stop;
        end
        if (!rst && sys_head_rd && (head_index(sys_head_addr) != head_index(sys_addr) || sys_head_addr[2] != sys_addr[2])) begin
            $display("nf_adapter_mem: ERROR: a head read at 0x%08x with sys_head_addr 0x%08x", sys_addr, sys_head_addr);
            $stop;
        end
        if (!rst && (sq_read_claim != sq_read || sq_write_claim != sq_write)) begin
            $display("nf_adapter_mem: ERROR: the grant's copies of sq_read/sq_write disagree with them");
            $stop;
        end
    end
`endif

    // System answer: a write's in the clock it takes the write port; a read's with the
    // data of the RAM access two cycles after it, or of a copied head in the next clock.
    reg        eng_rd_g1;    // an engine read granted last cycle
    reg        sa_valid, sa_rd, sa_hi, sa_in_mem;
    reg        sb_valid, sb_rd, sb_hi, sb_in_mem;
    reg [31:0] sys_rdata_q;
    // A read's answer (sys_rd_ready, with its data) and a write's (sys_wr_ready: sq_write
    // again, from a flip-flop of its own that can sit by the requesters, as the grants'
    // copies do): the write is answered in the clock it owns the write port.
    reg        sys_rd_ready, sys_wr_ready;
    assign sys_ready = sys_rd_ready || sys_wr_ready;
    always @(posedge clk) begin
        if (rst) begin
            sys_busy     <= 1'b0;
            sq_valid     <= 1'b0;
            sa_valid     <= 1'b0;
            sb_valid     <= 1'b0;
            sys_rd_ready <= 1'b0;
            sys_wr_ready <= 1'b0;
            eng_rd_g1    <= 1'b0;
            eng_rd_valid <= 1'b0;
            sys_rdata_q  <= 32'd0;
        end else begin
            if (sys_new)   sys_busy <= 1'b1;
            if (sys_ready) sys_busy <= 1'b0;
            sq_valid     <= sys_new && !sys_head_rd;
            sa_valid     <= sq_read;  // a write is answered already (sys_wr_ready)
            sb_valid     <= sa_valid;
            sys_rd_ready <= sb_valid || sys_head_rd;
            sys_wr_ready <= sys_new && sys_wstrb != 4'd0;
            eng_rd_g1    <= eng_rd_gnt;
            eng_rd_valid <= eng_rd_g1;
            // Outside adapter memory a read returns 0. In any clock without a memory read's
            // answer the register takes the head word at the request's address, whether or
            // not a head read is asked: only a head read's answer is taken from it, and the
            // head-read decision (through the arbiter from the CPU's request) stays off its
            // clock enable, which was the ULX3S parts' slowest path.
            if (sb_valid)
                sys_rdata_q <= (sb_rd && sb_in_mem) ? (sb_hi ? sys_word[63:32] : sys_word[31:0]) : 32'd0;
            else
                sys_rdata_q <= sys_head_addr[2] ? head_word[63:32] : head_word[31:0];
        end
    end
    always @(posedge clk) begin
        if (sys_new) begin
            sq_rd     <= (sys_wstrb == 4'd0);
            sq_hi     <= sys_addr[2];     // upper 32-bit half of the 64-bit word
            sq_in_mem <= (sys_addr < MEM_BYTES);
            sq_word   <= sys_addr[WORD_LSB +: WAW];
            sq_wdata  <= sys_wdata;
            sq_wstrb  <= sys_wstrb;
        end
        sa_rd     <= sq_rd;
        sa_hi     <= sq_hi;
        sa_in_mem <= sq_in_mem;
        sb_rd     <= sa_rd;
        sb_hi     <= sa_hi;
        sb_in_mem <= sa_in_mem;
    end

    assign sys_rdata   = sys_rdata_q;
    assign eng_rd_data = rd_q2;
endmodule
`default_nettype wire
