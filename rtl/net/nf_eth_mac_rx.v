// SPDX-License-Identifier: Apache-2.0
// Ethernet MAC receiver: GMII-style bytes (one per clock with phy_ce high) to a byte
// stream of the frame from the destination address to the last byte before the FCS.
// The preamble (any length, including none) and the SFD are stripped; the last four bytes
// are held back in a delay line so the stream ends (tlast) on the last payload byte, with
// tuser set there when the frame is bad: FCS error, rx_er during the frame, or a runt
// (fewer than MIN_LEN bytes including the FCS). A frame of 1..4 bytes after the SFD, or
// one that never reaches its SFD, emits nothing. There is no backpressure (m_tvalid is one
// clock per byte): a FIFO after the MAC absorbs it, and the clock-domain crossing from a
// PHY clock belongs in a FIFO before this module, which keeps one clock.
`default_nettype none
module nf_eth_mac_rx #(
    parameter integer MIN_LEN = 64  // shortest good frame including the FCS
) (
    input  wire       clk,
    input  wire       rst,
    // PHY side (GMII-style), sampled on phy_ce
    input  wire       phy_ce,
    input  wire [7:0] gmii_rxd,
    input  wire       gmii_rx_dv,
    input  wire       gmii_rx_er,
    // frame stream out
    output reg  [7:0] m_tdata,
    output reg        m_tvalid,
    output reg        m_tlast,
    output reg        m_tuser,      // with m_tlast: the frame is bad, drop it
    // status, one-clock pulses with the last beat
    output reg        fcs_error,    // the frame's FCS did not match
    output reg        runt          // the frame was shorter than MIN_LEN
);
    generate
        if (MIN_LEN < 5 || MIN_LEN > 255) begin : g_bad_min
            $error("nf_eth_mac_rx: MIN_LEN must be 5..255");
        end
    endgenerate

    localparam [7:0] PRE_BYTE = 8'h55;
    localparam [7:0] SFD_BYTE = 8'hD5;
    localparam [7:0] MIN_LEN8 = MIN_LEN[7:0];

    localparam [1:0] S_IDLE = 2'd0,  // carrier off, or waiting for the first byte
                     S_PRE  = 2'd1,  // preamble bytes seen, waiting for the SFD
                     S_DATA = 2'd2,
                     S_SKIP = 2'd3;  // not a frame (no SFD): wait for the carrier to drop

    reg [1:0] state;
    reg [7:0] cnt;        // frame bytes after the SFD, saturating at MIN_LEN
    reg [2:0] fill;       // bytes held in the delay line, saturating at 5
    reg       err;        // rx_er seen during this frame
    reg [7:0] dl0, dl1, dl2, dl3, dl4;  // delay line: dl0 newest, dl4 the byte to emit next

    wire byte_in = phy_ce && gmii_rx_dv;

    // CRC over every byte after the SFD, FCS included: a good frame leaves the residue.
    wire crc_good;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] crc_reg;  // the receiver needs only the residue check
    wire [31:0] crc_fcs;
    /* verilator lint_on UNUSEDSIGNAL */
    nf_eth_crc32 #(.DATA_W(8), .INIT(32'hFFFFFFFF)) u_crc (
        .clk(clk), .rst(rst), .clear(state != S_DATA), .en(byte_in && state == S_DATA),
        .data(gmii_rxd), .crc(crc_reg), .fcs(crc_fcs), .residue_ok(crc_good)
    );

    always @(posedge clk) begin
        if (rst) begin
            state     <= S_IDLE;
            cnt       <= 8'd0;
            fill      <= 3'd0;
            err       <= 1'b0;
            dl0       <= 8'h00;
            dl1       <= 8'h00;
            dl2       <= 8'h00;
            dl3       <= 8'h00;
            dl4       <= 8'h00;
            m_tdata   <= 8'h00;
            m_tvalid  <= 1'b0;
            m_tlast   <= 1'b0;
            m_tuser   <= 1'b0;
            fcs_error <= 1'b0;
            runt      <= 1'b0;
        end else begin
            m_tvalid  <= 1'b0;
            m_tlast   <= 1'b0;
            m_tuser   <= 1'b0;
            fcs_error <= 1'b0;
            runt      <= 1'b0;
            if (phy_ce) begin
                case (state)
                    S_IDLE, S_PRE: if (gmii_rx_dv) begin
                        if (gmii_rxd == SFD_BYTE && !gmii_rx_er) begin
                            state <= S_DATA;
                            cnt   <= 8'd0;
                            fill  <= 3'd0;
                            err   <= 1'b0;
                        end else if (gmii_rxd == PRE_BYTE && !gmii_rx_er) begin
                            state <= S_PRE;
                        end else begin
                            state <= S_SKIP;
                        end
                    end else begin
                        state <= S_IDLE;
                    end
                    S_DATA: if (gmii_rx_dv) begin
                        if (cnt != MIN_LEN8) cnt <= cnt + 8'd1;
                        if (gmii_rx_er) err <= 1'b1;
                        // The oldest byte leaves once five are held: four may be the FCS.
                        if (fill == 3'd5) begin
                            m_tdata  <= dl4;
                            m_tvalid <= 1'b1;
                        end else begin
                            fill <= fill + 3'd1;
                        end
                        dl4 <= dl3;
                        dl3 <= dl2;
                        dl2 <= dl1;
                        dl1 <= dl0;
                        dl0 <= gmii_rxd;
                    end else begin
                        // End of frame: the byte before the four withheld is the last one.
                        state <= S_IDLE;
                        if (fill == 3'd5) begin
                            m_tdata   <= dl4;
                            m_tvalid  <= 1'b1;
                            m_tlast   <= 1'b1;
                            m_tuser   <= err || !crc_good || cnt != MIN_LEN8;
                            fcs_error <= !crc_good;
                            runt      <= cnt != MIN_LEN8;
                        end
                    end
                    default: if (!gmii_rx_dv) state <= S_IDLE;  // S_SKIP
                endcase
            end
        end
    end
endmodule
`default_nettype wire
