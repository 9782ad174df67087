/* SPDX-License-Identifier: Apache-2.0 */
/* The one table of NTSTATUS names: built from proto/ndk.toml's STATUS list,
 * whose values CI checks against ndkpi.h. */
#include <stdint.h>

#include "nf_error.h"
#include "nf_layout.h"

const char *nf_status_name(NTSTATUS status)
{
    switch ((uint32_t)status) { /* the contract's numbers */
#define NF_STATUS_CASE(name, value) \
    case value: \
        return "STATUS_" #name;
        NF_STATUS_LIST(NF_STATUS_CASE)
#undef NF_STATUS_CASE
    default:
        return "STATUS_(unknown)";
    }
}
