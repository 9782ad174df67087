// SPDX-License-Identifier: Apache-2.0
// ULX3S board top: 25 MHz oscillator -> PLL -> system clock, the SoC's UART on the
// FT231X pins, LEDs. Adapter sizes come from the profile of the part (DEVICE_85K).
`default_nettype none
module nf_board_ulx3s #(
    parameter [0:0]   DEVICE_85K    = 1'b1,        // 1: LFE5U-85F profile, 0: LFE5U-25F profile
    parameter         FW_HEX        = "nf_fw.hex", // firmware image ($readmemh words) of the CPU's RAM
    parameter integer BAUD          = 3000000,     // UART bit rate, bit/s (FT231X maximum)
    // System clock = 25 MHz / PLL_CLKI_DIV * PLL_CLKFB_DIV; each board of proto/boards.toml
    // sets the dividers for its part (top_params), chosen by timing (docs/boards.md).
    parameter integer PLL_CLKI_DIV  = 1,           // PLL input divider (phase detector 25 MHz / this, >= 3.125 MHz)
    parameter integer PLL_CLKFB_DIV = 2,           // PLL feedback divider
    parameter integer PLL_CLKOP_DIV = 12           // PLL output divider: VCO = system clock * this (400..800 MHz)
) (
    input  wire       clk_25mhz,
    input  wire       ftdi_txd,    // host -> FPGA (FPGA RX)
    output wire       ftdi_rxd,    // FPGA -> host (FPGA TX)
    output wire [7:0] led,
    output wire       wifi_gpio0   // held high so the ESP32 does not reset the board
);
    nf_board_core #(
        .OSC_HZ(25000000), .PLL_CLKI_DIV(PLL_CLKI_DIV), .PLL_CLKFB_DIV(PLL_CLKFB_DIV), .PLL_CLKOP_DIV(PLL_CLKOP_DIV),
        .BAUD(BAUD), .PROFILE_85K(DEVICE_85K), .FW_HEX(FW_HEX), .FW_SLICED(1'b1)
    ) core (.clk_osc(clk_25mhz), .uart_rx(ftdi_txd), .uart_tx(ftdi_rxd), .leds(led));
    assign wifi_gpio0 = 1'b1;
endmodule
`default_nettype wire
