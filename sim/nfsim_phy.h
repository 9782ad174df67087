/* SPDX-License-Identifier: Apache-2.0 */
// nfsim at the board's PHY pins (nfsim-rgmii, nfsim-rmii; sim/nfsim_phy_top.v): a PHY chip
// model between the wire (sim/nf_wire.h, GMII-style bytes) and the port's pins, clocked
// by its own PHY clock at its own period, asynchronous to the system clock. Before each
// rising edge of the system clock the harness calls run_until(), which toggles the PHY
// clock at each of its edges that come first and evaluates the model there.
// RGMII: one 125 MHz clock is both the PHY's RX clock and the board PLL's TX clock; a byte
// goes to and comes from the wire per PHY clock, nibbles and RX_CTL/TX_CTL on its edges.
// RMII: the 50 MHz reference clock; a byte per 4 clocks, dibits least significant first,
// CRS_DV high with the wire's rx_dv.
#ifndef NFSIM_PHY_H
#define NFSIM_PHY_H

#include <cstdint>

#include "nf_wire.h"

enum class NfPhyKind { Rgmii, Rmii };

template <class Top> class NfPhyPins {
public:
    // sys_ps: the system clock's period; the PHY clock's is a little off its nominal one so
    // that the two drift through every phase.
    NfPhyPins(NfPhyKind kind, uint64_t sys_ps)
        : kind_(kind), sys_ps_(sys_ps), half_ps_(kind == NfPhyKind::Rgmii ? 3999 : 9999), next_ps_(half_ps_ / 3)
    {
    }

    // The PHY clock's edges before the next system clock edge (the system clock is high).
    void run_until(Top *top, NfWire *wire)
    {
        now_ps_ += sys_ps_;
        while (next_ps_ < now_ps_) {
            if (kind_ == NfPhyKind::Rgmii)
                rgmii_edge(top, wire);
            else
                rmii_edge(top, wire);
            next_ps_ += half_ps_;
        }
    }

private:
    void rgmii_edge(Top *top, NfWire *wire)
    {
        level_ = !level_;
        if (level_) {
            top->rgmii_rxd = rx_d_ & 15;
            top->rgmii_rx_ctl = rx_dv_;
        } else {
            top->rgmii_rxd = static_cast<uint8_t>(rx_d_ >> 4);
            top->rgmii_rx_ctl = rx_dv_ ^ rx_er_;
        }
        top->rgmii_rx_clk = level_;
        top->clk_tx = level_;
        top->eval();
        if (level_) {  // the DDR cells' rising half: low nibble, TX_EN
            tx_d_ = top->rgmii_txd;
            tx_en_ = top->rgmii_tx_ctl;
            return;
        }
        uint8_t byte = static_cast<uint8_t>(tx_d_ | top->rgmii_txd << 4);
        wire->clock(true, byte, tx_en_, tx_en_ ^ top->rgmii_tx_ctl);
        rx_d_ = wire->rxd();
        rx_dv_ = wire->rx_dv();
        rx_er_ = wire->rx_er();
    }

    void rmii_edge(Top *top, NfWire *wire)
    {
        level_ = !level_;
        if (level_) {
            top->rmii_crs_dv = rx_dv_;
            top->rmii_rxd = (rx_d_ >> (2 * phase_)) & 3;
        }
        top->rmii_ref_clk = level_;
        top->eval();
        if (!level_)
            return;
        // Transmit: a byte's dibits from TX_EN's rise, least significant first; bytes go to
        // the wire at its own byte times, one behind at most.
        if (top->rmii_tx_en) {
            if (!tx_en_)
                tx_n_ = 0;
            tx_d_ = static_cast<uint8_t>(tx_d_ >> 2 | top->rmii_txd << 6);
            if (++tx_n_ == 4) {
                tx_q_[tx_qn_++ & 3] = tx_d_;
                tx_n_ = 0;
            }
        }
        tx_en_ = top->rmii_tx_en;
        if (++phase_ == 4) {
            phase_ = 0;
            bool en = tx_qn_ != tx_qr_;
            wire->clock(true, en ? tx_q_[tx_qr_++ & 3] : 0, en, false);
            rx_d_ = wire->rxd();
            rx_dv_ = wire->rx_dv();
        }
    }

    NfPhyKind kind_;
    uint64_t sys_ps_, half_ps_, next_ps_, now_ps_ = 0;
    bool level_ = false;
    uint8_t rx_d_ = 0, tx_d_ = 0;
    bool rx_dv_ = false, rx_er_ = false, tx_en_ = false;
    unsigned phase_ = 0, tx_n_ = 0;
    uint8_t tx_q_[4] = {0, 0, 0, 0};
    unsigned tx_qn_ = 0, tx_qr_ = 0;
};

#endif
