// SPDX-License-Identifier: Apache-2.0
// Lint-only model of the ECP5 PLL primitive's ports (the real one comes from Yosys'
// ECP5 cell library at synthesis). Never synthesized: tools/bitstream.sh reads rtl/board/*.v only.
`default_nettype none
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
module EHXPLLL #(
    // The primitive's parameters by Lattice's names (strings select modes; *_DIV are
    // dividers 1..128, *_CPHASE/*_FPHASE phase steps of the VCO); nf_ecp5_pll sets them.
    parameter PLLRST_ENA = "DISABLED", parameter INTFB_WAKE = "DISABLED",
    parameter STDBY_ENABLE = "DISABLED", parameter DPHASE_SOURCE = "DISABLED",
    parameter OUTDIVIDER_MUXA = "DIVA", parameter OUTDIVIDER_MUXB = "DIVB",
    parameter OUTDIVIDER_MUXC = "DIVC", parameter OUTDIVIDER_MUXD = "DIVD",
    parameter integer CLKI_DIV = 1, parameter integer CLKFB_DIV = 1,
    parameter FEEDBK_PATH = "CLKOP", parameter CLKOP_ENABLE = "ENABLED",
    parameter integer CLKOP_DIV = 8, parameter integer CLKOP_CPHASE = 0,
    parameter integer CLKOP_FPHASE = 0,
    parameter CLKOS_ENABLE = "DISABLED", parameter integer CLKOS_DIV = 1,
    parameter integer CLKOS_CPHASE = 0, parameter integer CLKOS_FPHASE = 0,
    parameter CLKOS2_ENABLE = "DISABLED", parameter integer CLKOS2_DIV = 1,
    parameter integer CLKOS2_CPHASE = 0, parameter integer CLKOS2_FPHASE = 0
) (
    input  wire RST, STDBY, CLKI, CLKFB, PHASESEL0, PHASESEL1, PHASEDIR, PHASESTEP,
    input  wire PHASELOADREG, PLLWAKESYNC, ENCLKOP,
    output wire CLKOP, CLKOS, CLKOS2, CLKOS3, LOCK, INTLOCK, REFCLK, CLKINTFB
);
    // For lint only: pass the input clock through.
    assign CLKOP = CLKI;
    assign CLKOS = CLKI;
    assign CLKOS2 = CLKI;
    assign CLKOS3 = CLKI;
    assign LOCK = 1'b1;
    assign INTLOCK = 1'b1;
    assign REFCLK = CLKI;
    assign CLKINTFB = CLKI;
endmodule
/* verilator lint_on UNUSEDPARAM */
/* verilator lint_on UNUSEDSIGNAL */
`default_nettype wire
