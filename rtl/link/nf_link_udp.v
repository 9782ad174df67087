// SPDX-License-Identifier: Apache-2.0
// Host link over Ethernet: IPv4/UDP datagrams to local_ip, port PORT, carry the link's
// byte stream as the UART does (the link's framing, CRC and ARQ repair loss). Each good
// datagram's payload (FCS checked) goes to the link in order; its sender (MAC, IP, port)
// gets the link's outgoing bytes back, gathered into datagrams that end at a link frame's
// closing flag, at MAX_PAYLOAD bytes, or after FLUSH_CLKS clocks without a byte. ARP
// requests for local_ip are answered. IPv4 options, fragments and bad header checksums
// are dropped; the UDP checksum is not checked (the FCS covers the hop, the link's CRC the
// bytes) and is sent as 0, which IPv4 allows. One clock domain: phy_ce paces the PHY side.
`default_nettype none
`include "nf_layout.vh"
module nf_link_udp #(
    parameter integer PORT        = `NF_LINK_UDP_PORT,         // UDP port the link listens on and answers from, 1..65535
    parameter integer MAX_PAYLOAD = `NF_LINK_UDP_MAX_PAYLOAD,  // largest datagram payload taken or sent, 1..1472
    parameter integer BUF_BYTES   = 2048,  // receive queue and transmit buffer, bytes each: a power of two >= MAX_PAYLOAD
    parameter integer FLUSH_CLKS  = 64     // clocks without a byte from the link before the gathered bytes go out, 1..255
) (
    input  wire        clk,
    input  wire        rst,
    input  wire [47:0] local_mac,   // this port's MAC, the first byte on the wire in [47:40]
    input  wire [31:0] local_ip,    // this port's IPv4 address, the first byte on the wire in [31:24]
    // PHY side (GMII-style), one byte per phy_ce
    input  wire        phy_ce,
    input  wire [7:0]  gmii_rxd,
    input  wire        gmii_rx_dv,
    input  wire        gmii_rx_er,
    output wire [7:0]  gmii_txd,
    output wire        gmii_tx_en,
    output wire        gmii_tx_er,
    // the datagrams' bytes to the link: one moves when rxb_valid && rxb_ready
    output reg         rxb_valid,
    output reg  [7:0]  rxb_data,
    input  wire        rxb_ready,
    // the link's bytes to send: one moves when txb_valid && txb_ready
    input  wire        txb_valid,
    input  wire [7:0]  txb_data,
    output wire        txb_ready,
    output reg         peer_valid,  // a good datagram has come: the link's bytes go to its sender
    output reg         rx_drop      // one-clock pulse: a datagram to our port was dropped (no room, bad FCS, bad length)
);
    localparam integer AW = $clog2(BUF_BYTES);
    generate
        if (PORT < 1 || PORT > 65535) begin : g_bad_port
            $error("nf_link_udp: PORT must be 1..65535");
        end
        if (MAX_PAYLOAD < 1 || MAX_PAYLOAD > 1472) begin : g_bad_max
            $error("nf_link_udp: MAX_PAYLOAD must be 1..1472 (one untagged 1500-byte IPv4 frame)");
        end
        if (BUF_BYTES != (1 << AW) || BUF_BYTES < MAX_PAYLOAD) begin : g_bad_buf
            $error("nf_link_udp: BUF_BYTES must be a power of two >= MAX_PAYLOAD");
        end
        if (FLUSH_CLKS < 1 || FLUSH_CLKS > 255) begin : g_bad_flush
            $error("nf_link_udp: FLUSH_CLKS must be 1..255");
        end
    endgenerate

    localparam [15:0] PORT16  = PORT[15:0];
    localparam [10:0] MAXP    = MAX_PAYLOAD[10:0];
    localparam [AW:0] BUF_N   = BUF_BYTES[AW:0];
    localparam [7:0]  FLAG    = `NF_LINK_FLAG;
    localparam [7:0]  FLUSH8  = FLUSH_CLKS[7:0];
    localparam [10:0] HDR     = 11'd42;  // Ethernet (14) + IPv4 (20) + UDP (8); an ARP frame's length too

    // ---- receive: MAC, then the headers checked byte by byte ------------------------
    wire [7:0] rd;
    wire       rv, rl, ru;
    /* verilator lint_off UNUSEDSIGNAL */
    wire       r_fcs_err, r_runt;  // folded into ru
    /* verilator lint_on UNUSEDSIGNAL */
    nf_eth_mac_rx u_mac_rx (
        .clk(clk), .rst(rst), .phy_ce(phy_ce), .gmii_rxd(gmii_rxd), .gmii_rx_dv(gmii_rx_dv),
        .gmii_rx_er(gmii_rx_er), .m_tdata(rd), .m_tvalid(rv), .m_tlast(rl), .m_tuser(ru),
        .fcs_error(r_fcs_err), .runt(r_runt)
    );

    reg [10:0] ri;        // index of the byte on rd in its frame (saturates)
    reg [7:0]  prev;      // the byte before it: two-byte fields end at an odd index
    reg        dst_us, dst_bc;  // destination so far our MAC / broadcast
    reg        is_ip, is_arp;   // EtherType, from index 14
    reg        r_ok;      // every check so far passed
    reg        mine;      // a UDP datagram to our MAC, address and port (checked through index 37)
    reg [15:0] ip_len;    // IPv4 total length
    reg [16:0] ip_sum;    // header words summed, end-around carry kept in bit 16 until folded
    reg [10:0] plen;      // UDP payload bytes
    reg [47:0] c_mac;     // the sender: Ethernet source (ARP: sender hardware address)
    reg [31:0] c_ip;      // IPv4 source (ARP: sender protocol address)
    reg [15:0] c_port;    // UDP source port
    reg [47:0] peer_mac;  // where the link's datagrams go
    reg [31:0] peer_ip;
    reg [15:0] peer_port;
    reg        arp_pending;  // an ARP request for local_ip waits for its reply
    reg [47:0] arp_mac;
    reg [31:0] arp_ip;

    // receive queue: written at ws while a datagram arrives, committed (wp) at its good end
    reg [7:0]  rxq [0:BUF_BYTES-1];
    reg [AW:0] wp, ws, rp;
    wire [AW:0] used = wp - rp;
    wire [15:0] word = {prev, rd};
    wire [15:0] ulen = word;                  // at index 39
    wire [16:0] sum_next = {1'b0, ip_sum[15:0]} + {16'd0, ip_sum[16]} + {1'b0, word};
    wire [10:0] pidx = ri - HDR;              // payload index from index 42 on
    wire        in_pay = is_ip && ri >= HDR && pidx < plen;

    function [7:0] mac_byte(input [47:0] m, input [2:0] i);  // byte i (0 first on the wire)
        mac_byte = m[47 - 8 * i -: 8];
    endfunction
    function [7:0] ip_byte(input [31:0] a, input [1:0] i);
        ip_byte = a[31 - 8 * i -: 8];
    endfunction
    // ARP request for IPv4 over Ethernet: htype 1, ptype 0800, hlen 6, plen 4, oper 1
    localparam [63:0] ARP_REQ = 64'h0001_0800_0604_0001;

    reg chk;  // this byte passes the check at its index
    always @(*) begin
        chk = 1'b1;
        if (is_ip) begin
            case (ri)
                11'd14: chk = rd == 8'h45;                       // IPv4, 20-byte header
                11'd17: chk = word >= 16'd28;
                11'd21: chk = (word & 16'h3FFF) == 16'd0;        // neither a fragment nor more to come
                11'd23: chk = rd == 8'd17;                       // UDP
                11'd30, 11'd31, 11'd32, 11'd33: chk = rd == ip_byte(local_ip, ri[1:0] - 2'd2);
                11'd34: chk = ip_sum[15:0] + {15'd0, ip_sum[16]} == 16'hFFFF;  // header checksum
                11'd37: chk = word == PORT16;
                11'd39: chk = ulen >= 16'd8 && ulen - 16'd8 <= {5'd0, MAXP} && ulen + 16'd20 <= ip_len &&
                              {1'b0, ulen} - 17'd8 <= {{(16 - AW){1'b0}}, BUF_N - used};
                default: ;
            endcase
        end else if (is_arp) begin
            if (ri >= 11'd14 && ri <= 11'd21)
                chk = rd == ARP_REQ[63 - 8 * (ri - 11'd14) -: 8];
            else if (ri >= 11'd38 && ri <= 11'd41)
                chk = rd == ip_byte(local_ip, ri[1:0] - 2'd2);
        end else if (ri >= 11'd14) begin
            chk = 1'b0;  // neither IPv4 nor ARP
        end
    end

    wire ends_ok = is_ip ? (dst_us && ri >= HDR + plen - 11'd1) : (dst_us || dst_bc) && ri >= HDR - 11'd1;
    wire good = rv && rl && !ru && r_ok && chk && ends_ok;

    always @(posedge clk) begin
        if (rst) begin
            ri          <= 11'd0;
            prev        <= 8'd0;
            dst_us      <= 1'b1;
            dst_bc      <= 1'b1;
            is_ip       <= 1'b0;
            is_arp      <= 1'b0;
            r_ok        <= 1'b1;
            mine        <= 1'b0;
            ip_len      <= 16'd0;
            ip_sum      <= 17'd0;
            plen        <= 11'd0;
            c_mac       <= 48'd0;
            c_ip        <= 32'd0;
            c_port      <= 16'd0;
            peer_mac    <= 48'd0;
            peer_ip     <= 32'd0;
            peer_port   <= 16'd0;
            peer_valid  <= 1'b0;
            arp_pending <= 1'b0;
            arp_mac     <= 48'd0;
            arp_ip      <= 32'd0;
            wp          <= {(AW + 1){1'b0}};
            ws          <= {(AW + 1){1'b0}};
            rx_drop     <= 1'b0;
        end else begin
            rx_drop <= 1'b0;
            if (rv) begin
                prev <= rd;
                ri   <= (ri == 11'h7FF) ? ri : ri + 11'd1;
                r_ok <= r_ok && chk;
                if (ri < 11'd6) begin
                    dst_us <= dst_us && rd == mac_byte(local_mac, ri[2:0]);
                    dst_bc <= dst_bc && rd == 8'hFF;
                end
                if (ri >= 11'd6 && ri < 11'd12)
                    c_mac <= {c_mac[39:0], rd};
                if (ri == 11'd13) begin
                    is_ip  <= word == 16'h0800;
                    is_arp <= word == 16'h0806;
                    ip_sum <= 17'd0;
                end
                if (is_ip) begin
                    if (ri >= 11'd15 && ri <= 11'd33 && ri[0])
                        ip_sum <= sum_next;
                    if (ri == 11'd17)
                        ip_len <= word;
                    if (ri >= 11'd26 && ri <= 11'd29)
                        c_ip <= {c_ip[23:0], rd};
                    if (ri == 11'd35)
                        c_port <= word;
                    if (ri == 11'd37)
                        mine <= r_ok && chk && dst_us;
                    if (ri == 11'd39)
                        plen <= ulen[10:0] - 11'd8;
                    if (r_ok && chk && in_pay) begin
                        rxq[ws[AW-1:0]] <= rd;
                        ws <= ws + 1'b1;
                    end
                end
                if (is_arp) begin
                    if (ri >= 11'd22 && ri < 11'd28)
                        c_mac <= {c_mac[39:0], rd};
                    if (ri >= 11'd28 && ri < 11'd32)
                        c_ip <= {c_ip[23:0], rd};
                end
                if (rl) begin
                    // the frame's verdict; the next frame starts from scratch
                    ri     <= 11'd0;
                    dst_us <= 1'b1;
                    dst_bc <= 1'b1;
                    is_ip  <= 1'b0;
                    is_arp <= 1'b0;
                    r_ok   <= 1'b1;
                    ws     <= wp;
                    if (good && is_ip) begin
                        wp         <= ws + {{AW{1'b0}}, r_ok && chk && in_pay};
                        ws         <= ws + {{AW{1'b0}}, r_ok && chk && in_pay};
                        peer_mac   <= c_mac;
                        peer_ip    <= c_ip;
                        peer_port  <= c_port;
                        peer_valid <= 1'b1;
                    end else if (good && is_arp) begin
                        arp_pending <= 1'b1;
                        arp_mac     <= c_mac;
                        arp_ip      <= c_ip;
                    end
                    mine    <= 1'b0;
                    rx_drop <= mine && !good;
                end
            end
            if (arp_take)
                arp_pending <= 1'b0;
        end
    end

    // Queue to the link: a one-byte output register read ahead of the consumer.
    always @(posedge clk) begin
        if (rst) begin
            rp        <= {(AW + 1){1'b0}};
            rxb_valid <= 1'b0;
            rxb_data  <= 8'd0;
        end else if (!rxb_valid || rxb_ready) begin
            rxb_valid <= rp != wp;
            if (rp != wp) begin
                rxb_data <= rxq[rp[AW-1:0]];
                rp <= rp + 1'b1;
            end
        end
    end

    // ---- transmit: gather the link's bytes, then one frame to the MAC ---------------
    localparam [1:0] T_GATHER = 2'd0,
                     T_PREP   = 2'd1,  // the header's fields are taken, its checksum summed
                     T_SEND   = 2'd2;
    reg [1:0]  tstate;
    reg [7:0]  txq [0:BUF_BYTES-1];
    reg [10:0] tcount;    // bytes gathered
    reg        t_inframe; // the last gathered byte was not a flag: a flag now closes a frame
    reg        t_flush;   // a closing flag was gathered: send now
    reg [7:0]  t_idle;    // clocks since the last gathered byte (saturates at FLUSH_CLKS)
    reg        t_arp;     // the frame being sent is the ARP reply
    reg [10:0] ti;        // index of the frame byte offered to the MAC
    reg [10:0] tlen;      // the frame's length without FCS
    reg [47:0] s_mac;     // the frame's destination, taken at T_PREP's start
    reg [31:0] s_ip;
    reg [15:0] s_port;
    reg [15:0] ip_id;     // IPv4 identification, one per datagram
    reg [15:0] ip_csum;
    reg [7:0]  tx_rd;     // txq at the payload byte ti (read a clock ahead)

    wire        t_take   = tstate == T_GATHER && txb_valid && tcount != MAXP;
    assign      txb_ready = tstate == T_GATHER && tcount != MAXP;
    wire        t_ready  = tcount == MAXP || t_flush || (tcount != 11'd0 && t_idle == FLUSH8);
    wire        arp_take = tstate == T_GATHER && !t_take && arp_pending;
    wire [15:0] t_plen   = {5'd0, tcount};
    wire [15:0] t_iplen  = t_plen + 16'd28;
    wire [15:0] t_ulen   = t_plen + 16'd8;
    wire [19:0] t_sum    = 20'h04500 + {4'd0, t_iplen} + {4'd0, ip_id} + 20'h04000 + 20'h04011 +
                           {4'd0, local_ip[31:16]} + {4'd0, local_ip[15:0]} + {4'd0, s_ip[31:16]} + {4'd0, s_ip[15:0]};
    wire [16:0] t_fold1  = {1'b0, t_sum[15:0]} + {13'd0, t_sum[19:16]};
    wire [15:0] t_fold2  = t_fold1[15:0] + {15'd0, t_fold1[16]};

    wire [335:0] udp_hdr = {s_mac, local_mac, 16'h0800, 8'h45, 8'h00, t_iplen, ip_id, 16'h4000, 8'd64, 8'd17,
                            ip_csum, local_ip, s_ip, PORT16, s_port, t_ulen, 16'h0000};
    wire [335:0] arp_hdr = {s_mac, local_mac, 16'h0806, 64'h0001_0800_0604_0002, local_mac, local_ip, s_mac, s_ip};
    wire [335:0] hdr     = t_arp ? arp_hdr : udp_hdr;
    wire [5:0]   hi       = ti < HDR ? ti[5:0] : 6'd0;
    wire [7:0]   hdr_byte = hdr[335 - 8 * hi -: 8];

    wire        m_ready;
    wire        m_valid = tstate == T_SEND;
    wire        m_last  = ti == tlen - 11'd1;
    wire        m_hs    = m_valid && m_ready;
    wire [10:0] ti_next = m_hs ? ti + 11'd1 : ti;
    wire [10:0] rd_idx  = ti_next - HDR;
    /* verilator lint_off UNUSEDSIGNAL */
    wire        m_busy, m_underflow;  // the MAC is fed a byte at every phy_ce: never short
    /* verilator lint_on UNUSEDSIGNAL */
    nf_eth_mac_tx u_mac_tx (
        .clk(clk), .rst(rst), .s_tdata(ti < HDR ? hdr_byte : tx_rd), .s_tvalid(m_valid), .s_tready(m_ready),
        .s_tlast(m_last), .s_tuser(1'b0), .phy_ce(phy_ce), .gmii_txd(gmii_txd), .gmii_tx_en(gmii_tx_en),
        .gmii_tx_er(gmii_tx_er), .busy(m_busy), .underflow(m_underflow)
    );

    always @(posedge clk) begin
        tx_rd <= txq[rd_idx[AW-1:0]];
        if (t_take)
            txq[tcount[AW-1:0]] <= txb_data;
    end

    always @(posedge clk) begin
        if (rst) begin
            tstate    <= T_GATHER;
            tcount    <= 11'd0;
            t_inframe <= 1'b0;
            t_flush   <= 1'b0;
            t_idle    <= 8'd0;
            t_arp     <= 1'b0;
            ti        <= 11'd0;
            tlen      <= 11'd0;
            s_mac     <= 48'd0;
            s_ip      <= 32'd0;
            s_port    <= 16'd0;
            ip_id     <= 16'd0;
            ip_csum   <= 16'd0;
        end else begin
            case (tstate)
                T_GATHER: begin
                    if (t_take) begin
                        tcount    <= tcount + 11'd1;
                        t_inframe <= txb_data != FLAG;
                        t_flush   <= txb_data == FLAG && t_inframe;
                        t_idle    <= 8'd0;
                    end else if (arp_pending) begin
                        // the reply goes first; the gathered bytes wait
                        t_arp  <= 1'b1;
                        s_mac  <= arp_mac;
                        s_ip   <= arp_ip;
                        tlen   <= HDR;
                        ti     <= 11'd0;
                        tstate <= T_PREP;
                    end else if (t_ready) begin
                        t_flush <= 1'b0;
                        t_idle  <= 8'd0;
                        if (peer_valid) begin
                            t_arp  <= 1'b0;
                            s_mac  <= peer_mac;
                            s_ip   <= peer_ip;
                            s_port <= peer_port;
                            tlen   <= HDR + tcount;
                            ti     <= 11'd0;
                            tstate <= T_PREP;
                        end else begin
                            tcount <= 11'd0;  // nobody to send to
                        end
                    end else if (tcount != 11'd0 && t_idle != FLUSH8) begin
                        t_idle <= t_idle + 8'd1;
                    end
                end
                T_PREP: begin
                    ip_csum <= ~t_fold2;
                    tstate  <= T_SEND;
                end
                default: begin  // T_SEND
                    ti <= ti_next;
                    if (m_hs && m_last) begin
                        tstate <= T_GATHER;
                        if (!t_arp) begin
                            tcount <= 11'd0;
                            ip_id  <= ip_id + 16'd1;
                        end
                    end
                end
            endcase
        end
    end
endmodule
`default_nettype wire
