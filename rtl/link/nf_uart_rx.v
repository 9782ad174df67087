// UART receiver, 8N1, LSB first, bit period in 12.4 fixed-point clocks (see
// nf_uart_tx). The pin goes through a two-flop synchroniser; each start bit's
// falling edge restarts the bit clock, so the sampling point (mid-bit) never drifts
// by more than the error accumulated over one byte.
`default_nettype none
`include "nf_layout.vh"
module nf_uart_rx (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,
    input  wire        rx,
    output reg         out_valid,  // one-cycle pulse: out_data holds a byte
    output reg  [7:0]  out_data,
    output reg         out_error   // one-cycle pulse: stop bit was low (framing error)
);
    localparam [16:0] ONE_CLOCK = 17'd1 << `NF_SOC_UART_PERIOD_FRAC;
    localparam [3:0]  DATA_AND_STOP = 4'd9;

    reg        rx_meta, rx_sync;
    reg        busy;
    reg        in_start;   // next sample is the start bit's middle
    reg [16:0] phase;
    reg [3:0]  bits_left;  // samples still to take after the start bit
    reg [7:0]  shift;

    wire [16:0] phase_next = phase + ONE_CLOCK;
    wire        sample     = phase_next >= {1'b0, uart_period};

    always @(posedge clk) begin
        if (rst) begin
            rx_meta   <= 1'b1;
            rx_sync   <= 1'b1;
            busy      <= 1'b0;
            in_start  <= 1'b0;
            phase     <= 17'd0;
            bits_left <= 4'd0;
            shift     <= 8'd0;
            out_valid <= 1'b0;
            out_data  <= 8'd0;
            out_error <= 1'b0;
        end else begin
            rx_meta   <= rx;
            rx_sync   <= rx_meta;
            out_valid <= 1'b0;
            out_error <= 1'b0;
            if (!busy) begin
                if (!rx_sync) begin
                    // Falling edge: half a period from now is the start bit's middle.
                    busy      <= 1'b1;
                    in_start  <= 1'b1;
                    phase     <= {2'b0, uart_period[15:1]};
                    bits_left <= DATA_AND_STOP;
                end
            end else begin
                phase <= sample ? phase_next - {1'b0, uart_period} : phase_next;
                if (sample) begin
                    if (in_start) begin
                        in_start <= 1'b0;
                        if (rx_sync)
                            busy <= 1'b0;  // glitch, not a start bit
                    end else if (bits_left == 4'd1) begin
                        // Stop bit: back to idle at once so the next start edge resyncs.
                        busy      <= 1'b0;
                        out_valid <= rx_sync;
                        out_error <= !rx_sync;
                        out_data  <= shift;
                    end else begin
                        shift     <= {rx_sync, shift[7:1]};
                        bits_left <= bits_left - 4'd1;
                    end
                end
            end
        end
    end
endmodule
`default_nettype wire
