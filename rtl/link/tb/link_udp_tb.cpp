/* SPDX-License-Identifier: Apache-2.0 */
// nf_link_udp's testbench: runs the steps of a scenario file (link_udp_tb.py gen) and
// writes what the port did in each (link_udp_tb.py check reads it with scapy).
// Scenario lines: "STEP name", "F hex" (a frame with its FCS, driven on the GMII pins
// after a preamble and SFD, then an inter-frame gap), "T hex" (bytes offered to txb),
// "W n" (n clocks). Output: "STEP name", then "R hex" (the bytes rxb gave during the
// step) and "X hex" (each frame the port sent, preamble stripped, FCS kept).
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "Vnf_link_udp.h"
#include "nf_tb_clock.h"
#include "verilated.h"

namespace {

struct Bench {
    Vnf_link_udp *m;
    uint64_t cyc = 0;
    std::deque<uint8_t> txb;        // bytes waiting to be offered to txb
    std::vector<uint8_t> rx_bytes;  // what rxb gave this step
    std::vector<uint8_t> tx_frame;  // the frame on the transmit pins
    bool tx_seen_sfd = false;
    std::vector<std::vector<uint8_t>> tx_frames;
    uint32_t lfsr = 0xACE1u;

    void tick(uint8_t rxd = 0, bool rx_dv = false)
    {
        m->phy_ce = 1;
        m->gmii_rxd = rxd;
        m->gmii_rx_dv = rx_dv;
        m->gmii_rx_er = 0;
        lfsr = lfsr * 1103515245u + 12345u;
        m->rxb_ready = (lfsr >> 16) % 3 != 0;  // backpressure now and then
        m->txb_valid = !txb.empty();
        m->txb_data = txb.empty() ? 0 : txb.front();
        m->eval();
        bool rx_take = m->rxb_valid && m->rxb_ready;
        uint8_t rx_byte = m->rxb_data;
        bool tx_take = m->txb_valid && m->txb_ready;
        tb_tick(m, cyc);
        if (rx_take)
            rx_bytes.push_back(rx_byte);
        if (tx_take)
            txb.pop_front();
        if (m->gmii_tx_en) {
            if (tx_seen_sfd)
                tx_frame.push_back(m->gmii_txd);
            else if (m->gmii_txd == 0xD5)
                tx_seen_sfd = true;
        } else if (tx_seen_sfd) {
            tx_frames.push_back(tx_frame);
            tx_frame.clear();
            tx_seen_sfd = false;
        }
    }
};

std::vector<uint8_t> unhex(const std::string &s)
{
    std::vector<uint8_t> v;
    for (size_t i = 0; i + 1 < s.size(); i += 2)
        v.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
    return v;
}

std::string hex(const std::vector<uint8_t> &v)
{
    std::string s;
    char b[3];
    for (uint8_t c : v) {
        std::snprintf(b, sizeof(b), "%02x", c);
        s += b;
    }
    return s;
}

}  // namespace

int main(int argc, char **argv)
{
    Verilated::commandArgs(argc, argv);
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s SCENARIO OUT\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    FILE *out = std::fopen(argv[2], "w");
    if (!in || !out) {
        std::fprintf(stderr, "cannot open %s or %s\n", argv[1], argv[2]);
        return 2;
    }
    Bench b;
    b.m = new Vnf_link_udp;
    b.m->local_mac = 0x026e00000001ull;
    b.m->local_ip = 0xC0A80132u;  // 192.168.1.50
    tb_reset(b.m, 4, [&] { b.tick(); });
    auto flush = [&] {
        if (!b.rx_bytes.empty())
            std::fprintf(out, "R %s\n", hex(b.rx_bytes).c_str());
        for (auto &f : b.tx_frames)
            std::fprintf(out, "X %s\n", hex(f).c_str());
        b.rx_bytes.clear();
        b.tx_frames.clear();
    };
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string op, arg;
        ls >> op >> arg;
        if (op == "STEP") {
            flush();
            std::fprintf(out, "STEP %s\n", arg.c_str());
        } else if (op == "F") {
            for (int i = 0; i < 7; i++)
                b.tick(0x55, true);
            b.tick(0xD5, true);
            for (uint8_t c : unhex(arg))
                b.tick(c, true);
            for (int i = 0; i < 12; i++)
                b.tick();
        } else if (op == "T") {
            for (uint8_t c : unhex(arg))
                b.txb.push_back(c);
        } else if (op == "W") {
            for (long i = std::stol(arg); i > 0; i--)
                b.tick();
        }
    }
    flush();
    std::fclose(out);
    b.m->final();
    delete b.m;
    return 0;
}
