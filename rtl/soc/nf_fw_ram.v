// SPDX-License-Identifier: Apache-2.0
// The firmware RAM: code, data and stack at address 0, one port for reads and writes,
// driven by the CPU wrapper. A read's data shows in the clock after ram_rd; a write to an
// address past the RAM (PicoRV32 writes its look-ahead address whatever it is) is dropped.
`default_nettype none
module nf_fw_ram #(
    parameter integer BYTES      = 65536,  // size, bytes, a multiple of 4
    parameter         FW_HEX     = "build/firmware/nf_fw.hex",  // image loaded at start ($readmemh, one 32-bit word a line)
    // Synthesis only: 0 the RAM is one 32-bit memory (Yosys stacks block RAMs in depth
    // behind a read mux); 1, 2 or 4: 32 / this memories of this many bits, one block RAM
    // deep each, loaded from FW_HEX.sNN (bits NN * this up; tools/fw_slices.py writes them).
    /* verilator lint_off UNUSEDPARAM */
    parameter integer SLICE_BITS = 0
    /* verilator lint_on UNUSEDPARAM */
) (
    input  wire        clk,
    input  wire        rd,
    input  wire        wr,
    input  wire [31:0] addr,
    input  wire [31:0] wdata,
    input  wire [3:0]  wstrb,
    output reg  [31:0] rdata
);
    localparam integer WORDS = BYTES / 4;
    localparam integer AW    = $clog2(WORDS);
    reg  [31:0]   ram [0:WORDS-1];
    wire          in_ram;
    wire [AW-1:0] idx = addr[AW+1:2];
    wire          we  = wr && in_ram;
    nf_fw_ram_hit #(.BYTES(BYTES)) u_hit (.addr(addr), .hit(in_ram));

    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_addr = &{1'b0, addr[1:0], 1'b0};
    /* verilator lint_on UNUSEDSIGNAL */
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
    generate if (SLICE_BITS != 0) begin : g_ram_sliced
        // Bit slices (SLICE_BITS): the same RAM, read and written as below; the 32-bit
        // memory above is unused then.
        genvar sl;
        for (sl = 0; sl < 32 / SLICE_BITS; sl = sl + 1) begin : g_slice
            localparam integer LO = sl * SLICE_BITS;
            localparam [7:0] D1 = 48 + sl / 10, D0 = 48 + sl % 10;  // "NN" of the file name
            reg [SLICE_BITS-1:0] part [0:WORDS-1];
            initial $readmemh({FW_HEX, ".s", D1, D0}, part);
            always @(posedge clk) begin
                if (we && wstrb[LO / 8]) part[idx] <= wdata[LO +: SLICE_BITS];
                if (rd) rdata[LO +: SLICE_BITS] <= part[idx];
            end
        end
    end else begin : g_ram
`endif
    always @(posedge clk) begin
        if (we && wstrb[0]) ram[idx][7:0]   <= wdata[7:0];
        if (we && wstrb[1]) ram[idx][15:8]  <= wdata[15:8];
        if (we && wstrb[2]) ram[idx][23:16] <= wdata[23:16];
        if (we && wstrb[3]) ram[idx][31:24] <= wdata[31:24];
        if (rd) rdata <= ram[idx];
    end
`ifdef SYNTHESIS
    end endgenerate
`endif
endmodule
`default_nettype wire
