// ECP5 PLL (EHXPLLL) from the board oscillator to the system clock.
// f_out = f_in * CLKFB_DIV / CLKI_DIV; the VCO runs at f_out * CLKOP_DIV and must stay
// within 400..800 MHz (the divider values per board are chosen in the board tops).
`default_nettype none
module nf_ecp5_pll #(
    parameter integer IN_MHZ    = 25,
    parameter integer OUT_MHZ   = 50,
    parameter integer CLKI_DIV  = 1,
    parameter integer CLKFB_DIV = 2,
    parameter integer CLKOP_DIV = 12
) (
    input  wire clk_in,
    output wire clk_out,
    output wire locked
);
    // Feedback from CLKOP; CPHASE = CLKOP_DIV/2 - 1 keeps the output in phase.
    (* FREQUENCY_PIN_CLKI = IN_MHZ, FREQUENCY_PIN_CLKOP = OUT_MHZ *)
    EHXPLLL #(
        .PLLRST_ENA("DISABLED"), .INTFB_WAKE("DISABLED"), .STDBY_ENABLE("DISABLED"),
        .DPHASE_SOURCE("DISABLED"), .OUTDIVIDER_MUXA("DIVA"), .OUTDIVIDER_MUXB("DIVB"),
        .OUTDIVIDER_MUXC("DIVC"), .OUTDIVIDER_MUXD("DIVD"),
        .CLKI_DIV(CLKI_DIV), .CLKFB_DIV(CLKFB_DIV), .FEEDBK_PATH("CLKOP"),
        .CLKOP_ENABLE("ENABLED"), .CLKOP_DIV(CLKOP_DIV), .CLKOP_CPHASE(CLKOP_DIV / 2 - 1),
        .CLKOP_FPHASE(0)
    ) pll (
        .RST(1'b0), .STDBY(1'b0), .CLKI(clk_in), .CLKOP(clk_out), .CLKFB(clk_out),
        .CLKINTFB(), .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1), .PHASESTEP(1'b1),
        .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK(locked),
        .CLKOS(), .CLKOS2(), .CLKOS3(), .INTLOCK(), .REFCLK()
    );
endmodule
`default_nettype wire
