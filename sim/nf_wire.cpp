// SPDX-License-Identifier: Apache-2.0
// nf_wire: frames between a MAC's GMII-style pins and a SOCK_SEQPACKET socket (nf_wire.h).
#include "nf_wire.h"
#include "nf_wire_proto.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

struct CrcTable {
    uint32_t t[256];
    CrcTable()
    {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            t[i] = c;
        }
    }
};
const CrcTable crc_table;

}  // namespace

uint32_t nf_wire_crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = crc_table.t[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return ~c;
}

bool nf_wire_fcs_ok(const uint8_t *p, size_t n)
{
    if (n < 4)
        return false;
    uint32_t fcs = uint32_t(p[n - 4]) | uint32_t(p[n - 3]) << 8 | uint32_t(p[n - 2]) << 16 |
                   uint32_t(p[n - 1]) << 24;
    return nf_wire_crc32(p, n - 4) == fcs;
}

NfWire::NfWire() : NfWire(Options()) {}

NfWire::NfWire(const Options &opt) : opt_(opt)
{
    if (opt_.poll_every == 0)
        opt_.poll_every = 1;
    tx_buf_.reserve(opt_.max_frame);
    // One byte more than the largest frame, so a longer message shows as truncated.
    rx_msg_.resize(opt_.max_frame + 1);
}

NfWire::~NfWire() { close(); }

void NfWire::close()
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

bool NfWire::attach(int fd, std::string *err)
{
    close();
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        if (err)
            *err = std::string("nf_wire: fcntl: ") + std::strerror(errno);
        return false;
    }
    // A larger send buffer rides out a hub that is slow to read; a full one drops.
    int sz = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    fd_ = fd;
    return true;
}

bool NfWire::connect(const std::string &path, std::string *err)
{
    sockaddr_un addr{};
    if (path.size() >= sizeof(addr.sun_path)) {
        if (err)
            *err = "nf_wire: socket path too long: " + path;
        return false;
    }
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) {
        if (err)
            *err = std::string("nf_wire: socket: ") + std::strerror(errno);
        return false;
    }
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(s, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0) {
        if (err)
            *err = "nf_wire: cannot connect to " + path + ": " + std::strerror(errno);
        ::close(s);
        return false;
    }
    if (!attach(s, err)) {
        ::close(s);
        return false;
    }
    return true;
}

bool NfWire::hello(const std::string &opts, std::string *err)
{
    std::string msg = std::string(NF_WIRE_HELLO_PREFIX) + opts;
    if (msg.size() > NF_WIRE_HELLO_MAX || msg.find('\0') != std::string::npos) {
        if (err)
            *err = "nf_wire: the port's options are longer than the hello allows";
        return false;
    }
    if (fd_ < 0) {
        if (err)
            *err = "nf_wire: not connected";
        return false;
    }
    // The socket's buffer is empty this early: a hello that does not fit is an error.
    if (send(fd_, msg.data(), msg.size(), MSG_DONTWAIT | MSG_NOSIGNAL) != ssize_t(msg.size())) {
        if (err)
            *err = std::string("nf_wire: hello: ") + std::strerror(errno);
        return false;
    }
    return true;
}

void NfWire::poll()
{
    since_poll_ = 0;
    while (fd_ >= 0) {
        ssize_t n = recv(fd_, rx_msg_.data(), rx_msg_.size(), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                close();
            return;
        }
        if (n == 0) {  // the hub or the peer went away: the port is down
            close();
            return;
        }
        stats_.rx_frames++;
        if (size_t(n) > opt_.max_frame) {
            stats_.rx_oversize++;
            continue;
        }
        if (queue_.size() >= opt_.rx_queue) {
            stats_.rx_dropped++;
            continue;
        }
        queue_.emplace_back(rx_msg_.begin(), rx_msg_.begin() + n);
    }
}

// The transmit side: a carrier (tx_en) of 0x55 bytes up to an SFD, then the frame. The
// frame is sent when tx_en falls, so a message is always a whole frame.
void NfWire::tx_byte(uint8_t txd, bool tx_en, bool tx_er)
{
    if (!tx_en) {
        if (tx_state_ == TX_DATA)
            tx_end();
        else if (tx_state_ != TX_IDLE)
            stats_.tx_no_sfd++;
        tx_state_ = TX_IDLE;
        return;
    }
    switch (tx_state_) {
    case TX_IDLE:
    case TX_PREAMBLE:
        tx_err_ = (tx_state_ == TX_PREAMBLE && tx_err_) || tx_er;
        tx_long_ = false;
        tx_buf_.clear();
        if (txd == 0xD5)
            tx_state_ = TX_DATA;
        else
            tx_state_ = txd == 0x55 ? TX_PREAMBLE : TX_JUNK;
        break;
    case TX_DATA:
        tx_err_ |= tx_er;
        if (tx_buf_.size() < opt_.max_frame)
            tx_buf_.push_back(txd);
        else
            tx_long_ = true;
        break;
    case TX_JUNK:
        break;
    }
}

void NfWire::tx_end()
{
    if (tx_long_) {
        stats_.tx_oversize++;
        return;
    }
    size_t n = tx_buf_.size();
    if (n == 0) {  // an SFD and nothing after it: no frame
        stats_.tx_no_sfd++;
        return;
    }
    bool good = nf_wire_fcs_ok(tx_buf_.data(), n);
    if (!good)
        stats_.tx_bad_fcs++;
    if (tx_err_) {
        stats_.tx_er++;
        // The frame must stay bad on the wire: a good FCS is inverted.
        if (good)
            for (size_t i = n - 4; i < n; i++)
                tx_buf_[i] ^= 0xFF;
    }
    if (opt_.loopback) {
        loop_back(n);
        return;
    }
    if (fd_ < 0) {
        stats_.tx_dropped++;
        return;
    }
    ssize_t r;
    do
        r = send(fd_, tx_buf_.data(), n, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        stats_.tx_dropped++;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)
            close();
        return;
    }
    stats_.tx_frames++;
    stats_.tx_bytes += n;
}

// PHY loopback, a frame's end: counted both ways (its bytes went through loop_byte).
void NfWire::loop_back(size_t n)
{
    stats_.tx_frames++;
    stats_.tx_bytes += n;
    stats_.rx_frames++;
}

// PHY loopback, one phy_ce clock: the receive pins take the transmit pins' byte, as a PHY
// in loopback returns it, cut through: the receiver sees the same preamble, frame and gap
// one PHY byte later, and tx_er as rx_er.
void NfWire::loop_byte(uint8_t txd, bool tx_en, bool tx_er)
{
    if (rx_dv_ && !tx_en)
        stats_.rx_fed++;
    rxd_ = tx_en ? txd : 0;
    rx_dv_ = tx_en;
    rx_er_ = tx_en && tx_er;
}

// The receive side, one phy_ce clock: preamble, SFD, the message's bytes with rx_dv high,
// then ifg clocks with rx_dv low before the next frame's preamble.
void NfWire::rx_step()
{
    switch (rx_state_) {
    case RX_IDLE:
        if (gap_left_) {
            gap_left_--;
            return;
        }
        cur_.swap(queue_.front());
        queue_.pop_front();
        rx_pos_ = 0;
        rx_dv_ = true;
        if (opt_.preamble) {
            rxd_ = 0x55;
            rx_pos_ = 1;
            rx_state_ = rx_pos_ < opt_.preamble ? RX_PREAMBLE : RX_SFD;
        } else {
            rxd_ = 0xD5;
            rx_state_ = RX_DATA;
        }
        return;
    case RX_PREAMBLE:
        rxd_ = 0x55;
        if (++rx_pos_ >= opt_.preamble)
            rx_state_ = RX_SFD;
        return;
    case RX_SFD:
        rxd_ = 0xD5;
        rx_pos_ = 0;
        rx_state_ = RX_DATA;
        return;
    case RX_DATA:
        if (rx_pos_ < cur_.size()) {
            rxd_ = cur_[rx_pos_++];
            return;
        }
        // This clock is the gap's first.
        rxd_ = 0;
        rx_dv_ = false;
        rx_state_ = RX_IDLE;
        gap_left_ = opt_.ifg ? opt_.ifg - 1 : 0;
        stats_.rx_fed++;
        return;
    }
}
