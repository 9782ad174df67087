/* SPDX-License-Identifier: Apache-2.0 */
// nfsim --link-udp PORT: the host link's Ethernet port (nf_link_udp) reached from a UDP
// socket on 127.0.0.1:PORT. Each datagram from the host becomes an Ethernet/IPv4/UDP
// frame to the port's address on its GMII-style pins (an NfWire fed through a socketpair,
// so the pins behave as the network port's); each UDP frame the port sends back has its
// payload sent to the host that sent last. ARP from the port is not answered: it only
// answers, and the harness addresses it directly.
#ifndef NF_UDP_LINK_H
#define NF_UDP_LINK_H

#include <cstdint>
#include <memory>
#include <string>

#include "nf_wire.h"

class NfUdpLink {
public:
    static constexpr uint64_t kMac = 0x026eff000001ull;  // the port's MAC (nf_soc link_mac)
    static constexpr uint32_t kIp = 0x0AFF0002u;         // the port's address, 10.255.0.2
    NfUdpLink() = default;
    ~NfUdpLink();
    NfUdpLink(const NfUdpLink &) = delete;
    NfUdpLink &operator=(const NfUdpLink &) = delete;

    // Binds 127.0.0.1:port. False with *err set when it cannot.
    bool open(unsigned port, std::string *err);
    // Once per clock, as NfWire::clock, with the port's transmit pins.
    void clock(bool phy_ce, uint8_t txd, bool tx_en, bool tx_er) { wire_->clock(phy_ce, txd, tx_en, tx_er); }
    uint8_t rxd() const { return wire_->rxd(); }
    bool rx_dv() const { return wire_->rx_dv(); }
    // Moves datagrams both ways; never blocks.
    void service();
    // Waits up to ms for a datagram from the host.
    void wait(int ms);
    // A host has sent a datagram: from then on the simulation keeps running.
    bool active() const { return have_host_; }

private:
    int udp_fd_ = -1;
    int pair_fd_ = -1;  // our end of the socketpair; the other end is the NfWire's
    std::unique_ptr<NfWire> wire_;
    bool have_host_ = false;
    unsigned char host_addr_[16] = {};  // struct sockaddr_in of the host that sent last
    uint16_t ip_id_ = 0;
};

#endif
