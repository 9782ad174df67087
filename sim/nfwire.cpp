// SPDX-License-Identifier: Apache-2.0
// nfwire: one simulated Ethernet segment (sim/README.md, "The wire"). Endpoints (nf_wire,
// one per simulated adapter) connect to a SOCK_SEQPACKET socket; each message is one frame,
// destination MAC to FCS. A learning switch by default, a hub with --hub; optionally a
// pcap capture, per-frame loss, and a Linux TAP device as one more port. An endpoint's
// first message may be a hello (nf_wire_proto.h) giving its port's own faults and capture.
#include "nf_listen.h"
#include "nf_wire.h"
#include "nf_wire_proto.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <memory>
#include <sys/file.h>
#include <poll.h>
#include <random>
#include <string>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Options {
    std::string socket_path;
    std::string pcap_path;
    std::string tap_name;
    double drop = 0;
    uint64_t seed = 1;
    bool hub = false;
    bool verbose = false;
    unsigned max_ports = 64;
    unsigned age_s = 300;
    long idle_exit_s = -1;  // exit once no endpoint has been connected for this long; <0: never
    std::string lock_path;  // taken around the exit decision (see Segment::may_exit)
};

void usage(FILE *f)
{
    std::fprintf(f,
        "usage: nfwire --socket PATH [--hub] [--pcap FILE] [--drop P] [--seed N]\n"
        "              [--tap NAME] [--max-ports N] [--age S] [--idle-exit S [--lock FILE]]\n"
        "              [--verbose]\n"
        "  --socket PATH   SOCK_SEQPACKET socket the endpoints connect to (required)\n"
        "  --hub           repeat every frame to every other port (default: a learning switch)\n"
        "  --pcap FILE     write every good frame (no FCS) to FILE, libpcap, LINKTYPE_ETHERNET\n"
        "  --drop P        lose each frame with probability P (0..1) as it enters\n"
        "  --seed N        seed of the loss draws (default 1)\n"
        "  --tap NAME      one more port: the Linux TAP device NAME (needs root)\n"
        "  --max-ports N   endpoints at once (default 64); more are refused\n"
        "  --age S         a learned address is forgotten after S seconds unseen (default 300)\n"
        "  --idle-exit S   exit once no endpoint has been connected for S seconds (0: when the\n"
        "                  last leaves); the TAP port does not count\n"
        "  --lock FILE     hold flock(FILE) while deciding to exit, so an endpoint that connects\n"
        "                  under the same lock is never left on a closing socket\n"
        "  An endpoint's first message may be a hello: \"" NF_WIRE_HELLO_PREFIX "key=value,...\"\n"
        "  with loss, dup, reorder, corrupt (on the frames it sends), pcap, seed (nf_wire_proto.h)\n"
        "  --verbose       log ports joining and leaving, and the counts on exit (stderr)\n");
}

bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = std::strtoull(s, &end, 0);
    if (errno || end == s || *end || *s == '-')
        return false;
    *v = x;
    return true;
}

int parse_args(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto need = [&](const char *what) -> const char * {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "nfwire: %s needs a value\n", what);
                return nullptr;
            }
            return argv[++i];
        };
        const char *v;
        uint64_t n;
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 1;
        } else if (a == "--hub") {
            o->hub = true;
        } else if (a == "--verbose" || a == "-v") {
            o->verbose = true;
        } else if (a == "--socket") {
            if (!(v = need("--socket")))
                return 2;
            o->socket_path = v;
        } else if (a == "--pcap") {
            if (!(v = need("--pcap")))
                return 2;
            o->pcap_path = v;
        } else if (a == "--tap") {
            if (!(v = need("--tap")))
                return 2;
            o->tap_name = v;
            if (o->tap_name.empty() || o->tap_name.size() >= IFNAMSIZ) {
                std::fprintf(stderr, "nfwire: --tap: an interface name of 1..%d characters\n", IFNAMSIZ - 1);
                return 2;
            }
        } else if (a == "--drop") {
            if (!(v = need("--drop")))
                return 2;
            char *end;
            o->drop = std::strtod(v, &end);
            if (end == v || *end || !(o->drop >= 0 && o->drop <= 1)) {
                std::fprintf(stderr, "nfwire: --drop takes a probability between 0 and 1\n");
                return 2;
            }
        } else if (a == "--seed") {
            if (!(v = need("--seed")))
                return 2;
            if (!parse_u64(v, &o->seed)) {
                std::fprintf(stderr, "nfwire: --seed takes an unsigned integer\n");
                return 2;
            }
        } else if (a == "--lock") {
            if (!(v = need("--lock")))
                return 2;
            o->lock_path = v;
        } else if (a == "--idle-exit") {
            if (!(v = need("--idle-exit")))
                return 2;
            if (!parse_u64(v, &n) || n > 86400) {
                std::fprintf(stderr, "nfwire: --idle-exit takes seconds from 0 to 86400\n");
                return 2;
            }
            o->idle_exit_s = long(n);
        } else if (a == "--max-ports" || a == "--age") {
            if (!(v = need(a.c_str())))
                return 2;
            if (!parse_u64(v, &n) || n == 0 || n > 100000) {
                std::fprintf(stderr, "nfwire: %s takes an integer from 1 to 100000\n", a.c_str());
                return 2;
            }
            (a == "--age" ? o->age_s : o->max_ports) = unsigned(n);
        } else {
            std::fprintf(stderr, "nfwire: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (o->socket_path.empty()) {
        std::fprintf(stderr, "nfwire: --socket PATH is required\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// libpcap's file format: a 24-byte header, then a 16-byte header per record, all in this
// machine's byte order (the magic tells a reader which).
class Pcap {
public:
    Pcap() = default;
    Pcap(const Pcap &) = delete;
    Pcap &operator=(const Pcap &) = delete;
    ~Pcap() { close(); }
    bool open(const std::string &path)
    {
        f_ = std::fopen(path.c_str(), "wb");
        if (!f_)
            return false;
        uint32_t magic = 0xA1B2C3D4u, snaplen = 65535, linktype = 1;  // LINKTYPE_ETHERNET
        uint16_t major = 2, minor = 4;
        int32_t zone = 0;
        uint32_t sigfigs = 0;
        std::fwrite(&magic, 4, 1, f_);
        std::fwrite(&major, 2, 1, f_);
        std::fwrite(&minor, 2, 1, f_);
        std::fwrite(&zone, 4, 1, f_);
        std::fwrite(&sigfigs, 4, 1, f_);
        std::fwrite(&snaplen, 4, 1, f_);
        std::fwrite(&linktype, 4, 1, f_);
        return std::fflush(f_) == 0;
    }
    // The record is flushed at once, so a reader sees every frame the hub has forwarded.
    void write(const uint8_t *p, size_t n)
    {
        if (!f_)
            return;
        timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint32_t h[4] = {uint32_t(ts.tv_sec), uint32_t(ts.tv_nsec / 1000), uint32_t(n), uint32_t(n)};
        std::fwrite(h, sizeof(h), 1, f_);
        std::fwrite(p, 1, n, f_);
        std::fflush(f_);
    }
    bool is_open() const { return f_ != nullptr; }
    void close()
    {
        if (f_)
            std::fclose(f_);
        f_ = nullptr;
    }

private:
    FILE *f_ = nullptr;
};

// An endpoint's own settings from its hello: faults on the frames it sends, and a
// capture of the frames it sends and receives.
struct PortOpts {
    double loss = 0, dup = 0, reorder = 0, corrupt = 0;
    uint64_t seed = 0;
    bool seeded = false;
    std::string pcap;
};

bool parse_prob(const std::string &v, double *p)
{
    char *end;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(x >= 0 && x <= 1))
        return false;
    *p = x;
    return true;
}

// "key=value,..." after the hello's prefix; false with *err naming the bad option.
bool parse_hello(const std::string &text, PortOpts *po, std::string *err)
{
    size_t at = 0;
    while (at <= text.size()) {
        size_t end = text.find(',', at);
        if (end == std::string::npos)
            end = text.size();
        std::string item = text.substr(at, end - at);
        at = end + 1;
        if (item.empty()) {
            if (end == text.size())
                break;
            continue;
        }
        size_t eq = item.find('=');
        std::string k = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
        bool ok = eq != std::string::npos && !v.empty();
        if (!ok)
            ;
        else if (k == NF_WIRE_OPT_LOSS)
            ok = parse_prob(v, &po->loss);
        else if (k == NF_WIRE_OPT_DUP)
            ok = parse_prob(v, &po->dup);
        else if (k == NF_WIRE_OPT_REORDER)
            ok = parse_prob(v, &po->reorder);
        else if (k == NF_WIRE_OPT_CORRUPT)
            ok = parse_prob(v, &po->corrupt);
        else if (k == NF_WIRE_OPT_PCAP)
            po->pcap = v;
        else if (k == NF_WIRE_OPT_SEED)
            ok = po->seeded = parse_u64(v.c_str(), &po->seed);
        else
            ok = false;
        if (!ok) {
            *err = "bad hello option \"" + item + "\"";
            return false;
        }
    }
    return true;
}

struct Port {
    int fd = -1;
    unsigned id = 0;
    bool tap = false;
    bool greeted = false;  // its first message has been seen (a hello or a frame)
    uint64_t rx = 0, tx = 0, tx_dropped = 0;
    PortOpts po;
    std::mt19937_64 rng;
    std::unique_ptr<Pcap> pcap;   // the port's own capture (hello pcap=)
    std::vector<uint8_t> held;    // a frame held back by reorder, sent after the next
    double held_at = 0;
};

struct MacEntry {
    unsigned port;
    double seen;
};

class Segment {
public:
    explicit Segment(const Options &o) : o_(o), rng_(o.seed) {}

    int run(int listen_fd, int tap_fd)
    {
        listen_fd_ = listen_fd;
        if (tap_fd >= 0)
            add_port(tap_fd, true);
        std::vector<pollfd> pfd;
        std::vector<uint8_t> buf(kMax + 4);
        while (!g_stop) {
            pfd.clear();
            pfd.push_back({listen_fd_, POLLIN, 0});
            for (const Port &p : ports_)
                pfd.push_back({p.fd, POLLIN, 0});
            // A bounded wait: a signal or the timeout brings the loop back to g_stop, and a
            // frame held back for reorder goes out within kHoldS.
            bool holding = false;
            for (const Port &p : ports_)
                holding |= !p.held.empty();
            int r = ::poll(pfd.data(), pfd.size(), holding ? 5 : 100);
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                std::perror("nfwire: poll");
                return 1;
            }
            if (pfd[0].revents & POLLIN)
                accept_ports();
            // Ports can leave while frames are forwarded: walk the ids polled, not indexes.
            std::vector<unsigned> ids;
            for (size_t i = 1; i < pfd.size(); i++)
                if (pfd[i].revents)
                    ids.push_back(ports_[i - 1].id);
            for (unsigned id : ids)
                drain(id, buf);
            release_held(false);
            if (may_exit())
                break;
        }
        return 0;
    }

    void report() const
    {
        std::fprintf(stderr,
            "nfwire: %llu frames in, %llu bad FCS, %llu lost (--drop), %llu flooded, %llu filtered, "
            "%llu copies out, %llu copies dropped (port full), %llu to the capture; ports' faults: %llu lost, "
            "%llu corrupted, %llu duplicated, %llu reordered\n",
            (unsigned long long)in_, (unsigned long long)bad_, (unsigned long long)lost_,
            (unsigned long long)flooded_, (unsigned long long)filtered_, (unsigned long long)out_,
            (unsigned long long)out_dropped_, (unsigned long long)captured_, (unsigned long long)port_lost_,
            (unsigned long long)port_corrupted_, (unsigned long long)port_duplicated_,
            (unsigned long long)port_reordered_);
    }

    Pcap pcap;
    bool unlinked = false;  // the socket's name is gone already (and may name a new segment)

private:
    static constexpr size_t kMax = 16384;  // the largest frame carried, FCS included
    static constexpr ssize_t kMinFrame = 60; // the shortest frame before its FCS (ETH_ZLEN)
    static constexpr double kHoldS = 0.02;   // the longest a reordered frame waits for a next one

    size_t endpoints() const
    {
        size_t n = 0;
        for (const Port &p : ports_)
            n += !p.tap;
        return n;
    }

    // With --idle-exit: true once no endpoint has been connected for that long. Under
    // --lock, an endpoint that connected before the lock was taken is accepted first
    // and keeps the segment; an endpoint that finds the socket gone starts a new one.
    bool may_exit()
    {
        if (o_.idle_exit_s < 0)
            return false;
        double t = now_s();
        if (endpoints()) {
            empty_since_ = -1;
            return false;
        }
        if (empty_since_ < 0)
            empty_since_ = t;
        if (t - empty_since_ < double(o_.idle_exit_s))
            return false;
        int lfd = -1;
        if (!o_.lock_path.empty()) {
            lfd = open(o_.lock_path.c_str(), O_RDWR | O_CLOEXEC);
            if (lfd >= 0)
                flock(lfd, LOCK_EX);
        }
        accept_ports();
        bool go = endpoints() == 0;
        if (go) {
            unlink(o_.socket_path.c_str());
            unlinked = true;
        }
        if (lfd >= 0)
            ::close(lfd);  // releases the lock, after the socket is gone
        if (go && o_.verbose)
            std::fprintf(stderr, "nfwire: no endpoint left: exiting\n");
        return go;
    }

    // Sends frames held back for reorder: all of them (all) or those waited kHoldS.
    void release_held(bool all)
    {
        double t = now_s();
        std::vector<unsigned> ids;
        for (const Port &p : ports_)
            if (!p.held.empty() && (all || t - p.held_at >= kHoldS))
                ids.push_back(p.id);
        for (unsigned id : ids) {
            Port *p = find(id);
            if (!p)
                continue;
            std::vector<uint8_t> f;
            f.swap(p->held);
            forward(id, f.data(), f.size());
        }
    }

    static double unit(uint64_t r) { return double(r >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)

    // A frame an endpoint sent: its capture, then its faults, then the switch.
    void ingress(unsigned id, uint8_t *f, size_t n)
    {
        Port *p = find(id);
        if (!p)
            return;
        if (p->pcap && n >= 4)
            p->pcap->write(f, n - 4);
        if (p->tap || (!p->po.loss && !p->po.dup && !p->po.reorder && !p->po.corrupt)) {
            forward(id, f, n);
            return;
        }
        // One draw per fault per frame, whatever comes of it, so a seed repeats a run.
        double u_loss = unit(p->rng()), u_corrupt = unit(p->rng()), u_dup = unit(p->rng()), u_reorder = unit(p->rng());
        uint64_t bit = p->rng();
        if (u_loss < p->po.loss) {
            port_lost_++;
            return;
        }
        if (u_corrupt < p->po.corrupt) {
            f[(bit >> 3) % n] ^= uint8_t(1u << (bit & 7));  // the FCS no longer matches
            port_corrupted_++;
        }
        if (u_reorder < p->po.reorder && p->held.empty()) {
            p->held.assign(f, f + n);
            p->held_at = now_s();
            port_reordered_++;
            return;
        }
        forward(id, f, n);
        if (u_dup < p->po.dup) {
            port_duplicated_++;
            forward(id, f, n);
        }
        p = find(id);
        if (p && !p->held.empty()) {
            std::vector<uint8_t> h;
            h.swap(p->held);
            forward(id, h.data(), h.size());
        }
    }

    // The first message of an endpoint: a hello sets its port up; false refuses the port.
    bool hello(Port &p, const uint8_t *m, size_t n)
    {
        std::string text(reinterpret_cast<const char *>(m) + NF_WIRE_HELLO_PREFIX_LEN, n - NF_WIRE_HELLO_PREFIX_LEN);
        std::string err;
        PortOpts po;
        if (n > NF_WIRE_HELLO_MAX || !parse_hello(text, &po, &err)) {
            std::fprintf(stderr, "nfwire: port %u: %s: refused\n", p.id, err.empty() ? "hello too long" : err.c_str());
            return false;
        }
        p.po = po;
        p.rng.seed(po.seeded ? po.seed : o_.seed * 0x9E3779B97F4A7C15ull + p.id);
        if (!po.pcap.empty()) {
            p.pcap = std::make_unique<Pcap>();
            if (!p.pcap->open(po.pcap)) {
                std::fprintf(stderr, "nfwire: port %u: cannot write %s: %s: refused\n", p.id, po.pcap.c_str(),
                             std::strerror(errno));
                return false;
            }
        }
        if (o_.verbose)
            std::fprintf(stderr, "nfwire: port %u: %s\n", p.id, text.c_str());
        return true;
    }

    void add_port(int fd, bool tap)
    {
        Port p;
        p.fd = fd;
        p.id = ++last_id_;
        p.tap = tap;
        p.greeted = tap;
        p.rng.seed(o_.seed * 0x9E3779B97F4A7C15ull + p.id);
        if (o_.verbose)
            std::fprintf(stderr, "nfwire: port %u %s\n", p.id, tap ? "is the TAP device" : "joined");
        ports_.push_back(std::move(p));
    }

    void accept_ports()
    {
        for (;;) {
            int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0)
                return;
            if (ports_.size() >= o_.max_ports + (o_.tap_name.empty() ? 0 : 1)) {
                if (o_.verbose)
                    std::fprintf(stderr, "nfwire: refused a port: %u already\n", o_.max_ports);
                ::close(fd);
                continue;
            }
            int sz = 1 << 20;
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
            add_port(fd, false);
        }
    }

    Port *find(unsigned id)
    {
        for (Port &p : ports_)
            if (p.id == id)
                return &p;
        return nullptr;
    }

    void remove(unsigned id)
    {
        for (size_t i = 0; i < ports_.size(); i++) {
            if (ports_[i].id != id)
                continue;
            if (o_.verbose)
                std::fprintf(stderr, "nfwire: port %u left (%llu frames in, %llu out, %llu dropped)\n", id,
                             (unsigned long long)ports_[i].rx, (unsigned long long)ports_[i].tx,
                             (unsigned long long)ports_[i].tx_dropped);
            ::close(ports_[i].fd);
            ports_.erase(ports_.begin() + long(i));
            break;
        }
        for (auto it = macs_.begin(); it != macs_.end();)
            it = it->second.port == id ? macs_.erase(it) : std::next(it);
    }

    // The frames waiting on one port, up to a bound so that one busy port cannot keep
    // the others waiting; poll() comes back for the rest.
    void drain(unsigned id, std::vector<uint8_t> &buf)
    {
        for (int frames = 0; frames < 64; frames++) {
            Port *p = find(id);
            if (!p)
                return;
            ssize_t n;
            if (p->tap) {
                // The kernel's frames have neither padding nor FCS: the segment carries
                // both, as a NIC sends them (zeros to 60 bytes, then the FCS).
                n = read(p->fd, buf.data(), kMax - 4);
                if (n > 0 && n < kMinFrame) {
                    std::fill(buf.begin() + n, buf.begin() + kMinFrame, uint8_t(0));
                    n = kMinFrame;
                }
                if (n > 0) {
                    uint32_t c = nf_wire_crc32(buf.data(), size_t(n));
                    for (int k = 0; k < 4; k++)
                        buf[size_t(n) + k] = uint8_t(c >> (8 * k));
                    n += 4;
                }
            } else {
                n = recv(p->fd, buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                return;
            if (n <= 0) {
                if (p->tap) {
                    std::fprintf(stderr, "nfwire: the TAP device failed: %s\n", n ? std::strerror(errno) : "EOF");
                    g_stop = 1;
                }
                remove(id);
                return;
            }
            if (!p->greeted) {
                p->greeted = true;
                if (size_t(n) >= NF_WIRE_HELLO_PREFIX_LEN &&
                    std::memcmp(buf.data(), NF_WIRE_HELLO_PREFIX, NF_WIRE_HELLO_PREFIX_LEN) == 0) {
                    if (!hello(*p, buf.data(), size_t(n)))
                        remove(id);
                    continue;
                }
            }
            p->rx++;
            if (size_t(n) > kMax)
                continue;  // truncated: longer than any frame the segment carries
            ingress(id, buf.data(), size_t(n));
        }
    }

    static uint64_t mac_at(const uint8_t *p)
    {
        uint64_t m = 0;
        for (int i = 0; i < 6; i++)
            m = m << 8 | p[i];
        return m;
    }

    void forward(unsigned from, const uint8_t *f, size_t n)
    {
        in_++;
        // One draw per frame entering, whatever comes of it, so a seed repeats a run.
        if (o_.drop > 0) {
            double u = double(rng_() >> 11) * (1.0 / 9007199254740992.0);
            if (u < o_.drop) {
                lost_++;
                return;
            }
        }
        bool good = nf_wire_fcs_ok(f, n);
        if (!good) {
            bad_++;
        } else if (pcap.is_open()) {
            pcap.write(f, n - 4);  // the capture holds frames as Linux shows them: no FCS
            captured_++;
        }
        double t = now_s();
        // Only a good frame teaches the table: a flipped bit must not move an address.
        if (good && n >= 14 + 4 && !(f[6] & 1)) {
            macs_[mac_at(f + 6)] = MacEntry{from, t};
        }
        unsigned to = 0;  // 0: every port but the one it came in on
        if (!o_.hub && n >= 6 + 4 && !(f[0] & 1)) {
            auto it = macs_.find(mac_at(f));
            if (it != macs_.end() && t - it->second.seen <= o_.age_s) {
                if (it->second.port == from) {
                    filtered_++;
                    return;
                }
                to = it->second.port;
            }
        }
        if (!to)
            flooded_++;
        // Copy the targets first: a port that fails is removed while sending.
        std::vector<unsigned> targets;
        for (const Port &p : ports_)
            if (p.id != from && (!to || p.id == to))
                targets.push_back(p.id);
        for (unsigned id : targets)
            send_to(id, f, n, good);
    }

    void send_to(unsigned id, const uint8_t *f, size_t n, bool good)
    {
        Port *p = find(id);
        if (!p)
            return;
        ssize_t r;
        if (p->tap) {
            // The kernel would take a bad frame as good: it does not see those.
            if (!good) {
                p->tx_dropped++;
                out_dropped_++;
                return;
            }
            r = write(p->fd, f, n - 4);
        } else {
            r = send(p->fd, f, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        }
        if (r >= 0) {
            p->tx++;
            out_++;
            if (p->pcap && n >= 4)
                p->pcap->write(f, n - 4);
            return;
        }
        // A full output queue drops, as a switch does; a TAP device that refuses a frame
        // (down, say) stays a port. A broken socket ends its port.
        p->tx_dropped++;
        out_dropped_++;
        if (!p->tap && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS && errno != EINTR)
            remove(id);
    }

    const Options &o_;
    std::mt19937_64 rng_;
    int listen_fd_ = -1;
    unsigned last_id_ = 0;
    std::vector<Port> ports_;
    std::unordered_map<uint64_t, MacEntry> macs_;
    double empty_since_ = -1;
    uint64_t port_lost_ = 0, port_corrupted_ = 0, port_duplicated_ = 0, port_reordered_ = 0;
    uint64_t in_ = 0, bad_ = 0, lost_ = 0, flooded_ = 0, filtered_ = 0, out_ = 0, out_dropped_ = 0,
             captured_ = 0;
};

int open_tap(const std::string &name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        std::fprintf(stderr, "nfwire: cannot open /dev/net/tun: %s\n", std::strerror(errno));
        return -1;
    }
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    std::memcpy(ifr.ifr_name, name.c_str(), name.size() + 1);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        std::fprintf(stderr, "nfwire: cannot create TAP device %s: %s\n", name.c_str(), std::strerror(errno));
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

int main(int argc, char **argv)
{
    Options o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    Segment seg(o);
    if (!o.pcap_path.empty() && !seg.pcap.open(o.pcap_path)) {
        std::fprintf(stderr, "nfwire: cannot write %s: %s\n", o.pcap_path.c_str(), std::strerror(errno));
        return 2;
    }
    int tap_fd = -1;
    if (!o.tap_name.empty() && (tap_fd = open_tap(o.tap_name)) < 0)
        return 2;
    int lfd = nf_listen_unix("nfwire", o.socket_path.c_str(), SOCK_SEQPACKET, 16);
    if (lfd < 0)
        return 2;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    rc = seg.run(lfd, tap_fd);
    ::close(lfd);
    if (!seg.unlinked)
        unlink(o.socket_path.c_str());
    seg.pcap.close();
    if (o.verbose)
        seg.report();
    return rc;
}
