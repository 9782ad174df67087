// SPDX-License-Identifier: Apache-2.0
// The SYS register block (proto/: its storage and decode are nf_sys_csr.v): identity,
// clock, the free-running cycle counter, LEDs, scratch and the SLEEP read the firmware idles on.
// nf_soc answers a SYS access one clock after it takes it, a SLEEP read once it wakes.
`default_nettype none
`include "nf_layout.vh"
module nf_sys_regs #(
    parameter integer CLK_HZ       = `NF_SOC_CPU_CLK_SIM_HZ,        // system clock, Hz (read in CLK_HZ)
    parameter integer FW_RAM_BYTES = `NF_PROFILE_SIM_FW_RAM_BYTES,  // firmware RAM, bytes (read in FW_RAM_BYTES)
    parameter integer RX_SLOTS     = `NF_PROFILE_SIM_RX_SLOTS,      // link receive slots: the bits of SLEEP and WAKE_RX
    parameter integer CPU_TRAPS    = 0                              // 1: the CPU traps through mtvec (read in CPU_TRAPS)
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                req,          // a SYS access taken in this clock (held until answered)
    input  wire [11:2]         addr,         // its word address in the block
    input  wire [31:0]         wdata,
    input  wire [3:0]          wstrb,        // 0 for a read
    output wire [31:0]         rdata,        // the register at addr (nf_soc registers it)
    output wire                sleep_wait,   // a SLEEP read that is not answered in this clock
    input  wire [15:0]         uart_period,  // read in UART_PERIOD
    input  wire [RX_SLOTS-1:0] rx_ready,     // LINK.RX_READY: the RX slots holding a frame
    input  wire                net_rx_any,   // a NET RX slot holds a frame (0 with no network port)
    output wire [31:0]         cycle_lo,     // the cycle counter's low word (CYCLE_LO)
    output wire [7:0]          leds          // LEDS, as the firmware writes it
);
    reg [63:0] cycle;
    reg [31:0] cycle_hi_latched;
    wire [11:0] off   = {addr, 2'b00};
    wire        write = req && wstrb != 4'd0;
    wire [31:0] clk_hz_word    = CLK_HZ;
    wire [31:0] ram_bytes_word = FW_RAM_BYTES;
    assign cycle_lo = cycle[31:0];

    // A SLEEP read is answered once a frame is in an RX slot of WAKE_RX (or in a NET RX
    // slot, with WAKE_NET) or CYCLE_LO has reached WAKE_AT; the deadline compare is
    // registered (a 32-bit subtraction off the CPU's ready path), so it may answer a clock late.
    wire [31:0]         wake_at;
    wire [RX_SLOTS-1:0] wake_rx;
    reg                 wake_time;   // CYCLE_LO has reached WAKE_AT (as of the previous clock)
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0]         to_wake   = cycle[31:0] - wake_at;   // its sign only
    /* verilator lint_on UNUSEDSIGNAL */
    wire                wake_net;
    wire                wake      = wake_time || (rx_ready & wake_rx) != {RX_SLOTS{1'b0}} || (net_rx_any && wake_net);
    wire                sleep_rd  = req && !write && off == `NF_SYS_SLEEP;
    assign              sleep_wait = sleep_rd && !wake;
    wire [31:0]         rx_ready_word = {{(32 - RX_SLOTS){1'b0}}, rx_ready};

    // The rw registers live in the generated nf_sys_csr; WAKE_AT and WAKE_RX take whole
    // words only (the firmware's stores are). SCRATCH is the firmware's: no logic reads it.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] scratch;
    /* verilator lint_on UNUSEDSIGNAL */
    nf_sys_csr #(.RX_SLOTS(RX_SLOTS)) u_csr (
        .clk(clk), .rst(rst), .addr(off), .we(write), .wdata(wdata), .wstrb(wstrb),
        .q_leds(leds), .q_scratch(scratch), .q_wake_at(wake_at), .q_wake_rx(wake_rx), .q_wake_net(wake_net),
        .rd_id(`NF_SYS_HW_ID_VALUE), .rd_hw_version(`NF_ADAPTER_HW_VERSION), .rd_clk_hz(clk_hz_word),
        .rd_cycle_lo(cycle[31:0]), .rd_cycle_hi(cycle_hi_latched),
        .rd_fw_ram_bytes(ram_bytes_word), .rd_uart_period({16'd0, uart_period}),
        .rd_sleep(rx_ready_word), .rd_cpu_traps(CPU_TRAPS != 0 ? 32'd1 : 32'd0), .rdata(rdata)
    );

    always @(posedge clk) begin
        if (rst) begin
            cycle            <= 64'd0;
            cycle_hi_latched <= 32'd0;
            wake_time        <= 1'b0;
        end else begin
            wake_time <= !to_wake[31];
            cycle <= cycle + 64'd1;
            // Reading CYCLE_LO latches CYCLE_HI, so the pair reads as one 64-bit value.
            if (req && !write && off == `NF_SYS_CYCLE_LO)
                cycle_hi_latched <= cycle[63:32];
        end
    end
endmodule
`default_nettype wire
