// SPDX-License-Identifier: Apache-2.0
// SoC interconnect: joins a CPU wrapper (nf_cpu_vexriscv or nf_cpu_picorv32, by CPU), its
// firmware RAM, the SYS registers, the link, the network port (when the profile has one) and
// the engine by the memory map (NF_MAP_*); the CPU's window, the link's master and the
// network port's share the engine's system port. Board tops add pins.
`default_nettype none
`include "nf_layout.vh"
module nf_soc #(
    parameter         CPU          = "vexriscv",  // the core: "vexriscv" or "picorv32" (the build supplies its file: rtl/soc/soc.mk NF_CPU, CPU_RTL)
    parameter integer CLK_HZ       = `NF_SOC_CPU_CLK_SIM_HZ,  // system clock, Hz (SYS.CLK_HZ; LED pulse stretching)
    parameter integer FW_RAM_BYTES = `NF_PROFILE_SIM_FW_RAM_BYTES,  // firmware RAM, bytes, a multiple of 4 (code, data and stack)
    parameter         FW_HEX       = "build/firmware/nf_fw.hex",  // firmware image ($readmemh, one 32-bit word a line) loaded into the RAM
    parameter integer MEM_BYTES    = `NF_PROFILE_SIM_MEM_BYTES,  // adapter memory, bytes (a multiple of the 8-byte port)
    parameter integer MPT_ENTRIES  = `NF_PROFILE_SIM_MPT_ENTRIES,  // key-table entries, 1..2^24
    parameter integer MTT_ENTRIES  = `NF_PROFILE_SIM_MTT_ENTRIES,  // translation-table entries, 1..2^16
    parameter integer RX_SLOTS     = `NF_PROFILE_SIM_RX_SLOTS,  // link receive slots, 1..MAX_SLOTS
    parameter integer TX_SLOTS     = `NF_PROFILE_SIM_TX_SLOTS,  // link transmit slots, a power of two, 1..MAX_SLOTS
    parameter integer NET_RX_SLOTS = `NF_PROFILE_SIM_NET_RX_SLOTS,  // network port receive slots, 0 (no port) or 1..NET_MAX_SLOTS
    parameter integer NET_TX_SLOTS = `NF_PROFILE_SIM_NET_TX_SLOTS,  // network port transmit slots, a power of two (with a port)
    // Synthesis with PicoRV32 only: 0 the firmware RAM is one 32-bit memory; 1, 2 or 4 it
    // is in bit slices of this width, so the block RAMs reach the CPU without a read mux
    // (nf_fw_ram SLICE_BITS). VexRiscv reads the RAM through its caches and takes it whole.
    parameter integer FW_SLICE_BITS = 0,
    // 1 (the Verilator model): the CPU's clock stops while it waits on a SLEEP read, and
    // the engine's while it is idle too, so the simulation skips their evaluation then; 0
    // (the boards): both run on clk. The two agree clock for clock ("CPU and engine clocks").
    parameter integer CPU_CLOCK_GATE = 0,
    // 1: the host link also takes its bytes in UDP datagrams on the link_* Ethernet pins
    // (nf_link_udp; nf_link says which source owns the link); 0: the UART alone
    parameter integer LINK_UDP = 0
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        uart_rx,
    output wire        uart_tx,
    input  wire [15:0] uart_period,
    output wire [7:0]  leds,
    output wire        trap,
    // the network port's PHY side (GMII-style, one byte per phy_ce each way); unused
    // without a port (NET_RX_SLOTS 0), where the transmit side stays idle
    input  wire        phy_ce,
    input  wire [7:0]  gmii_rxd,
    input  wire        gmii_rx_dv,
    input  wire        gmii_rx_er,
    output wire [7:0]  gmii_txd,
    output wire        gmii_tx_en,
    output wire        gmii_tx_er,
    // the network port's NET.MAC_SEED (the firmware's default MAC), constant while running;
    // unused without a port
    input  wire [31:0] net_mac_seed,
    // the host link's Ethernet port (LINK_UDP = 1): GMII-style, one byte per link_phy_ce
    // each way, its MAC and IPv4 address (first byte on the wire in the top bits) constant
    // while running; unused with LINK_UDP = 0, where the transmit side stays idle
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        link_phy_ce,
    input  wire [7:0]  link_gmii_rxd,
    input  wire        link_gmii_rx_dv,
    input  wire        link_gmii_rx_er,
    input  wire [47:0] link_mac,
    input  wire [31:0] link_ip,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [7:0]  link_gmii_txd,
    output wire        link_gmii_tx_en,
    output wire        link_gmii_tx_er
);
    localparam integer HAS_NET   = (NET_RX_SLOTS != 0) ? 1 : 0;
    localparam integer USER_BASE = `NF_PROFILE_USER_BASE(RX_SLOTS, TX_SLOTS, NET_RX_SLOTS, NET_TX_SLOTS);
    // LED pulses are stretched to 1/20 s so a single frame is visible.
    localparam integer STRETCH   = CLK_HZ / 20;
    localparam [31:0]  MAP_SYS    = `NF_MAP_SYS;
    localparam [31:0]  MAP_LINK   = `NF_MAP_LINK;
    localparam [31:0]  MAP_ENGINE = `NF_MAP_ENGINE;
    localparam [31:0]  MAP_NET    = `NF_MAP_NET;
    localparam [31:0]  MAP_WIN    = `NF_MAP_ADAPTER_MEM;
    localparam [31:0]  WIN_BYTES  = MEM_BYTES;
    localparam integer BLOCK_BITS = 12;  // every register block is 4 KiB

    // The engine's registers whose store starts an operation (see "posted writes").
    function is_eng_cmd(input [11:2] a);  // the register's word address in its block
        reg [11:0] off;
        begin
            off = {a, 2'b00};
            is_eng_cmd = off == `NF_ENGINE_TBL_CMD || off == `NF_ENGINE_LD_CTRL ||
                         off == `NF_ENGINE_DMA_CTRL || off == `NF_ENGINE_CHK_CTRL;
        end
    endfunction
    // The window's base is aligned to its size rounded up to a power of two (checked
    // below): an address is in it by its high bits, its offset is its low bits, and no
    // carry chain sits between the CPU's address and the system port's arbiter.
    localparam integer WIN_AB   = $clog2(WIN_BYTES);
    localparam         WIN_POW2 = (WIN_BYTES == (1 << WIN_AB));
    localparam [31:0]  WIN_SIZE = WIN_BYTES;
    localparam [31:0]  WIN_MASK = (32'd1 << WIN_AB) - 32'd1;
    function in_win(input [31:0] a);
        in_win = (a >> WIN_AB) == (MAP_WIN >> WIN_AB) && (WIN_POW2 || a[WIN_AB-1:0] < WIN_SIZE[WIN_AB-1:0]);
    endfunction
    function [31:0] win_offset(input [31:0] a);  // a - MAP_WIN for an a in the window
        win_offset = a & WIN_MASK;
    endfunction
    generate if ((MAP_WIN & WIN_MASK) != 32'd0) begin : g_win_unaligned
        // Elaboration fails here: the window's base must be aligned (see in_win).
        nf_soc_window_base_not_aligned_to_its_size u_fail ();
    end endgenerate

    // ---- CPU ------------------------------------------------------------------------
    // One SoC bus, PicoRV32's native one: cpu_valid holds until cpu_ready; cpu_rdata
    // is sampled in the cpu_ready cycle. Every slave below answers on it.
    wire        cpu_valid, cpu_instr;
    reg         cpu_ready;
    wire [31:0] cpu_addr, cpu_wdata;
    wire [3:0]  cpu_wstrb;
    reg  [31:0] cpu_rdata;
    // The core's look-ahead (the next request's kind and address a clock before
    // cpu_valid, while la_used) and its early read (peek_*), see below.
    wire        la_used, la_read, la_write;
    wire [31:0] la_addr;
    wire        peek_rd;
    wire [31:0] peek_addr;
    // The firmware RAM's one port, driven by the CPU wrapper, and when the RAM answers
    // the core (ram_ready: in the request's own clock whenever it can).
    wire        ram_rd, ram_wr, ram_ready;
    wire        ram_sel;  // the RAM's data is the answer (a register where it can be: the read mux's select)
    wire [31:0] ram_addr, ram_wdata;
    wire [3:0]  ram_wstrb;
    wire [31:0] ram_rdata;
    // The CPU's clock (see CPU_CLOCK_GATE and "CPU and engine clocks" below), and whether
    // the core is fetching on a bus of its own: it is clocked then.
    wire        cpu_clk, eng_clk, net_clk;
    wire        cpu_fetching;
    wire        head_rd_now;  // the core's early read answered now (see "posted writes")

    // Every CPU wrapper has this port (nf_cpu_picorv32.v says what each signal means).
    generate if (CPU == "picorv32") begin : g_cpu
        nf_cpu_picorv32 #(.FW_RAM_BYTES(FW_RAM_BYTES)) u_cpu (
            .clk(clk), .cpu_clk(cpu_clk), .rst(rst),
            .mem_valid(cpu_valid), .mem_instr(cpu_instr), .mem_addr(cpu_addr), .mem_wdata(cpu_wdata),
            .mem_wstrb(cpu_wstrb), .mem_ready(cpu_ready), .mem_rdata(cpu_rdata),
            .mem_la_used(la_used), .mem_la_read(la_read), .mem_la_write(la_write), .mem_la_addr(la_addr),
            .peek_rd(peek_rd), .peek_addr(peek_addr), .peek_ready(head_rd_now),
            .ram_rd(ram_rd), .ram_wr(ram_wr), .ram_addr(ram_addr), .ram_wdata(ram_wdata), .ram_wstrb(ram_wstrb),
            .ram_rdata(ram_rdata), .ram_ready(ram_ready), .ram_sel(ram_sel),
            .fetching(cpu_fetching), .trap(trap)
        );
    end else begin : g_cpu
        nf_cpu_vexriscv #(.FW_RAM_BYTES(FW_RAM_BYTES)) u_cpu (
            .clk(clk), .cpu_clk(cpu_clk), .rst(rst),
            .mem_valid(cpu_valid), .mem_instr(cpu_instr), .mem_addr(cpu_addr), .mem_wdata(cpu_wdata),
            .mem_wstrb(cpu_wstrb), .mem_ready(cpu_ready), .mem_rdata(cpu_rdata),
            .mem_la_used(la_used), .mem_la_read(la_read), .mem_la_write(la_write), .mem_la_addr(la_addr),
            .peek_rd(peek_rd), .peek_addr(peek_addr), .peek_ready(head_rd_now),
            .ram_rd(ram_rd), .ram_wr(ram_wr), .ram_addr(ram_addr), .ram_wdata(ram_wdata), .ram_wstrb(ram_wstrb),
            .ram_rdata(ram_rdata), .ram_ready(ram_ready), .ram_sel(ram_sel),
            .fetching(cpu_fetching), .trap(trap)
        );
    end endgenerate

    // ---- firmware RAM -------------------------------------------------------------------
    // The bit slices serve PicoRV32 only (FW_SLICE_BITS).
    nf_fw_ram #(
        .BYTES(FW_RAM_BYTES), .FW_HEX(FW_HEX), .SLICE_BITS(CPU == "picorv32" ? FW_SLICE_BITS : 0)
    ) u_ram (
        .clk(clk), .rd(ram_rd), .wr(ram_wr), .addr(ram_addr), .wdata(ram_wdata), .wstrb(ram_wstrb),
        .rdata(ram_rdata)
    );

    // ---- address decode ---------------------------------------------------------------
    wire [31:0] win_off  = win_offset(cpu_addr);
    wire sel_ram;
    nf_fw_ram_hit #(.BYTES(FW_RAM_BYTES)) u_sel_ram (.addr(cpu_addr), .hit(sel_ram));
    wire sel_sys    = cpu_addr[31:BLOCK_BITS] == MAP_SYS[31:BLOCK_BITS];
    wire sel_link   = cpu_addr[31:BLOCK_BITS] == MAP_LINK[31:BLOCK_BITS];
    wire sel_engine = cpu_addr[31:BLOCK_BITS] == MAP_ENGINE[31:BLOCK_BITS];
    wire sel_net    = HAS_NET != 0 && cpu_addr[31:BLOCK_BITS] == MAP_NET[31:BLOCK_BITS];
    wire sel_win    = in_win(cpu_addr);
    // SYS and unmapped addresses answer one cycle later (unmapped reads 0, writes are
    // ignored) so the CPU never hangs.
    wire sel_local  = !sel_ram && !sel_link && !sel_engine && !sel_net && !sel_win;
    wire cpu_write  = cpu_wstrb != 4'd0;
    reg         mmio_ready;   // a registered answer: link, engine, SYS, unmapped, or a posted write taken
    reg  [31:0] mmio_rdata;

    // ---- posted writes ------------------------------------------------------------------
    // A window store goes into the write buffer and completes for the CPU at once; a link
    // or engine register store completes once its block takes it, but one that starts an
    // engine operation waits for its answer (the firmware reads the status right after).
    localparam integer WB_DEPTH = 2;  // window write-buffer entries (the system port takes a store every 2 clocks)
    wire [67:0] wb_head;              // the oldest store: {offset, data, byte strobes}
    wire [31:0] wb_head_off  = wb_head[67:36];
    wire [31:0] wb_head_data = wb_head[35:4];
    wire [3:0]  wb_head_strb = wb_head[3:0];
    wire [1:0]  wb_cnt;               // entries held
    wire        wb_any  = wb_cnt != 2'd0;
    wire        wb_room = wb_cnt != WB_DEPTH[1:0];
    // Every access but a window store and the firmware RAM waits for an empty buffer, so the
    // stores before it have landed: the CPU sees what waited stores give. A registered
    // answer's clock is no request (the CPU still holds it then).
    wire        cpu_go    = cpu_valid && !mmio_ready;
    wire        wb_push   = cpu_go && sel_win && cpu_write && wb_room;
    // The core's early read of an RX slot's head (peek_rd) is answered in its own clock from
    // the adapter memory's copy of the heads, only with the buffer empty (the copy then
    // holds every earlier store); otherwise it goes onto the bus and the system port.
    wire        head_peek_hit;
    wire [31:0] head_peek_rdata;
    wire [31:0] head_peek_off = win_offset(peek_addr);
    assign      head_rd_now   = peek_rd && in_win(peek_addr) && head_peek_hit && !wb_any;
    wire        win_rd    = cpu_go && sel_win && !cpu_write && !wb_any;
    // A block answers a posted register store in the clock after it (reg_ans), and
    // takes no request in that clock: a core that issues its next access then
    // (VexRiscv) waits one clock for a link or engine register.
    reg         reg_ans;
    wire        link_go   = cpu_go && sel_link && !wb_any && !reg_ans;
    wire        eng_go    = cpu_go && sel_engine && !wb_any && !reg_ans;
    // A NET register access waits for its answer (no posting, no look-ahead): off the
    // work-request path. The port takes it a clock after the request (net_csr_valid), so
    // its clock may start first (CPU_CLOCK_GATE) and both models take it in the same clock.
    wire        net_go    = cpu_go && sel_net && !wb_any && !reg_ans;
    reg         net_csr_valid;
    wire        eng_cmd   = is_eng_cmd(cpu_addr[11:2]);
    wire        reg_wr    = (link_go || (eng_go && !eng_cmd)) && cpu_write;  // a posted register store

    // ---- the request's kind, early --------------------------------------------------------
    // A posted store completes in its clock, and a link or engine read takes its block's
    // answer directly, decided from registers only: the look-ahead's kind a clock ahead
    // (la_used), or else the bus request (a register stage) and a read's second clock.
    wire        la_win_wr, la_reg_wr, la_link_rd, la_eng_rd, la_win_rd;
    reg         la_win_wr_q, la_reg_wr_q, la_link_rd_q, la_eng_rd_q;
    reg         rd_link_q, rd_eng_q;
    wire        la_link = la_addr[31:BLOCK_BITS] == MAP_LINK[31:BLOCK_BITS];
    wire        la_eng  = la_addr[31:BLOCK_BITS] == MAP_ENGINE[31:BLOCK_BITS];
    // Decoded into wires, not by calls inside the always block: with a constant la_addr
    // (no look-ahead) Verilator 5.006 stops on those calls (V3Gate internal error).
    wire        la_win  = in_win(la_addr);
    wire        la_cmd  = is_eng_cmd(la_addr[11:2]);
    always @(posedge clk) begin
        if (rst) begin
            la_win_wr_q  <= 1'b0;
            la_reg_wr_q  <= 1'b0;
            la_link_rd_q <= 1'b0;
            la_eng_rd_q  <= 1'b0;
        end else if (la_read || la_write) begin
            la_win_wr_q  <= la_write && la_win;
            la_reg_wr_q  <= la_write && (la_link || (la_eng && !la_cmd));
            la_link_rd_q <= la_read && la_link;
            la_eng_rd_q  <= la_read && la_eng;
        end
    end
    always @(posedge clk) begin
        if (rst) begin
            rd_link_q <= 1'b0;
            rd_eng_q  <= 1'b0;
        end else begin
            rd_link_q <= link_go && !cpu_write && !cpu_ready;
            rd_eng_q  <= eng_go && !cpu_write && !cpu_ready;
        end
    end
    assign la_win_wr  = la_used ? la_win_wr_q  : cpu_valid && cpu_write && sel_win;
    assign la_reg_wr  = la_used ? la_reg_wr_q  : cpu_valid && cpu_write && (sel_link || (sel_engine && !eng_cmd));
    assign la_link_rd = la_used ? la_link_rd_q : rd_link_q;
    assign la_eng_rd  = la_used ? la_eng_rd_q  : rd_eng_q;
    // A window read starts at the system port in its look-ahead clock, one clock early.
    assign la_win_rd  = la_read && la_win;
    wire        fast_wr   = cpu_go && (la_win_wr ? wb_room : la_reg_wr && !wb_any && !reg_ans);
    wire        local_start = cpu_go && sel_local && !wb_any;

    // ---- SYS registers ------------------------------------------------------------------
    // A SLEEP read goes unanswered (sleep_wait) until the block wakes.
    wire [RX_SLOTS-1:0] rx_ready;
    wire                net_rx_any;
    wire [31:0]         cycle_lo, sys_read;
    wire [7:0]          fw_leds;
    wire                sleep_wait;
    wire                local_answer = local_start && !sleep_wait;
    nf_sys_regs #(.CLK_HZ(CLK_HZ), .FW_RAM_BYTES(FW_RAM_BYTES), .RX_SLOTS(RX_SLOTS),
                  .CPU_TRAPS(CPU == "vexriscv" ? 1 : 0)) u_sys (
        .clk(clk), .rst(rst), .req(local_start && sel_sys), .addr(cpu_addr[11:2]), .wdata(cpu_wdata),
        .wstrb(cpu_wstrb), .rdata(sys_read), .sleep_wait(sleep_wait), .uart_period(uart_period),
        .rx_ready(rx_ready), .net_rx_any(net_rx_any), .cycle_lo(cycle_lo), .leds(fw_leds)
    );

    // ---- link ----------------------------------------------------------------------------
    wire        link_csr_ready;
    wire [31:0] link_csr_rdata;
    wire        link_mem_valid, link_mem_ready;
    wire [31:0] link_mem_addr, link_mem_wdata;
    wire [3:0]  link_mem_wstrb;
    wire        rx_activity, tx_activity, rx_error, link_mem_want;
    wire        udp_rxb_valid, udp_txb_ready;
    wire [7:0]  udp_rxb_data;
    /* verilator lint_off UNUSEDSIGNAL */  // unused with LINK_UDP = 0
    wire        udp_rxb_ready, udp_txb_valid;
    wire [7:0]  udp_txb_data;
    wire        udp_owner;  // for a board's LED
    /* verilator lint_on UNUSEDSIGNAL */
    nf_link #(.RX_SLOTS(RX_SLOTS), .TX_SLOTS(TX_SLOTS), .LINK_UDP(LINK_UDP)) u_link (
        .clk(clk), .rst(rst), .uart_rx(uart_rx), .uart_tx(uart_tx), .uart_period(uart_period),
        .cycle(cycle_lo),
        .csr_valid(link_go), .csr_addr(cpu_addr[11:0]), .csr_wdata(cpu_wdata),
        .csr_wstrb(cpu_wstrb), .csr_ready(link_csr_ready), .csr_rdata(link_csr_rdata),
        .mem_valid(link_mem_valid), .mem_addr(link_mem_addr), .mem_wdata(link_mem_wdata),
        .mem_wstrb(link_mem_wstrb), .mem_ready(link_mem_ready), .mem_rdata(sys_port_rdata),
        .rx_activity(rx_activity), .tx_activity(tx_activity), .rx_error(rx_error), .rx_ready(rx_ready),
        .mem_want(link_mem_want),
        .udp_rxb_valid(udp_rxb_valid), .udp_rxb_data(udp_rxb_data), .udp_rxb_ready(udp_rxb_ready),
        .udp_txb_valid(udp_txb_valid), .udp_txb_data(udp_txb_data), .udp_txb_ready(udp_txb_ready),
        .udp_owner(udp_owner)
    );
    generate
        if (LINK_UDP != 0) begin : g_link_udp
            /* verilator lint_off UNUSEDSIGNAL */
            wire udp_peer_valid, udp_rx_drop;  // status a board may show
            /* verilator lint_on UNUSEDSIGNAL */
            nf_link_udp u_link_udp (
                .clk(clk), .rst(rst), .local_mac(link_mac), .local_ip(link_ip),
                .phy_ce(link_phy_ce), .gmii_rxd(link_gmii_rxd), .gmii_rx_dv(link_gmii_rx_dv),
                .gmii_rx_er(link_gmii_rx_er), .gmii_txd(link_gmii_txd), .gmii_tx_en(link_gmii_tx_en),
                .gmii_tx_er(link_gmii_tx_er),
                .rxb_valid(udp_rxb_valid), .rxb_data(udp_rxb_data), .rxb_ready(udp_rxb_ready),
                .txb_valid(udp_txb_valid), .txb_data(udp_txb_data), .txb_ready(udp_txb_ready),
                .peer_valid(udp_peer_valid), .rx_drop(udp_rx_drop)
            );
        end else begin : g_no_link_udp
            assign udp_rxb_valid   = 1'b0;
            assign udp_rxb_data    = 8'd0;
            assign udp_txb_ready   = 1'b0;
            assign link_gmii_txd   = 8'd0;
            assign link_gmii_tx_en = 1'b0;
            assign link_gmii_tx_er = 1'b0;
        end
    endgenerate

    // ---- network port ----------------------------------------------------------------------
    // Its master and the link's take turns as one (nf_port_mux); without a port the link's
    // master is that one, unchanged.
    wire        net_csr_ready;
    wire [31:0] net_csr_rdata;
    wire        net_rx_activity, net_tx_activity;
    wire        net_busy;   // the port has work in hand: the engine's clock, which it runs on, must run
    wire        per_mem_valid, per_mem_ready, per_mem_want;
    wire [31:0] per_mem_addr, per_mem_wdata;
    wire [3:0]  per_mem_wstrb;
    generate if (HAS_NET != 0) begin : g_net
        wire        net_mem_valid, net_mem_ready, net_mem_want;
        wire [31:0] net_mem_addr, net_mem_wdata;
        wire [3:0]  net_mem_wstrb;
        wire [NET_RX_SLOTS-1:0] net_rx_ready;
        localparam integer NET_BASE = `NF_PROFILE_NET_BASE(RX_SLOTS, TX_SLOTS);  // after the link's slots
        always @(posedge clk)
            net_csr_valid <= !rst && net_go && !net_csr_ready;
        // On a clock of its own: with CPU_CLOCK_GATE it stops while the port has nothing in
        // hand and no register access (see "CPU and engine clocks").
        nf_net #(.RX_SLOTS(NET_RX_SLOTS), .TX_SLOTS(NET_TX_SLOTS), .SLOT_BASE(NET_BASE)) u_net (
            .clk(net_clk), .rst(rst), .mac_seed(net_mac_seed), .phy_ce(phy_ce),
            .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv), .gmii_rx_er(gmii_rx_er),
            .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en), .gmii_tx_er(gmii_tx_er),
            .cycle(cycle_lo),
            .csr_valid(net_csr_valid), .csr_addr(cpu_addr[11:0]), .csr_wdata(cpu_wdata),
            .csr_wstrb(cpu_wstrb), .csr_ready(net_csr_ready), .csr_rdata(net_csr_rdata),
            .mem_valid(net_mem_valid), .mem_addr(net_mem_addr), .mem_wdata(net_mem_wdata),
            .mem_wstrb(net_mem_wstrb), .mem_ready(net_mem_ready), .mem_rdata(sys_port_rdata),
            .rx_activity(net_rx_activity), .tx_activity(net_tx_activity), .rx_ready(net_rx_ready),
            .mem_want(net_mem_want), .busy(net_busy)
        );
        assign net_rx_any = net_rx_ready != {NET_RX_SLOTS{1'b0}};
        nf_port_mux u_port_mux (
            .clk(clk), .rst(rst),
            .a_valid(link_mem_valid), .a_addr(link_mem_addr), .a_wdata(link_mem_wdata), .a_wstrb(link_mem_wstrb),
            .a_ready(link_mem_ready), .a_want(link_mem_want),
            .b_valid(net_mem_valid), .b_addr(net_mem_addr), .b_wdata(net_mem_wdata), .b_wstrb(net_mem_wstrb),
            .b_ready(net_mem_ready), .b_want(net_mem_want),
            .m_valid(per_mem_valid), .m_addr(per_mem_addr), .m_wdata(per_mem_wdata), .m_wstrb(per_mem_wstrb),
            .m_ready(per_mem_ready), .m_want(per_mem_want)
        );
    end else begin : g_no_net
        /* verilator lint_off UNUSEDSIGNAL */
        wire unused_phy = &{1'b0, phy_ce, net_mac_seed, gmii_rxd, gmii_rx_dv, gmii_rx_er, net_go, net_clk, net_csr_valid, 1'b0};
        /* verilator lint_on UNUSEDSIGNAL */
        assign gmii_txd        = 8'd0;
        assign gmii_tx_en      = 1'b0;
        assign gmii_tx_er      = 1'b0;
        assign net_csr_ready   = 1'b0;
        assign net_csr_rdata   = 32'd0;
        assign net_rx_activity = 1'b0;
        assign net_tx_activity = 1'b0;
        assign net_rx_any      = 1'b0;
        assign net_busy        = 1'b0;
        always @(posedge clk)
            net_csr_valid <= 1'b0;
        assign per_mem_valid   = link_mem_valid;
        assign per_mem_addr    = link_mem_addr;
        assign per_mem_wdata   = link_mem_wdata;
        assign per_mem_wstrb   = link_mem_wstrb;
        assign link_mem_ready  = per_mem_ready;
        assign per_mem_want    = link_mem_want;
    end endgenerate

    // ---- system-port arbiter: CPU window and the link's (and port's) master take turns ------
    // The CPU's side is the write buffer's oldest entry, or else a window read (buffer
    // empty) from its look-ahead clock (win_early) or its request.
    wire        win_early = la_win_rd && !wb_any;
    wire        win_valid = wb_any || win_rd || win_early;
    reg         owned;        // a request is waiting for the engine: keep its master
    reg         owner_link;
    reg         last_link;    // the link had the previous turn
    wire        pick_link = owned ? owner_link : (per_mem_valid && (!win_valid || !last_link));
    wire        sys_port_valid = owned || win_valid || per_mem_valid;
    wire        sys_port_ready;
    wire [31:0] sys_port_rdata;
    wire [31:0] win_port_addr  = win_early ? win_offset(la_addr) : win_off;  // the CPU's window read
    wire [31:0] sys_port_addr  = pick_link ? per_mem_addr : wb_any ? wb_head_off : win_port_addr;
    wire [31:0] sys_port_wdata = pick_link ? per_mem_wdata : wb_head_data;
    wire [3:0]  sys_port_wstrb = pick_link ? per_mem_wstrb : wb_any ? wb_head_strb : 4'd0;
    // The port answers a request a clock or more after taking it (checked below), so its
    // master is then owner_link, a register: neither master's request logic reaches the
    // other's answer.
    assign per_mem_ready = sys_port_ready && owner_link;
    wire        win_ready = sys_port_ready && !owner_link;
    wire        wb_pop    = win_ready && wb_any;
    // A window read's answer goes to the CPU straight from the port's registered answer:
    // only registers on that path (the request is owned by then).
    wire        win_rd_ready = sys_port_ready && owned && !owner_link && !wb_any;

`ifndef SYNTHESIS
    always @(posedge clk) begin
        if (!rst && sys_port_ready && !owned) begin
            $display("nf_soc: ERROR: the system port answered a request it had not held for a clock");
            $stop;
        end
    end
`endif
    always @(posedge clk) begin
        if (rst) begin
            owned      <= 1'b0;
            owner_link <= 1'b0;
            last_link  <= 1'b0;
        end else if (sys_port_valid && sys_port_ready) begin
            owned     <= 1'b0;
            last_link <= pick_link;
        end else if (sys_port_valid) begin
            owned      <= 1'b1;
            owner_link <= pick_link;
        end
    end

    // The write buffer (see "posted writes" above): pushed only when it has room.
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_wb_empty;
    /* verilator lint_on UNUSEDSIGNAL */
    nf_word_fifo #(.DEPTH(WB_DEPTH), .WIDTH(68)) u_wb (
        .clk(clk), .rst(rst), .clear(1'b0), .push(wb_push), .push_data({win_off, cpu_wdata, cpu_wstrb}),
        .pop(wb_pop), .head(wb_head), .empty(unused_wb_empty), .count(wb_cnt)
    );

    // ---- engine ----------------------------------------------------------------------------
    wire        eng_csr_ready, eng_idle;
    wire [31:0] eng_csr_rdata;
    nf_engine #(
        .MEM_BYTES(MEM_BYTES), .MPT_ENTRIES(MPT_ENTRIES), .MTT_ENTRIES(MTT_ENTRIES), .USER_BASE(USER_BASE),
        .HEAD_SLOTS(RX_SLOTS)
    ) u_engine (
        .clk(eng_clk), .rst(rst),
        .csr_valid(eng_go), .csr_addr(cpu_addr[11:0]), .csr_wdata(cpu_wdata),
        .csr_wstrb(cpu_wstrb), .csr_ready(eng_csr_ready), .csr_rdata(eng_csr_rdata),
        .sys_valid(sys_port_valid), .sys_addr(sys_port_addr), .sys_wdata(sys_port_wdata),
        .sys_wstrb(sys_port_wstrb), .sys_ready(sys_port_ready), .sys_rdata(sys_port_rdata),
        // A read of an RX slot's head through the port is the CPU's window read: the link
        // reads only TX slots (nf_link_tx), and the write buffer only writes.
        .sys_head_addr(win_port_addr),
        .head_peek_addr(head_peek_off), .head_peek_hit(head_peek_hit), .head_peek_rdata(head_peek_rdata),
        .idle(eng_idle)
    );

    // ---- CPU read mux -------------------------------------------------------------------------
    // The CPU's ready and read data come from registers through a few LUTs; answers not
    // known early (SYS, unmapped, a read without look-ahead) are registered once more
    // (mmio_*). A block's answer to a posted store comes after it and is not the CPU's.
    always @(posedge clk) begin
        if (rst) mmio_ready <= 1'b0;
        else     mmio_ready <= ((wb_push || reg_wr) && !fast_wr) || local_answer ||
                               (cpu_valid && !reg_ans && link_csr_ready && sel_link && !cpu_write && !la_link_rd) ||
                               (cpu_valid && !reg_ans && eng_csr_ready && sel_engine && (!cpu_write || eng_cmd) && !la_eng_rd) ||
                               (cpu_valid && !reg_ans && net_csr_ready && sel_net);
        reg_ans <= !rst && reg_wr;
        mmio_rdata <= sel_link ? link_csr_rdata : sel_engine ? eng_csr_rdata : sel_net ? net_csr_rdata :
                      sel_sys ? sys_read : 32'd0;
    end
    wire [31:0] io_rdata = mmio_ready ? mmio_rdata : la_link_rd ? link_csr_rdata :
                           la_eng_rd ? eng_csr_rdata : head_rd_now ? head_peek_rdata : sys_port_rdata;
    always @(*) begin
        cpu_ready = ram_ready || mmio_ready || win_rd_ready || head_rd_now || fast_wr ||
                    (cpu_valid && ((la_link_rd && link_csr_ready) || (la_eng_rd && eng_csr_ready)));
        // The firmware RAM's data (the slowest: block-RAM clock-to-output) through one
        // LUT, after the other answers' mux (io_rdata).
        cpu_rdata = ram_sel ? ram_rdata : io_rdata;
    end

    // ---- CPU and engine clocks ----------------------------------------------------------------
    // CPU_CLOCK_GATE leaves out the CPU's edges while its SLEEP read waits and the core has
    // settled (not fetching), the engine's while it is idle with nothing for its port too,
    // and the network port's while it has nothing in hand and no register access: edges that
    // change nothing the firmware reads. Gates change with clk high: no glitch.
    generate if (CPU_CLOCK_GATE != 0) begin : g_cpu_gate
        localparam integer SLEEP_SETTLE = 4;
        localparam integer ENG_SETTLE   = 8;
        localparam integer NET_SETTLE   = 4;
        reg       cpu_gate, eng_gate, net_gate;
        reg [2:0] net_age;    // clocks the network port has been quiet, saturating
        reg [2:0] sleep_age;  // clocks the SLEEP read has waited with the core not fetching, saturating
        reg [3:0] eng_age;    // clocks the engine has been quiet, saturating
        wire      cpu_gate_d = !rst && sleep_wait && !cpu_fetching && sleep_age == SLEEP_SETTLE[2:0];
        wire      eng_quiet  = cpu_gate_d && eng_idle && !sys_port_valid && !wb_any && !per_mem_want && !net_busy;
        wire      net_quiet  = !rst && !net_busy && !net_go && !net_csr_valid;
        always @(posedge clk) begin
            if (rst || !sleep_wait || cpu_fetching)
                sleep_age <= 3'd0;
            else if (sleep_age != SLEEP_SETTLE[2:0])
                sleep_age <= sleep_age + 3'd1;
            if (rst || !eng_quiet)
                eng_age <= 4'd0;
            else if (eng_age != ENG_SETTLE[3:0])
                eng_age <= eng_age + 4'd1;
            if (rst || !net_quiet)
                net_age <= 3'd0;
            else if (net_age != NET_SETTLE[2:0])
                net_age <= net_age + 3'd1;
            cpu_gate <= cpu_gate_d;
            eng_gate <= eng_quiet && eng_age == ENG_SETTLE[3:0];
            net_gate <= net_quiet && net_age == NET_SETTLE[2:0];
        end
        assign cpu_clk = clk | cpu_gate;
        assign eng_clk = clk | eng_gate;
        assign net_clk = clk | net_gate;
    end else begin : g_cpu_clk
        /* verilator lint_off UNUSEDSIGNAL */
        wire unused_gate_inputs = &{1'b0, cpu_fetching, eng_idle, per_mem_want, net_busy, 1'b0};
        /* verilator lint_on UNUSEDSIGNAL */
        assign cpu_clk = clk;
        assign eng_clk = clk;
        assign net_clk = clk;
    end endgenerate

    // ---- LEDs ----------------------------------------------------------------------------------
    reg [31:0] rx_led_cnt, tx_led_cnt, err_led_cnt;
    always @(posedge clk) begin
        if (rst) begin
            rx_led_cnt  <= 32'd0;
            tx_led_cnt  <= 32'd0;
            err_led_cnt <= 32'd0;
        end else begin
            rx_led_cnt  <= rx_activity || net_rx_activity ? STRETCH : rx_led_cnt != 0 ? rx_led_cnt - 32'd1 : 32'd0;
            tx_led_cnt  <= tx_activity || net_tx_activity ? STRETCH : tx_led_cnt != 0 ? tx_led_cnt - 32'd1 : 32'd0;
            err_led_cnt <= rx_error    ? STRETCH : err_led_cnt != 0 ? err_led_cnt - 32'd1 : 32'd0;
        end
    end
    // [0] RX, [1] TX (the link's or the port's), [2] link error or CPU trap; firmware's LEDS
    // bits are ORed in.
    assign leds = fw_leds | {5'd0, err_led_cnt != 0 || trap, tx_led_cnt != 0, rx_led_cnt != 0};

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_soc = cpu_instr;
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
