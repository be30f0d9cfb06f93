// The JSON form of a declared support (core/support.h), beside the other records (records.h): a
// Python callable's `support=`, an imported backend's meta.json "support". Every member optional
// (absent: no constraint):
//   {"dtypes": ["fp16", "bf16"], "head_dims": [64, 128], "max_head_dim": 256,
//    "masks": ["none", "causal", "window"], "mask_alignment": "bottom-right" | "top-left",
//    "gqa": true, "backward": true, "seqlen_multiple": 128, "seqlen_free_up_to": 128,
//    "max_seqlen_q": 4096, "max_seqlen_k": 4096, "packed": false, "softcap": false, "alibi": false}
// ("packed", "softcap" or "alibi" absent: false, as for an implementation written before them).
// The reader rejects unknown members, wrong types and an unusable declaration (core/support.h
// validate) with one line (std::invalid_argument) naming the member.
#pragma once

#include "core/json.h"
#include "core/support.h"

namespace flashproof {

void to_json(json::Value& j, const Support& s);
void from_json(const json::Value& j, Support& s);

}  // namespace flashproof
