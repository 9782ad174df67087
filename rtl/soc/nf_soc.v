// SPDX-License-Identifier: Apache-2.0
// SoC top: PicoRV32 (RV32IM) with its firmware RAM, the SYS registers, the link
// hardware and the registration engine, joined by the CPU memory map (NF_MAP_*).
// The engine's system port is shared by the CPU's adapter-memory window and the
// link's master. Board tops add clock and pins; the Verilator model drives
// uart_period from --baud.
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
    // Synthesis with PicoRV32 only: 0 the firmware RAM is one 32-bit memory (Yosys stacks
    // block RAMs in depth behind a read mux: the slowest path into the CPU); 1, 2 or 4: it is
    // 32 / this memories of this many bits, one block RAM deep each up to 16 Ki / this words
    // (64 KiB of RAM at 1, 32 KiB at 2), so the block RAMs' outputs reach the CPU without a
    // mux; each is loaded from FW_HEX.sNN (bits NN * this up, one hex digit a word, written
    // by tools/fw_slices.py).
    /* verilator lint_off UNUSEDPARAM */
    parameter integer FW_SLICE_BITS = 0,
    /* verilator lint_on UNUSEDPARAM */
    // 1 (the Verilator model): the CPU's clock stops while it waits on a SLEEP read, and
    // the engine's while it is idle too, so the simulation skips their evaluation then; 0
    // (the boards): both run on clk. A CPU waiting on its bus or an idle engine changes
    // nothing, so the two agree clock for clock (see "CPU and engine clocks"; sim/tests).
    parameter integer CPU_CLOCK_GATE = 0
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        uart_rx,
    output wire        uart_tx,
    input  wire [15:0] uart_period,
    output wire [7:0]  leds,
    output wire        trap
);
    localparam integer RAM_WORDS = FW_RAM_BYTES / 4;
    localparam integer RAM_AW    = $clog2(RAM_WORDS);
    localparam integer USER_BASE = `NF_PROFILE_USER_BASE(RX_SLOTS, TX_SLOTS);
    // LED pulses are stretched to 1/20 s so a single frame is visible.
    localparam integer STRETCH   = CLK_HZ / 20;
    localparam [31:0]  MAP_SYS    = `NF_MAP_SYS;
    localparam [31:0]  MAP_LINK   = `NF_MAP_LINK;
    localparam [31:0]  MAP_ENGINE = `NF_MAP_ENGINE;
    localparam [31:0]  MAP_WIN    = `NF_MAP_ADAPTER_MEM;
    localparam [31:0]  WIN_BYTES  = MEM_BYTES;
    localparam integer BLOCK_BITS = 12;  // every register block is 4 KiB

    // An address inside the firmware RAM: its high bits zero, and for a RAM whose size is
    // no power of two its low bits below the size too. A few LUTs, not the 32-bit
    // comparison's carry chain, which sat on the path from the CPU into the block RAMs.
    localparam integer RAM_AB   = $clog2(FW_RAM_BYTES);
    localparam         RAM_POW2 = (FW_RAM_BYTES == (1 << RAM_AB));
    localparam [31:0]  RAM_SIZE = FW_RAM_BYTES;
    function in_fw_ram(input [31:0] a);
        in_fw_ram = (a >> RAM_AB) == 32'd0 && (RAM_POW2 || a[RAM_AB-1:0] < RAM_SIZE[RAM_AB-1:0]);
    endfunction

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
    // below), so an address is in it by its high bits and its offset is its low bits:
    // no subtraction or 32-bit comparison (carry chains) between the CPU's address and
    // the system port's arbiter.
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
    // The firmware RAM's one port, driven by the core's branch below, and when the
    // RAM answers a request (ram_ready: in the request's own cycle whenever it can).
    wire        ram_rd, ram_wr, ram_ready;
    wire        ram_sel;  // the RAM's data is the answer (a register where it can be: the read mux's select)
    wire [31:0] ram_addr, ram_wdata;
    wire [3:0]  ram_wstrb;
    reg  [31:0] ram_rdata;
    reg  [31:0] ram [0:RAM_WORDS-1];  // the firmware RAM (see below)
    wire        ram_we;

    // ---- address decode ---------------------------------------------------------------
    wire [31:0] win_off  = win_offset(cpu_addr);
    wire sel_ram    = in_fw_ram(cpu_addr);
    wire sel_sys    = cpu_addr[31:BLOCK_BITS] == MAP_SYS[31:BLOCK_BITS];
    wire sel_link   = cpu_addr[31:BLOCK_BITS] == MAP_LINK[31:BLOCK_BITS];
    wire sel_engine = cpu_addr[31:BLOCK_BITS] == MAP_ENGINE[31:BLOCK_BITS];
    wire sel_win    = in_win(cpu_addr);
    // SYS and unmapped addresses answer one cycle later (unmapped reads 0, writes are
    // ignored) so the CPU never hangs.
    wire sel_local  = !sel_ram && !sel_link && !sel_engine && !sel_win;
    wire cpu_write  = cpu_wstrb != 4'd0;
    reg         mmio_ready;   // a registered answer: link, engine, SYS, unmapped, or a posted write taken
    reg  [31:0] mmio_rdata;

    // ---- posted writes ------------------------------------------------------------------
    // A store to the adapter-memory window goes into a small write buffer (WB_DEPTH
    // entries) and completes for the CPU at once (PicoRV32, see fast_wr) or one clock
    // later; the buffer drains to the system port in order, in the background. A store
    // to a link or engine register is taken by its block in its first cycle (as a read
    // is) and completes likewise, without waiting for the block's answer; but a store that
    // starts an engine operation (TBL_CMD, LD_CTRL, DMA_CTRL, CHK_CTRL) waits for it as
    // before: the firmware reads the operation's status right after, once, before its
    // slower polling loop, and that read one clock earlier finds a table command still
    // busy (measured: +74 clocks per fast-register).
    // Ordering rule (the CPU sees the same results as with waited stores):
    //  - a window store is taken when the buffer has room;
    //  - every other access except the firmware RAM (window reads, link, engine, SYS and
    //    unmapped addresses, reads and writes) is taken only when the buffer is empty,
    //    i.e. when the port has answered every earlier window store (an answered store
    //    lands in the next clock, before any access taken later reaches the memory).
    // So a window read sees every earlier window store, and a register access that
    // makes the hardware read adapter memory (posting a TX frame, starting the loader or
    // a DMA, a table command) starts only after every earlier store has landed; the
    // CYCLE_LO read that ends a measure comes after the work's stores too.
    localparam integer WB_DEPTH = 2;  // window write-buffer entries (the system port takes a store every 2 clocks)
    wire [67:0] wb_head;              // the oldest store: {offset, data, byte strobes}
    wire [31:0] wb_head_off  = wb_head[67:36];
    wire [31:0] wb_head_data = wb_head[35:4];
    wire [3:0]  wb_head_strb = wb_head[3:0];
    wire [1:0]  wb_cnt;               // entries held
    wire        wb_any  = wb_cnt != 2'd0;
    wire        wb_room = wb_cnt != WB_DEPTH[1:0];
    // Requests as taken under the rule above (a registered answer's cycle excluded: the
    // CPU still holds the request then).
    wire        cpu_go    = cpu_valid && !mmio_ready;
    wire        wb_push   = cpu_go && sel_win && cpu_write && wb_room;
    // A window read of an RX slot's head (VexRiscv, whose bus request comes from its own
    // register stage) is answered in the clock the core issues it, from the
    // adapter memory's copy of the heads (head_peek_*, read without a clock at the core's
    // address), without the register stage below or the system port (head_rd_now): when
    // nothing is ahead of it, the stage empty and the buffer too, so it sees every earlier
    // store (the copy holds every write the port answered: it lands in the clock after its
    // answer, and the peek sees a landing write's bytes). Otherwise it takes the usual
    // way, and the system port reads the copy.
    wire        head_peek_hit;
    wire [31:0] head_peek_rdata;
    wire [31:0] head_peek_off;  // the core's request's window offset (below)
    wire        head_rd_now;
    wire        win_rd    = cpu_go && sel_win && !cpu_write && !wb_any;
    // A block answers a posted register store in the clock after it (reg_ans), and
    // takes no request in that clock: a core that issues its next access then
    // (VexRiscv) waits one clock for a link or engine register.
    reg         reg_ans;
    wire        link_go   = cpu_go && sel_link && !wb_any && !reg_ans;
    wire        eng_go    = cpu_go && sel_engine && !wb_any && !reg_ans;
    wire        eng_cmd   = is_eng_cmd(cpu_addr[11:2]);
    wire        reg_wr    = (link_go || (eng_go && !eng_cmd)) && cpu_write;  // a posted register store
    // With PicoRV32 the store's kind is known a cycle ahead (the look-ahead bus, decoded
    // into la_win_wr / la_reg_wr): a posted store then completes in its own cycle, from
    // registers only; otherwise one clock later, through mmio_ready.
    wire        la_win_wr, la_reg_wr;
    // Likewise a read of a link or engine register (la_link_rd / la_eng_rd): its answer
    // then goes to the CPU straight from the block's registered answer (csr_ready,
    // csr_rdata), one clock after the request; otherwise registered once more.
    wire        la_link_rd, la_eng_rd;
    // And a window read starts at the system port in the look-ahead cycle itself
    // (la_win_rd: the CPU's request follows in the next cycle), one clock early.
    wire        la_win_rd;
    wire        fast_wr   = cpu_go && (la_win_wr ? wb_room : la_reg_wr && !wb_any && !reg_ans);
    wire        local_start = cpu_go && sel_local && !wb_any;

    // The CPU's clock (see CPU_CLOCK_GATE and "CPU clock" below), and whether the core is
    // fetching on a bus of its own (VexRiscv's instruction-cache refills): it is clocked then.
    wire        cpu_clk, eng_clk;
    wire        cpu_fetching;

    generate if (CPU == "picorv32") begin : g_picorv32
        /* verilator lint_off UNUSEDSIGNAL */
        wire        unused_pcpi_valid, unused_trace_valid;
        wire [31:0] unused_pcpi_insn, unused_pcpi_rs1, unused_pcpi_rs2, unused_eoi;
        wire [35:0] unused_trace_data;
        /* verilator lint_on UNUSEDSIGNAL */
        // No M extension (the firmware is rv32i; fw_mul64 multiplies by shifts and adds):
        // the firmware multiplies and divides only at boot and in the link's retransmit
        // timeout, never on the work-request path. The one-clock DSP multiplier was the
        // ULX3S 25F's slowest path, and the sequential one costs the simulation ~19 % of
        // its work at every clock (make sim-ir), multiplying or not.
        picorv32 #(
            .ENABLE_MUL(0), .ENABLE_FAST_MUL(0), .ENABLE_DIV(0), .BARREL_SHIFTER(1), .COMPRESSED_ISA(0),
            .ENABLE_IRQ(0), .PROGADDR_RESET(32'h0000_0000), .STACKADDR(FW_RAM_BYTES)
        ) u_cpu (
            .clk(cpu_clk), .resetn(!rst), .trap(trap),
            .mem_valid(cpu_valid), .mem_instr(cpu_instr), .mem_ready(cpu_ready),
            .mem_addr(cpu_addr), .mem_wdata(cpu_wdata), .mem_wstrb(cpu_wstrb), .mem_rdata(cpu_rdata),
            .mem_la_read(ram_rd), .mem_la_write(ram_wr), .mem_la_addr(ram_addr),
            .mem_la_wdata(ram_wdata), .mem_la_wstrb(ram_wstrb),
            .pcpi_valid(unused_pcpi_valid), .pcpi_insn(unused_pcpi_insn), .pcpi_rs1(unused_pcpi_rs1),
            .pcpi_rs2(unused_pcpi_rs2), .pcpi_wr(1'b0), .pcpi_rd(32'd0), .pcpi_wait(1'b0), .pcpi_ready(1'b0),
            .irq(32'd0), .eoi(unused_eoi),
            .trace_valid(unused_trace_valid), .trace_data(unused_trace_data)
        );
        // PicoRV32 drives the port from its look-ahead bus (the next transfer's
        // address one cycle before cpu_valid), so the RAM answers at once.
        // The same look-ahead bus tells, one cycle ahead, whether the next transfer is for
        // the RAM or a posted store, etc. (every transfer starts with mem_la_read or
        // mem_la_write): registers, not the address decode, on the CPU's ready and
        // read-data paths (the RAM's data, late out of the block RAM, through one LUT).
        reg  la_ram_q, la_win_wr_q, la_reg_wr_q, la_link_rd_q, la_eng_rd_q;
        assign ram_sel   = la_ram_q;
        assign ram_ready = cpu_valid && la_ram_q;
        wire la_link = ram_addr[31:BLOCK_BITS] == MAP_LINK[31:BLOCK_BITS];
        wire la_eng  = ram_addr[31:BLOCK_BITS] == MAP_ENGINE[31:BLOCK_BITS];
        always @(posedge clk) begin
            if (rst) begin
                la_ram_q     <= 1'b0;
                la_win_wr_q  <= 1'b0;
                la_reg_wr_q  <= 1'b0;
                la_link_rd_q <= 1'b0;
                la_eng_rd_q  <= 1'b0;
            end else if (ram_rd || ram_wr) begin
                la_ram_q     <= in_fw_ram(ram_addr);
                la_win_wr_q  <= ram_wr && in_win(ram_addr);
                la_reg_wr_q  <= ram_wr && (la_link || (la_eng && !is_eng_cmd(ram_addr[11:2])));
                la_link_rd_q <= ram_rd && la_link;
                la_eng_rd_q  <= ram_rd && la_eng;
            end
        end
        assign cpu_fetching = 1'b0;  // it fetches on the one bus: stalled with the rest
        assign head_peek_off = win_off;  // unused: no head peek with this core
        assign head_rd_now   = 1'b0;
        /* verilator lint_off UNUSEDSIGNAL */
        wire unused_head_peek = head_peek_hit;
        /* verilator lint_on UNUSEDSIGNAL */
        assign la_win_rd  = ram_rd && in_win(ram_addr);
        assign la_win_wr  = la_win_wr_q;
        assign la_reg_wr  = la_reg_wr_q;
        assign la_link_rd = la_link_rd_q;
        assign la_eng_rd  = la_eng_rd_q;
    end else begin : g_vexriscv
        // VexRiscv (pythondata-cpu-vexriscv; the variant file is chosen by the build):
        // Wishbone instruction and data buses. The instruction bus (cache refills: the
        // code runs from the firmware RAM) reads the RAM only (see below); the data bus
        // reaches the RAM directly and everything else through the SoC bus.
        wire        ib_cyc, ib_stb, db_cyc, db_stb, db_we;
        wire [29:0] ib_adr, db_adr;
        wire [31:0] db_dat;
        wire [3:0]  db_sel;
        /* verilator lint_off UNUSEDSIGNAL */
        wire        unused_ib_we;
        wire [31:0] unused_ib_dat;
        wire [3:0]  unused_ib_sel;
        wire [2:0]  unused_ib_cti, unused_db_cti;  // a data-cache refill burst is single reads to the SoC bus
        wire [1:0]  unused_ib_bte, unused_db_bte;
        /* verilator lint_on UNUSEDSIGNAL */
        wire        req_i = ib_cyc && ib_stb;
        wire        i_ack;
        wire [31:0] i_rdata;
        VexRiscv u_cpu (
            .clk(cpu_clk), .reset(rst), .externalResetVector(32'h0000_0000),
            .timerInterrupt(1'b0), .softwareInterrupt(1'b0), .externalInterruptArray(32'd0),
            .iBusWishbone_CYC(ib_cyc), .iBusWishbone_STB(ib_stb), .iBusWishbone_ACK(i_ack),
            .iBusWishbone_WE(unused_ib_we), .iBusWishbone_ADR(ib_adr), .iBusWishbone_DAT_MISO(i_rdata),
            .iBusWishbone_DAT_MOSI(unused_ib_dat), .iBusWishbone_SEL(unused_ib_sel), .iBusWishbone_ERR(1'b0),
            .iBusWishbone_CTI(unused_ib_cti), .iBusWishbone_BTE(unused_ib_bte),
            .dBusWishbone_CYC(db_cyc), .dBusWishbone_STB(db_stb), .dBusWishbone_ACK(cpu_ready),
            .dBusWishbone_WE(db_we), .dBusWishbone_ADR(db_adr), .dBusWishbone_DAT_MISO(cpu_rdata),
            .dBusWishbone_DAT_MOSI(db_dat), .dBusWishbone_SEL(db_sel), .dBusWishbone_ERR(1'b0),
            .dBusWishbone_CTI(unused_db_cti), .dBusWishbone_BTE(unused_db_bte)
        );
        // The data bus's request as the core drives it (d_*): the firmware RAM answers it
        // at once (below); any other goes through one register stage (q_*) onto the SoC
        // bus, which holds it until the SoC answers, so the address decode, the slaves
        // and the system-port arbiter see registers only, never the core's request logic
        // (measured by bench-cores on the ULX3S 85F at a 75 MHz target: 59.0 MHz without
        // the stage, its critical path from the core's data-cache command into the DMA's
        // state; 67.2 MHz with it, the critical path inside the core; one clock more per
        // access, 22 per 1-page fast-register).
        wire [31:0] d_addr  = {db_adr, 2'b00};
        wire        d_valid = db_cyc && db_stb;
        wire        d_ram   = in_fw_ram(d_addr);
        wire [3:0]  d_wstrb = db_we ? db_sel : 4'd0;
        reg         q_valid;
        // An RX head read answered at once (see "posted writes"): the core's address is a
        // register of its bus bridge, and its answer goes into registers of the bridge.
        // Only with the stage empty: a request in it is the one the core still holds, and
        // the stage answers that one (answering it here too would acknowledge it twice).
        assign head_peek_off = win_offset(d_addr);
        assign head_rd_now   = d_valid && !db_we && in_win(d_addr) && head_peek_hit && !q_valid && !wb_any;
        reg  [31:0] q_addr, q_wdata;
        reg  [3:0]  q_wstrb;
        always @(posedge clk) begin
            if (rst) begin
                q_valid <= 1'b0;
                q_addr  <= 32'd0;
                q_wdata <= 32'd0;
                q_wstrb <= 4'd0;
            end else if (q_valid) begin
                q_valid <= !cpu_ready;
            end else if (d_valid && !d_ram && !head_rd_now) begin
                q_valid <= 1'b1;
                q_addr  <= d_addr;
                q_wdata <= db_dat;
                q_wstrb <= d_wstrb;
            end
        end
        assign cpu_fetching = req_i;
        assign cpu_valid = q_valid;
        assign cpu_instr = 1'b0;
        assign cpu_addr  = q_addr;
        assign cpu_wdata = q_wdata;
        assign cpu_wstrb = q_wstrb;
        assign trap      = 1'b0;  // VexRiscv takes exceptions through mtvec; it has no trap pin
        // No look-ahead, but the SoC bus's request comes from the register stage above:
        // a posted store is decoded in its own cycle and completes in it; a link or
        // engine read is marked in its first cycle
        // (rd_link_q, rd_eng_q: the block's registered answer comes one clock later at
        // the soonest) and answered straight from the block's answer.
        reg         rd_link_q, rd_eng_q;
        always @(posedge clk) begin
            if (rst) begin
                rd_link_q <= 1'b0;
                rd_eng_q  <= 1'b0;
            end else begin
                rd_link_q <= link_go && !cpu_write && !cpu_ready;
                rd_eng_q  <= eng_go && !cpu_write && !cpu_ready;
            end
        end
        assign la_win_wr  = cpu_valid && cpu_write && sel_win;
        assign la_reg_wr  = cpu_valid && cpu_write && (sel_link || (sel_engine && !eng_cmd));
        assign la_link_rd = rd_link_q;
        assign la_eng_rd  = rd_eng_q;
        assign la_win_rd  = 1'b0;
        // The firmware RAM has one port (as with PicoRV32: one block RAM per 16 Kbit; a
        // second port for the instruction bus made the ECP5 mapping twice as many), shared
        // by the data bus and the instruction-cache refills: a data access first, a refill
        // beat in a clock without one (the core waits for the refill then, mostly; the
        // work-request path fits the cache, firmware/link.ld).
        // Wishbone has no look-ahead: the port guesses. After every read it reads the next
        // word (the next beat of a cache-line refill, or the next line) and keeps it until
        // a write to the RAM, so a read of the guessed word, by either bus, answers at once
        // and any other read one clock later; writes answer at once. A refill burst thus
        // takes one word per clock after its first. The word after the guessed one is kept
        // ready (guess_next), so no adder sits between the core's address and the RAM's.
        reg  [31:0] guess_addr, guess_next;
        reg         guess_ok;
        wire [31:0] i_addr  = {ib_adr, 2'b00};
        wire        d_req   = d_valid && d_ram;
        wire        d_rd    = d_req && d_wstrb == 4'd0;
        wire        d_hit   = d_rd && guess_ok && guess_addr == d_addr;
        wire        i_go    = req_i && !d_req;
        wire        i_hit   = guess_ok && guess_addr == i_addr;
        assign ram_rd    = d_rd || i_go;
        assign ram_wr    = d_req && d_wstrb != 4'd0;
        assign ram_addr  = (d_req ? d_hit : i_hit) ? guess_next : d_req ? d_addr : i_addr;
        assign ram_wdata = db_dat;
        assign ram_wstrb = d_wstrb;
        assign ram_ready = d_hit || ram_wr;
        assign ram_sel   = ram_ready;
        assign i_ack     = i_go && i_hit;
        assign i_rdata   = ram_rdata;
        always @(posedge clk) begin
            if (rst) begin
                guess_addr <= 32'd0;
                guess_next <= 32'd4;
                guess_ok   <= 1'b0;
            end else begin
                if (ram_rd) begin
                    guess_addr <= ram_addr;
                    guess_next <= ram_addr + 32'd4;
                end
                guess_ok <= ram_rd || (guess_ok && !ram_wr);
            end
        end
    end endgenerate

    // ---- firmware RAM -------------------------------------------------------------------
    // One port, for reads and writes alike.
    wire [RAM_AW-1:0] ram_idx = ram_addr[RAM_AW+1:2];
    assign ram_we = ram_wr && in_fw_ram(ram_addr);

`ifndef SYNTHESIS
    reg [8*1024-1:0] fw_path;
`endif
    initial begin
`ifndef SYNTHESIS
        // Simulation: +firmware=PATH replaces the image without rebuilding the model.
        if ($value$plusargs("firmware=%s", fw_path))
            $readmemh(fw_path, ram);
        else
`endif
            $readmemh(FW_HEX, ram);
    end

`ifdef SYNTHESIS
    generate if (FW_SLICE_BITS != 0 && CPU == "picorv32") begin : g_ram_sliced
        // Bit slices (FW_SLICE_BITS): the same RAM, read and written as below; the
        // 32-bit memory above is unused then.
        genvar sl;
        for (sl = 0; sl < 32 / FW_SLICE_BITS; sl = sl + 1) begin : g_slice
            localparam integer LO = sl * FW_SLICE_BITS;
            localparam [7:0] D1 = 48 + sl / 10, D0 = 48 + sl % 10;  // "NN" of the file name
            reg [FW_SLICE_BITS-1:0] part [0:RAM_WORDS-1];
            initial $readmemh({FW_HEX, ".s", D1, D0}, part);
            always @(posedge clk) begin
                if (ram_we && ram_wstrb[LO / 8]) part[ram_idx] <= ram_wdata[LO +: FW_SLICE_BITS];
                if (ram_rd) ram_rdata[LO +: FW_SLICE_BITS] <= part[ram_idx];
            end
        end
    end else begin : g_ram
`endif
    always @(posedge clk) begin
        if (ram_we && ram_wstrb[0]) ram[ram_idx][7:0]   <= ram_wdata[7:0];
        if (ram_we && ram_wstrb[1]) ram[ram_idx][15:8]  <= ram_wdata[15:8];
        if (ram_we && ram_wstrb[2]) ram[ram_idx][23:16] <= ram_wdata[23:16];
        if (ram_we && ram_wstrb[3]) ram[ram_idx][31:24] <= ram_wdata[31:24];
        if (ram_rd) ram_rdata <= ram[ram_idx];
    end
`ifdef SYNTHESIS
    end endgenerate
`endif

    // ---- SYS registers ------------------------------------------------------------------
    reg [63:0] cycle;
    reg [31:0] cycle_hi_latched;
    reg [7:0]  fw_leds;
    reg [31:0] scratch;
    wire [11:0] sys_off = {cpu_addr[11:2], 2'b00};
    wire sys_start = local_start && sel_sys;
    wire sys_write = sys_start && cpu_write;
    wire [31:0] clk_hz_word = CLK_HZ;
    wire [31:0] ram_bytes_word = FW_RAM_BYTES;

    // SLEEP: a read of it is answered (one clock later, as any SYS read) only in a clock
    // where a frame is in an RX slot of WAKE_RX or CYCLE_LO has reached WAKE_AT; until then
    // the CPU waits on it. The deadline compare is registered (a 32-bit subtraction off
    // the CPU's ready path): it may answer one clock late.
    reg  [31:0]         wake_at;
    reg  [RX_SLOTS-1:0] wake_rx;
    reg                 wake_time;   // CYCLE_LO has reached WAKE_AT (as of the previous clock)
    wire [RX_SLOTS-1:0] rx_ready;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0]         to_wake   = cycle[31:0] - wake_at;   // its sign only
    /* verilator lint_on UNUSEDSIGNAL */
    wire                wake      = wake_time || (rx_ready & wake_rx) != {RX_SLOTS{1'b0}};
    wire                sleep_rd  = sys_start && !sys_write && sys_off == `NF_SYS_SLEEP;
    wire                sleep_wait = sleep_rd && !wake;   // a SLEEP read not answered this clock
    wire                local_answer = local_start && !sleep_wait;
    wire [31:0]         rx_ready_word = {{(32 - RX_SLOTS){1'b0}}, rx_ready};
    wire [31:0]         wake_rx_word  = {{(32 - RX_SLOTS){1'b0}}, wake_rx};

    wire        wr_leds, wr_scratch, wr_wake_at, wr_wake_rx;
    wire [31:0] sys_read;
    // Register decode generated from the contract.
    nf_sys_regs_decode u_sys_decode (
        .addr(sys_off), .we(sys_write), .wr_leds(wr_leds), .wr_scratch(wr_scratch),
        .wr_wake_at(wr_wake_at), .wr_wake_rx(wr_wake_rx),
        .rd_id(`NF_SYS_HW_ID_VALUE), .rd_hw_version(`NF_ADAPTER_HW_VERSION), .rd_clk_hz(clk_hz_word),
        .rd_cycle_lo(cycle[31:0]), .rd_cycle_hi(cycle_hi_latched), .rd_leds({24'd0, fw_leds}),
        .rd_fw_ram_bytes(ram_bytes_word), .rd_uart_period({16'd0, uart_period}), .rd_scratch(scratch),
        .rd_sleep(rx_ready_word), .rd_wake_at(wake_at), .rd_wake_rx(wake_rx_word),
        .rdata(sys_read)
    );

    always @(posedge clk) begin
        if (rst) begin
            cycle            <= 64'd0;
            cycle_hi_latched <= 32'd0;
            fw_leds          <= 8'd0;
            scratch          <= 32'd0;
            wake_at          <= 32'd0;
            wake_rx          <= {RX_SLOTS{1'b0}};
            wake_time        <= 1'b0;
        end else begin
            wake_time <= !to_wake[31];
            // WAKE_AT and WAKE_RX take whole words (the firmware's stores are).
            if (wr_wake_at && cpu_wstrb == 4'hF)
                wake_at <= cpu_wdata;
            if (wr_wake_rx && cpu_wstrb == 4'hF)
                wake_rx <= cpu_wdata[RX_SLOTS-1:0];
            cycle <= cycle + 64'd1;
            // Reading CYCLE_LO latches CYCLE_HI, so the pair reads as one 64-bit value.
            if (sys_start && !sys_write && sys_off == `NF_SYS_CYCLE_LO)
                cycle_hi_latched <= cycle[63:32];
            if (wr_leds && cpu_wstrb[0])
                fw_leds <= cpu_wdata[7:0];
            if (wr_scratch) begin
                if (cpu_wstrb[0]) scratch[7:0]   <= cpu_wdata[7:0];
                if (cpu_wstrb[1]) scratch[15:8]  <= cpu_wdata[15:8];
                if (cpu_wstrb[2]) scratch[23:16] <= cpu_wdata[23:16];
                if (cpu_wstrb[3]) scratch[31:24] <= cpu_wdata[31:24];
            end
        end
    end

    // ---- link ----------------------------------------------------------------------------
    wire        link_csr_ready;
    wire [31:0] link_csr_rdata;
    wire        link_mem_valid, link_mem_ready;
    wire [31:0] link_mem_addr, link_mem_wdata;
    wire [3:0]  link_mem_wstrb;
    wire        rx_activity, tx_activity, rx_error, link_mem_want;
    nf_link #(.RX_SLOTS(RX_SLOTS), .TX_SLOTS(TX_SLOTS)) u_link (
        .clk(clk), .rst(rst), .uart_rx(uart_rx), .uart_tx(uart_tx), .uart_period(uart_period),
        .cycle(cycle[31:0]),
        .csr_valid(link_go), .csr_addr(cpu_addr[11:0]), .csr_wdata(cpu_wdata),
        .csr_wstrb(cpu_wstrb), .csr_ready(link_csr_ready), .csr_rdata(link_csr_rdata),
        .mem_valid(link_mem_valid), .mem_addr(link_mem_addr), .mem_wdata(link_mem_wdata),
        .mem_wstrb(link_mem_wstrb), .mem_ready(link_mem_ready), .mem_rdata(sys_port_rdata),
        .rx_activity(rx_activity), .tx_activity(tx_activity), .rx_error(rx_error), .rx_ready(rx_ready),
        .mem_want(link_mem_want)
    );

    // ---- system-port arbiter: CPU window and link master take turns -------------------------
    // The CPU's side is the write buffer's oldest entry, or else a window read (taken
    // only with the buffer empty), from its look-ahead cycle (win_early: the CPU has no
    // request out then) if the port takes it then, or else from its request.
    wire        win_early = la_win_rd && !wb_any;
    wire        win_valid = wb_any || win_rd || win_early;
    reg         owned;        // a request is waiting for the engine: keep its master
    reg         owner_link;
    reg         last_link;    // the link had the previous turn
    wire        pick_link = owned ? owner_link : (link_mem_valid && (!win_valid || !last_link));
    wire        sys_port_valid = owned || win_valid || link_mem_valid;
    wire        sys_port_ready;
    wire [31:0] sys_port_rdata;
    wire [31:0] win_port_addr  = win_early ? win_offset(ram_addr) : win_off;  // the CPU's window read
    wire [31:0] sys_port_addr  = pick_link ? link_mem_addr : wb_any ? wb_head_off : win_port_addr;
    wire [31:0] sys_port_wdata = pick_link ? link_mem_wdata : wb_head_data;
    wire [3:0]  sys_port_wstrb = pick_link ? link_mem_wstrb : wb_any ? wb_head_strb : 4'd0;
    // The port answers a request at least 1 clock after it takes it, so the request is
    // owned then and its master is owner_link (a register; checked below in simulation):
    // neither master's request logic reaches the other's answer (on the ULX3S 85F the CPU's
    // window request, through pick_link, reached the link's receive state).
    assign link_mem_ready = sys_port_ready && owner_link;
    wire        win_ready = sys_port_ready && !owner_link;
    wire        wb_pop    = win_ready && wb_any;
    // The answer to a window read goes to the CPU straight from the engine's registered
    // system-port answer (sys_ready, sys_rdata): only registers on that path (the port
    // answers at least 1 clock after it takes a request, so the request is owned then).
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
    // The CPU's ready and read data come from registers through a few LUTs only: the
    // RAM's, the window's (see the arbiter), a read of link or engine registers decoded
    // a cycle ahead (PicoRV32: la_link_rd, la_eng_rd), a posted store decoded a cycle
    // ahead (fast_wr); every other answer (SYS, unmapped, the CPUs without look-ahead)
    // is registered once more here (one clock per access), so the address decode and
    // the slaves' ready and read-data muxes stay out of the CPU's own logic. In the
    // cycle a registered answer shows, the CPU still holds its request: the slaves do
    // not see it then (cpu_go). A block's answer to a register store comes one clock
    // after the store: it is not taken as an answer to the CPU.
    always @(posedge clk) begin
        if (rst) mmio_ready <= 1'b0;
        else     mmio_ready <= ((wb_push || reg_wr) && !fast_wr) || local_answer ||
                               (cpu_valid && !reg_ans && link_csr_ready && sel_link && !cpu_write && !la_link_rd) ||
                               (cpu_valid && !reg_ans && eng_csr_ready && sel_engine && (!cpu_write || eng_cmd) && !la_eng_rd);
        reg_ans <= !rst && reg_wr;
        mmio_rdata <= sel_link ? link_csr_rdata : sel_engine ? eng_csr_rdata : sel_sys ? sys_read : 32'd0;
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
    // With CPU_CLOCK_GATE the CPU misses the clock edges that end a clock in which its SLEEP
    // read goes unanswered, once the read has waited SLEEP_SETTLE clocks with the core not
    // fetching (so a pipelined core has settled: its fetch stages full or waiting on a refill,
    // which keeps it clocked). Such an edge changes nothing in a core on clk either, but its
    // free-running cycle counter, which the firmware does not read. The engine likewise
    // misses the edges that end a clock in which the CPU's clock is stopped, no unit of the
    // engine is busy (eng_idle), nothing is or will be on its system port (the write buffer
    // empty, the link's master with nothing to start) and that has held for ENG_SETTLE
    // clocks (its pipelines drained, the registers it loads at every clock settled): its
    // registers then hold what they would load. Each gate is set at a rising edge and clk
    // is high then, so the OR below has no glitch: a gated clock rises with clk whenever
    // its gate is 0.
    generate if (CPU_CLOCK_GATE != 0) begin : g_cpu_gate
        localparam integer SLEEP_SETTLE = 4;
        localparam integer ENG_SETTLE   = 8;
        reg       cpu_gate, eng_gate;
        reg [2:0] sleep_age;  // clocks the SLEEP read has waited with the core not fetching, saturating
        reg [3:0] eng_age;    // clocks the engine has been quiet, saturating
        wire      cpu_gate_d = !rst && sleep_wait && !cpu_fetching && sleep_age == SLEEP_SETTLE[2:0];
        wire      eng_quiet  = cpu_gate_d && eng_idle && !sys_port_valid && !wb_any && !link_mem_want;
        always @(posedge clk) begin
            if (rst || !sleep_wait || cpu_fetching)
                sleep_age <= 3'd0;
            else if (sleep_age != SLEEP_SETTLE[2:0])
                sleep_age <= sleep_age + 3'd1;
            if (rst || !eng_quiet)
                eng_age <= 4'd0;
            else if (eng_age != ENG_SETTLE[3:0])
                eng_age <= eng_age + 4'd1;
            cpu_gate <= cpu_gate_d;
            eng_gate <= eng_quiet && eng_age == ENG_SETTLE[3:0];
        end
        assign cpu_clk = clk | cpu_gate;
        assign eng_clk = clk | eng_gate;
    end else begin : g_cpu_clk
        /* verilator lint_off UNUSEDSIGNAL */
        wire unused_gate_inputs = &{1'b0, cpu_fetching, eng_idle, link_mem_want, 1'b0};
        /* verilator lint_on UNUSEDSIGNAL */
        assign cpu_clk = clk;
        assign eng_clk = clk;
    end endgenerate

    // ---- LEDs ----------------------------------------------------------------------------------
    reg [31:0] rx_led_cnt, tx_led_cnt, err_led_cnt;
    always @(posedge clk) begin
        if (rst) begin
            rx_led_cnt  <= 32'd0;
            tx_led_cnt  <= 32'd0;
            err_led_cnt <= 32'd0;
        end else begin
            rx_led_cnt  <= rx_activity ? STRETCH : rx_led_cnt != 0 ? rx_led_cnt - 32'd1 : 32'd0;
            tx_led_cnt  <= tx_activity ? STRETCH : tx_led_cnt != 0 ? tx_led_cnt - 32'd1 : 32'd0;
            err_led_cnt <= rx_error    ? STRETCH : err_led_cnt != 0 ? err_led_cnt - 32'd1 : 32'd0;
        end
    end
    // [0] RX, [1] TX, [2] link error or CPU trap; firmware's LEDS bits are ORed in.
    assign leds = fw_leds | {5'd0, err_led_cnt != 0 || trap, tx_led_cnt != 0, rx_led_cnt != 0};

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_soc = cpu_instr;
    /* verilator lint_on UNUSEDSIGNAL */
endmodule
`default_nettype wire
