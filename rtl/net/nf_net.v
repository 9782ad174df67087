// SPDX-License-Identifier: Apache-2.0
// Network port: the Ethernet MACs, the frame receiver and transmitter, the NET registers,
// and the master on the engine's system port shared by RX writes and TX reads. The
// firmware sees whole checked frames in adapter memory slots, never bytes.
`default_nettype none
`include "nf_layout.vh"
module nf_net #(
    parameter integer RX_SLOTS   = 8,          // receive slots of NET_SLOT_BYTES in adapter memory, 1..NET_MAX_SLOTS
    parameter integer TX_SLOTS   = 4,          // transmit slots (after the RX slots), a power of two, 1..NET_MAX_SLOTS
    parameter [31:0]  SLOT_BASE  = `NF_PROFILE_SIM_USER_BASE,  // adapter address of RX slot 0, a multiple of 4: after the link's slots
    parameter integer RX_FIFO    = 32,         // RX words waiting for the system port (a power of two): the stall it absorbs at 4 clocks a word
    parameter integer TX_BUF     = 512,        // TX frame store in words (a power of two holding a longest frame)
    parameter integer MDC_DIV    = 10          // system clocks per MDC half period (nf_mdio): MDC <= 2.5 MHz needs clk / 5 MHz or more
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [31:0] mac_seed,      // NET.MAC_SEED: this adapter's own bits of its default MAC; held constant (a board's constant, a harness's per-adapter value)
    // PHY side (GMII-style), one byte per phy_ce each way
    input  wire        phy_ce,
    input  wire [7:0]  gmii_rxd,
    input  wire        gmii_rx_dv,
    input  wire        gmii_rx_er,
    output wire [7:0]  gmii_txd,
    output wire        gmii_tx_en,
    output wire        gmii_tx_er,
    // PHY management (MDIO, clause 22): the board makes the tristate pad of mdio_o/oe/i
    output wire        mdc,
    output wire        mdio_o,
    output wire        mdio_oe,
    input  wire        mdio_i,
    input  wire [31:0] cycle,         // for the RX slot headers
    input  wire        csr_valid,
    /* verilator lint_off UNUSEDSIGNAL */  // word registers: byte-address bits ignored
    input  wire [11:0] csr_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [31:0] csr_wdata,
    input  wire [3:0]  csr_wstrb,
    output reg         csr_ready,
    output wire [31:0] csr_rdata,     // registered by the decode (read_capture)
    output reg         mem_valid,
    output reg  [31:0] mem_addr,
    output reg  [31:0] mem_wdata,
    output reg  [3:0]  mem_wstrb,
    input  wire        mem_ready,
    input  wire [31:0] mem_rdata,
    output wire        rx_activity,   // one-clock pulses for LEDs: a frame placed, a frame sent
    output wire        tx_activity,
    output wire [RX_SLOTS-1:0] rx_ready, // RX_READY: slots holding a checked frame (the SoC's SLEEP waits on them)
    output wire        mem_want,      // the system-port master has a transaction to start (mem_valid may rise at the next edge)
    output wire        busy           // a frame in hand, a post queued, a transaction or a register access: the clock must run
);
    generate
        if (RX_SLOTS < 1 || RX_SLOTS > `NF_NET_MAX_SLOTS) begin : g_bad_rx
            $error("nf_net: RX_SLOTS must be 1..NET_MAX_SLOTS");
        end
        if (SLOT_BASE[1:0] != 2'b00) begin : g_bad_base
            $error("nf_net: SLOT_BASE must be a multiple of 4");
        end
    endgenerate

    // ---- registers ----------------------------------------------------------------------
    wire        csr_take  = csr_valid && !csr_ready;
    wire [11:0] reg_off   = {csr_addr[11:2], 2'b00};
    wire [1:0]  q_ctrl;
    wire [31:0] q_mac_lo;
    wire [15:0] q_mac_hi;
    wire        wr_release, wr_post, wr_mdio;
    wire        word_wr   = csr_wstrb == 4'hF;   // RX_RELEASE and TX_POST take whole words

    // ---- MACs ---------------------------------------------------------------------------
    wire [7:0] rx_tdata;
    wire       rx_tvalid, rx_tlast, rx_tuser;
    /* verilator lint_off UNUSEDSIGNAL */
    wire       rx_fcs_error, rx_runt;   // both are in rx_tuser, counted as one cause
    wire       tx_mac_busy, tx_underflow;  // the store-and-forward send never underflows
    /* verilator lint_on UNUSEDSIGNAL */
    nf_eth_mac_rx u_mac_rx (
        .clk(clk), .rst(rst), .phy_ce(phy_ce), .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv),
        .gmii_rx_er(gmii_rx_er), .m_tdata(rx_tdata), .m_tvalid(rx_tvalid), .m_tlast(rx_tlast),
        .m_tuser(rx_tuser), .fcs_error(rx_fcs_error), .runt(rx_runt)
    );

    wire [7:0] tx_tdata;
    wire       tx_tvalid, tx_tready, tx_tlast;
    nf_eth_mac_tx u_mac_tx (
        .clk(clk), .rst(rst), .s_tdata(tx_tdata), .s_tvalid(tx_tvalid), .s_tready(tx_tready),
        .s_tlast(tx_tlast), .s_tuser(1'b0), .phy_ce(phy_ce), .gmii_txd(gmii_txd),
        .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er), .busy(tx_mac_busy), .underflow(tx_underflow)
    );

    // ---- receiver -----------------------------------------------------------------------
    wire rx_ok, d_fcs, d_addr, d_long, d_ip, d_icrc, d_slot, d_fifo;
    wire rx_wr_valid, rx_wr_ready;
    wire [31:0] rx_wr_addr, rx_wr_data;
    wire [3:0]  rx_wr_strb;
    nf_net_rx #(.RX_SLOTS(RX_SLOTS), .SLOT_BASE(SLOT_BASE), .FIFO_DEPTH(RX_FIFO)) u_rx (
        .clk(clk), .rst(rst),
        .s_tdata(rx_tdata), .s_tvalid(rx_tvalid), .s_tlast(rx_tlast), .s_tuser(rx_tuser),
        .cycle(cycle), .rx_en(q_ctrl[`NF_NET_CTRL_RX_EN]), .promisc(q_ctrl[`NF_NET_CTRL_PROMISC]),
        .mac({q_mac_hi, q_mac_lo}),
        .release_mask((wr_release && word_wr) ? csr_wdata[RX_SLOTS-1:0] : {RX_SLOTS{1'b0}}),
        .ready(rx_ready),
        .frame_ok(rx_ok), .drop_fcs(d_fcs), .drop_addr(d_addr), .drop_long(d_long), .drop_ip(d_ip),
        .drop_icrc(d_icrc), .drop_slot(d_slot), .drop_fifo(d_fifo),
        .wr_valid(rx_wr_valid), .wr_addr(rx_wr_addr), .wr_data(rx_wr_data), .wr_strb(rx_wr_strb),
        .wr_ready(rx_wr_ready)
    );

    // ---- transmitter --------------------------------------------------------------------
    wire [TX_SLOTS-1:0] tx_busy;
    wire tx_sent, tx_rejected, tx_rd_valid, tx_rd_ready;
    wire [31:0] tx_rd_addr;
    nf_net_tx #(.RX_SLOTS(RX_SLOTS), .TX_SLOTS(TX_SLOTS), .SLOT_BASE(SLOT_BASE), .BUF_WORDS(TX_BUF)) u_tx (
        .clk(clk), .rst(rst),
        .post_valid(wr_post && word_wr), .post_slot(csr_wdata[`NF_NET_TX_POST_SLOT]),
        .post_len(csr_wdata[`NF_NET_TX_POST_LEN]), .post_rejected(tx_rejected),
        .busy(tx_busy), .frame_sent(tx_sent),
        .m_tdata(tx_tdata), .m_tvalid(tx_tvalid), .m_tready(tx_tready), .m_tlast(tx_tlast),
        .rd_valid(tx_rd_valid), .rd_addr(tx_rd_addr), .rd_ready(tx_rd_ready), .rd_data(mem_rdata)
    );

    // ---- PHY management -----------------------------------------------------------------
    wire        mdio_busy;
    wire [15:0] mdio_rdata;
    nf_mdio #(.MDC_DIV(MDC_DIV)) u_mdio (
        .clk(clk), .rst(rst), .start(wr_mdio && word_wr),
        .phy(csr_wdata[`NF_NET_MDIO_CMD_PHY]), .regad(csr_wdata[`NF_NET_MDIO_CMD_REG]),
        .write(csr_wdata[`NF_NET_MDIO_CMD_WRITE_LSB]), .wdata(csr_wdata[`NF_NET_MDIO_CMD_DATA]),
        .busy(mdio_busy), .rdata(mdio_rdata),
        .mdc(mdc), .mdio_o(mdio_o), .mdio_oe(mdio_oe), .mdio_i(mdio_i)
    );
    reg [31:0] mdio_stat;   // NET.MDIO_STAT, packed by its fields
    always @(*) begin
        mdio_stat = 32'd0;
        mdio_stat[`NF_NET_MDIO_STAT_DATA] = mdio_rdata;
        mdio_stat[`NF_NET_MDIO_STAT_BUSY_LSB] = mdio_busy;
    end

    // ---- system-port master: one transaction at a time, RX first -------------------------
    // RX writes go before TX reads: a received word lost to a full RX FIFO loses its frame,
    // while a late TX read only delays a frame whose first byte waits until it is all stored.
    reg mem_owner_tx;   // the transaction in flight is TX's read
    wire pick_tx = tx_rd_valid && !rx_wr_valid;
    assign mem_want    = rx_wr_valid || tx_rd_valid;
    // The receiver may still be finishing a frame (its FCS delay line, the header write)
    // for a few PHY bytes after rx_dv falls: busy that long, so a stopped clock
    // (nf_soc CPU_CLOCK_GATE) never cuts a frame short.
    reg [4:0] rx_tail;
    always @(posedge clk) begin
        if (rst)
            rx_tail <= 5'd0;
        else if (gmii_rx_dv)
            rx_tail <= 5'd31;
        else if (phy_ce && rx_tail != 5'd0)
            rx_tail <= rx_tail - 5'd1;
    end
    assign busy = mdio_busy || gmii_rx_dv || rx_tail != 5'd0 || rx_wr_valid || tx_busy != {TX_SLOTS{1'b0}} || tx_mac_busy ||
                  tx_tvalid || mem_valid || csr_valid || csr_ready;
    assign rx_wr_ready = mem_valid && mem_ready && !mem_owner_tx;
    assign tx_rd_ready = mem_valid && mem_ready && mem_owner_tx;

    always @(posedge clk) begin
        if (rst) begin
            mem_valid    <= 1'b0;
            mem_addr     <= 32'd0;
            mem_wdata    <= 32'd0;
            mem_wstrb    <= 4'd0;
            mem_owner_tx <= 1'b0;
        end else if (mem_valid) begin
            if (mem_ready)
                mem_valid <= 1'b0;
        end else if (rx_wr_valid || tx_rd_valid) begin
            mem_valid    <= 1'b1;
            mem_owner_tx <= pick_tx;
            mem_addr     <= pick_tx ? tx_rd_addr : rx_wr_addr;
            mem_wdata    <= pick_tx ? 32'd0 : rx_wr_data;
            mem_wstrb    <= pick_tx ? 4'd0 : rx_wr_strb;
        end
    end

    // ---- counters ---------------------------------------------------------------------------
    reg [31:0] cnt_rx_ok, cnt_fcs, cnt_addr, cnt_long, cnt_ip, cnt_icrc, cnt_slot, cnt_fifo, cnt_tx, cnt_reject;
    always @(posedge clk) begin
        if (rst) begin
            cnt_rx_ok  <= 32'd0;
            cnt_fcs    <= 32'd0;
            cnt_addr   <= 32'd0;
            cnt_long   <= 32'd0;
            cnt_ip     <= 32'd0;
            cnt_icrc   <= 32'd0;
            cnt_slot   <= 32'd0;
            cnt_fifo   <= 32'd0;
            cnt_tx     <= 32'd0;
            cnt_reject <= 32'd0;
        end else begin
            if (rx_ok)       cnt_rx_ok  <= cnt_rx_ok + 32'd1;
            if (d_fcs)       cnt_fcs    <= cnt_fcs + 32'd1;
            if (d_addr)      cnt_addr   <= cnt_addr + 32'd1;
            if (d_long)      cnt_long   <= cnt_long + 32'd1;
            if (d_ip)        cnt_ip     <= cnt_ip + 32'd1;
            if (d_icrc)      cnt_icrc   <= cnt_icrc + 32'd1;
            if (d_slot)      cnt_slot   <= cnt_slot + 32'd1;
            if (d_fifo)      cnt_fifo   <= cnt_fifo + 32'd1;
            if (tx_sent)     cnt_tx     <= cnt_tx + 32'd1;
            if (tx_rejected) cnt_reject <= cnt_reject + 32'd1;
        end
    end

    reg [31:0] cfg_word;   // NET.CFG, packed by its NET_CFG fields
    always @(*) begin
        cfg_word = 32'd0;
        cfg_word[`NF_NET_CFG_RX_SLOTS] = RX_SLOTS[7:0];
        cfg_word[`NF_NET_CFG_TX_SLOTS] = TX_SLOTS[7:0];
    end

    nf_net_csr u_csr (
        .clk(clk), .rst(rst), .take(csr_take), .addr(reg_off), .we(csr_take), .wdata(csr_wdata),
        .wstrb(csr_wstrb), .rd_addr(reg_off),
        .q_ctrl(q_ctrl), .q_mac_lo(q_mac_lo), .q_mac_hi(q_mac_hi),
        .wr_rx_release(wr_release), .wr_tx_post(wr_post), .wr_mdio_cmd(wr_mdio), .rd_mdio_stat(mdio_stat),
        .rd_id(`NF_NET_HW_ID_VALUE), .rd_cfg(cfg_word), .rd_slot_base(SLOT_BASE), .rd_mac_seed(mac_seed),
        .rd_rx_ready({{(32 - RX_SLOTS){1'b0}}, rx_ready}),
        .rd_tx_busy({{(32 - TX_SLOTS){1'b0}}, tx_busy}),
        .rd_cnt_rx_ok(cnt_rx_ok), .rd_cnt_drop_fcs(cnt_fcs), .rd_cnt_drop_addr(cnt_addr),
        .rd_cnt_drop_long(cnt_long), .rd_cnt_drop_ip(cnt_ip), .rd_cnt_drop_icrc(cnt_icrc),
        .rd_cnt_drop_slot(cnt_slot), .rd_cnt_drop_fifo(cnt_fifo), .rd_cnt_tx(cnt_tx),
        .rd_cnt_tx_reject(cnt_reject),
        .rdata(csr_rdata)
    );

    always @(posedge clk) begin
        if (rst)
            csr_ready <= 1'b0;
        else
            csr_ready <= csr_take;
    end

    assign rx_activity = rx_ok;
    assign tx_activity = tx_sent;
endmodule
`default_nettype wire
