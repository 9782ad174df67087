// SPDX-License-Identifier: Apache-2.0
// Two masters of the engine's system port (the host link and the network port) as one:
// they take turns, and the one chosen keeps the port until its transaction is answered.
// The downstream answers a request a clock or more after taking it (nf_soc checks), so
// the owner is a register by then and neither master's request logic reaches the other.
`default_nettype none
module nf_port_mux (
    input  wire        clk,
    input  wire        rst,
    // master A (the link)
    input  wire        a_valid,
    input  wire [31:0] a_addr,
    input  wire [31:0] a_wdata,
    input  wire [3:0]  a_wstrb,
    output wire        a_ready,
    input  wire        a_want,
    // master B (the network port)
    input  wire        b_valid,
    input  wire [31:0] b_addr,
    input  wire [31:0] b_wdata,
    input  wire [3:0]  b_wstrb,
    output wire        b_ready,
    input  wire        b_want,
    // the merged master (read data goes to both masters from the port directly)
    output wire        m_valid,
    output wire [31:0] m_addr,
    output wire [31:0] m_wdata,
    output wire [3:0]  m_wstrb,
    input  wire        m_ready,
    output wire        m_want
);
    reg  owned;   // a transaction is waiting for its answer: keep its master
    reg  own_b;   // ... and that master is B
    reg  last_b;  // B had the previous turn
    wire pick_b = owned ? own_b : (b_valid && (!a_valid || !last_b));
    assign m_valid = owned || a_valid || b_valid;
    assign m_addr  = pick_b ? b_addr  : a_addr;
    assign m_wdata = pick_b ? b_wdata : a_wdata;
    assign m_wstrb = pick_b ? b_wstrb : a_wstrb;
    assign a_ready = m_ready && !pick_b;
    assign b_ready = m_ready && pick_b;
    assign m_want  = a_want || b_want;
    always @(posedge clk) begin
        if (rst) begin
            owned  <= 1'b0;
            own_b  <= 1'b0;
            last_b <= 1'b0;
        end else if (m_valid && m_ready) begin
            owned  <= 1'b0;
            last_b <= pick_b;
        end else if (m_valid) begin
            owned <= 1'b1;
            own_b <= pick_b;
        end
    end
endmodule
`default_nettype wire
