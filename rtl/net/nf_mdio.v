// SPDX-License-Identifier: Apache-2.0
// MDIO master (IEEE 802.3 clause 22): one management frame per start, MSB first: 32
// preamble ones, ST 01, OP (01 write, 10 read), PHYAD, REGAD, TA, 16 data bits. The master
// changes MDIO at MDC's falling edge and samples it at MDC's rising edge, where a PHY
// samples the master's bits and after which it drives its own (TA's 0, then the data).
`default_nettype none
module nf_mdio #(
    parameter integer MDC_DIV = 10   // system clocks per MDC half period (>= 2): MDC = clk / (2 * MDC_DIV), at most 2.5 MHz
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        start,        // take phy/regad/write/wdata (ignored while busy)
    input  wire [4:0]  phy,
    input  wire [4:0]  regad,
    input  wire        write,        // 1: write wdata; 0: read into rdata
    input  wire [15:0] wdata,
    output reg         busy,         // from the clock after start to the end of the frame's last bit
    output reg  [15:0] rdata,        // the last read's 16 data bits (all ones when no PHY drives the bus)
    output reg         mdc,
    output wire        mdio_o,
    output reg         mdio_oe,      // the master drives MDIO (the pad's output enable)
    input  wire        mdio_i        // the pad's input, asynchronous to clk
);
    generate
        if (MDC_DIV < 2) begin : g_bad_div
            $error("nf_mdio: MDC_DIV must be at least 2");
        end
    endgenerate

    localparam integer CNT_W = $clog2(MDC_DIV + 1);
    localparam [6:0] LAST_BIT    = 7'd63;
    localparam [6:0] FIRST_TA    = 7'd46;  // a read releases the bus from TA on
    localparam [6:0] FIRST_DATA  = 7'd48;

    // Two flip-flops: mdio_i comes from a pad that a PHY drives on its own schedule.
    reg [1:0] mdio_sync;
    always @(posedge clk) begin
        if (rst)
            mdio_sync <= 2'b11;
        else
            mdio_sync <= {mdio_sync[0], mdio_i};
    end

    reg [63:0]      shift;    // the frame, its current bit in [63]
    reg [6:0]       bit_n;    // the bit on the wire, 0..63
    reg [CNT_W-1:0] cnt;      // clocks into the current MDC half period
    reg             op_write;
    assign mdio_o = shift[63];

    always @(posedge clk) begin
        if (rst) begin
            busy     <= 1'b0;
            rdata    <= 16'hFFFF;
            mdc      <= 1'b0;
            mdio_oe  <= 1'b0;
            shift    <= {64{1'b1}};
            bit_n    <= 7'd0;
            cnt      <= {CNT_W{1'b0}};
            op_write <= 1'b0;
        end else if (!busy) begin
            if (start) begin
                busy     <= 1'b1;
                mdc      <= 1'b0;
                mdio_oe  <= 1'b1;
                bit_n    <= 7'd0;
                cnt      <= {CNT_W{1'b0}};
                op_write <= write;
                shift    <= {32'hFFFFFFFF, 2'b01, write ? 2'b01 : 2'b10, phy, regad, 2'b10,
                             write ? wdata : 16'hFFFF};
            end
        end else if (cnt != MDC_DIV[CNT_W-1:0] - 1'b1) begin
            cnt <= cnt + 1'b1;
        end else begin
            cnt <= {CNT_W{1'b0}};
            mdc <= !mdc;
            if (!mdc) begin
                // rising edge: the PHY's bit, read in the sampled state of the pad
                if (!op_write && bit_n >= FIRST_DATA)
                    rdata <= {rdata[14:0], mdio_sync[1]};
            end else if (bit_n == LAST_BIT) begin
                busy    <= 1'b0;
                mdio_oe <= 1'b0;
                shift   <= {64{1'b1}};
            end else begin
                // falling edge: the next bit
                bit_n   <= bit_n + 7'd1;
                shift   <= {shift[62:0], 1'b1};
                mdio_oe <= op_write || bit_n + 7'd1 < FIRST_TA;
            end
        end
    end
endmodule
`default_nettype wire
