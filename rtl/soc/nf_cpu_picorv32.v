// SPDX-License-Identifier: Apache-2.0
// PicoRV32 (pythondata-cpu-picorv32, rv32i) on nf_soc's CPU port, the port every CPU
// wrapper has. Its native bus is the SoC bus; its look-ahead bus drives the firmware RAM's
// port, so the RAM answers in the request's first clock, and tells nf_soc every request a
// clock ahead (mem_la_used).
`default_nettype none
module nf_cpu_picorv32 #(
    parameter integer FW_RAM_BYTES = 65536  // the firmware RAM at address 0, bytes (the stack starts at its top)
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
    /* verilator lint_off UNUSEDSIGNAL */
    wire        unused_pcpi_valid, unused_trace_valid;
    wire [31:0] unused_pcpi_insn, unused_pcpi_rs1, unused_pcpi_rs2, unused_eoi;
    wire [35:0] unused_trace_data;
    wire        unused_port = &{1'b0, peek_ready, ram_rdata, 1'b0};  // no early reads; the RAM's data comes in mem_rdata
    /* verilator lint_on UNUSEDSIGNAL */
    // No M extension: the firmware is rv32i (fw_mul64 multiplies by shifts and adds), and
    // off the work-request path; a multiplier would sit on the smaller boards' critical
    // path and cost the simulation at every clock, multiplying or not.
    picorv32 #(
        .ENABLE_MUL(0), .ENABLE_FAST_MUL(0), .ENABLE_DIV(0), .BARREL_SHIFTER(1), .COMPRESSED_ISA(0),
        .ENABLE_IRQ(0), .PROGADDR_RESET(32'h0000_0000), .STACKADDR(FW_RAM_BYTES)
    ) u_core (
        .clk(cpu_clk), .resetn(!rst), .trap(trap),
        .mem_valid(mem_valid), .mem_instr(mem_instr), .mem_ready(mem_ready),
        .mem_addr(mem_addr), .mem_wdata(mem_wdata), .mem_wstrb(mem_wstrb), .mem_rdata(mem_rdata),
        .mem_la_read(ram_rd), .mem_la_write(ram_wr), .mem_la_addr(ram_addr),
        .mem_la_wdata(ram_wdata), .mem_la_wstrb(ram_wstrb),
        .pcpi_valid(unused_pcpi_valid), .pcpi_insn(unused_pcpi_insn), .pcpi_rs1(unused_pcpi_rs1),
        .pcpi_rs2(unused_pcpi_rs2), .pcpi_wr(1'b0), .pcpi_rd(32'd0), .pcpi_wait(1'b0), .pcpi_ready(1'b0),
        .irq(32'd0), .eoi(unused_eoi),
        .trace_valid(unused_trace_valid), .trace_data(unused_trace_data)
    );
    // The look-ahead bus drives the RAM's port (the next transfer's address one clock
    // before mem_valid), and whether that transfer is the RAM's is registered then: a
    // register, not the address decode, on the core's ready and read-data paths.
    wire la_ram;
    reg  la_ram_q;
    nf_fw_ram_hit #(.BYTES(FW_RAM_BYTES)) u_la_ram (.addr(ram_addr), .hit(la_ram));
    always @(posedge clk) begin
        if (rst)
            la_ram_q <= 1'b0;
        else if (ram_rd || ram_wr)
            la_ram_q <= la_ram;
    end
    assign ram_sel   = la_ram_q;
    assign ram_ready = mem_valid && la_ram_q;

    assign mem_la_used  = 1'b1;
    assign mem_la_read  = ram_rd;
    assign mem_la_write = ram_wr;
    assign mem_la_addr  = ram_addr;
    assign peek_rd      = 1'b0;
    assign peek_addr    = 32'd0;
    assign fetching     = 1'b0;  // it fetches on the one bus: stalled with the rest
endmodule
`default_nettype wire
