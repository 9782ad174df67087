// SPDX-License-Identifier: Apache-2.0
// Ethernet MAC transmitter: a byte stream (one frame from the destination address to the
// last payload byte per tlast) onto a GMII-style byte interface: preamble and SFD, the
// frame padded with zeros to MIN_LEN bytes, the FCS, then at least IFG idle bytes.
// The PHY side moves one byte on each clock with phy_ce high (every clock for GMII, one in
// 4 or 10 for a 100 Mb/s adapter); the clock-domain crossing to a PHY clock belongs in a
// FIFO before this module, which keeps one clock. Once a frame has started its source must
// offer a byte at every phy_ce (a store-and-forward FIFO does): a missing byte ends the
// frame with tx_er and a corrupt FCS, and the rest of the frame is dropped up to tlast.
// s_tuser on the last beat sends the frame with a corrupt FCS and tx_er on its FCS bytes.
`default_nettype none
module nf_eth_mac_tx #(
    parameter integer MIN_LEN = 60,  // shortest frame without FCS; shorter ones are padded
    parameter integer IFG     = 12   // idle bytes between frames (12 = 96 bit times)
) (
    input  wire       clk,
    input  wire       rst,
    // frame stream in (valid/ready handshake)
    input  wire [7:0] s_tdata,
    input  wire       s_tvalid,
    output wire       s_tready,
    input  wire       s_tlast,
    input  wire       s_tuser,      // on the last beat: the frame is bad, send it corrupt
    // PHY side (GMII-style), one byte per phy_ce
    input  wire       phy_ce,
    output reg  [7:0] gmii_txd,
    output reg        gmii_tx_en,
    output reg        gmii_tx_er,
    // status
    output wire       busy,         // a frame is on the wire (preamble to the last IFG byte)
    output reg        underflow     // one-clock pulse: a started frame ran out of bytes
);
    generate
        if (MIN_LEN < 1 || MIN_LEN > 255) begin : g_bad_min
            $error("nf_eth_mac_tx: MIN_LEN must be 1..255");
        end
        if (IFG < 1 || IFG > 255) begin : g_bad_ifg
            $error("nf_eth_mac_tx: IFG must be 1..255");
        end
    endgenerate

    localparam [7:0] PRE_BYTE = 8'h55;
    localparam [7:0] SFD_BYTE = 8'hD5;
    localparam [7:0] MIN_LEN8 = MIN_LEN[7:0];
    localparam [7:0] IFG8     = IFG[7:0];

    localparam [2:0] S_IDLE  = 3'd0,
                     S_PRE   = 3'd1,  // 7 preamble bytes, then the SFD
                     S_DATA  = 3'd2,
                     S_PAD   = 3'd3,
                     S_FCS   = 3'd4,
                     S_IFG   = 3'd5,
                     S_DRAIN = 3'd6;  // after an underflow: drop the stream up to tlast

    reg [2:0] state;
    reg [7:0] cnt;      // bytes of the current phase; in S_DATA/S_PAD saturates at MIN_LEN
    reg       bad;      // the FCS goes out inverted (s_tuser or underflow)
    reg       drained;  // S_DRAIN has seen tlast (or there was nothing to drain)

    wire take = (state == S_DATA) && phy_ce;
    assign s_tready = take || (state == S_DRAIN && !drained);
    assign busy     = (state != S_IDLE);

    wire [7:0] cnt_next_sat = (cnt == MIN_LEN8) ? cnt : cnt + 8'd1;

    // CRC of the frame bytes as they go out (data and pad).
    reg        crc_en;
    reg  [7:0] crc_byte;
    wire [31:0] fcs;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] crc_reg;   // the transmitter needs only the FCS
    wire        crc_res;
    /* verilator lint_on UNUSEDSIGNAL */
    nf_eth_crc32 #(.DATA_W(8), .INIT(32'hFFFFFFFF)) u_crc (
        .clk(clk), .rst(rst), .clear(state == S_IDLE), .en(crc_en), .data(crc_byte),
        .crc(crc_reg), .fcs(fcs), .residue_ok(crc_res)
    );

    // The FCS byte cnt of 0..3, least-significant first; inverted for a bad frame.
    wire [31:0] fcs_sent = bad ? ~fcs : fcs;
    reg  [7:0]  fcs_byte;
    always @(*) begin
        case (cnt[1:0])
            2'd0:    fcs_byte = fcs_sent[7:0];
            2'd1:    fcs_byte = fcs_sent[15:8];
            2'd2:    fcs_byte = fcs_sent[23:16];
            default: fcs_byte = fcs_sent[31:24];
        endcase
    end

    always @(*) begin
        crc_en   = 1'b0;
        crc_byte = 8'h00;
        if (take && s_tvalid) begin
            crc_en   = 1'b1;
            crc_byte = s_tdata;
        end else if (state == S_PAD && phy_ce) begin
            crc_en = 1'b1;
        end
    end

    always @(posedge clk) begin
        if (rst) begin
            state      <= S_IDLE;
            cnt        <= 8'd0;
            bad        <= 1'b0;
            drained    <= 1'b0;
            gmii_txd   <= 8'h00;
            gmii_tx_en <= 1'b0;
            gmii_tx_er <= 1'b0;
            underflow  <= 1'b0;
        end else begin
            underflow <= 1'b0;
            if (state == S_DRAIN && !drained && s_tvalid && s_tlast)
                drained <= 1'b1;
            if (phy_ce) begin
                gmii_tx_en <= 1'b0;
                gmii_tx_er <= 1'b0;
                gmii_txd   <= 8'h00;
                case (state)
                    S_IDLE: if (s_tvalid) begin
                        state      <= S_PRE;
                        cnt        <= 8'd1;
                        bad        <= 1'b0;
                        drained    <= 1'b0;
                        gmii_tx_en <= 1'b1;
                        gmii_txd   <= PRE_BYTE;
                    end
                    S_PRE: begin
                        gmii_tx_en <= 1'b1;
                        if (cnt == 8'd7) begin
                            gmii_txd <= SFD_BYTE;
                            state    <= S_DATA;
                            cnt      <= 8'd0;
                        end else begin
                            gmii_txd <= PRE_BYTE;
                            cnt      <= cnt + 8'd1;
                        end
                    end
                    S_DATA: begin
                        gmii_tx_en <= 1'b1;
                        if (s_tvalid) begin
                            gmii_txd <= s_tdata;
                            cnt      <= cnt_next_sat;
                            if (s_tlast) begin
                                bad <= s_tuser;
                                if (cnt_next_sat == MIN_LEN8) begin
                                    state <= S_FCS;
                                    cnt   <= 8'd0;
                                end else begin
                                    state <= S_PAD;
                                end
                            end
                        end else begin
                            // Underflow: this byte is an error, the frame ends here.
                            gmii_tx_er <= 1'b1;
                            bad        <= 1'b1;
                            underflow  <= 1'b1;
                            state      <= S_DRAIN;
                            cnt        <= 8'd0;
                        end
                    end
                    S_PAD: begin
                        gmii_tx_en <= 1'b1;
                        cnt        <= cnt_next_sat;
                        if (cnt_next_sat == MIN_LEN8) begin
                            state <= S_FCS;
                            cnt   <= 8'd0;
                        end
                    end
                    S_FCS: begin
                        gmii_tx_en <= 1'b1;
                        gmii_tx_er <= bad;
                        gmii_txd   <= fcs_byte;
                        if (cnt == 8'd3) begin
                            state <= S_IFG;
                            cnt   <= 8'd1;
                        end else begin
                            cnt <= cnt + 8'd1;
                        end
                    end
                    S_IFG: begin
                        if (cnt == IFG8)
                            state <= S_IDLE;
                        else
                            cnt <= cnt + 8'd1;
                    end
                    default: begin  // S_DRAIN: idle on the wire until the stream's tlast
                        if (drained || (s_tvalid && s_tlast)) begin
                            state <= S_IFG;
                            cnt   <= 8'd1;
                        end
                    end
                endcase
            end
        end
    end
endmodule
`default_nettype wire
