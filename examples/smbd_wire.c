/* SPDX-License-Identifier: Apache-2.0 */
/* MS-SMBD messages byte for byte: every field little-endian at the offset [MS-SMBD] 2.2
 * gives it, whatever the host's byte order; the parsers check what the receiver must
 * check before it trusts a field (3.1.5.6-3.1.5.8). */
#include "smbd.h"

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)v);
    put16(b + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *b, uint64_t v)
{
    put32(b, (uint32_t)v);
    put32(b + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)(b[0] | b[1] << 8);
}

static uint32_t get32(const uint8_t *b)
{
    return get16(b) | (uint32_t)get16(b + 2) << 16;
}

static uint64_t get64(const uint8_t *b)
{
    return get32(b) | (uint64_t)get32(b + 4) << 32;
}

void smbd_put_neg_req(uint8_t *b, const struct smbd_neg_req *m)
{
    put16(b, m->min_version);
    put16(b + 2, m->max_version);
    put16(b + 4, 0); /* Reserved */
    put16(b + 6, m->credits_requested);
    put32(b + 8, m->preferred_send_size);
    put32(b + 12, m->max_receive_size);
    put32(b + 16, m->max_fragmented_size);
}

void smbd_put_neg_resp(uint8_t *b, const struct smbd_neg_resp *m)
{
    put16(b, m->min_version);
    put16(b + 2, m->max_version);
    put16(b + 4, m->negotiated_version);
    put16(b + 6, 0); /* Reserved */
    put16(b + 8, m->credits_requested);
    put16(b + 10, m->credits_granted);
    put32(b + 12, m->status);
    put32(b + 16, m->max_read_write_size);
    put32(b + 20, m->preferred_send_size);
    put32(b + 24, m->max_receive_size);
    put32(b + 28, m->max_fragmented_size);
}

size_t smbd_put_data(uint8_t *b, const struct smbd_data *m)
{
    put16(b, m->credits_requested);
    put16(b + 2, m->credits_granted);
    put16(b + 4, m->flags);
    put16(b + 6, 0); /* Reserved */
    put32(b + 8, m->remaining_data_length);
    put32(b + 12, m->data_offset);
    put32(b + 16, m->data_length);
    if (m->data_length == 0)
        return SMBD_DATA_HDR_LEN;
    put32(b + 20, 0); /* Padding up to DataOffset */
    return SMBD_DATA_OFFSET;
}

void smbd_put_app(uint8_t *b, const struct smbd_app *m)
{
    put16(b, m->command);
    put16(b + 2, m->flags);
    put32(b + 4, m->message_id);
    put32(b + 8, m->status);
    put32(b + 12, m->length);
    put64(b + 16, m->file_offset);
    put32(b + 24, m->channel);
    put32(b + 28, m->n_desc);
    put64(b + 32, m->n_desc ? m->desc.offset : 0); /* SMB_DIRECT_BUFFER_DESCRIPTOR_V1 */
    put32(b + 40, m->n_desc ? m->desc.token : 0);
    put32(b + 44, m->n_desc ? m->desc.length : 0);
}

const char *smbd_get_neg_req(const uint8_t *b, size_t len, struct smbd_neg_req *m)
{
    if (len < SMBD_NEG_REQ_LEN)
        return "a Negotiate Request shorter than 20 bytes";
    m->min_version = get16(b);
    m->max_version = get16(b + 2);
    m->credits_requested = get16(b + 6);
    m->preferred_send_size = get32(b + 8);
    m->max_receive_size = get32(b + 12);
    m->max_fragmented_size = get32(b + 16);
    if (m->min_version > SMBD_VERSION_1 || m->max_version < SMBD_VERSION_1)
        return "a Negotiate Request whose versions exclude 0x0100";
    if (m->credits_requested == 0)
        return "a Negotiate Request asking for no credits";
    if (m->max_receive_size < SMBD_MIN_RECEIVE_SIZE || m->max_fragmented_size < SMBD_MIN_FRAGMENTED)
        return "a Negotiate Request with MaxReceiveSize under 128 or MaxFragmentedSize under 131072";
    return NULL;
}

const char *smbd_get_neg_resp(const uint8_t *b, size_t len, struct smbd_neg_resp *m)
{
    if (len < SMBD_NEG_RESP_LEN)
        return "a Negotiate Response shorter than 32 bytes";
    m->min_version = get16(b);
    m->max_version = get16(b + 2);
    m->negotiated_version = get16(b + 4);
    m->credits_requested = get16(b + 8);
    m->credits_granted = get16(b + 10);
    m->status = get32(b + 12);
    m->max_read_write_size = get32(b + 16);
    m->preferred_send_size = get32(b + 20);
    m->max_receive_size = get32(b + 24);
    m->max_fragmented_size = get32(b + 28);
    if (m->status != 0)
        return "a Negotiate Response with a failure Status";
    if (m->negotiated_version != SMBD_VERSION_1)
        return "a Negotiate Response with a NegotiatedVersion other than 0x0100";
    if (m->max_receive_size < SMBD_MIN_RECEIVE_SIZE || m->max_fragmented_size < SMBD_MIN_FRAGMENTED)
        return "a Negotiate Response with MaxReceiveSize under 128 or MaxFragmentedSize under 131072";
    if (m->credits_granted == 0 || m->credits_requested == 0)
        return "a Negotiate Response granting or requesting no credits";
    if (m->preferred_send_size > SMBD_MSG_SIZE)
        return "a Negotiate Response whose PreferredSendSize exceeds what this side receives";
    return NULL;
}

const char *smbd_get_data(const uint8_t *b, size_t len, uint32_t max_fragmented, struct smbd_data *m)
{
    if (len < SMBD_DATA_HDR_LEN)
        return "a data transfer message shorter than 20 bytes";
    m->credits_requested = get16(b);
    m->credits_granted = get16(b + 2);
    m->flags = get16(b + 4);
    m->remaining_data_length = get32(b + 8);
    m->data_offset = get32(b + 12);
    m->data_length = get32(b + 16);
    if (m->credits_requested == 0)
        return "a data transfer message requesting no credits";
    if (m->data_offset % 8)
        return "a data transfer message whose DataOffset is not 8-byte aligned";
    if ((uint64_t)m->data_offset + m->data_length > len)
        return "a data transfer message whose data runs past its end";
    if ((uint64_t)m->data_length + m->remaining_data_length > max_fragmented)
        return "a data transfer message longer than MaxFragmentedSize";
    return NULL;
}

const char *smbd_get_app(const uint8_t *b, size_t len, struct smbd_app *m)
{
    if (len != SMBD_APP_LEN)
        return "an application message that is not 48 bytes";
    m->command = get16(b);
    m->flags = get16(b + 2);
    m->message_id = get32(b + 4);
    m->status = get32(b + 8);
    m->length = get32(b + 12);
    m->file_offset = get64(b + 16);
    m->channel = get32(b + 24);
    m->n_desc = get32(b + 28);
    m->desc.offset = get64(b + 32);
    m->desc.token = get32(b + 40);
    m->desc.length = get32(b + 44);
    if (m->command != SMBD_APP_READ && m->command != SMBD_APP_WRITE)
        return "an application message that is neither READ nor WRITE";
    if (m->n_desc > 1)
        return "an application message with more than one buffer descriptor";
    return NULL;
}
