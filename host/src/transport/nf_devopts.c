/* SPDX-License-Identifier: Apache-2.0 */
/* Device-string options of a started adapter (nf_devopts.h). Pure parsing: nothing is
 * opened or started here, so a bad string fails before anything exists. */
#include "nf_devopts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nf_wire_proto.h"

#define ERR(...) nf_set_error(STATUS_INVALID_PARAMETER, __VA_ARGS__)

int nf_devopts_parse_ipv4(const char *s, uint8_t ip[4], unsigned *prefix)
{
    unsigned v[4];
    char tail[8] = "";
    int n = 0;
    int got = sscanf(s, "%3u.%3u.%3u.%3u%n", &v[0], &v[1], &v[2], &v[3], &n);
    if (got != 4 || n == 0)
        return -1;
    for (int i = 0; i < 4; i++) {
        if (v[i] > 255)
            return -1;
        ip[i] = (uint8_t)v[i];
    }
    /* Digits only between the dots: sscanf's %u would take a sign or spaces. */
    for (const char *p = s; p < s + n; p++)
        if (!isdigit((unsigned char)*p) && *p != '.')
            return -1;
    const char *rest = s + n;
    *prefix = 24;
    if (*rest == '\0')
        return 0;
    if (*rest != '/' || !isdigit((unsigned char)rest[1]) || strlen(rest) > 3)
        return -1;
    snprintf(tail, sizeof(tail), "%s", rest + 1);
    for (const char *p = tail; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    unsigned long pl = strtoul(tail, NULL, 10);
    /* The firmware takes prefixes 8..32 (NET_CONFIG_REQ.netmask). */
    if (pl < 8 || pl > 32)
        return -1;
    *prefix = (unsigned)pl;
    return 0;
}

int nf_devopts_parse_mac(const char *s, uint8_t mac[6])
{
    if (strlen(s) != 17)
        return -1;
    for (int i = 0; i < 6; i++) {
        const char *p = s + 3 * i;
        if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]) || (i < 5 && p[2] != ':'))
            return -1;
        char hex[3] = {p[0], p[1], 0};
        mac[i] = (uint8_t)strtoul(hex, NULL, 16);
    }
    /* NET_CONFIG takes a unicast MAC, not all zero. */
    if (mac[0] & 1)
        return -1;
    for (int i = 0; i < 6; i++)
        if (mac[i])
            return 0;
    return -1;
}

static int parse_prob(const char *s, double *p)
{
    char *end = NULL;
    if (!*s || isspace((unsigned char)*s))
        return -1;
    double v = strtod(s, &end);
    if (*end || !(v >= 0.0 && v <= 1.0))
        return -1;
    *p = v;
    return 0;
}

static int name_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max || s[0] == '.' || s[0] == '-')
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '-')
            return 0;
    return 1;
}

NTSTATUS nf_devopts_parse(const char *text, struct nf_devopts *o)
{
    memset(o, 0, sizeof(*o));
    o->prefix = 24;
    int has_ip = 0;
    char *copy = strdup(text ? text : "");
    if (!copy)
        return nf_set_error(STATUS_INSUFFICIENT_RESOURCES, "out of memory");
    NTSTATUS st = STATUS_SUCCESS;
    unsigned seen = 0; /* one bit per key: a key given twice is an error */
    static const char *const keys[] = {"net", "ip", "mac", NF_WIRE_OPT_LOSS, NF_WIRE_OPT_DUP,
                                       NF_WIRE_OPT_REORDER, NF_WIRE_OPT_CORRUPT, NF_WIRE_OPT_PCAP, "tap"};
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && st == STATUS_SUCCESS; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || eq == item || eq[1] == '\0') {
            st = ERR("device option \"%s\": expected KEY=VALUE", item);
            break;
        }
        *eq = '\0';
        const char *k = item, *v = eq + 1;
        unsigned ki = 0;
        while (ki < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[ki], k) != 0)
            ki++;
        if (ki == sizeof(keys) / sizeof(keys[0])) {
            st = ERR("device option \"%s\": unknown (net, ip, mac, loss, dup, reorder, corrupt, pcap, tap)", k);
            break;
        }
        if (seen & (1u << ki)) {
            st = ERR("device option \"%s\" given twice", k);
            break;
        }
        seen |= 1u << ki;
        if (strcmp(k, "net") == 0) {
            if (!name_ok(v, NF_DEVOPTS_NAME_MAX))
                st = ERR("net=%s: a segment name is 1..%d of A-Z a-z 0-9 _ . - (not starting with . or -)", v,
                         NF_DEVOPTS_NAME_MAX);
            else {
                snprintf(o->net, sizeof(o->net), "%s", v);
                o->has_net = 1;
            }
        } else if (strcmp(k, "ip") == 0) {
            if (nf_devopts_parse_ipv4(v, o->ip, &o->prefix) != 0)
                st = ERR("ip=%s: expected A.B.C.D or A.B.C.D/N with N 8..32", v);
            has_ip = 1;
        } else if (strcmp(k, "mac") == 0) {
            if (nf_devopts_parse_mac(v, o->mac) != 0)
                st = ERR("mac=%s: expected XX:XX:XX:XX:XX:XX, a unicast MAC (first byte even), not all zero", v);
            o->has_mac = 1;
        } else if (strcmp(k, "pcap") == 0) {
            char cwd[PATH_MAX];
            if (v[0] == '/')
                snprintf(o->pcap, sizeof(o->pcap), "%s", v);
            else if (!getcwd(cwd, sizeof(cwd)) ||
                     snprintf(o->pcap, sizeof(o->pcap), "%s/%s", cwd, v) >= (int)sizeof(o->pcap))
                st = ERR("pcap=%s: the path is too long", v);
            /* The hello carries it between commas: neither may appear in it. */
            if (st == STATUS_SUCCESS && (strchr(o->pcap, ',') || strlen(o->pcap) > 512))
                st = ERR("pcap=%s: the path must have no comma and at most 512 characters", v);
        } else if (strcmp(k, "tap") == 0) {
            if (!name_ok(v, NF_DEVOPTS_IFNAME_MAX))
                st = ERR("tap=%s: an interface name is 1..%d of A-Z a-z 0-9 _ . -", v, NF_DEVOPTS_IFNAME_MAX);
            else
                snprintf(o->tap, sizeof(o->tap), "%s", v);
        } else {
            double *p = strcmp(k, NF_WIRE_OPT_LOSS) == 0   ? &o->loss
                        : strcmp(k, NF_WIRE_OPT_DUP) == 0  ? &o->dup
                        : strcmp(k, NF_WIRE_OPT_REORDER) == 0 ? &o->reorder
                                                              : &o->corrupt;
            if (parse_prob(v, p) != 0)
                st = ERR("%s=%s: expected a probability between 0 and 1", k, v);
            o->has_faults = 1;
        }
    }
    free(copy);
    if (st != STATUS_SUCCESS)
        return st;
    /* Empty items ("sim,,net=a") are a typo, not nothing. */
    if (!text || !*text || text[strlen(text) - 1] == ',' || strstr(text, ",,") || text[0] == ',')
        return ERR("device options \"%s\": an empty option", text ? text : "");
    if (!o->has_net)
        return ERR("device options \"%s\": net=NAME is required with any option", text);
    if (!has_ip)
        return ERR("device options \"%s\": ip=A.B.C.D[/N] is required with net=", text);
    return STATUS_SUCCESS;
}

void nf_devopts_port_hello(const struct nf_devopts *o, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
#define ADD(...)                                                                                                       \
    do {                                                                                                               \
        if (n < len)                                                                                                   \
            n += (size_t)snprintf(buf + n, len - n, "%s", n ? "," : "");                                               \
        if (n < len)                                                                                                   \
            n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);                                                      \
    } while (0)
    if (o->has_faults) {
        ADD("%s=%.17g", NF_WIRE_OPT_LOSS, o->loss);
        ADD("%s=%.17g", NF_WIRE_OPT_DUP, o->dup);
        ADD("%s=%.17g", NF_WIRE_OPT_REORDER, o->reorder);
        ADD("%s=%.17g", NF_WIRE_OPT_CORRUPT, o->corrupt);
        ADD("%s=%u", NF_WIRE_OPT_SEED, (unsigned)nf_devopts_mac_seed(o));
    }
    if (o->pcap[0])
        ADD("%s=%s", NF_WIRE_OPT_PCAP, o->pcap);
#undef ADD
}

uint32_t nf_devopts_mac_seed(const struct nf_devopts *o)
{
    /* FNV-1a over "NAME/A.B.C.D": stable across runs and processes. */
    char key[NF_DEVOPTS_NAME_MAX + 24];
    snprintf(key, sizeof(key), "%s/%u.%u.%u.%u", o->net, o->ip[0], o->ip[1], o->ip[2], o->ip[3]);
    uint32_t h = 2166136261u;
    for (const char *p = key; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return h;
}
