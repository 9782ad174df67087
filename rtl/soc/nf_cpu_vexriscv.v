// SPDX-License-Identifier: Apache-2.0
// VexRiscv (pythondata-cpu-vexriscv; the build chooses the variant file: rtl/soc/soc.mk
// NF_VEXRISCV) on nf_soc's CPU port, the port every CPU wrapper has. Its Wishbone data bus
// reaches the firmware RAM directly and everything else through one register stage onto
// the SoC bus; its instruction bus (cache refills: the code runs from the RAM) reads the RAM only.
`default_nettype none
module nf_cpu_vexriscv #(
    parameter integer FW_RAM_BYTES = 65536  // the firmware RAM at address 0, bytes
) (
    input  wire        clk,          // the bus's clock
    input  wire        cpu_clk,      // the core's clock: clk, or clk with edges left out while it waits on the bus
    input  wire        rst,
    // The SoC bus: mem_valid holds until mem_ready; mem_rdata is sampled in the mem_ready
    // clock. mem_ready and mem_rdata are nf_soc's whole answer, the RAM's included.
    output wire        mem_valid,
    output wire        mem_instr,
    output wire [31:0] mem_addr,
    output wire [31:0] mem_wdata,
    output wire [3:0]  mem_wstrb,
    input  wire        mem_ready,
    input  wire [31:0] mem_rdata,
    // A constant: 1 when mem_la_read, mem_la_write and mem_la_addr announce each request
    // in the clock before its mem_valid; 0 when they stay 0.
    output wire        mem_la_used,
    output wire        mem_la_read,
    output wire        mem_la_write,
    output wire [31:0] mem_la_addr,
    // A read the core issues in this clock, not on the bus, that nf_soc may answer at once
    // (peek_ready, with mem_ready and mem_rdata); unanswered, it goes onto the bus.
    output wire        peek_rd,
    output wire [31:0] peek_addr,
    input  wire        peek_ready,
    // The firmware RAM's one port (nf_fw_ram), and when the RAM answers the core's request:
    // ram_ready in that clock, ram_sel when mem_rdata is the RAM's data (the read mux's select).
    output wire        ram_rd,
    output wire        ram_wr,
    output wire [31:0] ram_addr,
    output wire [31:0] ram_wdata,
    output wire [3:0]  ram_wstrb,
    input  wire [31:0] ram_rdata,
    output wire        ram_ready,
    output wire        ram_sel,
    output wire        fetching,     // the core fetches on a bus of its own: its clock must run
    output wire        trap          // the core has stopped on a trap
);
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
    VexRiscv u_core (
        .clk(cpu_clk), .reset(rst), .externalResetVector(32'h0000_0000),
        .timerInterrupt(1'b0), .softwareInterrupt(1'b0), .externalInterruptArray(32'd0),
        .iBusWishbone_CYC(ib_cyc), .iBusWishbone_STB(ib_stb), .iBusWishbone_ACK(i_ack),
        .iBusWishbone_WE(unused_ib_we), .iBusWishbone_ADR(ib_adr), .iBusWishbone_DAT_MISO(i_rdata),
        .iBusWishbone_DAT_MOSI(unused_ib_dat), .iBusWishbone_SEL(unused_ib_sel), .iBusWishbone_ERR(1'b0),
        .iBusWishbone_CTI(unused_ib_cti), .iBusWishbone_BTE(unused_ib_bte),
        .dBusWishbone_CYC(db_cyc), .dBusWishbone_STB(db_stb), .dBusWishbone_ACK(mem_ready),
        .dBusWishbone_WE(db_we), .dBusWishbone_ADR(db_adr), .dBusWishbone_DAT_MISO(mem_rdata),
        .dBusWishbone_DAT_MOSI(db_dat), .dBusWishbone_SEL(db_sel), .dBusWishbone_ERR(1'b0),
        .dBusWishbone_CTI(unused_db_cti), .dBusWishbone_BTE(unused_db_bte)
    );
    // The data bus's request (d_*): the firmware RAM answers it at once; any other goes
    // through one register stage (q_*) onto the SoC bus, so nf_soc's decode, slaves and
    // arbiter see registers only, never the core's request logic.
    wire [31:0] d_addr  = {db_adr, 2'b00};
    wire        d_valid = db_cyc && db_stb;
    wire        d_ram;
    wire [3:0]  d_wstrb = db_we ? db_sel : 4'd0;
    reg         q_valid;
    reg  [31:0] q_addr, q_wdata;
    reg  [3:0]  q_wstrb;
    nf_fw_ram_hit #(.BYTES(FW_RAM_BYTES)) u_d_ram (.addr(d_addr), .hit(d_ram));
    // A read may be answered in the clock the core issues it (peek_ready: an RX slot's
    // head), only with the stage empty: a request in it is the one the core still holds,
    // and the stage answers that one (answering it here too would acknowledge it twice).
    assign peek_rd   = d_valid && !db_we && !q_valid;
    assign peek_addr = d_addr;
    always @(posedge clk) begin
        if (rst) begin
            q_valid <= 1'b0;
            q_addr  <= 32'd0;
            q_wdata <= 32'd0;
            q_wstrb <= 4'd0;
        end else if (q_valid) begin
            q_valid <= !mem_ready;
        end else if (d_valid && !d_ram && !peek_ready) begin
            q_valid <= 1'b1;
            q_addr  <= d_addr;
            q_wdata <= db_dat;
            q_wstrb <= d_wstrb;
        end
    end
    assign fetching  = req_i;
    assign mem_valid = q_valid;
    assign mem_instr = 1'b0;
    assign mem_addr  = q_addr;
    assign mem_wdata = q_wdata;
    assign mem_wstrb = q_wstrb;
    assign trap      = 1'b0;  // VexRiscv takes exceptions through mtvec; it has no trap pin
    // No look-ahead: the SoC bus's request comes from the register stage, so nf_soc decodes
    // it in its own clock.
    assign mem_la_used  = 1'b0;
    assign mem_la_read  = 1'b0;
    assign mem_la_write = 1'b0;
    assign mem_la_addr  = 32'd0;

    // The firmware RAM's one port serves the data bus first, the instruction-cache refills
    // in clocks without a data access (a second port would double the block RAMs).

    // Without a look-ahead the port guesses: after every read it reads the next word and
    // keeps it until a RAM write, so a read of it (a refill's next beat) answers at once,
    // any other read a clock later. guess_next keeps an adder off the RAM's address.
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
endmodule
`default_nettype wire
