// ULX3S board top: 25 MHz oscillator -> PLL -> SYS_MHZ system clock, the SoC's UART on
// the FT231X pins, LEDs. Adapter sizes come from the profile of the part (DEVICE).
`default_nettype none
`include "nf_layout.vh"
module nf_board_ulx3s #(
    parameter integer DEVICE_85K = 1,          // 1: LFE5U-85F profile, 0: LFE5U-25F/12F profile
    parameter         FW_HEX     = "nf_fw.hex",
    parameter integer BAUD       = 3000000     // FT231X maximum
) (
    input  wire       clk_25mhz,
    input  wire       ftdi_txd,    // host -> FPGA (FPGA RX)
    output wire       ftdi_rxd,    // FPGA -> host (FPGA TX)
    output wire [7:0] led,
    output wire       wifi_gpio0   // held high so the ESP32 does not reset the board
);
    localparam integer SYS_MHZ = 50;  // 25 MHz * 2 / 1; VCO 600 MHz
    localparam integer CLK_HZ  = SYS_MHZ * 1000000;
    localparam [15:0]  UART_PERIOD = 16'((CLK_HZ * 16 + BAUD / 2) / BAUD);

    wire clk, locked, rst;
    nf_ecp5_pll #(.IN_MHZ(25), .OUT_MHZ(SYS_MHZ), .CLKI_DIV(1), .CLKFB_DIV(2), .CLKOP_DIV(12))
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
    // LED 7: CPU trapped (firmware fault); the rest as the SoC drives them.
    assign led = {trap | soc_leds[7], soc_leds[6:0]};
    assign wifi_gpio0 = 1'b1;
endmodule
`default_nettype wire
