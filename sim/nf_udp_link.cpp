/* SPDX-License-Identifier: Apache-2.0 */
// nfsim --link-udp: datagrams to and from the host link's Ethernet port (nf_udp_link.h).
#include "nf_udp_link.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nf_layout_cxx.h"

namespace {

constexpr uint64_t kHostMac = 0x026eff000002ull;  // the harness's side of the wire
constexpr uint32_t kHostIp = 0x0AFF0001u;         // 10.255.0.1
constexpr size_t kEthHdr = 14, kIpHdr = 20, kUdpHdr = 8;  // header bytes

void put_be(std::vector<uint8_t> &f, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        f.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

unsigned be16(const uint8_t *p) { return unsigned(p[0]) << 8 | p[1]; }

}  // namespace

NfUdpLink::~NfUdpLink()
{
    if (udp_fd_ >= 0)
        ::close(udp_fd_);
    if (pair_fd_ >= 0)
        ::close(pair_fd_);
}

bool NfUdpLink::open(unsigned port, std::string *err)
{
    udp_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (udp_fd_ < 0 || bind(udp_fd_, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0) {
        *err = std::string("cannot bind 127.0.0.1:") + std::to_string(port) + ": " + std::strerror(errno);
        return false;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        *err = std::string("socketpair: ") + std::strerror(errno);
        return false;
    }
    pair_fd_ = sv[0];
    NfWire::Options o;
    o.poll_every = 64;  // frames reach the pins soon after a datagram
    wire_ = std::make_unique<NfWire>(o);
    return wire_->attach(sv[1], err);
}

void NfUdpLink::service()
{
    static_assert(sizeof(sockaddr_in) <= sizeof(host_addr_), "host_addr_ holds a sockaddr_in");
    uint8_t buf[65536];
    for (;;) {  // host to port: one frame per datagram
        sockaddr_in from{};
        socklen_t flen = sizeof(from);
        ssize_t n = recvfrom(udp_fd_, buf, sizeof(buf), 0, reinterpret_cast<sockaddr *>(&from), &flen);
        if (n < 0)
            break;
        if (static_cast<size_t>(n) > NF_LINK_UDP_MAX_PAYLOAD)
            continue;  // the port would drop it
        std::memcpy(host_addr_, &from, sizeof(from));
        have_host_ = true;
        std::vector<uint8_t> f;
        put_be(f, NfUdpLink::kMac, 6);
        put_be(f, kHostMac, 6);
        put_be(f, 0x0800, 2);
        size_t ip0 = f.size();
        put_be(f, 0x4500, 2);
        put_be(f, kIpHdr + kUdpHdr + static_cast<size_t>(n), 2);
        put_be(f, ip_id_++, 2);
        put_be(f, 0x4000, 2);
        put_be(f, 0x4011, 2);
        put_be(f, 0, 2);
        put_be(f, kHostIp, 4);
        put_be(f, NfUdpLink::kIp, 4);
        uint32_t sum = 0;
        for (size_t i = ip0; i < ip0 + kIpHdr; i += 2)
            sum += be16(&f[i]);
        sum = (sum & 0xFFFF) + (sum >> 16);
        sum = (sum & 0xFFFF) + (sum >> 16);
        f[ip0 + 10] = static_cast<uint8_t>(~sum >> 8);
        f[ip0 + 11] = static_cast<uint8_t>(~sum);
        put_be(f, ntohs(from.sin_port), 2);
        put_be(f, NF_LINK_UDP_PORT, 2);
        put_be(f, kUdpHdr + static_cast<size_t>(n), 2);
        put_be(f, 0, 2);
        f.insert(f.end(), buf, buf + n);
        if (f.size() < 60)
            f.resize(60, 0);
        uint32_t fcs = nf_wire_crc32(f.data(), f.size());
        put_be(f, __builtin_bswap32(fcs), 4);  // least-significant byte first
        if (send(pair_fd_, f.data(), f.size(), MSG_DONTWAIT) < 0)
            break;  // the wire's queue is full: the datagram is lost, the link repeats it
    }
    for (;;) {  // port to host: a UDP frame from the link port's port carries link bytes
        ssize_t n = recv(pair_fd_, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0)
            break;
        size_t len = static_cast<size_t>(n);
        if (len < kEthHdr + kIpHdr + kUdpHdr + 4 || be16(buf + 12) != 0x0800 || buf[kEthHdr] != 0x45 || buf[kEthHdr + 9] != 17)
            continue;  // an ARP reply, or not ours
        const uint8_t *udp = buf + kEthHdr + kIpHdr;
        size_t ulen = be16(udp + 4);
        if (be16(udp) != NF_LINK_UDP_PORT || ulen < kUdpHdr || kEthHdr + kIpHdr + ulen + 4 > len || !have_host_)
            continue;
        sendto(udp_fd_, udp + kUdpHdr, ulen - kUdpHdr, MSG_DONTWAIT, reinterpret_cast<const sockaddr *>(host_addr_),
               sizeof(sockaddr_in));
    }
}

void NfUdpLink::wait(int ms)
{
    pollfd p{udp_fd_, POLLIN, 0};
    poll(&p, 1, ms);
}
