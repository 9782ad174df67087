// SPDX-License-Identifier: Apache-2.0
// ECP5 PLL (EHXPLLL) from the board oscillator to the system clock.
// f_out = f_in * CLKFB_DIV / CLKI_DIV (feedback from CLKOP); the VCO runs at
// f_out * CLKOP_DIV and must stay within 400..800 MHz, the phase detector input
// f_in / CLKI_DIV at 3.125 MHz or more. The board tops choose the dividers and derive
// their system clock frequency from the same numbers; nextpnr derives the clock
// constraint of CLKOP from the input pin's FREQUENCY and these dividers.
`default_nettype none
module nf_ecp5_pll #(
    parameter integer CLKI_DIV  = 1,  // input divider, 1..128 (phase detector = f_in / this, >= 3.125 MHz)
    parameter integer CLKFB_DIV = 2,  // feedback divider, 1..128: f_out = f_in * this / CLKI_DIV
    parameter integer CLKOP_DIV = 12  // output divider, 1..128: VCO = f_out * this (400..800 MHz)
) (
    input  wire clk_in,
    output wire clk_out,
    output wire locked
);
    // Outputs this design does not use (the secondary clocks, the internal feedback).
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_clkos, unused_clkos2, unused_clkos3, unused_intlock, unused_refclk, unused_clkintfb;
    /* verilator lint_on UNUSEDSIGNAL */

    // CPHASE as Project Trellis' ecppll sets it for a CLKOP feedback.
    EHXPLLL #(
        .PLLRST_ENA("DISABLED"), .INTFB_WAKE("DISABLED"), .STDBY_ENABLE("DISABLED"),
        .DPHASE_SOURCE("DISABLED"), .OUTDIVIDER_MUXA("DIVA"), .OUTDIVIDER_MUXB("DIVB"),
        .OUTDIVIDER_MUXC("DIVC"), .OUTDIVIDER_MUXD("DIVD"),
        .CLKI_DIV(CLKI_DIV), .CLKFB_DIV(CLKFB_DIV), .FEEDBK_PATH("CLKOP"),
        .CLKOP_ENABLE("ENABLED"), .CLKOP_DIV(CLKOP_DIV), .CLKOP_CPHASE((CLKOP_DIV - 1) / 2),
        .CLKOP_FPHASE(0)
    ) pll (
        .RST(1'b0), .STDBY(1'b0), .CLKI(clk_in), .CLKOP(clk_out), .CLKFB(clk_out),
        .CLKINTFB(unused_clkintfb), .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1),
        .PHASESTEP(1'b1), .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK(locked),
        .CLKOS(unused_clkos), .CLKOS2(unused_clkos2), .CLKOS3(unused_clkos3),
        .INTLOCK(unused_intlock), .REFCLK(unused_refclk)
    );
endmodule
`default_nettype wire
