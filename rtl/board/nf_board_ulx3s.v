// ULX3S board top: 25 MHz oscillator -> PLL -> system clock, the SoC's UART on the
// FT231X pins, LEDs. Adapter sizes come from the profile of the part (DEVICE_85K).
`default_nettype none
`include "nf_layout.vh"
module nf_board_ulx3s #(
    parameter [0:0]   DEVICE_85K = 1'b1,       // 1: LFE5U-85F profile, 0: LFE5U-25F profile
    parameter         FW_HEX     = "nf_fw.hex",
    parameter integer BAUD       = 3000000     // FT231X maximum
) (
    input  wire       clk_25mhz,
    input  wire       ftdi_txd,    // host -> FPGA (FPGA RX)
    output wire       ftdi_rxd,    // FPGA -> host (FPGA TX)
    output wire [7:0] led,
    output wire       wifi_gpio0   // held high so the ESP32 does not reset the board
);
    // System clock = 25 MHz * CLKFB_DIV / CLKI_DIV; VCO = system clock * CLKOP_DIV.
    // 25 * 8 / 5 = 40 MHz (phase detector 5 MHz, VCO 600 MHz), 13.33 clocks per bit at
    // 3 MBd. Chosen by timing (docs/boards.md): 50 MHz fails on the LFE5U-85F-6.
    localparam integer OSC_HZ        = 25000000;
    localparam integer PLL_CLKI_DIV  = 5;
    localparam integer PLL_CLKFB_DIV = 8;
    localparam integer PLL_CLKOP_DIV = 15;
    localparam integer CLK_HZ        = OSC_HZ / PLL_CLKI_DIV * PLL_CLKFB_DIV;
    // The UART's bit period in clocks, 12.4 fixed point, rounded to the nearest
    // (32-bit arithmetic: valid for clocks below 134 MHz).
    localparam integer UART_PERIOD_FX = (CLK_HZ * (1 << `NF_SOC_UART_PERIOD_FRAC) + BAUD / 2) / BAUD;
    localparam [15:0]  UART_PERIOD    = UART_PERIOD_FX[15:0];

    wire clk, locked, rst;
    nf_ecp5_pll #(.CLKI_DIV(PLL_CLKI_DIV), .CLKFB_DIV(PLL_CLKFB_DIV), .CLKOP_DIV(PLL_CLKOP_DIV))
        pll (.clk_in(clk_25mhz), .clk_out(clk), .locked(locked));
    nf_reset_sync reset_sync (.clk(clk), .locked(locked), .rst(rst));

    wire trap;
    wire [7:0] soc_leds;
    nf_soc #(
        .CLK_HZ(CLK_HZ), .FW_HEX(FW_HEX),
        .FW_RAM_BYTES(DEVICE_85K ? `NF_PROFILE_ULX3S_85K_FW_RAM_BYTES : `NF_PROFILE_ULX3S_25K_FW_RAM_BYTES),
        .MEM_BYTES(DEVICE_85K ? `NF_PROFILE_ULX3S_85K_MEM_BYTES : `NF_PROFILE_ULX3S_25K_MEM_BYTES),
        .MPT_ENTRIES(DEVICE_85K ? `NF_PROFILE_ULX3S_85K_MPT_ENTRIES : `NF_PROFILE_ULX3S_25K_MPT_ENTRIES),
        .MTT_ENTRIES(DEVICE_85K ? `NF_PROFILE_ULX3S_85K_MTT_ENTRIES : `NF_PROFILE_ULX3S_25K_MTT_ENTRIES),
        .RX_SLOTS(DEVICE_85K ? `NF_PROFILE_ULX3S_85K_RX_SLOTS : `NF_PROFILE_ULX3S_25K_RX_SLOTS),
        .TX_SLOTS(DEVICE_85K ? `NF_PROFILE_ULX3S_85K_TX_SLOTS : `NF_PROFILE_ULX3S_25K_TX_SLOTS)
    ) soc (
        .clk(clk), .rst(rst), .uart_rx(ftdi_txd), .uart_tx(ftdi_rxd), .uart_period(UART_PERIOD),
        .leds(soc_leds), .trap(trap)
    );
    // LEDs 0..2 as nf_soc drives them (RX, TX, link error or CPU trap); LED 7 lit
    // while the CPU is trapped, so a firmware fault shows even if the firmware set LEDS.
    assign led = {trap | soc_leds[7], soc_leds[6:0]};
    assign wifi_gpio0 = 1'b1;
endmodule
`default_nettype wire
