/* SPDX-License-Identifier: Apache-2.0 */
/* The network port's addresses (ndkfpga.h NdkFpgaPortAddress): NET_CONFIG requests on
 * the link, and the addresses a device string asks for, set once the adapter is open;
 * its ARP cache (NdkFpgaQueryNeighbors: NET_NEIGH); its PHY (NdkFpgaPhyControl: NET_PHY). */
#include <string.h>

#include "ndk_internal.h"
#include "transport/nf_devopts.h"

/* IPv4 words carry the address in wire order, the first byte in bits 7:0 (NET_CONFIG_REQ). */
static uint32_t wire_word(const uint8_t b[4])
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void wire_bytes(uint32_t w, uint8_t b[4])
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(w >> (8 * i));
}

static uint32_t mask_word(unsigned prefix)
{
    uint8_t m[4];
    for (unsigned i = 0; i < 4; i++) {
        unsigned bits = prefix > 8 * i ? prefix - 8 * i : 0;
        m[i] = bits >= 8 ? 0xFF : (uint8_t)(0xFF00u >> bits);
    }
    return wire_word(m);
}

/* The prefix length of a contiguous mask word, or 0. */
static ULONG mask_prefix(uint32_t w)
{
    uint8_t m[4];
    wire_bytes(w, m);
    ULONG n = 0;
    for (int i = 0; i < 4; i++)
        for (int bit = 7; bit >= 0; bit--) {
            if (!(m[i] >> bit & 1))
                return n;
            n++;
        }
    return n;
}

NTSTATUS NdkFpgaPortAddress(NDK_ADAPTER *a, ULONG flags, NDKFPGA_PORT_ADDRESS *addr)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !addr || (flags & ~(NDKFPGA_PORT_SET_IPV4 | NDKFPGA_PORT_SET_MAC)))
        return STATUS_INVALID_PARAMETER;
    if ((flags & NDKFPGA_PORT_SET_IPV4) && (addr->PrefixLength < 8 || addr->PrefixLength > 32))
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uint8_t msg[NF_MSG_HDR_SIZE + NF_NET_CONFIG_REQ_SIZE];
    struct nf_net_config_req req;
    memset(&req, 0, sizeof(req));
    if (flags & NDKFPGA_PORT_SET_IPV4) {
        req.flags |= NF_NET_CONFIG_FLAG_ADDR;
        req.ipv4 = wire_word(addr->Ipv4);
        req.netmask = mask_word(addr->PrefixLength);
    }
    if (flags & NDKFPGA_PORT_SET_MAC) {
        req.flags |= NF_NET_CONFIG_FLAG_MAC;
        req.mac_lo = wire_word(addr->Mac);
        req.mac_hi = (uint32_t)addr->Mac[4] | (uint32_t)addr->Mac[5] << 8;
    }
    memcpy(msg + NF_MSG_HDR_SIZE, &req, sizeof(req));
    struct nf_net_config_rep rep;
    size_t got = 0;
    memset(&rep, 0, sizeof(rep));
    NTSTATUS st = ndk_call(ad, NF_OP_NET_CONFIG, msg, sizeof(msg), &rep, sizeof(rep), &got);
    if (st == STATUS_NOT_SUPPORTED)
        return nf_set_error(st, "the adapter has no network port");
    if (st != STATUS_SUCCESS)
        return st;
    if (got < sizeof(rep))
        return STATUS_INTERNAL_ERROR;
    wire_bytes(rep.ipv4, addr->Ipv4);
    addr->PrefixLength = rep.ipv4 ? mask_prefix(rep.netmask) : 0;
    wire_bytes(rep.mac_lo, addr->Mac);
    addr->Mac[4] = (uint8_t)rep.mac_hi;
    addr->Mac[5] = (uint8_t)(rep.mac_hi >> 8);
    return STATUS_SUCCESS;
}

NTSTATUS NdkFpgaQueryNeighbors(NDK_ADAPTER *a, NDKFPGA_NEIGHBOR *out, ULONG *count)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !count || (!out && *count))
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uint8_t msg[NF_MSG_HDR_SIZE];
    uint8_t rep[NF_NET_NEIGH_REP_SIZE + NF_NEIGH_MAX_ENTRIES * NF_NET_NEIGH_ENTRY_SIZE];
    size_t got = 0;
    NTSTATUS st = ndk_call(ad, NF_OP_NET_NEIGH, msg, sizeof(msg), rep, sizeof(rep), &got);
    if (st == STATUS_NOT_SUPPORTED)
        return nf_set_error(st, "the adapter has no network port");
    if (st != STATUS_SUCCESS)
        return st;
    struct nf_net_neigh_rep head;
    if (got < sizeof(head))
        return STATUS_INTERNAL_ERROR;
    memcpy(&head, rep, sizeof(head));
    /* The reply says how many entries follow; it must carry them all. */
    if (head.count > NF_NEIGH_MAX_ENTRIES || got < sizeof(head) + head.count * NF_NET_NEIGH_ENTRY_SIZE)
        return STATUS_INTERNAL_ERROR;
    ULONG room = *count;
    *count = head.count;
    for (ULONG i = 0; i < head.count && i < room; i++) {
        struct nf_net_neigh_entry e;
        memcpy(&e, rep + sizeof(head) + i * NF_NET_NEIGH_ENTRY_SIZE, sizeof(e));
        memset(&out[i], 0, sizeof(out[i]));
        wire_bytes(e.ipv4, out[i].Ipv4);
        wire_bytes(e.mac_lo, out[i].Mac);
        out[i].Mac[4] = (uint8_t)e.mac_hi;
        out[i].Mac[5] = (uint8_t)(e.mac_hi >> 8);
        out[i].State = e.state;
        out[i].Tries = e.tries;
        out[i].AgeMs = e.age_ms;
    }
    return head.count > room ? STATUS_BUFFER_TOO_SMALL : STATUS_SUCCESS;
}

_Static_assert(NDKFPGA_PHY_QUERY == NF_NET_PHY_ACTION_QUERY && NDKFPGA_PHY_LOOPBACK_ON == NF_NET_PHY_ACTION_LOOPBACK_ON &&
                   NDKFPGA_PHY_LOOPBACK_OFF == NF_NET_PHY_ACTION_LOOPBACK_OFF,
               "NdkFpgaPhyControl's actions are NET_PHY_ACTION's");

/* Speed and duplex from the registers: BMCR's when auto-negotiation is off, else the best
 * mode both ends advertise (1000BASE-T control/status, then ANAR & ANLPAR). */
static void phy_mode(const struct nf_net_phy_rep *r, NDKFPGA_PHY_STATUS *s)
{
    if (!(r->bmcr & NF_MII_BMCR_ANENABLE)) {
        s->SpeedMbps = (r->bmcr & NF_MII_BMCR_SPEED1000) ? 1000 : (r->bmcr & NF_MII_BMCR_SPEED100) ? 100 : 10;
        s->Flags |= (r->bmcr & NF_MII_BMCR_FULLDPLX) ? NDKFPGA_PHY_FULL_DUPLEX : 0;
        return;
    }
    if (!(r->bmsr & NF_MII_BMSR_ANEGDONE))
        return;
    int gig = (r->bmsr & NF_MII_BMSR_ESTATEN) != 0;
    unsigned both = r->anar & r->anlpar;
    if (gig && (r->gctrl & NF_MII_GCTRL_1000FULL) && (r->gstat & NF_MII_GSTAT_1000FULL)) {
        s->SpeedMbps = 1000;
        s->Flags |= NDKFPGA_PHY_FULL_DUPLEX;
    } else if (gig && (r->gctrl & NF_MII_GCTRL_1000HALF) && (r->gstat & NF_MII_GSTAT_1000HALF)) {
        s->SpeedMbps = 1000;
    } else if (both & (NF_MII_AN_100FULL | NF_MII_AN_100HALF)) {
        s->SpeedMbps = 100;
        s->Flags |= (both & NF_MII_AN_100FULL) ? NDKFPGA_PHY_FULL_DUPLEX : 0;
    } else {
        s->SpeedMbps = 10;
        s->Flags |= (both & NF_MII_AN_10FULL) ? NDKFPGA_PHY_FULL_DUPLEX : 0;
    }
}

NTSTATUS NdkFpgaPhyControl(NDK_ADAPTER *a, ULONG action, NDKFPGA_PHY_STATUS *status)
{
    if (!ndk_obj_ok(a, NdkObjectTypeAdapter) || !status)
        return STATUS_INVALID_PARAMETER;
    struct ndk_adapter *ad = ndk_adapter_of(a);
    uint8_t msg[NF_MSG_HDR_SIZE + NF_NET_PHY_REQ_SIZE];
    struct nf_net_phy_req req = {.action = (uint32_t)action, .rsvd = 0};
    memcpy(msg + NF_MSG_HDR_SIZE, &req, sizeof(req));
    struct nf_net_phy_rep rep;
    size_t got = 0;
    memset(&rep, 0, sizeof(rep));
    NTSTATUS st = ndk_call(ad, NF_OP_NET_PHY, msg, sizeof(msg), &rep, sizeof(rep), &got);
    if (st == STATUS_NOT_SUPPORTED)
        return nf_set_error(st, "the adapter has no network port");
    if (st == STATUS_INVALID_DEVICE_STATE)
        return nf_set_error(st, "no PHY answers on the network port's MDIO bus");
    if (st == STATUS_INVALID_PARAMETER)
        return nf_set_error(st, "the adapter refused PHY action %lu", (unsigned long)action);
    if (st != STATUS_SUCCESS)
        return st;
    if (got < sizeof(rep))
        return STATUS_INTERNAL_ERROR;
    memset(status, 0, sizeof(*status));
    status->Address = rep.addr;
    status->Id = (ULONG)rep.phyid1 << 16 | rep.phyid2;
    status->Bmcr = rep.bmcr;
    status->Bmsr = rep.bmsr;
    status->Flags = ((rep.bmsr & NF_MII_BMSR_LINK) ? NDKFPGA_PHY_LINK : 0) |
                    ((rep.bmcr & NF_MII_BMCR_LOOPBACK) ? NDKFPGA_PHY_LOOPBACK : 0) |
                    ((rep.bmcr & NF_MII_BMCR_ANENABLE) ? NDKFPGA_PHY_AUTONEG : 0) |
                    ((rep.bmsr & NF_MII_BMSR_ANEGDONE) ? NDKFPGA_PHY_AUTONEG_DONE : 0);
    phy_mode(&rep, status);
    return STATUS_SUCCESS;
}

NTSTATUS ndk_net_apply(struct ndk_adapter *ad, const struct nf_transport_net *net)
{
    if (!net->set)
        return STATUS_SUCCESS;
    NDKFPGA_PORT_ADDRESS addr;
    memset(&addr, 0, sizeof(addr));
    memcpy(addr.Ipv4, net->ipv4, 4);
    addr.PrefixLength = net->prefix;
    ULONG flags = NDKFPGA_PORT_SET_IPV4;
    if (net->has_mac) {
        memcpy(addr.Mac, net->mac, 6);
        flags |= NDKFPGA_PORT_SET_MAC;
    }
    NTSTATUS st = NdkFpgaPortAddress(&ad->pub, flags, &addr);
    if (st == STATUS_NOT_SUPPORTED)
        return nf_set_error(st, "net=: the adapter has no network port (its firmware has no IPv4 layer)");
    if (st != STATUS_SUCCESS)
        return nf_set_error(st, "ip=%u.%u.%u.%u/%u%s: the adapter refused the address (%s)", net->ipv4[0],
                            net->ipv4[1], net->ipv4[2], net->ipv4[3], net->prefix, net->has_mac ? " with mac=" : "",
                            nf_status_name(st));
    return STATUS_SUCCESS;
}

NTSTATUS NdkFpgaParsePortAddress(const char *text, ULONG flags, NDKFPGA_PORT_ADDRESS *addr)
{
    if (!text || !addr)
        return STATUS_INVALID_PARAMETER;
    if (flags == NDKFPGA_PORT_SET_IPV4) {
        uint8_t ip[4];
        unsigned prefix;
        if (nf_devopts_parse_ipv4(text, ip, &prefix) != 0)
            return STATUS_INVALID_PARAMETER;
        memcpy(addr->Ipv4, ip, 4);
        addr->PrefixLength = prefix;
        return STATUS_SUCCESS;
    }
    if (flags == NDKFPGA_PORT_SET_MAC) {
        uint8_t mac[6];
        if (nf_devopts_parse_mac(text, mac) != 0)
            return STATUS_INVALID_PARAMETER;
        memcpy(addr->Mac, mac, 6);
        return STATUS_SUCCESS;
    }
    return STATUS_INVALID_PARAMETER;
}
