// UART transmitter, 8N1, LSB first. The bit period is given at run time in 12.4
// fixed-point clocks (nf_uart_bitclk), so a fractional period averages out exactly.
`default_nettype none
module nf_uart_tx (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,  // clocks per bit, 12.4 fixed point
    input  wire        in_valid,
    input  wire [7:0]  in_data,
    output wire        in_ready,     // byte accepted in a cycle with in_valid && in_ready
    output reg         tx
);
    localparam [3:0]  DATA_AND_STOP = 4'd9;

    reg        busy;
    reg [3:0]  bits_left;  // bits still to send after the current one
    reg [8:0]  shift;      // data bits then the stop bit

    wire bit_end;
    // The next byte may start in the cycle the stop bit ends: back-to-back bytes keep
    // the exact fractional rhythm (the bit clock then runs on).
    assign in_ready = !busy || (bits_left == 4'd0 && bit_end);
    nf_uart_bitclk u_bitclk (
        .clk(clk), .rst(rst), .uart_period(uart_period), .run(busy), .load(in_valid && !busy),
        .load_phase(17'd0), .bit_end(bit_end)
    );

    always @(posedge clk) begin
        if (rst) begin
            busy      <= 1'b0;
            bits_left <= 4'd0;
            shift     <= 9'h1FF;
            tx        <= 1'b1;
        end else begin
            if (in_valid && in_ready) begin
                busy      <= 1'b1;
                tx        <= 1'b0;  // start bit
                shift     <= {1'b1, in_data};
                bits_left <= DATA_AND_STOP;
            end else if (busy && bit_end) begin
                if (bits_left == 4'd0) begin
                    busy <= 1'b0;   // stop bit done; line stays high
                end else begin
                    tx        <= shift[0];
                    shift     <= {1'b1, shift[8:1]};
                    bits_left <= bits_left - 4'd1;
                end
            end
        end
    end
endmodule
`default_nettype wire
