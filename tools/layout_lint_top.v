// SPDX-License-Identifier: Apache-2.0
// Lint target for the generated Verilog header: every kind of definition is used once,
// so `verilator --lint-only -Wall` parses and width-checks the header.
`default_nettype none
`include "nf_layout.vh"
module layout_lint_top (
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [31:0] word,  // only some fields are looked at
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [7:0]  key,
    output wire [1:0]  state,
    output wire        is_valid,
    output wire [31:0] engine_id_addr,
    output wire [31:0] status,
    output wire [31:0] user_base  // the derived profile parameter's macro
);
    localparam integer RX_SLOTS = 3, TX_SLOTS = 5;
    assign key            = word[`NF_MPT_W0_KEY];
    assign state          = word[`NF_MPT_W0_STATE];
    assign is_valid       = (word[`NF_MPT_W0_STATE] == 2'(`NF_MPT_STATE_VALID));
    assign engine_id_addr = `NF_ENGINE_BASE + 32'(`NF_ENGINE_ID);
    assign status         = `NF_STATUS_ACCESS_VIOLATION;
    assign user_base      = 32'(`NF_PROFILE_USER_BASE(RX_SLOTS, TX_SLOTS, 2, 1));
endmodule
`default_nettype wire
