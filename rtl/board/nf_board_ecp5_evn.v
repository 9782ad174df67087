// SPDX-License-Identifier: Apache-2.0
// Lattice ECP5-EVN board top: 12 MHz oscillator -> PLL -> system clock, the SoC's UART
// on the FT2232H channel B pins (needs the board's UART resistor and EEPROM changes,
// see docs/boards.md), active-low LEDs. Adapter sizes: the LFE5UM5G-85F has the EBR
// of the LFE5U-85F, so the ULX3S_85K profile.
`default_nettype none
module nf_board_ecp5_evn #(
    parameter         FW_HEX = "nf_fw.hex",  // firmware image ($readmemh words) of the CPU's RAM
    parameter integer BAUD   = 12000000      // UART bit rate, bit/s (FT2232H maximum)
) (
    input  wire       clk_12mhz,
    input  wire       uart_rx,     // host -> FPGA
    output wire       uart_tx,     // FPGA -> host
    output wire [7:0] led_n
);
    // System clock = 12 MHz * 4 / 1 = 48 MHz, VCO 576 MHz. Chosen by timing: see docs/boards.md.
    wire [7:0] leds;
    nf_board_core #(
        .OSC_HZ(12000000), .PLL_CLKI_DIV(1), .PLL_CLKFB_DIV(4), .PLL_CLKOP_DIV(12),
        .BAUD(BAUD), .PROFILE_85K(1'b1), .FW_HEX(FW_HEX), .FW_SLICED(1'b1)
    ) core (.clk_osc(clk_12mhz), .uart_rx(uart_rx), .uart_tx(uart_tx), .leds(leds));
    assign led_n = ~leds;   // the EVN's LEDs light when driven low
endmodule
`default_nettype wire
