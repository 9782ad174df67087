/* SPDX-License-Identifier: Apache-2.0 */
// nf_layout.h for C++ translation units: the generated header is C11 and uses
// _Static_assert, which C++ spells static_assert. Include this before any header
// that includes nf_layout.h.
#ifndef NF_LAYOUT_CXX_H
#define NF_LAYOUT_CXX_H
#ifndef _Static_assert
#define _Static_assert static_assert
#endif
#include "nf_layout.h"
#endif
