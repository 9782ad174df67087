// SPDX-License-Identifier: Apache-2.0
// nf_wire: one simulated adapter's Ethernet port on a UNIX socket (sim/README.md, "The
// wire"). An nfsim harness calls clock() once per simulated clock with the MAC's GMII-style
// transmit pins and drives the MAC's receive pins from rxd()/rx_dv()/rx_er(). Whole frames
// travel as one SOCK_SEQPACKET message each to a hub (nfwire) or to a peer endpoint.
//
// A message is the frame as it is between SFD and the end of carrier: destination MAC
// to FCS inclusive, no preamble, no SFD. The FCS travels as sent, so a frame sent bad
// (wrong FCS, or tx_er during it: its FCS is then inverted) arrives bad at the receiving
// MAC, and a bit flipped on the way is caught there too. No Verilator dependency.
#ifndef NF_WIRE_H
#define NF_WIRE_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

// CRC-32 of Ethernet (reflected 0x04C11DB7, init and final xor all ones); the FCS is
// this value sent least-significant byte first.
uint32_t nf_wire_crc32(const uint8_t *p, size_t n);
// True when n >= 4 and the last four bytes are the FCS of the bytes before them.
bool nf_wire_fcs_ok(const uint8_t *p, size_t n);

class NfWire {
public:
    struct Options {
        size_t rx_queue = 32;     // frames waiting to be fed; more are dropped and counted
        unsigned preamble = 7;    // 0x55 bytes before the SFD on the receive side
        unsigned ifg = 12;        // idle phy_ce clocks after a fed frame before the next
        unsigned poll_every = 256; // clock() calls between two reads of the socket
        size_t max_frame = 16384; // bytes after the SFD (FCS included), either direction
        bool loopback = false;    // PHY loopback: the transmit pins drive the receive pins, no socket
    };
    struct Stats {
        uint64_t tx_frames = 0;    // frames sent (good and bad)
        uint64_t tx_bytes = 0;     // their bytes, FCS included
        uint64_t tx_bad_fcs = 0;   // sent with an FCS that does not match
        uint64_t tx_er = 0;        // tx_er during the frame (sent with an inverted FCS)
        uint64_t tx_no_sfd = 0;    // a carrier without an SFD: nothing sent
        uint64_t tx_oversize = 0;  // longer than max_frame: dropped
        uint64_t tx_dropped = 0;   // not connected, or the socket's buffer full: dropped
        uint64_t rx_frames = 0;    // messages received from the socket
        uint64_t rx_dropped = 0;   // received while the queue was full: dropped
        uint64_t rx_oversize = 0;  // longer than max_frame (or empty): dropped
        uint64_t rx_fed = 0;       // frames fed to the receive pins completely
        // With loopback, a frame sent counts in tx_frames, rx_frames and, once through, rx_fed.
    };

    NfWire();
    explicit NfWire(const Options &opt);
    ~NfWire();
    NfWire(const NfWire &) = delete;
    NfWire &operator=(const NfWire &) = delete;

    // Connects to a hub's socket (nfwire --socket PATH). Called before the simulation
    // runs: the connect itself may wait for the hub to accept; nothing after it blocks.
    bool connect(const std::string &path, std::string *err);
    // Sends the hello (sim/nf_wire_proto.h) with opts, "key=value,...": call it right
    // after connect(), before any frame. False (and nothing sent) when opts is too long.
    bool hello(const std::string &opts, std::string *err);
    // Takes an already connected SOCK_SEQPACKET socket (one end of a socketpair, say).
    bool attach(int fd, std::string *err);
    void close();
    bool connected() const { return fd_ >= 0; }
    int fd() const { return fd_; }  // for a harness's own poll() while the model idles

    // Once per simulated clock, after the MAC's transmit pins settle, with the phy_ce of
    // the edge just evaluated (the MAC's pins change only at such edges, so each byte is
    // taken once). On a phy_ce clock the receive pins move to their next byte; between
    // phy_ce clocks they hold, so the MAC samples each byte once, registered or not.
    void clock(bool phy_ce, uint8_t txd, bool tx_en, bool tx_er)
    {
        if (++since_poll_ >= opt_.poll_every)
            poll();
        if (!phy_ce)
            return;
        if (tx_en || tx_state_ != TX_IDLE)
            tx_byte(txd, tx_en, tx_er);
        if (opt_.loopback) {
            loop_byte(txd, tx_en, tx_er);
            return;
        }
        if (rx_state_ != RX_IDLE || gap_left_ || !queue_.empty())
            rx_step();
    }
    uint8_t rxd() const { return rxd_; }
    bool rx_dv() const { return rx_dv_; }
    bool rx_er() const { return rx_er_; }  // only in loopback: from a segment, bad frames arrive with a bad FCS

    // Reads every message waiting on the socket into the queue (clock() calls it every
    // poll_every clocks). Never blocks.
    void poll();
    size_t rx_queued() const { return queue_.size(); }  // not counting the one being fed
    // True while a frame, or the gap after it, is on the receive pins, or frames wait.
    bool rx_busy() const { return rx_state_ != RX_IDLE || gap_left_ || !queue_.empty() || rx_dv_; }
    // True while a transmitted frame is being assembled.
    bool tx_busy() const { return tx_state_ != TX_IDLE; }
    const Stats &stats() const { return stats_; }
    const Options &options() const { return opt_; }
    // The PHY's loopback turned on or off (BMCR over MDIO): from the next clock(), the
    // transmit pins drive the receive pins, or frames go to the socket (if any) again.
    void set_loopback(bool on) { opt_.loopback = on; }

private:
    enum TxState { TX_IDLE, TX_PREAMBLE, TX_DATA, TX_JUNK };
    enum RxState { RX_IDLE, RX_PREAMBLE, RX_SFD, RX_DATA };
    void tx_byte(uint8_t txd, bool tx_en, bool tx_er);
    void tx_end();
    void loop_back(size_t n);
    void loop_byte(uint8_t txd, bool tx_en, bool tx_er);
    void rx_step();

    Options opt_;
    Stats stats_;
    int fd_ = -1;
    unsigned since_poll_ = 0;
    TxState tx_state_ = TX_IDLE;
    bool tx_err_ = false;
    bool tx_long_ = false;
    std::vector<uint8_t> tx_buf_;
    std::vector<uint8_t> rx_msg_;  // one message's worth of room for recv
    std::deque<std::vector<uint8_t>> queue_;
    std::vector<uint8_t> cur_;     // the frame on the receive pins
    RxState rx_state_ = RX_IDLE;
    size_t rx_pos_ = 0;
    unsigned gap_left_ = 0;
    uint8_t rxd_ = 0;
    bool rx_dv_ = false;
    bool rx_er_ = false;
};

#endif
