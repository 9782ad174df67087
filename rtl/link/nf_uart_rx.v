// UART receiver, 8N1, LSB first, bit period in 12.4 fixed-point clocks (see
// nf_uart_bitclk). The pin goes through a two-flop synchroniser; each start bit's
// falling edge restarts the bit clock, so the sampling point (mid-bit) never drifts
// by more than the error accumulated over one byte.
`default_nettype none
module nf_uart_rx (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,  // clocks per bit, 12.4 fixed point
    input  wire        rx,
    output reg         out_valid,  // one-cycle pulse: out_data holds a byte
    output reg  [7:0]  out_data,
    output reg         out_error   // one-cycle pulse: stop bit was low (framing error)
);
    localparam [3:0]  DATA_AND_STOP = 4'd9;

    reg        rx_meta, rx_sync;
    reg        busy;
    reg        in_start;   // next sample is the start bit's middle
    reg [3:0]  bits_left;  // samples still to take after the start bit
    reg [7:0]  shift;

    // A falling edge while idle starts the bit clock half a period in, so each bit
    // ends (is sampled) in its middle.
    wire start  = !busy && !rx_sync;
    wire sample;
    nf_uart_bitclk u_bitclk (
        .clk(clk), .rst(rst), .uart_period(uart_period), .run(busy), .load(start),
        .load_phase({2'b0, uart_period[15:1]}), .bit_end(sample)
    );

    always @(posedge clk) begin
        if (rst) begin
            rx_meta   <= 1'b1;
            rx_sync   <= 1'b1;
            busy      <= 1'b0;
            in_start  <= 1'b0;
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
            if (start) begin
                busy      <= 1'b1;
                in_start  <= 1'b1;
                bits_left <= DATA_AND_STOP;
            end else if (busy && sample) begin
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
endmodule
`default_nettype wire
