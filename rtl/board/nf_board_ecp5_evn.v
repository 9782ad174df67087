// Lattice ECP5-EVN board top: 12 MHz oscillator -> PLL -> 48 MHz, the SoC's UART on the
// FT2232H channel B pins (needs the board's UART resistor and EEPROM changes, see
// README), active-low LEDs.
`default_nettype none
`include "nf_layout.vh"
module nf_board_ecp5_evn #(
    parameter         FW_HEX = "nf_fw.hex",
    parameter integer BAUD   = 12000000    // FT2232H maximum
) (
    input  wire       clk_12mhz,
    input  wire       uart_rx,     // host -> FPGA
    output wire       uart_tx,     // FPGA -> host
    output wire [7:0] led_n
);
    localparam integer SYS_MHZ = 48;  // 12 MHz * 4 / 1; VCO 576 MHz
    localparam integer CLK_HZ  = SYS_MHZ * 1000000;
    localparam [15:0]  UART_PERIOD = 16'((CLK_HZ * 16 + BAUD / 2) / BAUD);

    wire clk, locked, rst;
    nf_ecp5_pll #(.IN_MHZ(12), .OUT_MHZ(SYS_MHZ), .CLKI_DIV(1), .CLKFB_DIV(4), .CLKOP_DIV(12))
        pll (.clk_in(clk_12mhz), .clk_out(clk), .locked(locked));
    nf_reset_sync reset_sync (.clk(clk), .locked(locked), .rst(rst));

    wire trap;
    wire [7:0] soc_leds;
    nf_soc #(
        .CLK_HZ(CLK_HZ), .FW_HEX(FW_HEX),
        .FW_RAM_BYTES(`NF_PROFILE_ULX3S_85K_FW_RAM_BYTES), .MEM_BYTES(`NF_PROFILE_ULX3S_85K_MEM_BYTES),
        .MPT_ENTRIES(`NF_PROFILE_ULX3S_85K_MPT_ENTRIES), .MTT_ENTRIES(`NF_PROFILE_ULX3S_85K_MTT_ENTRIES),
        .RX_SLOTS(`NF_PROFILE_ULX3S_85K_RX_SLOTS), .TX_SLOTS(`NF_PROFILE_ULX3S_85K_TX_SLOTS)
    ) soc (
        .clk(clk), .rst(rst), .uart_rx(uart_rx), .uart_tx(uart_tx), .uart_period(UART_PERIOD),
        .leds(soc_leds), .trap(trap)
    );
    assign led_n = ~{trap | soc_leds[7], soc_leds[6:0]};
endmodule
`default_nettype wire
