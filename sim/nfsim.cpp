/* SPDX-License-Identifier: Apache-2.0 */
// nfsim: the Verilator model of nf_soc as a board on a Unix-domain socket.
//
// The bridge drives the model's uart_rx pin and samples uart_tx bit by bit at the
// configured baud (sim/nf_uart_bits.h), relaying bytes to one client. Everything is
// paced in simulated cycles, so simulated time does not depend on host speed; the
// socket is polled every kPollCycles cycles. With no client and nothing in flight the
// model pauses in a blocking wait for the next client (simulated time stands still).
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>

#include "nf_listen.h"
#include "nf_udp_link.h"
#include "nf_wire.h"
#ifdef NFSIM_PHY
#include "nfsim_phy.h"
#endif
#include <utility>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "nf_layout_cxx.h"
#include "nf_mii_phy.h"
#include "nf_uart_bits.h"
#include "Vnf_soc.h"
#include "Vnf_soc___024root.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

#ifndef NF_DEFAULT_FIRMWARE
#error "NF_DEFAULT_FIRMWARE (path of the firmware hex) must be defined at compile time"
#endif

namespace {

constexpr uint64_t kClkHz = NF_SOC_CPU_CLK_SIM_HZ;
constexpr uint64_t kPollCycles = 256;     // socket service interval
constexpr size_t kRxBacklog = 4096;       // bytes read ahead from the client
constexpr int kResetCycles = 8;
constexpr uint32_t kMinPeriod = 2u << NF_SOC_UART_PERIOD_FRAC;  // RX needs >= 2 clocks per bit
constexpr uint32_t kMaxPeriod = 0xFFFF;

// One evaluation per clock. The design has no logic on the falling edge, so the
// evaluation at clk = 0 only settles the logic fed by the input pins, which the next
// evaluation settles again before its rising edge: that evaluation is work for nothing.
// Verilator finds a rising edge by comparing a clock with its value at the last
// evaluation; this sets those values to what they are at clk = 0 instead: 0 for clk, and
// for the CPU's and the engine's clocks (nf_soc CPU_CLOCK_GATE: clk OR a gate) their
// gates (the same state clock for clock: checked against a model evaluated at both edges,
// sim/tests). Where the model has no such members (other Verilator versions, a model
// without the gates), prime_rising_edge() is false and tick() evaluates both edges.
// The model's members the two functions below use (nf_soc inlined: the model is flat).
#define CLK_PREV __Vtrigrprev__TOP__clk
#define CPU_CLK_PREV __Vtrigrprev__TOP__nfsim_top__DOT__u_soc__DOT__cpu_clk
#define ENG_CLK_PREV __Vtrigrprev__TOP__nfsim_top__DOT__u_soc__DOT__eng_clk
#define CPU_GATE nfsim_top__DOT__u_soc__DOT__g_cpu_gate__DOT__cpu_gate
#define ENG_GATE nfsim_top__DOT__u_soc__DOT__g_cpu_gate__DOT__eng_gate
template <typename Root>
auto prime_rising_edge(Root *root, int)
    -> decltype(root->CLK_PREV = 0, root->CPU_CLK_PREV = root->CPU_GATE, root->ENG_CLK_PREV = root->ENG_GATE, bool())
{
    root->CLK_PREV = 0;
    root->CPU_CLK_PREV = root->CPU_GATE;
    root->ENG_CLK_PREV = root->ENG_GATE;
    return true;
}
template <typename Root>
bool prime_rising_edge(Root *, long)
{
    return false;
}
// The network port's clock likewise, in a model that has the port (the SIM profile's).
#define NET_CLK_PREV __Vtrigrprev__TOP__nfsim_top__DOT__u_soc__DOT__net_clk
#define NET_GATE nfsim_top__DOT__u_soc__DOT__g_cpu_gate__DOT__net_gate
template <typename Root>
auto prime_net_edge(Root *root, int) -> decltype(root->NET_CLK_PREV = root->NET_GATE, bool())
{
    root->NET_CLK_PREV = root->NET_GATE;
    return true;
}
template <typename Root>
bool prime_net_edge(Root *, long)
{
    return true;  // no port, or its clock is clk itself: nothing to prime
}

// Whether the CPU's and the engine's clocks are stopped for the coming edge (bit 0, bit 1;
// 0 in a model without the gates).
template <typename Root>
auto clocks_stopped(Root *root, int) -> decltype(unsigned(root->CPU_GATE | root->ENG_GATE))
{
    return root->CPU_GATE | root->ENG_GATE << 1;
}
template <typename Root>
unsigned clocks_stopped(Root *, long)
{
    return 0;
}

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
    std::string socket_path;
    uint64_t baud = 3000000;
    std::string firmware = NF_DEFAULT_FIRMWARE;
    std::string trace;
    uint64_t max_cycles = 0;  // 0: no limit
    double drop = 0, corrupt = 0, dup = 0;
    uint64_t seed = 1;
    bool exit_on_disconnect = false;
    bool quiet = false;
    std::string pin_log;  // every change of the UART pins, "CYCLE r|t LEVEL" a line
    std::string replay;   // a pin log whose RX changes drive the UART instead of a client
    std::string wire;     // the network port's segment: an nfwire socket (sim/nf_wire.h)
    uint64_t phy_div = 4; // clocks per PHY byte on the wire (phy_ce every phy_div clocks)
    std::string wire_opts; // the port's options, sent to the segment in the hello (sim/nf_wire_proto.h)
    bool wire_loopback = false; // the port's frames come back to its own receiver, no segment
    uint64_t mac_seed = 0; // NET.MAC_SEED: this adapter's default MAC is 02:6e:<these 32 bits>
    uint64_t link_udp = 0; // the host link's Ethernet port from UDP 127.0.0.1:this port (0: none)
};

void usage(FILE *f)
{
    std::fprintf(f,
        "usage: nfsim --socket PATH [options]\n"
        "  --socket PATH          Unix-domain stream socket to listen on (required)\n"
        "  --baud N               UART baud rate (default 3000000)\n"
        "  --firmware PATH        firmware hex image (default %s)\n"
        "  --trace FILE.fst       write an FST waveform (nfsim-trace only: make sim-trace)\n"
        "  --max-cycles N         stop after N simulated cycles (0: no limit)\n"
        "  --drop P --corrupt P --dup P   per-byte fault probabilities, both directions\n"
        "  --seed N               seed of the fault injection (default 1)\n"
        "  --exit-on-disconnect   exit when the client disconnects\n"
        "  --pin-log FILE         write every change of the UART pins: CYCLE r|t LEVEL\n"
        "  --replay FILE          drive uart_rx from the r lines of a pin log, without a\n"
        "                         client (no --socket), up to its last line's cycle\n"
        "  --wire PATH            join the nfwire segment at PATH with the network port\n"
        "  --wire-loopback        PHY loopback: every frame the port sends comes back to its\n"
        "                         own receiver at the port's byte timing (no segment)\n"
        "  --phy-div N            clocks per byte on the wire (default 4; 1..255)\n"
        "  --wire-opts STR        the port's options for the segment, key=value,... (loss,\n"
        "                         dup, reorder, corrupt, pcap, seed: sim/nf_wire_proto.h)\n"
        "  --mac-seed N           NET.MAC_SEED (32 bits): the default MAC is 02:6e:<N> (default 0)\n"
        "  --link-udp PORT        the host link also through its Ethernet port, from UDP datagrams\n"
        "                         on 127.0.0.1:PORT (the udp: transport; --socket then optional)\n"
        "  --quiet                no exit summary (the host library starts nfsim so: the\n"
        "                         summary would land in the middle of its consumer's output)\n",
        NF_DEFAULT_FIRMWARE);
}

bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-')
        return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

bool parse_prob(const char *s, double *out)
{
    if (!s || !*s)
        return false;
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(s, &end);
    if (errno || *end || !(v >= 0.0 && v <= 1.0))
        return false;
    *out = v;
    return true;
}

// Returns 0 on success, 2 on a bad command line (message printed).
int parse_args(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto need = [&](bool ok) {
            if (!ok)
                std::fprintf(stderr, "nfsim: %s needs %s\n", a.c_str(),
                             v ? "a valid value" : "a value");
            return ok;
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            std::exit(0);
        } else if (a == "--exit-on-disconnect") {
            o->exit_on_disconnect = true;
            continue;
        } else if (a == "--wire-loopback") {
            o->wire_loopback = true;
            continue;
        } else if (a == "--quiet") {
            o->quiet = true;
            continue;
        } else if (a == "--socket") {
            if (!need(v && *v)) return 2;
            o->socket_path = v;
        } else if (a == "--firmware") {
            if (!need(v && *v)) return 2;
            o->firmware = v;
        } else if (a == "--trace") {
            if (!need(v && *v)) return 2;
            o->trace = v;
        } else if (a == "--pin-log") {
            if (!need(v && *v)) return 2;
            o->pin_log = v;
        } else if (a == "--wire") {
            if (!need(v && *v)) return 2;
            o->wire = v;
        } else if (a == "--wire-opts") {
            if (!need(v != nullptr)) return 2;
            o->wire_opts = v;
        } else if (a == "--mac-seed") {
            if (!need(parse_u64(v, &o->mac_seed) && o->mac_seed <= 0xFFFFFFFFull)) return 2;
        } else if (a == "--link-udp") {
            if (!need(parse_u64(v, &o->link_udp) && o->link_udp >= 1 && o->link_udp <= 65535)) return 2;
        } else if (a == "--phy-div") {
            if (!need(parse_u64(v, &o->phy_div) && o->phy_div >= 1 && o->phy_div <= 255)) return 2;
        } else if (a == "--replay") {
            if (!need(v && *v)) return 2;
            o->replay = v;
        } else if (a == "--baud") {
            if (!need(parse_u64(v, &o->baud) && o->baud > 0)) return 2;
        } else if (a == "--max-cycles") {
            if (!need(parse_u64(v, &o->max_cycles))) return 2;
        } else if (a == "--seed") {
            if (!need(parse_u64(v, &o->seed))) return 2;
        } else if (a == "--drop") {
            if (!need(parse_prob(v, &o->drop))) return 2;
        } else if (a == "--corrupt") {
            if (!need(parse_prob(v, &o->corrupt))) return 2;
        } else if (a == "--dup") {
            if (!need(parse_prob(v, &o->dup))) return 2;
        } else if (a.rfind("+", 0) == 0) {
            continue;  // Verilator plusargs pass through
        } else {
            std::fprintf(stderr, "nfsim: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        }
        i++;
    }
    if (o->wire_loopback && !o->wire.empty()) {
        std::fprintf(stderr, "nfsim: --wire-loopback and --wire exclude each other\n");
        return 2;
    }
    if (!o->wire_opts.empty() && o->wire.empty()) {
        std::fprintf(stderr, "nfsim: --wire-opts needs --wire PATH\n");
        return 2;
    }
    if (o->socket_path.empty() && o->replay.empty() && !o->link_udp) {
        std::fprintf(stderr, "nfsim: --socket PATH is required\n");
        usage(stderr);
        return 2;
    }
    uint64_t period = nfuart::period_q4(kClkHz, o->baud);
    if (period < kMinPeriod || period > kMaxPeriod) {
        std::fprintf(stderr, "nfsim: --baud %llu out of range for a %llu Hz clock (%llu..%llu)\n",
                     static_cast<unsigned long long>(o->baud), static_cast<unsigned long long>(kClkHz),
                     static_cast<unsigned long long>(kClkHz * 16 / kMaxPeriod + 1),
                     static_cast<unsigned long long>(kClkHz * 16 / kMinPeriod));
        return 2;
    }
    return 0;
}

// Per-byte fault injection, the same for both directions.
class Faults {
public:
    Faults(const Options &o) : drop_(o.drop), corrupt_(o.corrupt), dup_(o.dup), state_(o.seed * 2 + 1) {}
    template <typename Sink>
    void pass(uint8_t byte, Sink sink)
    {
        if (drop_ > 0 && chance(drop_))
            return;
        if (corrupt_ > 0 && chance(corrupt_))
            byte ^= static_cast<uint8_t>(1u << (next() % 8));
        sink(byte);
        if (dup_ > 0 && chance(dup_))
            sink(byte);
    }

private:
    uint64_t next()
    {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return state_;
    }
    bool chance(double p) { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0) < p; }
    double drop_, corrupt_, dup_;
    uint64_t state_;
};

class Sim {
public:
    explicit Sim(const Options &o)
        : opt_(o), period_(nfuart::period_q4(kClkHz, o.baud)), drv_(period_), smp_(period_), faults_(o)
    {
    }

    int run(int listen_fd)
    {
        listen_fd_ = listen_fd;
        ctx_ = std::make_unique<VerilatedContext>();
        std::string plusarg = "+firmware=" + opt_.firmware;
        const char *args[] = {"nfsim", plusarg.c_str()};
        ctx_->commandArgs(2, args);
#if VM_TRACE
        if (!opt_.trace.empty())
            ctx_->traceEverOn(true);
#endif
        top_ = std::make_unique<Vnf_soc>(ctx_.get());
#if VM_TRACE
        if (!opt_.trace.empty()) {
            fst_ = std::make_unique<VerilatedFstC>();
            top_->trace(fst_.get(), 99);
            fst_->open(opt_.trace.c_str());
        }
#endif
        if (!open_pin_files())
            return 2;
        if (!opt_.wire.empty()) {
            std::string err;
            wire_ = std::make_unique<NfWire>(NfWire::Options{});
            if (!wire_->connect(opt_.wire, &err)) {
                std::fprintf(stderr, "nfsim: --wire %s: %s\n", opt_.wire.c_str(), err.c_str());
                return 2;
            }
            if (!opt_.wire_opts.empty() && !wire_->hello(opt_.wire_opts, &err)) {
                std::fprintf(stderr, "nfsim: --wire-opts: %s\n", err.c_str());
                return 2;
            }
        } else if (opt_.wire_loopback) {
            NfWire::Options wo;
            wo.loopback = true;
            wire_ = std::make_unique<NfWire>(wo);
        }
#ifdef NFSIM_PHY
        // The build at the PHY pins (NFSIM_PHY 1: RGMII, 2: RMII): a PHY model between the
        // wire and the pins (sim/nfsim_phy.h), the system clock at its nominal rate.
        if (wire_)
            phy_ = std::make_unique<NfPhyPins<Vnf_soc>>(NFSIM_PHY == 1 ? NfPhyKind::Rgmii : NfPhyKind::Rmii,
                                                        1000000000000ull / kClkHz);
        nf_mii_phy_init(&mii_, NFSIM_PHY == 2 ? NF_MII_PHY_LAN8720 : NF_MII_PHY_GIGABIT, !opt_.wire.empty());
#else
        nf_mii_phy_init(&mii_, NF_MII_PHY_GIGABIT, !opt_.wire.empty());
#endif
        if (opt_.wire_loopback)  // --wire-loopback: the PHY starts in loopback
            mii_.bmcr = static_cast<uint16_t>(mii_.bmcr | NF_MII_BMCR_LOOPBACK);
        mii_loop_ = opt_.wire_loopback;
        top_->mdio_i = 1;
#ifdef NFSIM_PHY
        if (opt_.link_udp) {  // the build at the PHY pins has no host-link Ethernet port
            std::fprintf(stderr, "nfsim: --link-udp: not in this build (nfsim at the PHY pins)\n");
            return 2;
        }
#else
        if (opt_.link_udp) {
            std::string err;
            udp_ = std::make_unique<NfUdpLink>();
            if (!udp_->open(static_cast<unsigned>(opt_.link_udp), &err)) {
                std::fprintf(stderr, "nfsim: --link-udp: %s\n", err.c_str());
                return 2;
            }
            top_->link_mac = NfUdpLink::kMac;
            top_->link_ip = NfUdpLink::kIp;
        }
#endif
        top_->mac_seed = static_cast<uint32_t>(opt_.mac_seed);
        top_->uart_period = static_cast<uint16_t>(period_);
        top_->uart_rx = 1;
        top_->rst = 1;
        for (int i = 0; i < kResetCycles; i++)
            tick();
        top_->rst = 0;

        auto t0 = std::chrono::steady_clock::now();
        int rc = 0;
        while (!g_stop) {
            if (opt_.max_cycles && cycle_ >= opt_.max_cycles)
                break;
            if (replaying_) {  // no client: the log's RX changes, through its last one
                if (cycle_ > replay_end_)
                    break;
                tick();
                continue;
            }
            uint64_t until = cycle_ + kPollCycles;
            if (opt_.max_cycles && until > opt_.max_cycles)
                until = opt_.max_cycles;
            while (cycle_ < until)
                tick();
            if (!service())
                break;
        }
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
#if VM_TRACE
        if (fst_)
            fst_->close();
#endif
        top_->final();
        if (pin_log_) {
            std::fclose(pin_log_);
            if (!opt_.quiet)
                std::fprintf(stderr, "nfsim: the CPU's clock stopped for %llu of %llu cycles, the engine's for %llu\n",
                             static_cast<unsigned long long>(cpu_stopped_), static_cast<unsigned long long>(cycle_),
                             static_cast<unsigned long long>(eng_stopped_));
        }
        if (wire_ && !opt_.quiet) {
            const NfWire::Stats &w = wire_->stats();
            std::fprintf(stderr, "nfsim: wire: %llu frames in (%llu fed, %llu dropped), %llu out (%llu bad, %llu dropped)\n",
                         static_cast<unsigned long long>(w.rx_frames), static_cast<unsigned long long>(w.rx_fed),
                         static_cast<unsigned long long>(w.rx_dropped), static_cast<unsigned long long>(w.tx_frames),
                         static_cast<unsigned long long>(w.tx_bad_fcs + w.tx_er), static_cast<unsigned long long>(w.tx_dropped));
        }
#ifdef NFSIM_PHY
        if (phy_ && !opt_.quiet)
            std::fprintf(stderr, "nfsim: phy: %llu frames dropped by the port's FIFOs\n",
                         static_cast<unsigned long long>(phy_drops_));
#endif
        if (!opt_.quiet)
            std::fprintf(stderr, "nfsim: %llu cycles, %.0f cycles/s\n", static_cast<unsigned long long>(cycle_),
                         secs > 0 ? static_cast<double>(cycle_) / secs : 0.0);
        if (client_fd_ >= 0)
            close(client_fd_);
        return rc;
    }

private:
    void tick()
    {
        uint8_t rx = replaying_ ? replay_level() : static_cast<uint8_t>(drv_.level(cycle_));
        if (pin_log_ && rx != rx_logged_) {
            std::fprintf(pin_log_, "%llu r %u\n", static_cast<unsigned long long>(cycle_), rx);
            rx_logged_ = rx;
        }
        top_->uart_rx = rx;
#ifdef NFSIM_PHY
        if (phy_)
            phy_->run_until(top_.get(), wire_.get());
#else
        if (wire_) {
            top_->phy_ce = phy_ce_;
            top_->gmii_rxd = wire_->rxd();
            top_->gmii_rx_dv = wire_->rx_dv();
            top_->gmii_rx_er = wire_->rx_er();
        }
#endif
#ifndef NFSIM_PHY
        if (udp_) {
            top_->link_phy_ce = 1;
            top_->link_gmii_rxd = udp_->rxd();
            top_->link_gmii_rx_dv = udp_->rx_dv();
        }
#endif
        top_->clk = 0;
#if VM_TRACE
        top_->eval();
        if (fst_)
            fst_->dump(2 * cycle_);
#else
        // The first evaluation also initializes the model (and its edge detector).
        if (cycle_ == 0 || !prime_rising_edge(top_->rootp, 0) || !prime_net_edge(top_->rootp, 0))
            top_->eval();
#endif
        top_->clk = 1;
        top_->eval();
#if VM_TRACE
        if (fst_)
            fst_->dump(2 * cycle_ + 1);
#endif
        cycle_++;
        if (pin_log_) {
            if (top_->uart_tx != tx_logged_) {
                tx_logged_ = top_->uart_tx;
                std::fprintf(pin_log_, "%llu t %u\n", static_cast<unsigned long long>(cycle_), tx_logged_);
            }
            unsigned stopped = clocks_stopped(top_->rootp, 0);
            cpu_stopped_ += stopped & 1u;
            eng_stopped_ += stopped >> 1;
        }
        if (top_->mdc != mdc_) {  // the PHY's management side acts on MDC's edges only
            mdc_ = top_->mdc;
            top_->mdio_i = nf_mdio_slave_clock(&mdio_, &mii_, mdc_, top_->mdio_oe ? top_->mdio_o : 1);
            if (nf_mii_phy_loopback(&mii_) != mii_loop_)
                phy_loopback(!mii_loop_);
        }
#ifdef NFSIM_PHY
        phy_drops_ += top_->phy_drop;
#else
        if (wire_) {
            // The port's pins after this edge, with the phy_ce this edge saw; the next
            // byte a PHY clock later (nfsim_top registers the receive pins once more).
            wire_->clock(phy_ce_, top_->gmii_txd, top_->gmii_tx_en, top_->gmii_tx_er);
            phy_ce_ = ++phy_count_ == opt_.phy_div;
            if (phy_ce_)
                phy_count_ = 0;
        }
#endif
#ifndef NFSIM_PHY
        if (udp_)  // gigabit: a byte each clock
            udp_->clock(true, top_->link_gmii_txd, top_->link_gmii_tx_en, top_->link_gmii_tx_er);
#endif
        uint8_t byte;
        if (smp_.sample(cycle_, top_->uart_tx, &byte) == 1 && client_fd_ >= 0)
            faults_.pass(byte, [this](uint8_t b) { to_host_.push_back(b); });
    }

    // BMCR loopback set or cleared over MDIO: the wire's loopback follows it (an adapter
    // without --wire gets a wire that goes nowhere, the frames it sends dropped).
    void phy_loopback(bool on)
    {
        mii_loop_ = on;
        if (!wire_) {
            wire_ = std::make_unique<NfWire>(NfWire::Options{});
#ifdef NFSIM_PHY
            phy_ = std::make_unique<NfPhyPins<Vnf_soc>>(NFSIM_PHY == 1 ? NfPhyKind::Rgmii : NfPhyKind::Rmii,
                                                        1000000000000ull / kClkHz);
#endif
        }
        wire_->set_loopback(on);
    }

    // Socket work between batches of cycles. Returns false to stop the simulation.
    bool service()
    {
        if (udp_) {
            udp_->service();
            // Before the first datagram, with no client either, the model waits for one.
            if (client_fd_ < 0 && !udp_->active() && drv_.idle() && !smp_.busy())
                udp_->wait(listen_fd_ < 0 ? 200 : 0);
            if (client_fd_ < 0 && (udp_->active() || listen_fd_ < 0))
                return true;
        }
        if (client_fd_ < 0) {
            // Idle: nothing on the wire and no client. Wait without simulating.
            bool idle = drv_.idle() && !smp_.busy();
            if (!accept_client(idle ? 200 : 0))
                return true;
        }
        if (client_fd_ < 0)
            return true;
        // One poll for both sockets: most services find nothing to do, and this is
        // the one system call they make.
        pollfd p[2] = {{listen_fd_, POLLIN, 0}, {client_fd_, POLLIN, 0}};
        if (poll(p, 2, 0) < 0 && errno != EINTR)
            return disconnected();
        // Host to board, with backpressure: read only while the UART backlog is short.
        if (p[1].revents && drv_.queued() < kRxBacklog) {
            uint8_t buf[kRxBacklog];
            ssize_t n = recv(client_fd_, buf, kRxBacklog - drv_.queued(), MSG_DONTWAIT);
            if (n > 0) {
                for (ssize_t i = 0; i < n; i++)
                    faults_.pass(buf[i], [this](uint8_t b) { drv_.push(b); });
            } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                return disconnected();
            }
        }
        // One client only: turn away anyone else. A client that has closed its end
        // (EOF above, or HUP with bytes left unread) makes room for the next.
        if (p[0].revents & POLLIN) {
            if (p[1].revents & POLLHUP)
                return disconnected();
            int extra = accept(listen_fd_, nullptr, nullptr);
            if (extra >= 0) {
                std::fprintf(stderr, "nfsim: refusing a second client\n");
                close(extra);
            }
        }
        // Board to host.
        while (!to_host_.empty()) {
            size_t chunk = to_host_.size() < 4096 ? to_host_.size() : 4096;
            std::vector<uint8_t> out(to_host_.begin(), to_host_.begin() + static_cast<long>(chunk));
            ssize_t n = send(client_fd_, out.data(), chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n > 0) {
                to_host_.erase(to_host_.begin(), to_host_.begin() + n);
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                break;
            return disconnected();
        }
        return true;
    }

    // --pin-log and --replay: open the log, read the replayed one. False (message printed)
    // when a file cannot be used.
    bool open_pin_files()
    {
        if (!opt_.pin_log.empty() && !(pin_log_ = std::fopen(opt_.pin_log.c_str(), "w"))) {
            std::fprintf(stderr, "nfsim: cannot write %s: %s\n", opt_.pin_log.c_str(), std::strerror(errno));
            return false;
        }
        if (opt_.replay.empty())
            return true;
        FILE *f = std::fopen(opt_.replay.c_str(), "r");
        if (!f) {
            std::fprintf(stderr, "nfsim: cannot read %s: %s\n", opt_.replay.c_str(), std::strerror(errno));
            return false;
        }
        unsigned long long c;
        char pin;
        unsigned level;
        int n;
        while ((n = std::fscanf(f, "%llu %c %u", &c, &pin, &level)) == 3) {
            if (pin == 'r')
                replay_.push_back({c, static_cast<uint8_t>(level & 1u)});
            replay_end_ = c > replay_end_ ? c : replay_end_;
        }
        std::fclose(f);
        if (n != EOF) {
            std::fprintf(stderr, "nfsim: %s is not a pin log (CYCLE r|t LEVEL lines)\n", opt_.replay.c_str());
            return false;
        }
        replaying_ = true;
        return true;
    }

    // The replayed RX level at this cycle.
    uint8_t replay_level()
    {
        while (replay_at_ < replay_.size() && replay_[replay_at_].first <= cycle_)
            rx_replayed_ = replay_[replay_at_++].second;
        return rx_replayed_;
    }

    bool accept_client(int wait_ms)
    {
        if (wait_ms > 0) {
            pollfd p{listen_fd_, POLLIN, 0};
            if (poll(&p, 1, wait_ms) <= 0)
                return false;
        }
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return false;
        client_fd_ = fd;
        return true;
    }

    bool disconnected()
    {
        close(client_fd_);
        client_fd_ = -1;
        to_host_.clear();
        if (opt_.exit_on_disconnect)
            return false;
        // Bytes of the gone client that have not started on the wire are dropped.
        drv_ = nfuart::Driver(period_);
        return true;
    }

    const Options &opt_;
    std::unique_ptr<NfUdpLink> udp_;  // the host link's Ethernet port (--link-udp)
    std::unique_ptr<NfWire> wire_;  // the network port's segment (--wire) or its loopback (--wire-loopback)
    nf_mii_phy mii_{};              // the PHY's registers, answering on MDC/MDIO (sim/nf_mii_phy.h)
    nf_mdio_slave mdio_{};
    uint8_t mdc_ = 0;
    bool mii_loop_ = false;         // the loopback wire_ has (BMCR's as last seen)
#ifdef NFSIM_PHY
    std::unique_ptr<NfPhyPins<Vnf_soc>> phy_;  // the PHY chip between the wire and the pins
    uint64_t phy_drops_ = 0;                    // frames the port's FIFOs dropped
#endif
#ifndef NFSIM_PHY
    bool phy_ce_ = false;
    uint64_t phy_count_ = 0;
#endif
    uint32_t period_;
    nfuart::Driver drv_;
    nfuart::Sampler smp_;
    Faults faults_;
    std::deque<uint8_t> to_host_;
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vnf_soc> top_;
#if VM_TRACE
    std::unique_ptr<VerilatedFstC> fst_;
#endif
    uint64_t cycle_ = 0;
    FILE *pin_log_ = nullptr;
    uint8_t rx_logged_ = 1, tx_logged_ = 1;  // the pins' levels as last logged (idle high)
    uint64_t cpu_stopped_ = 0;               // cycles whose closing edge the CPU missed (--pin-log)
    uint64_t eng_stopped_ = 0;               // and the engine
    bool replaying_ = false;
    std::vector<std::pair<uint64_t, uint8_t>> replay_;  // (cycle, level) of each RX change
    size_t replay_at_ = 0;
    uint8_t rx_replayed_ = 1;
    uint64_t replay_end_ = 0;
    int listen_fd_ = -1;
    int client_fd_ = -1;
};

// PREFIX/share/ndkfpga/nf_fw.hex for this binary at PREFIX/libexec/ndkfpga/nfsim, if
// it exists; "" otherwise.
std::string installed_firmware()
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return "";
    self[n] = '\0';
    std::string dir(self);
    for (int up = 0; up < 3; up++) {
        size_t slash = dir.rfind('/');
        if (slash == std::string::npos)
            return "";
        dir.erase(slash);
    }
    std::string path = dir + "/share/ndkfpga/nf_fw.hex";
    return access(path.c_str(), R_OK) == 0 ? path : "";
}

}  // namespace

int main(int argc, char **argv)
{
    Options opt;
    bool firmware_given = false;
    for (int i = 1; i < argc; i++)
        firmware_given |= std::strcmp(argv[i], "--firmware") == 0;
    int rc = parse_args(argc, argv, &opt);
    if (rc)
        return rc;
    if (!firmware_given && access(opt.firmware.c_str(), R_OK) != 0) {
        // An installed nfsim (PREFIX/libexec/ndkfpga/) takes the installed image.
        std::string installed = installed_firmware();
        if (!installed.empty())
            opt.firmware = installed;
    }
    if (access(opt.firmware.c_str(), R_OK) != 0) {
        std::fprintf(stderr, "nfsim: cannot read firmware image %s: %s\n", opt.firmware.c_str(), std::strerror(errno));
        return 2;
    }
#if !VM_TRACE
    if (!opt.trace.empty()) {
        // Waveform support costs speed at every clock, so it has its own binary.
        std::fprintf(stderr, "nfsim: built without waveform support: nfsim-trace (make sim-trace) writes --trace\n");
        return 2;
    }
#endif
    if (!opt.trace.empty()) {
        FILE *f = std::fopen(opt.trace.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "nfsim: cannot write trace %s: %s\n", opt.trace.c_str(), std::strerror(errno));
            return 2;
        }
        std::fclose(f);
    }
    int fd = -1;
    // No --socket (a --link-udp run): the host link is the UDP port alone.
    if (opt.replay.empty() && !opt.socket_path.empty() &&
        (fd = nf_listen_unix("nfsim", opt.socket_path.c_str(), SOCK_STREAM, 1)) < 0)
        return 2;
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    Sim sim(opt);
    rc = sim.run(fd);
    if (fd >= 0) {
        close(fd);
        unlink(opt.socket_path.c_str());
    }
    return rc;
}
