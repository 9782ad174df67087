/* SPDX-License-Identifier: Apache-2.0 */
/* Firmware unit tests (fw_test.h): the network port's IPv4 layer (fw_net.c) on the model
 * of nf_net. NET_CONFIG and its refusals, ARP answers, ICMP echo replies compared byte
 * for byte with frames built here, address resolution with its retries and bound, and
 * NET_NEIGH's listing of the cache. */
#include "fw_test.h"
#include "hw_net_model.h"

#define SEED 0xA1B2C3D4u
static const uint8_t our_mac[6] = {0x02, 0x6E, 0xA1, 0xB2, 0xC3, 0xD4}; /* 02:6e:<SEED> */
static const uint8_t our_ip[4] = {10, 0, 0, 2};
static const uint8_t peer_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t peer_ip[4] = {10, 0, 0, 7};
static const uint8_t bcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

static uint32_t ip_word(const uint8_t *ip) { return ip[0] | ip[1] << 8 | ip[2] << 16 | (uint32_t)ip[3] << 24; }
static void put16(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static uint32_t net_config(uint32_t flags, uint32_t ip, uint32_t mask, uint32_t lo, uint32_t hi,
                           struct nf_net_config_rep *rep)
{
    struct nf_net_config_req q = {flags, ip, mask, 0, lo, hi};
    struct nf_net_config_rep r = {0, 0, 0, 0, 0, 0};
    uint32_t st = tb_req(NF_OP_NET_CONFIG, &q, sizeof(q), &r, sizeof(r));
    if (rep)
        *rep = r;
    return st;
}

/* A fresh adapter with MAC_SEED, 10.0.0.2/24. */
static void net_env(void)
{
    tb_init("sim");
    nf_hw_net_seed(SEED);
    fw_net_init();
    net_config(NF_NET_CONFIG_FLAG_ADDR, ip_word(our_ip), 0x00FFFFFFu, 0, 0, NULL);
}

static size_t eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint32_t type)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    put16(f + 12, type);
    return 14;
}

static size_t arp(uint8_t *f, const uint8_t *edst, uint32_t op, const uint8_t *sha, const uint8_t *spa,
                  const uint8_t *tha, const uint8_t *tpa)
{
    memset(f, 0, 60);
    size_t n = eth(f, edst, sha, 0x0806);
    put16(f + n, 1);
    put16(f + n + 2, 0x0800);
    f[n + 4] = 6;
    f[n + 5] = 4;
    put16(f + n + 6, op);
    memcpy(f + n + 8, sha, 6);
    memcpy(f + n + 14, spa, 4);
    memcpy(f + n + 18, tha, 6);
    memcpy(f + n + 24, tpa, 4);
    return 60; /* 42 padded as a MAC sends it */
}

/* IPv4 + ICMP of type, id/seq, plen payload bytes; IP flags as given. */
static size_t icmp(uint8_t *f, const uint8_t *edst, const uint8_t *esrc, const uint8_t *src, const uint8_t *dst,
                   uint32_t type, uint32_t ipid, uint32_t ipflags, uint32_t ttl, size_t plen)
{
    memset(f, 0, NF_NET_MAX_FRAME);
    size_t n = eth(f, edst, esrc, 0x0800);
    uint8_t *ip = f + n, *ic = ip + 20;
    ip[0] = 0x45;
    put16(ip + 2, (uint32_t)(28 + plen));
    put16(ip + 4, ipid);
    put16(ip + 6, ipflags);
    ip[8] = (uint8_t)ttl;
    ip[9] = 1;
    memcpy(ip + 12, src, 4);
    memcpy(ip + 16, dst, 4);
    put16(ip + 10, tb_ip_csum(ip, 20));
    ic[0] = (uint8_t)type;
    put16(ic + 4, 0x1234);
    put16(ic + 6, 0x0042);
    for (size_t i = 0; i < plen; i++)
        ic[8 + i] = (uint8_t)(i * 7 + 3);
    put16(ic + 2, tb_ip_csum(ic, 8 + plen));
    n += 28 + plen;
    return n < 60 ? 60 : n;
}

static size_t rx_and_poll(const uint8_t *f, size_t len, uint8_t *out, size_t cap)
{
    nf_hw_net_rx(f, len);
    fw_net_poll();
    return nf_hw_net_tx_take(out, cap);
}

void test_net_config(void)
{
    tb_init("sim");
    nf_hw_net_seed(SEED);
    fw_net_init();
    struct nf_net_config_rep r;
    uint32_t lo = ip_word(our_mac), hi = our_mac[4] | our_mac[5] << 8;
    OK(net_config(0, 0, 0, 0, 0, &r) == NF_STATUS_SUCCESS && r.ipv4 == 0 && r.netmask == 0 && r.mac_lo == lo &&
           r.mac_hi == hi && net_rd(NF_NET_MAC_LO) == lo && net_rd(NF_NET_MAC_HI) == hi &&
           (net_rd(NF_NET_CTRL) & NF_NET_CTRL_RX_EN_MASK) && r.max_mtu == NF_NET_MAX_PATH_MTU,
       "NET_CONFIG query: the default MAC 02:6e:<MAC_SEED> in NET.MAC_LO/HI, RX on, no address yet, the largest "
       "path MTU");
    OK(net_config(NF_NET_CONFIG_FLAG_ADDR, ip_word(our_ip), 0x00FFFFFFu, 0, 0, &r) == NF_STATUS_SUCCESS &&
           r.ipv4 == ip_word(our_ip) && r.netmask == 0x00FFFFFFu && r.mac_lo == lo,
       "NET_CONFIG sets 10.0.0.2/24 and replies with it");
    struct {
        uint32_t flags, ip, mask, lo, hi;
        const char *what;
    } bad[] = {
        {NF_NET_CONFIG_FLAG_ADDR, 0, 0x00FFFFFFu, 0, 0, "address 0.0.0.0"},
        {NF_NET_CONFIG_FLAG_ADDR, 0x010000E0u, 0x00FFFFFFu, 0, 0, "a multicast address"},
        {NF_NET_CONFIG_FLAG_ADDR, 0x0100007Fu, 0x000000FFu, 0, 0, "a loopback address"},
        {NF_NET_CONFIG_FLAG_ADDR, 0xFF00000Au, 0x00FFFFFFu, 0, 0, "the subnet's broadcast address"},
        {NF_NET_CONFIG_FLAG_ADDR, 0x0000000Au, 0x00FFFFFFu, 0, 0, "the subnet's network address"},
        {NF_NET_CONFIG_FLAG_ADDR, ip_word(our_ip), 0x00FF00FFu, 0, 0, "a netmask with a hole"},
        {NF_NET_CONFIG_FLAG_ADDR, ip_word(our_ip), 0, 0, 0, "netmask 0"},
        {NF_NET_CONFIG_FLAG_MAC, 0, 0, 0x33221101u, 0x5544u, "a multicast MAC"},
        {NF_NET_CONFIG_FLAG_MAC, 0, 0, 0, 0, "MAC 00:00:00:00:00:00"},
        {NF_NET_CONFIG_FLAG_MAC, 0, 0, 0x33221102u, 0x15544u, "mac_hi bits above byte 5"},
        {NF_NET_CONFIG_FLAG_MAC | NF_NET_CONFIG_FLAG_ADDR, ip_word(peer_ip), 0x00FFFFFFu, 0x33221101u, 0x5544u,
         "a good address with a multicast MAC"},
        {4, 0, 0, 0, 0, "an unknown flag"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint32_t st = net_config(bad[i].flags, bad[i].ip, bad[i].mask, bad[i].lo, bad[i].hi, NULL);
        OK(st == NF_STATUS_INVALID_PARAMETER && net_config(0, 0, 0, 0, 0, &r) == NF_STATUS_SUCCESS &&
               r.ipv4 == ip_word(our_ip) && r.netmask == 0x00FFFFFFu && r.mac_lo == lo && r.mac_hi == hi &&
               net_rd(NF_NET_MAC_LO) == lo,
           "NET_CONFIG with %s: INVALID_PARAMETER, nothing changed", bad[i].what);
    }
    struct nf_net_config_req q = {0, 0, 0, 1, 0, 0};
    OK(tb_req(NF_OP_NET_CONFIG, &q, sizeof(q), &r, sizeof(r)) == NF_STATUS_INVALID_PARAMETER,
       "NET_CONFIG with rsvd nonzero: INVALID_PARAMETER");
    OK(tb_req(NF_OP_NET_CONFIG, &q, 8, &r, sizeof(r)) == NF_STATUS_INVALID_PARAMETER,
       "NET_CONFIG shorter than its struct: INVALID_PARAMETER");
    OK(net_config(NF_NET_CONFIG_FLAG_MAC, 0, 0, 0x3322110Au, 0x5544u, &r) == NF_STATUS_SUCCESS &&
           r.mac_lo == 0x3322110Au && r.mac_hi == 0x5544u && net_rd(NF_NET_MAC_LO) == 0x3322110Au &&
           net_rd(NF_NET_MAC_HI) == 0x5544u && r.ipv4 == ip_word(our_ip),
       "NET_CONFIG sets a MAC override into NET.MAC_LO/HI and keeps the address");
    struct nf_stats s;
    stats_get(&s);
    OK(s.ops[NF_STAT_OP_NET_CONFIG] == 29u, "STATS counts every NET_CONFIG (%u)", s.ops[NF_STAT_OP_NET_CONFIG]);
}

void test_net_arp(void)
{
    net_env();
    struct nf_stats s0, s1;
    stats_get(&s0);
    uint8_t f[NF_NET_MAX_FRAME], out[NF_NET_MAX_FRAME], want[60];
    static const uint8_t zero[6] = {0};
    size_t n = arp(f, bcast, 1, peer_mac, peer_ip, zero, our_ip);
    size_t got = rx_and_poll(f, n, out, sizeof(out));
    arp(want, peer_mac, 2, our_mac, our_ip, peer_mac, peer_ip);
    OK(got == 60 && !memcmp(out, want, 60), "an ARP request for our address: the reply, byte for byte (%zu)", got);
    OK(nf_hw_net_rx_ready() == 0, "the RX slot is released");
    uint32_t mac[2];
    OK(fw_net_resolve(ip_word(peer_ip), mac) == NF_STATUS_SUCCESS && mac[0] == ip_word(peer_mac) &&
           mac[1] == (uint32_t)(peer_mac[4] | peer_mac[5] << 8),
       "the asker is learnt: resolving it hits the cache");
    static const uint8_t other_ip[4] = {10, 0, 0, 9};
    n = arp(f, bcast, 1, peer_mac, peer_ip, zero, other_ip);
    OK(rx_and_poll(f, n, out, sizeof(out)) == 0 && nf_hw_net_rx_ready() == 0,
       "an ARP request for another address: no reply, released");
    n = arp(f, our_mac, 2, peer_mac, other_ip, our_mac, our_ip);
    OK(rx_and_poll(f, n, out, sizeof(out)) == 0, "an ARP reply nobody asked for: no frame");
    OK(fw_net_resolve(ip_word(other_ip), mac) == NF_STATUS_PENDING, "... and it filled nothing");
    nf_hw_net_tx_take(out, sizeof(out)); /* that resolve's request */
    for (int i = 0; i < 3; i++) {
        n = arp(f, bcast, 1, peer_mac, peer_ip, zero, our_ip);
        nf_hw_net_rx(f, n);
    }
    fw_net_poll();
    int replies = 0;
    while (nf_hw_net_tx_take(out, sizeof(out)))
        replies++;
    OK(replies == 3 && nf_hw_net_rx_ready() == 0, "three requests in three slots: three replies in one poll");
    stats_get(&s1);
    OK(s1.net_rx - s0.net_rx == 6u && s1.net_arp_answered - s0.net_arp_answered == 4u &&
           s1.net_unhandled - s0.net_unhandled == 2u && s1.net_arp_learned == s0.net_arp_learned,
       "STATS: frames taken, ARP requests answered, frames not handled");
}

void test_net_icmp(void)
{
    net_env();
    uint8_t f[NF_NET_MAX_FRAME], out[NF_NET_MAX_FRAME], want[NF_NET_MAX_FRAME];
    static const size_t sizes[] = {0, 1, 18, 33, 56, 1000, NF_NET_MAX_FRAME - 42};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = icmp(f, our_mac, peer_mac, peer_ip, our_ip, 8, 0x4000 + (uint32_t)i, 0x4000, 63, sizes[i]);
        size_t got = rx_and_poll(f, n, out, sizeof(out));
        size_t wn = icmp(want, peer_mac, our_mac, our_ip, peer_ip, 0, 0x4000 + (uint32_t)i, 0, 64, sizes[i]);
        OK(got == wn && !memcmp(out, want, wn), "ICMP echo with %zu payload bytes: the reply, byte for byte",
           sizes[i]);
    }
    size_t n = icmp(f, our_mac, peer_mac, peer_ip, peer_ip, 8, 1, 0, 64, 8);
    OK(rx_and_poll(f, n, out, sizeof(out)) == 0, "ICMP echo to another IPv4 address: no reply");
    n = icmp(f, our_mac, peer_mac, peer_ip, our_ip, 0, 1, 0, 64, 8);
    OK(rx_and_poll(f, n, out, sizeof(out)) == 0, "ICMP echo reply to us: no answer");
    n = icmp(f, our_mac, peer_mac, peer_ip, our_ip, 8, 1, 0x2000, 64, 8);
    OK(rx_and_poll(f, n, out, sizeof(out)) == 0, "a fragment of an echo request: no answer");
    n = icmp(f, our_mac, peer_mac, peer_ip, our_ip, 8, 1, 0, 64, 8);
    f[26] ^= 1; /* IPv4 header checksum now wrong: the port drops it */
    OK(nf_hw_net_rx(f, n) == NF_HW_NET_RX_DROPPED && (fw_net_poll(), nf_hw_net_tx_take(out, sizeof(out)) == 0),
       "a bad IPv4 header checksum is dropped by the port");
    /* RoCE: IPv4 UDP to 4791, not handled yet */
    n = icmp(f, our_mac, peer_mac, peer_ip, our_ip, 8, 1, 0, 64, 24);
    f[23] = 17;
    put16(f + 24, 0);
    put16(f + 24, tb_ip_csum(f + 14, 20));
    put16(f + 36, NF_NET_ROCE_PORT);
    put16(f + 38, (uint32_t)(n - 34)); /* UDP length: BTH and payload, the ICRC last */
    uint32_t icrc;
    OK(nf_net_icrc(f, n, &icrc), "the RoCE frame is RoCE to the port's ICRC unit");
    for (unsigned i = 0; i < 4; i++)
        f[n - 4 + i] = (uint8_t)(icrc >> (8 * i));
    struct nf_stats s0, s1;
    stats_get(&s0);
    OK(rx_and_poll(f, n, out, sizeof(out)) == 0 && nf_hw_net_rx_ready() == 0, "a RoCE frame: released unanswered");
    nf_hw_net_tx_busy(0xFFFFu);
    n = icmp(f, our_mac, peer_mac, peer_ip, our_ip, 8, 1, 0, 64, 8);
    OK(rx_and_poll(f, n, out, sizeof(out)) == 0 && nf_hw_net_rx_ready() == 0,
       "every TX slot busy: the echo is not answered and the frame is released (no wait)");
    nf_hw_net_tx_busy(0);
    stats_get(&s1);
    OK(s1.net_unhandled - s0.net_unhandled == 1u && s1.net_tx_dropped - s0.net_tx_dropped == 1u &&
           s1.net_icmp_answered == 7u,
       "STATS: the RoCE frame not handled, the reply with no TX slot dropped, 7 echoes answered");
}

void test_net_resolve(void)
{
    net_env();
    uint32_t tick = nf_hw_cfg()->clk_hz >> 3, mac[2];
    uint8_t f[NF_NET_MAX_FRAME], out[NF_NET_MAX_FRAME], want[60];
    static const uint8_t zero[6] = {0};
    OK(fw_net_resolve(ip_word(peer_ip), mac) == NF_STATUS_PENDING, "a miss: PENDING");
    arp(want, bcast, 1, our_mac, our_ip, zero, peer_ip);
    size_t got = nf_hw_net_tx_take(out, sizeof(out));
    OK(got == 60 && !memcmp(out, want, 60), "... and an ARP request for it, byte for byte");
    OK(fw_net_resolve(ip_word(peer_ip), mac) == NF_STATUS_PENDING && nf_hw_net_tx_take(out, sizeof(out)) == 0,
       "asking again while it is out: PENDING, no second request");
    size_t n = arp(f, our_mac, 2, peer_mac, peer_ip, our_mac, our_ip);
    rx_and_poll(f, n, out, sizeof(out));
    OK(fw_net_resolve(ip_word(peer_ip), mac) == NF_STATUS_SUCCESS && mac[0] == ip_word(peer_mac) &&
           mac[1] == (uint32_t)(peer_mac[4] | peer_mac[5] << 8),
       "the reply fills the cache: SUCCESS with its MAC");
    static const uint8_t silent[4] = {10, 0, 0, 99};
    OK(fw_net_resolve(ip_word(silent), mac) == NF_STATUS_PENDING, "a silent peer: PENDING");
    int requests = nf_hw_net_tx_take(out, sizeof(out)) ? 1 : 0;
    uint32_t st = NF_STATUS_PENDING;
    int passes = 0;
    for (; passes < 40 && st == NF_STATUS_PENDING; passes++) {
        nf_hw_advance(tick);
        fw_net_poll();
        while (nf_hw_net_tx_take(out, sizeof(out)))
            requests++;
        st = fw_net_resolve(ip_word(silent), mac);
    }
    OK(st == NF_STATUS_HOST_UNREACHABLE && requests == 4 && passes <= 10,
       "no reply: 4 requests, then HOST_UNREACHABLE within the bound (%d requests, %d passes)", requests, passes);
    struct nf_stats s;
    stats_get(&s);
    OK(s.net_resolve_timeouts == 1u && s.net_arp_learned == 1u, "STATS: one resolve timed out, one reply learnt");
    OK(fw_net_resolve(ip_word(silent), mac) == NF_STATUS_HOST_UNREACHABLE,
       "HOST_UNREACHABLE again during the hold time, no request");
    for (int i = 0; i < 9; i++) {
        nf_hw_advance(tick);
        fw_net_poll();
    }
    OK(fw_net_resolve(ip_word(silent), mac) == NF_STATUS_PENDING && nf_hw_net_tx_take(out, sizeof(out)) == 60,
       "after the hold time a new resolve starts over");
    static const uint8_t far[4] = {10, 0, 1, 7}, bc[4] = {10, 0, 0, 255}, mc[4] = {224, 0, 0, 1};
    OK(fw_net_resolve(ip_word(far), mac) == NF_STATUS_NETWORK_UNREACHABLE, "off the subnet: NETWORK_UNREACHABLE");
    OK(fw_net_resolve(ip_word(bc), mac) == NF_STATUS_INVALID_PARAMETER &&
           fw_net_resolve(ip_word(mc), mac) == NF_STATUS_INVALID_PARAMETER && fw_net_resolve(0, mac) == NF_STATUS_INVALID_PARAMETER,
       "broadcast, multicast and 0: INVALID_PARAMETER");
    OK(fw_net_resolve(ip_word(our_ip), mac) == NF_STATUS_SUCCESS && mac[0] == ip_word(our_mac),
       "our own address: our MAC");
    tb_init("sim");
    OK(fw_net_resolve(ip_word(peer_ip), mac) == NF_STATUS_INVALID_DEVICE_STATE,
       "no address set yet: INVALID_DEVICE_STATE");
}

/* NET_NEIGH: status, entries (*n of them) into e[]; the reply's length must match its count. */
static uint32_t neigh(struct nf_net_neigh_entry *e, uint32_t *n)
{
    const struct tb_msg *m = tb_find_reply(tb_send_one(NF_OP_NET_NEIGH, NULL, 0));
    if (!m || m->hdr.op != (NF_OP_NET_NEIGH | NF_OP_REPLY))
        return 0xFFFFFFFFu;
    *n = 0;
    if (m->hdr.status != NF_STATUS_SUCCESS)
        return m->hdr.len == NF_MSG_HDR_SIZE ? m->hdr.status : 0xFFFFFFFEu;
    struct nf_net_neigh_rep r;
    memcpy(&r, m->body, sizeof(r));
    if (r.count > NF_NEIGH_MAX_ENTRIES || m->hdr.len != NF_MSG_HDR_SIZE + sizeof(r) + r.count * sizeof(*e))
        return 0xFFFFFFFEu;
    memcpy(e, m->body + sizeof(r), r.count * sizeof(*e));
    *n = r.count;
    return NF_STATUS_SUCCESS;
}

/* The entry for ip among n, or NULL. */
static const struct nf_net_neigh_entry *neigh_of(const struct nf_net_neigh_entry *e, uint32_t n, const uint8_t *ip)
{
    for (uint32_t i = 0; i < n; i++)
        if (e[i].ipv4 == ip_word(ip))
            return &e[i];
    return NULL;
}

void test_net_neigh(void)
{
    net_env();
    struct nf_net_neigh_entry e[NF_NEIGH_MAX_ENTRIES];
    uint32_t n = 99, tick = nf_hw_cfg()->clk_hz >> 3, mac[2];
    OK(neigh(e, &n) == NF_STATUS_SUCCESS && n == 0, "NET_NEIGH on a fresh port: no entries");
    uint8_t f[NF_NET_MAX_FRAME], out[NF_NET_MAX_FRAME];
    static const uint8_t zero[6] = {0}, silent[4] = {10, 0, 0, 99};
    size_t len = arp(f, bcast, 1, peer_mac, peer_ip, zero, our_ip);
    rx_and_poll(f, len, out, sizeof(out));
    OK(fw_net_resolve(ip_word(silent), mac) == NF_STATUS_PENDING, "a silent address is being resolved");
    nf_hw_net_tx_take(out, sizeof(out));
    const struct nf_net_neigh_entry *p, *q;
    OK(neigh(e, &n) == NF_STATUS_SUCCESS && n == 2 && (p = neigh_of(e, n, peer_ip)) != NULL &&
           p->state == NF_NEIGH_STATE_REACHABLE && p->mac_lo == ip_word(peer_mac) &&
           p->mac_hi == (peer_mac[4] | peer_mac[5] << 8) && (q = neigh_of(e, n, silent)) != NULL &&
           q->state == NF_NEIGH_STATE_INCOMPLETE && q->tries == 1 && q->mac_lo == 0,
       "NET_NEIGH: the asker reachable with its MAC, the silent one incomplete after one request");
    for (int i = 0; i < 12; i++) {
        nf_hw_advance(tick);
        fw_net_poll();
        while (nf_hw_net_tx_take(out, sizeof(out)))
            ;
    }
    OK(neigh(e, &n) == NF_STATUS_SUCCESS && (q = neigh_of(e, n, silent)) != NULL &&
           q->state == NF_NEIGH_STATE_FAILED && q->tries == 4 && q->age_ms > 0,
       "... failed once its requests ran out, with their count and an age");
    struct nf_stats s0, s1;
    stats_get(&s0);
    neigh(e, &n);
    stats_get(&s1);
    OK(s1.ops[NF_STAT_OP_NET_CONFIG] - s0.ops[NF_STAT_OP_NET_CONFIG] == 1u && s1.ops_unknown == s0.ops_unknown,
       "STATS counts NET_NEIGH with NET_CONFIG");
    tb_init("ulx3s_25k");
    OK(neigh(e, &n) == NF_STATUS_NOT_SUPPORTED, "NET_NEIGH without a port: NOT_SUPPORTED, no entries");
}

/* A profile without a port: the transport has no timer to run, so the firmware goes
 * idle (the idle loop sleeps) instead of counting every poll as work. */
void test_net_absent(void)
{
    tb_init("ulx3s_25k");
    int busy = 0;
    for (int i = 0; i < 100; i++) {
        nf_hw_advance(nf_hw_cfg()->clk_hz);
        busy += fw_poll();
    }
    OK(busy == 0, "no network port: fw_poll reports no work (%d of 100 polls busy)", busy);
}
