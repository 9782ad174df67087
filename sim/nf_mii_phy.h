/* SPDX-License-Identifier: Apache-2.0 */
/* A PHY's management side for the models (nfmodel's port, nfsim's pins, the net port
 * bench): the IEEE 802.3 clause-22 registers a driver looks at (BMCR, BMSR, PHYID1/2,
 * ANAR, ANLPAR, 1000BASE-T control/status, extended status) and an MDIO slave that
 * answers frames on the MDC/MDIO pins. Header only, C and C++.
 * IDs: NF_MII_PHY_GIGABIT is a neutral test ID ('NF' in PHYID1) for the GMII/RGMII
 * models; NF_MII_PHY_LAN8720 answers the Microchip LAN8720A's ID (OUI 00:80:0F). */
#ifndef NF_MII_PHY_H
#define NF_MII_PHY_H

#include <stdint.h>

#include "nf_layout.h" /* NF_MII_*: the registers and bits (proto/net.toml); C++ includes nf_layout_cxx.h first */

#ifdef __cplusplus
extern "C" {
#endif

enum nf_mii_phy_kind { NF_MII_PHY_GIGABIT, NF_MII_PHY_LAN8720 };
#define NF_MII_PHY_ID_GIGABIT 0x4E460010u /* neutral: PHYID1 'NF', model 1, revision 0 */
#define NF_MII_PHY_ID_LAN8720 0x0007C0F0u /* LAN8720A: OUI 00:80:0F, model 0x0F, revision 0 */
#define NF_MII_PHY_ADDR 1u                /* the models' PHY strap address (not 0: the scan must find it) */

struct nf_mii_phy {
    uint32_t id;
    uint8_t addr, gigabit;
    uint8_t cable; /* a link partner is on the cable (the harness sets it) */
    uint16_t bmcr, anar, gctrl;
};

static inline void nf_mii_phy_reset(struct nf_mii_phy *p)
{
    p->bmcr = (uint16_t)(NF_MII_BMCR_ANENABLE | NF_MII_BMCR_FULLDPLX |
                         (p->gigabit ? NF_MII_BMCR_SPEED1000 : NF_MII_BMCR_SPEED100));
    p->anar = NF_MII_AN_100FULL | NF_MII_AN_100HALF | NF_MII_AN_10FULL | NF_MII_AN_10HALF | NF_MII_AN_CSMA;
    p->gctrl = p->gigabit ? NF_MII_GCTRL_1000FULL : 0u;
}

static inline void nf_mii_phy_init(struct nf_mii_phy *p, enum nf_mii_phy_kind kind, int cable)
{
    p->gigabit = kind == NF_MII_PHY_GIGABIT;
    p->id = p->gigabit ? NF_MII_PHY_ID_GIGABIT : NF_MII_PHY_ID_LAN8720;
    p->addr = NF_MII_PHY_ADDR;
    p->cable = (uint8_t)(cable != 0);
    nf_mii_phy_reset(p);
}

/* Loopback: every frame the MAC sends comes back to its receiver, none goes on the cable. */
static inline int nf_mii_phy_loopback(const struct nf_mii_phy *p)
{
    return (p->bmcr & NF_MII_BMCR_LOOPBACK) != 0;
}

static inline uint16_t nf_mii_phy_read(const struct nf_mii_phy *p, unsigned reg)
{
    int up = !(p->bmcr & NF_MII_BMCR_PDOWN) && (p->cable || nf_mii_phy_loopback(p));
    int an_done = (p->bmcr & NF_MII_BMCR_ANENABLE) && p->cable && !nf_mii_phy_loopback(p);
    switch (reg) {
    case NF_MII_BMCR:
        return p->bmcr;
    case NF_MII_BMSR:
        return (uint16_t)(NF_MII_BMSR_100FULL | NF_MII_BMSR_100HALF | NF_MII_BMSR_10FULL | NF_MII_BMSR_10HALF |
                          (p->gigabit ? NF_MII_BMSR_ESTATEN : 0u) | NF_MII_BMSR_ANEGABLE | NF_MII_BMSR_EXTCAP |
                          (up ? NF_MII_BMSR_LINK : 0u) | (an_done ? NF_MII_BMSR_ANEGDONE : 0u));
    case NF_MII_PHYID1:
        return (uint16_t)(p->id >> 16);
    case NF_MII_PHYID2:
        return (uint16_t)p->id;
    case NF_MII_ANAR:
        return p->anar;
    case NF_MII_ANLPAR: /* the partner offers everything 10/100 */
        return an_done ? (uint16_t)(0x4000u | NF_MII_AN_100FULL | NF_MII_AN_100HALF | NF_MII_AN_10FULL |
                                    NF_MII_AN_10HALF | NF_MII_AN_CSMA)
                       : 0u;
    case NF_MII_GCTRL:
        return p->gigabit ? p->gctrl : 0u;
    case NF_MII_GSTAT:
        return p->gigabit && an_done ? (uint16_t)NF_MII_GSTAT_1000FULL : 0u;
    case NF_MII_ESTATUS:
        return p->gigabit ? (uint16_t)(NF_MII_ESTATUS_1000T_FULL | NF_MII_ESTATUS_1000T_HALF) : 0u;
    default:
        return 0u;
    }
}

static inline void nf_mii_phy_write(struct nf_mii_phy *p, unsigned reg, uint16_t v)
{
    switch (reg) {
    case NF_MII_BMCR:
        if (v & NF_MII_BMCR_RESET)
            nf_mii_phy_reset(p); /* self-clearing, done at once */
        else
            p->bmcr = (uint16_t)(v & ~NF_MII_BMCR_ANRESTART); /* restart completes at once */
        if (!p->gigabit)
            p->bmcr &= (uint16_t)~NF_MII_BMCR_SPEED1000;
        break;
    case NF_MII_ANAR:
        p->anar = v;
        break;
    case NF_MII_GCTRL:
        if (p->gigabit)
            p->gctrl = v;
        break;
    default:
        break; /* read-only or not modelled */
    }
}

/* The MDIO slave on the pins: call it once per system clock with MDC and the bus level the
 * master leaves (its mdio_o when mdio_oe, else the pull-up's 1). Returns the level the
 * bus takes: the PHY's bit while it drives one, else bus. Bits are taken at MDC's rising
 * edge and the PHY's own change right after it, as IEEE 802.3 22.2.4 has them. */
struct nf_mdio_slave {
    uint8_t mdc, ones, state, n, drive, level, reg_phy, reg_op;
    uint16_t bits, out;
};
enum { NF_MDIO_IDLE, NF_MDIO_FRAME };

static inline uint8_t nf_mdio_slave_clock(struct nf_mdio_slave *s, struct nf_mii_phy *p, int mdc, int bus)
{
    int rise = mdc && !s->mdc;
    s->mdc = (uint8_t)(mdc != 0);
    uint8_t level = (uint8_t)(s->drive ? s->level : (bus != 0));
    if (!rise)
        return level;
    unsigned b = level;
    if (s->state == NF_MDIO_IDLE) {
        if (b) {
            if (s->ones < 32u)
                s->ones++;
        } else {
            if (s->ones >= 32u) { /* ST's first bit after a whole preamble */
                s->state = NF_MDIO_FRAME;
                s->n = 1;
                s->bits = 0;
            }
            s->ones = 0;
        }
        return level;
    }
    unsigned n = s->n++; /* frame bit n: ST 0..1, OP 2..3, PHYAD 4..8, REGAD 9..13, TA 14..15, data 16..31 */
    if (n == 1u && !b) { /* ST is 01 */
        s->state = NF_MDIO_IDLE;
        return level;
    }
    if (n >= 2u && n <= 13u)
        s->bits = (uint16_t)(s->bits << 1 | b);
    if (n == 13u) {
        s->reg_op = (uint8_t)(s->bits >> 10 & 3u);
        s->reg_phy = (uint8_t)(s->bits >> 5 & 31u);
        if (s->reg_op == 2u && s->reg_phy == p->addr)
            s->out = nf_mii_phy_read(p, s->bits & 31u);
        s->n = 14;
        s->bits = (uint16_t)(s->bits & 31u); /* REGAD kept for a write */
        return level;
    }
    int mine_rd = s->reg_op == 2u && s->reg_phy == p->addr;
    if (mine_rd && n >= 14u && n <= 30u) { /* TA's 0, then D15..D0, each for the next bit */
        s->drive = 1;
        s->level = n == 14u ? 0u : (uint8_t)(s->out >> (30u - n) & 1u);
    }
    if (s->reg_op == 1u && n >= 16u)
        s->out = (uint16_t)(s->out << 1 | b);
    if (n == 31u) {
        if (s->reg_op == 1u && s->reg_phy == p->addr)
            nf_mii_phy_write(p, s->bits & 31u, s->out);
        s->drive = 0;
        s->state = NF_MDIO_IDLE;
        s->ones = 0;
    }
    return level;
}

#ifdef __cplusplus
}
#endif

#endif
