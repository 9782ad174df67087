// Bit clock of the UART receiver and transmitter: a phase accumulator advances by one
// clock per cycle while running, and a bit ends when it reaches the period, keeping
// the remainder, so a fractional period (12.4 fixed point, e.g. 50 MHz / 3 MBd =
// 16.667 clocks) averages out exactly, each edge within one clock.
`default_nettype none
`include "nf_layout.vh"
module nf_uart_bitclk (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] uart_period,  // clocks per bit, 12.4 fixed point
    input  wire        run,          // a bit is in progress: advance by one clock
    input  wire        load,         // start a bit with the phase at load_phase instead
    input  wire [16:0] load_phase,   // 12.4 fixed point clocks already elapsed
    output wire        bit_end       // while running: the bit ends in this cycle
);
    localparam [16:0] ONE_CLOCK = 17'd1 << `NF_SOC_UART_PERIOD_FRAC;

    reg  [16:0] phase;      // elapsed time in the current bit
    wire [16:0] phase_next = phase + ONE_CLOCK;
    assign bit_end = phase_next >= {1'b0, uart_period};

    always @(posedge clk) begin
        if (rst)
            phase <= 17'd0;
        else if (load)
            phase <= load_phase;
        else if (run)
            phase <= bit_end ? phase_next - {1'b0, uart_period} : phase_next;
    end
endmodule
`default_nettype wire
