// SPDX-License-Identifier: Apache-2.0
// RoCEv2 invariant CRC (ICRC) of a frame streamed one byte per beat from the Ethernet
// destination address on (FCS removed; Ethernet padding after the ICRC allowed). The CRC
// starts from the register after eight 0xFF bytes (the masked LRH) and covers the IPv4
// header with TOS, TTL and header checksum as 0xFF, the UDP header with its checksum as
// 0xFF, the BTH with byte 4 (FECN/BECN/resv6) as 0xFF, and every byte after it up to the
// ICRC, whose place comes from the UDP length. Only IPv4 without options, unfragmented,
// to UDP port 4791 is RoCE; anything else (VLAN tags included) ends with roce low.
`default_nettype none
module nf_roce_icrc (
    input  wire        clk,
    input  wire        rst,
    // frame stream in (observed, never stalled)
    input  wire [7:0]  s_tdata,
    input  wire        s_tvalid,
    input  wire        s_tlast,
    // ICRC of the frame: the CRC value, sent least-significant byte first. Final from the
    // first ICRC beat until the next frame's first beat.
    output wire [31:0] icrc,
    // this beat is an ICRC byte of a frame that is RoCE so far; icrc_byte is the computed
    // byte for it (a transmitter puts it in place of the placeholder it streams)
    output wire        icrc_field,
    output wire [7:0]  icrc_byte,
    // end of frame: one clock after the tlast beat
    output reg         done,
    output reg         roce,       // the frame was a whole RoCEv2 IPv4 packet (held to the next done)
    output wire        icrc_ok     // with done: roce, and the received ICRC equals icrc
);
    // CRC register after eight 0xFF bytes from all ones (the LRH stand-in, masked).
    localparam [31:0] LRH_SEED = 32'hDEBB20E3;
    // Frame offsets (Ethernet II, no VLAN, IPv4 IHL 5).
    localparam [15:0] OFF_TYPE0 = 16'd12, OFF_TYPE1 = 16'd13, OFF_IP = 16'd14,
                      OFF_TOS = 16'd15, OFF_FRAG0 = 16'd20, OFF_FRAG1 = 16'd21,
                      OFF_TTL = 16'd22, OFF_PROTO = 16'd23, OFF_IPCSUM0 = 16'd24,
                      OFF_IPCSUM1 = 16'd25, OFF_DPORT0 = 16'd36, OFF_DPORT1 = 16'd37,
                      OFF_ULEN0 = 16'd38, OFF_ULEN1 = 16'd39, OFF_UCSUM0 = 16'd40,
                      OFF_UCSUM1 = 16'd41, OFF_BTH4 = 16'd46;
    // UDP starts at offset 34; the ICRC is the last 4 bytes of the UDP payload.
    localparam [16:0] ICRC_FROM_ULEN = 17'd30;
    // BTH (12) + ICRC (4) at least, after the UDP header.
    localparam [15:0] MIN_ULEN = 16'd24;

    reg  [15:0] pos;        // offset of the current beat in its frame, saturating
    reg  [15:0] udp_len;    // UDP length field of this frame (valid from offset 40)
    reg  [31:0] rx_icrc;    // the ICRC bytes received, first byte in [7:0]
    reg         roce_run;   // every field checked so far fits RoCEv2
    reg         have_icrc;  // the last ICRC byte has passed

    wire [16:0] icrc_start = {1'b0, udp_len} + ICRC_FROM_ULEN;
    wire [16:0] icrc_last  = icrc_start + 17'd3;
    wire [16:0] pos17      = {1'b0, pos};
    wire        len_known  = (pos >= 16'd40);
    wire        in_icrc    = len_known && pos17 >= icrc_start && pos17 <= icrc_last;
    wire        covered    = (pos >= OFF_IP) && (!len_known || pos17 < icrc_start);
    wire        masked     = pos == OFF_TOS || pos == OFF_TTL || pos == OFF_IPCSUM0 ||
                             pos == OFF_IPCSUM1 || pos == OFF_UCSUM0 || pos == OFF_UCSUM1 ||
                             pos == OFF_BTH4;

    // The current beat's own field check.
    reg beat_ok;
    always @(*) begin
        case (pos)
            OFF_TYPE0: beat_ok = (s_tdata == 8'h08);
            OFF_TYPE1: beat_ok = (s_tdata == 8'h00);
            OFF_IP:    beat_ok = (s_tdata == 8'h45);       // IPv4, no options
            OFF_FRAG0: beat_ok = (s_tdata[5:0] == 6'd0);   // MF clear, offset 0
            OFF_FRAG1: beat_ok = (s_tdata == 8'h00);
            OFF_PROTO: beat_ok = (s_tdata == 8'h11);       // UDP
            OFF_DPORT0: beat_ok = (s_tdata == 8'h12);      // 4791
            OFF_DPORT1: beat_ok = (s_tdata == 8'hB7);
            default:   beat_ok = 1'b1;
        endcase
    end

    /* verilator lint_off UNUSEDSIGNAL */
    wire [31:0] crc_reg;  // read through icrc, its complement
    wire        crc_res;  // the ICRC is compared, not run through its own residue
    /* verilator lint_on UNUSEDSIGNAL */
    nf_eth_crc32 #(.DATA_W(8), .INIT(LRH_SEED)) u_crc (
        .clk(clk), .rst(rst), .clear(s_tvalid && pos == 16'd0), .en(s_tvalid && covered),
        .data(masked ? 8'hFF : s_tdata), .crc(crc_reg), .fcs(icrc), .residue_ok(crc_res)
    );

    always @(posedge clk) begin
        if (rst) begin
            pos       <= 16'd0;
            udp_len   <= 16'd0;
            rx_icrc   <= 32'd0;
            roce_run  <= 1'b1;
            have_icrc <= 1'b0;
            done      <= 1'b0;
            roce      <= 1'b0;
        end else begin
            done <= 1'b0;
            if (s_tvalid) begin
                if (pos == OFF_ULEN0) udp_len[15:8] <= s_tdata;
                if (pos == OFF_ULEN1) udp_len[7:0]  <= s_tdata;
                if (in_icrc) rx_icrc <= {s_tdata, rx_icrc[31:8]};
                if (s_tlast) begin
                    pos       <= 16'd0;
                    roce_run  <= 1'b1;
                    have_icrc <= 1'b0;
                    done      <= 1'b1;
                    roce      <= roce_run && beat_ok && udp_len >= MIN_ULEN &&
                                 (have_icrc || (len_known && pos17 == icrc_last));
                end else begin
                    if (pos != 16'hFFFF) pos <= pos + 16'd1;
                    if (!beat_ok) roce_run <= 1'b0;
                    if (len_known && pos17 == icrc_last) have_icrc <= 1'b1;
                end
            end
        end
    end

    assign icrc_ok    = roce && (rx_icrc == icrc);
    assign icrc_field = s_tvalid && roce_run && in_icrc;
    reg [7:0] icrc_sel;
    wire [1:0] icrc_idx = pos[1:0] - icrc_start[1:0];
    always @(*) begin
        case (icrc_idx[1:0])
            2'd0:    icrc_sel = icrc[7:0];
            2'd1:    icrc_sel = icrc[15:8];
            2'd2:    icrc_sel = icrc[23:16];
            default: icrc_sel = icrc[31:24];
        endcase
    end
    assign icrc_byte = icrc_sel;
endmodule
`default_nettype wire
