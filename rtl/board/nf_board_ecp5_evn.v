// Lattice ECP5-EVN board top: 12 MHz oscillator -> PLL -> system clock, the SoC's UART
// on the FT2232H channel B pins (needs the board's UART resistor and EEPROM changes,
// see docs/boards.md), active-low LEDs. Adapter sizes: the LFE5UM5G-85F has the EBR
// of the LFE5U-85F, so the ULX3S_85K profile.
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
    // System clock = 12 MHz * CLKFB_DIV / CLKI_DIV; VCO = system clock * CLKOP_DIV.
    // 12 * 4 / 1 = 48 MHz, VCO 576 MHz. Chosen by timing: see docs/boards.md.
    localparam integer OSC_HZ        = 12000000;
    localparam integer PLL_CLKI_DIV  = 1;
    localparam integer PLL_CLKFB_DIV = 4;
    localparam integer PLL_CLKOP_DIV = 12;
    localparam integer CLK_HZ        = OSC_HZ / PLL_CLKI_DIV * PLL_CLKFB_DIV;
    // The UART's bit period in clocks, 12.4 fixed point, rounded to the nearest
    // (32-bit arithmetic: valid for clocks below 134 MHz).
    localparam integer UART_PERIOD_FX = (CLK_HZ * (1 << `NF_SOC_UART_PERIOD_FRAC) + BAUD / 2) / BAUD;
    localparam [15:0]  UART_PERIOD    = UART_PERIOD_FX[15:0];

    wire clk, locked, rst;
    nf_ecp5_pll #(.CLKI_DIV(PLL_CLKI_DIV), .CLKFB_DIV(PLL_CLKFB_DIV), .CLKOP_DIV(PLL_CLKOP_DIV))
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
    // The EVN's LEDs light when driven low. LED 7 also lit while the CPU is trapped.
    assign led_n = ~{trap | soc_leds[7], soc_leds[6:0]};
endmodule
`default_nettype wire
