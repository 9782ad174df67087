// SPDX-License-Identifier: Apache-2.0
// ECP5 PLL (EHXPLLL) from the board oscillator to the system clock (CLKOP) and up to two
// more clocks of the same VCO (CLKOS, CLKOS2), e.g. an RGMII PHY's 125 MHz and its copy
// shifted by 90 degrees. f_out = f_in * CLKFB_DIV / CLKI_DIV (feedback from CLKOP); the VCO
// runs at f_out * CLKOP_DIV and must stay within 400..800 MHz, the phase detector input
// f_in / CLKI_DIV at 3.125 MHz or more; CLKOS runs at VCO / CLKOS_DIV, CLKOS2 at VCO /
// CLKOS2_DIV. The board tops choose the dividers and derive their clock frequencies from
// the same numbers; nextpnr derives each output's clock constraint from the input pin's
// FREQUENCY and these dividers. The VCO range needs the input frequency, which this module
// does not know: tools/test_layout.sh checks it for every board.
`default_nettype none
module nf_ecp5_pll #(
    parameter integer CLKI_DIV     = 1,   // input divider, 1..128 (phase detector = f_in / this, >= 3.125 MHz)
    parameter integer CLKFB_DIV    = 2,   // feedback divider, 1..128: f_out = f_in * this / CLKI_DIV
    parameter integer CLKOP_DIV    = 12,  // output divider, 1..128: VCO = f_out * this (400..800 MHz)
    parameter integer CLKOS_DIV    = 0,   // CLKOS divider, 1..128 (clk_os = VCO / this); 0: CLKOS off
    parameter integer CLKOS_PHASE  = 0,   // CLKOS phase after CLKOP, degrees 0..359, in steps of 45 / CLKOS_DIV
    parameter integer CLKOS2_DIV   = 0,   // CLKOS2 divider, 1..128 (clk_os2 = VCO / this); 0: CLKOS2 off
    parameter integer CLKOS2_PHASE = 0    // CLKOS2 phase after CLKOP, degrees 0..359, in steps of 45 / CLKOS2_DIV
) (
    input  wire clk_in,
    output wire clk_out,
    output wire clk_os,     // CLKOS (low when CLKOS_DIV is 0)
    output wire clk_os2,    // CLKOS2 (low when CLKOS2_DIV is 0)
    output wire locked
);
    // A phase is set in steps of an eighth of a VCO cycle (FPHASE) and whole VCO cycles
    // (CPHASE), on top of the CLKOP feedback's own CPHASE: Project Trellis' ecppll sets them
    // so. An output's period is DIV VCO cycles, so degrees * DIV * 8 / 360 must be whole.
    localparam integer OS_EIGHTHS  = CLKOS_PHASE * CLKOS_DIV * 8 / 360;
    localparam integer OS2_EIGHTHS = CLKOS2_PHASE * CLKOS2_DIV * 8 / 360;
    localparam integer OP_CPHASE   = (CLKOP_DIV - 1) / 2;
    localparam integer OS_DIV_SET  = CLKOS_DIV == 0 ? 1 : CLKOS_DIV;
    localparam integer OS2_DIV_SET = CLKOS2_DIV == 0 ? 1 : CLKOS2_DIV;

    generate if (CLKI_DIV < 1 || CLKI_DIV > 128 || CLKFB_DIV < 1 || CLKFB_DIV > 128 ||
                 CLKOP_DIV < 1 || CLKOP_DIV > 128 || CLKOS_DIV < 0 || CLKOS_DIV > 128 ||
                 CLKOS2_DIV < 0 || CLKOS2_DIV > 128) begin : g_bad_div
        // Elaboration fails here: a divider is outside 1..128 (0 allowed for CLKOS/CLKOS2).
        nf_ecp5_pll_divider_out_of_range u_fail ();
    end endgenerate
    generate if (CLKOS_PHASE < 0 || CLKOS_PHASE > 359 || CLKOS2_PHASE < 0 || CLKOS2_PHASE > 359 ||
                 OS_EIGHTHS * 360 != CLKOS_PHASE * CLKOS_DIV * 8 ||
                 OS2_EIGHTHS * 360 != CLKOS2_PHASE * CLKOS2_DIV * 8) begin : g_bad_phase
        // Elaboration fails here: a phase is not a whole number of eighths of a VCO cycle.
        nf_ecp5_pll_phase_not_in_vco_steps u_fail ();
    end endgenerate

    // Outputs this design does not use (CLKOS3, the internal feedback and lock).
    /* verilator lint_off UNUSEDSIGNAL */
    wire unused_clkos3, unused_intlock, unused_refclk, unused_clkintfb;
    /* verilator lint_on UNUSEDSIGNAL */
    wire clkos_raw, clkos2_raw;

    EHXPLLL #(
        .PLLRST_ENA("DISABLED"), .INTFB_WAKE("DISABLED"), .STDBY_ENABLE("DISABLED"),
        .DPHASE_SOURCE("DISABLED"), .OUTDIVIDER_MUXA("DIVA"), .OUTDIVIDER_MUXB("DIVB"),
        .OUTDIVIDER_MUXC("DIVC"), .OUTDIVIDER_MUXD("DIVD"),
        .CLKI_DIV(CLKI_DIV), .CLKFB_DIV(CLKFB_DIV), .FEEDBK_PATH("CLKOP"),
        .CLKOP_ENABLE("ENABLED"), .CLKOP_DIV(CLKOP_DIV), .CLKOP_CPHASE(OP_CPHASE),
        .CLKOP_FPHASE(0),
        .CLKOS_ENABLE(CLKOS_DIV == 0 ? "DISABLED" : "ENABLED"), .CLKOS_DIV(OS_DIV_SET),
        .CLKOS_CPHASE(OP_CPHASE + OS_EIGHTHS / 8), .CLKOS_FPHASE(OS_EIGHTHS % 8),
        .CLKOS2_ENABLE(CLKOS2_DIV == 0 ? "DISABLED" : "ENABLED"), .CLKOS2_DIV(OS2_DIV_SET),
        .CLKOS2_CPHASE(OP_CPHASE + OS2_EIGHTHS / 8), .CLKOS2_FPHASE(OS2_EIGHTHS % 8)
    ) pll (
        .RST(1'b0), .STDBY(1'b0), .CLKI(clk_in), .CLKOP(clk_out), .CLKFB(clk_out),
        .CLKINTFB(unused_clkintfb), .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1),
        .PHASESTEP(1'b1), .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK(locked),
        .CLKOS(clkos_raw), .CLKOS2(clkos2_raw), .CLKOS3(unused_clkos3),
        .INTLOCK(unused_intlock), .REFCLK(unused_refclk)
    );
    assign clk_os  = CLKOS_DIV == 0 ? 1'b0 : clkos_raw;
    assign clk_os2 = CLKOS2_DIV == 0 ? 1'b0 : clkos2_raw;
endmodule
`default_nettype wire
