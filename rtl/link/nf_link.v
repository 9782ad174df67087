// SPDX-License-Identifier: Apache-2.0
// Link hardware: UART, frame receiver and transmitter, the LINK registers, and the
// master on the engine's system port shared by RX writes and TX reads. The firmware
// sees whole frames in adapter memory, never bytes. With LINK_UDP the bytes may also
// come from a second source (nf_link_udp); one source owns the link at a time: a flag
// from the other takes it when the owner is between frames (its last byte a flag) or
// has been silent for TAKEOVER_CLKS. The owner's bytes are received and it gets the
// link's bytes; the other's bytes are dropped (the sender's ARQ repeats them).
`default_nettype none
`include "nf_layout.vh"
module nf_link #(
    parameter integer RX_SLOTS = `NF_PROFILE_SIM_RX_SLOTS,  // receive slots of SLOT_BYTES in adapter memory, 1..MAX_SLOTS
    parameter integer TX_SLOTS = `NF_PROFILE_SIM_TX_SLOTS,  // transmit slots (after the RX slots), a power of two, 1..MAX_SLOTS
    parameter integer LINK_UDP = 0,  // 1: a second byte source (udp_* ports) beside the UART; 0: the UART alone, udp_* unused
    parameter integer TAKEOVER_CLKS = 1 << 20  // with LINK_UDP: clocks of the owner's silence mid-frame after which the other source may take the link, 2..2^30
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        uart_rx,
    output wire        uart_tx,
    input  wire [15:0] uart_period,   // 12.4 fixed-point clocks per bit
    input  wire [31:0] cycle,         // for RX stamps
    input  wire        csr_valid,
    /* verilator lint_off UNUSEDSIGNAL */  // word registers: byte-address bits and unused fields ignored
    input  wire [11:0] csr_addr,
    input  wire [31:0] csr_wdata,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [3:0]  csr_wstrb,
    output reg         csr_ready,
    output wire [31:0] csr_rdata,     // registered by the decode (read_capture)
    output reg         mem_valid,
    output reg  [31:0] mem_addr,
    output reg  [31:0] mem_wdata,
    output reg  [3:0]  mem_wstrb,
    input  wire        mem_ready,
    input  wire [31:0] mem_rdata,
    output wire        rx_activity,   // one-cycle pulses for LEDs
    output wire        tx_activity,
    output wire        rx_error,
    output wire [RX_SLOTS-1:0] rx_ready, // RX_READY: slots holding a whole frame (the SoC's SLEEP waits on them)
    output wire        mem_want,     // the system-port master has a transaction to start (mem_valid may rise at the next edge)
    // the second byte source (LINK_UDP = 1): bytes move on valid && ready
    /* verilator lint_off UNUSEDSIGNAL */  // unused with LINK_UDP = 0
    input  wire        udp_rxb_valid,
    input  wire [7:0]  udp_rxb_data,
    input  wire        udp_txb_ready,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire        udp_rxb_ready,
    output wire        udp_txb_valid,
    output wire [7:0]  udp_txb_data,
    output wire        udp_owner     // the second source owns the link
);
    localparam integer MAX_SLOTS = `NF_LINK_MAX_SLOTS;

    generate
        if (LINK_UDP != 0 && LINK_UDP != 1) begin : g_bad_udp
            $error("nf_link: LINK_UDP must be 0 or 1");
        end
        if (TAKEOVER_CLKS < 2 || TAKEOVER_CLKS > (1 << 30)) begin : g_bad_takeover
            $error("nf_link: TAKEOVER_CLKS must be 2..2^30");
        end
    endgenerate

    // ---- UART ---------------------------------------------------------------------
    wire       uart_rxb_valid, uart_rxb_error;
    wire [7:0] uart_rxb_data;
    nf_uart_rx u_uart_rx (
        .clk(clk), .rst(rst), .uart_period(uart_period), .rx(uart_rx),
        .out_valid(uart_rxb_valid), .out_data(uart_rxb_data), .out_error(uart_rxb_error)
    );

    wire       uart_txb_valid, uart_txb_ready;
    wire [7:0] txb_data;
    nf_uart_tx u_uart_tx (
        .clk(clk), .rst(rst), .uart_period(uart_period),
        .in_valid(uart_txb_valid), .in_data(txb_data), .in_ready(uart_txb_ready), .tx(uart_tx)
    );

    // ---- the byte source that owns the link ---------------------------------------------
    wire       rxb_valid, rxb_error, txb_valid, txb_ready;
    wire [7:0] rxb_data;
    wire       rx_wr_valid;
    generate
        if (LINK_UDP != 0) begin : g_udp
            localparam integer TW = $clog2(TAKEOVER_CLKS + 1);
            localparam [7:0]   FLAG = `NF_LINK_FLAG;
            reg          own_udp;    // the second source owns the link
            reg          in_frame;   // the owner's last byte was not a flag
            reg [TW-1:0] quiet;      // clocks since the owner's last byte, saturating
            // The second source is paced: a byte only while the receiver's write FIFO
            // has nothing waiting, so bytes at one a clock never overflow it.
            wire udp_byte  = udp_rxb_valid && !rx_wr_valid;
            wire free      = !in_frame || quiet == TAKEOVER_CLKS[TW-1:0];
            wire to_udp    = !own_udp && free && udp_byte && udp_rxb_data == FLAG;
            wire to_uart   = own_udp && free && uart_rxb_valid && uart_rxb_data == FLAG;
            wire sel_udp   = (own_udp && !to_uart) || to_udp;
            assign rxb_valid = sel_udp ? udp_byte : uart_rxb_valid;
            assign rxb_data  = sel_udp ? udp_rxb_data : uart_rxb_data;
            assign rxb_error = !sel_udp && uart_rxb_error;
            always @(posedge clk) begin
                if (rst) begin
                    own_udp  <= 1'b0;
                    in_frame <= 1'b0;
                    quiet    <= {TW{1'b0}};
                end else begin
                    own_udp <= sel_udp;
                    if (rxb_valid) begin
                        in_frame <= rxb_data != FLAG;
                        quiet    <= {TW{1'b0}};
                    end else if (quiet != TAKEOVER_CLKS[TW-1:0]) begin
                        quiet <= quiet + 1'b1;
                    end
                end
            end
            assign udp_rxb_ready  = !rx_wr_valid;
            assign udp_txb_valid  = txb_valid && own_udp;
            assign uart_txb_valid = txb_valid && !own_udp;
            assign txb_ready      = own_udp ? udp_txb_ready : uart_txb_ready;
            assign udp_owner      = own_udp;
        end else begin : g_uart
            assign rxb_valid      = uart_rxb_valid;
            assign rxb_data       = uart_rxb_data;
            assign rxb_error      = uart_rxb_error;
            assign uart_txb_valid = txb_valid;
            assign txb_ready      = uart_txb_ready;
            assign udp_rxb_ready  = 1'b0;
            assign udp_txb_valid  = 1'b0;
            assign udp_owner      = 1'b0;
        end
    endgenerate
    assign udp_txb_data = txb_data;

    // ---- register writes (one per transaction) ----------------------------------------
    wire        csr_write = csr_valid && !csr_ready && csr_wstrb == 4'hF;
    wire [11:0] reg_off   = {csr_addr[11:2], 2'b00};
    wire        wr_release, wr_post, wr_ack;   // from the generated decode below

    // ---- frame receiver ---------------------------------------------------------------
    wire [3:0]             stamp_idx;
    wire [31:0]            stamp_word;
    wire rx_ok, rx_bad, rx_drop;
    wire rx_wr_ready;
    wire [31:0] rx_wr_addr, rx_wr_data;
    wire [3:0]  rx_wr_strb;
    nf_link_rx #(.RX_SLOTS(RX_SLOTS)) u_rx (
        .clk(clk), .rst(rst),
        .in_valid(rxb_valid), .in_data(rxb_data), .in_error(rxb_error), .cycle(cycle),
        .release_mask(wr_release ? csr_wdata[RX_SLOTS-1:0] : {RX_SLOTS{1'b0}}),
        .ready(rx_ready), .stamp_sel(stamp_idx), .stamp(stamp_word),
        .frame_ok(rx_ok), .frame_bad(rx_bad), .frame_drop(rx_drop),
        .wr_valid(rx_wr_valid), .wr_addr(rx_wr_addr), .wr_data(rx_wr_data), .wr_strb(rx_wr_strb),
        .wr_ready(rx_wr_ready)
    );

    // ---- frame transmitter --------------------------------------------------------------
    wire [TX_SLOTS-1:0] tx_busy;
    wire tx_sent, tx_rd_valid, tx_rd_ready;
    wire [31:0] tx_rd_addr;
    wire tx_post_rejected;
    nf_link_tx #(.RX_SLOTS(RX_SLOTS), .TX_SLOTS(TX_SLOTS)) u_tx (
        .clk(clk), .rst(rst),
        .post_valid(wr_post), .post_slot(csr_wdata[`NF_TX_POST_SLOT]),
        .post_len(csr_wdata[`NF_TX_POST_LEN]), .post_rejected(tx_post_rejected),
        .ack_valid(wr_ack), .ack_num(csr_wdata[7:0]),
        .busy(tx_busy), .frame_sent(tx_sent),
        .out_valid(txb_valid), .out_data(txb_data), .out_ready(txb_ready),
        .rd_valid(tx_rd_valid), .rd_addr(tx_rd_addr), .rd_ready(tx_rd_ready), .rd_data(mem_rdata)
    );

    // ---- system-port master: one transaction at a time, RX and TX take turns -------------
    reg mem_owner_tx;   // the transaction in flight is TX's read
    reg last_tx;        // TX had the previous turn
    wire pick_tx = tx_rd_valid && (!rx_wr_valid || !last_tx);
    assign mem_want    = rx_wr_valid || tx_rd_valid;
    assign rx_wr_ready = mem_valid && mem_ready && !mem_owner_tx;
    assign tx_rd_ready = mem_valid && mem_ready && mem_owner_tx;

    always @(posedge clk) begin
        if (rst) begin
            mem_valid    <= 1'b0;
            mem_addr     <= 32'd0;
            mem_wdata    <= 32'd0;
            mem_wstrb    <= 4'd0;
            mem_owner_tx <= 1'b0;
            last_tx      <= 1'b0;
        end else if (mem_valid) begin
            if (mem_ready)
                mem_valid <= 1'b0;
        end else if (rx_wr_valid || tx_rd_valid) begin
            mem_valid    <= 1'b1;
            mem_owner_tx <= pick_tx;
            last_tx      <= pick_tx;
            mem_addr     <= pick_tx ? tx_rd_addr : rx_wr_addr;
            mem_wdata    <= pick_tx ? 32'd0 : rx_wr_data;
            mem_wstrb    <= pick_tx ? 4'd0 : rx_wr_strb;
        end
    end

    // ---- counters -------------------------------------------------------------------
    reg [31:0] cnt_rx_ok, cnt_rx_bad, cnt_rx_drop, cnt_tx, cnt_tx_reject;
    always @(posedge clk) begin
        if (rst) begin
            cnt_rx_ok   <= 32'd0;
            cnt_rx_bad  <= 32'd0;
            cnt_rx_drop <= 32'd0;
            cnt_tx      <= 32'd0;
            cnt_tx_reject <= 32'd0;
        end else begin
            if (rx_ok)   cnt_rx_ok   <= cnt_rx_ok + 32'd1;
            if (rx_bad)  cnt_rx_bad  <= cnt_rx_bad + 32'd1;
            if (rx_drop) cnt_rx_drop <= cnt_rx_drop + 32'd1;
            if (tx_sent) cnt_tx      <= cnt_tx + 32'd1;
            if (tx_post_rejected) cnt_tx_reject <= cnt_tx_reject + 32'd1;
        end
    end

    // ---- register reads -----------------------------------------------------------------
    localparam integer STAMP_END = `NF_LINK_RX_STAMP0 + 4 * MAX_SLOTS;
    localparam [11:0]  STAMP0    = `NF_LINK_RX_STAMP0;
    wire        is_stamp  = reg_off >= STAMP0 && {20'd0, reg_off} < STAMP_END;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [11:0] stamp_off = reg_off - STAMP0;
    /* verilator lint_on UNUSEDSIGNAL */
    assign stamp_idx = stamp_off[5:2];

    reg  [31:0] cfg_word;   // LINK.CFG, packed by its LINK_CFG fields
    always @(*) begin
        cfg_word = 32'd0;
        cfg_word[`NF_LINK_CFG_RX_SLOTS] = RX_SLOTS[7:0];
        cfg_word[`NF_LINK_CFG_TX_SLOTS] = TX_SLOTS[7:0];
    end
    // Register decode generated from the contract. RX_STAMP0 stands for the whole stamp
    // array: a read of any stamp is decoded as RX_STAMP0, whose value is stamp_word.
    wire csr_take = csr_valid && !csr_ready;
    wire [11:0] dec_addr = is_stamp ? STAMP0 : reg_off;
    nf_link_regs_decode u_decode (
        .clk(clk), .rst(rst), .take(csr_take), .addr(dec_addr), .rd_addr(dec_addr), .we(csr_write),
        .wr_rx_release(wr_release), .wr_tx_post(wr_post), .wr_tx_ack(wr_ack),
        .rd_id(`NF_LINK_HW_ID_VALUE), .rd_cfg(cfg_word),
        .rd_rx_ready({{(32 - RX_SLOTS){1'b0}}, rx_ready}),
        .rd_tx_busy({{(32 - TX_SLOTS){1'b0}}, tx_busy}),
        .rd_cnt_rx_ok(cnt_rx_ok), .rd_cnt_rx_bad(cnt_rx_bad), .rd_cnt_rx_drop(cnt_rx_drop),
        .rd_cnt_tx(cnt_tx), .rd_cnt_tx_reject(cnt_tx_reject), .rd_rx_stamp0(stamp_word),
        .rdata(csr_rdata)
    );

    always @(posedge clk) begin
        if (rst) begin
            csr_ready <= 1'b0;
        end else begin
            csr_ready <= csr_take;
        end
    end

    assign rx_activity = rxb_valid;
    assign tx_activity = txb_valid && txb_ready;
    assign rx_error    = rx_bad || rxb_error;
endmodule
`default_nettype wire
