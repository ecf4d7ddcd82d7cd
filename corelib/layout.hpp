// SPDX-License-Identifier: GPL-2.0-or-later
// Parallel layout of a training job (tp, cp, ep, dp, pp and the rank order), strict parsing of
// user strings, validation against nodes and a Slurm request, and derivation of the request that
// a layout implies. Shared by the SPANK, job_submit and select plugins (through topoaware_c.h) and
// by the command. No Slurm here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace topoaware {

// The part of a job's request an error is about, so that a plugin can return a Slurm error code
// whose text fits: the layout itself, the node count (-N), the task counts (--ntasks,
// --ntasks-per-node) or the GPUs (--gpus, --gpus-per-node, tp against the nodes' GPUs).
enum class RequestPart : uint8_t { Layout, Nodes, Tasks, Gpus };

// Any problem with a layout or a request; what() says what is wrong and what would work, part()
// which option it is about (never guessed from the wording).
struct LayoutError : std::runtime_error {
  explicit LayoutError(const std::string &what, RequestPart part = RequestPart::Layout)
      : std::runtime_error(what), part_(part) {}
  RequestPart part() const { return part_; }

 private:
  RequestPart part_;
};

enum class RankOrder : uint8_t {
  TpCpEpDpPp,  // Megatron-LM's default: rank = tp + TP*(cp + CP*(dp + DP*pp))
  TpPpDp,      // rank = tp + TP*(cp + CP*(pp + PP*dp)) (cp = 1 gives tp + TP*(pp + PP*dp))
};

// Bounds on user input. 65536 is above any real axis (the largest published runs use dp in the
// thousands) and keeps every product of two axes in 32 bits; 2^24 GPUs (16.7 M) is far above any
// machine and keeps the world size, rank numbers and per-rank tables of the engine small and in
// 32 bits even after multiplying by a per-node GPU count.
inline constexpr uint32_t kMaxAxis = 65536;
inline constexpr uint64_t kMaxWorld = uint64_t(1) << 24;
// GPUs in one NVLink domain (node) accepted at all; the real bound is the partition's count.
inline constexpr uint32_t kMaxGpusPerNode = 1024;
// The longest value of one option (--tp=..., --topo-max-wait=..., plugstack.conf's default_*=) that
// is parsed at all: values come from users' environments; this bounds the work and the messages.
inline constexpr size_t kMaxOptionValue = 255;

struct Layout {
  uint32_t tp = 1, cp = 1, ep = 1, dp = 1, pp = 1;
  RankOrder order = RankOrder::TpCpEpDpPp;
  // GPUs (ranks) of the layout; UINT64_MAX when the product does not fit in 64 bits (four axes of
  // 65536 make exactly 2^64, which would wrap to 0 and pass every "too large" check).
  uint64_t world() const {
    uint64_t w = 1;
    for (const uint32_t axis : {tp, cp, dp, pp})
      if (__builtin_mul_overflow(w, uint64_t(axis), &w)) return UINT64_MAX;
    return w;
  }
  bool operator==(const Layout &o) const {
    return tp == o.tp && cp == o.cp && ep == o.ep && dp == o.dp && pp == o.pp && order == o.order;
  }
};

// Coordinates of one rank. ep is the expert-parallel rank: expert groups are formed from EP
// consecutive members of the combined (cp, dp) index q = cp + CP*dp (Megatron-core folds context
// and data parallelism this way), so ep = q % EP; edp = q / EP is the expert-data-parallel rank.
struct RankCoord {
  uint32_t tp = 0, cp = 0, ep = 0, dp = 0, pp = 0, edp = 0;
};

// "8" -> 8. Decimal digits only: no sign, no spaces, no leading '+', no "0x", no leading zeros
// beyond "0" itself, 1..kMaxAxis. `name` appears in the message ("tp", "pp", ...).
uint32_t parse_axis(std::string_view name, std::string_view text);
RankOrder parse_rank_order(std::string_view text);  // "tp-cp-ep-dp-pp" | "tp-pp-dp"
const char *rank_order_name(RankOrder order);
// Sets one field by its option name: tp, cp, ep, dp, pp, rank-order (also "order").
// Throws LayoutError for an unknown name or a bad value.
void set_layout_option(Layout &layout, std::string_view name, std::string_view value);
// "tp=8,pp=4,dp=16[,cp=..,ep=..,rank-order=..]"; each key at most once; throws LayoutError.
Layout parse_layout(std::string_view spec);
// Canonical text of a layout, parseable by parse_layout ("tp=8,cp=1,ep=1,dp=16,pp=4,rank-order=...").
std::string to_string(const Layout &layout);

// Checks the layout on its own: each axis 1..kMaxAxis, world <= kMaxWorld, ep divides cp*dp.
void validate_layout(const Layout &layout);
// Checks that TP fits one node of `gpus_per_node` GPUs: tp <= gpus_per_node and tp divides it
// (else a node would hold part of a TP group and TP traffic would leave NVLink).
void validate_tp_fits(const Layout &layout, uint32_t gpus_per_node);
// The same where nodes share multi-node NVLink domains (GB200/GB300 NVL72): `domain_nodes` holds
// the node count of each such domain among the nodes in question (domains of one node left out;
// empty: NVLink inside nodes only, the check above). A TP group larger than a node is accepted
// when tp is a multiple of gpus_per_node and some domain splits into whole TP groups (its node
// count a multiple of tp / gpus_per_node, i.e. tp divides the domain's GPUs): its nodes can then
// lie in one domain without stranding part of one. The message of a refusal names the domain
// and the tp values that would work.
void validate_tp_fits(const Layout &layout, uint32_t gpus_per_node, const std::vector<uint32_t> &domain_nodes);
// Nodes one TP group spans on nodes of `gpus_per_node` GPUs: 1 when it fits a node, else
// tp / gpus_per_node (gpus_per_node > 0).
uint32_t tp_group_nodes(const Layout &layout, uint32_t gpus_per_node);

// What a job asks Slurm for. 0 = not given (every real value is >= 1).
struct Request {
  uint32_t nodes = 0;            // -N
  uint32_t gpus_per_node = 0;    // --gpus-per-node
  uint32_t ntasks = 0;           // -n
  uint32_t ntasks_per_node = 0;  // --ntasks-per-node
  uint32_t gpus = 0;             // --gpus (total)
};

// Checks `given` against the layout (one task per GPU, whole TP groups per node) and fills in
// every field that was not given. `node_gpus` is the GPU count of the partition's nodes (0 if
// unknown: then gpus_per_node or nodes must be given or derivable). When neither -N nor
// --gpus-per-node is given, the job uses the largest per-node GPU count that divides node_gpus, is
// a multiple of tp and divides the world size (node_gpus itself when world is a multiple of it).
// Throws LayoutError naming the options, the numbers and a request that would work.
Request complete_request(const Layout &layout, const Request &given, uint32_t node_gpus);
// The same on nodes in multi-node NVLink domains (`domain_nodes` as for validate_tp_fits): a TP
// group may then span the nodes of a domain, and such a job uses all node_gpus GPUs of each node
// (a node holding part of a TP group holds no other rank).
Request complete_request(const Layout &layout, const Request &given, uint32_t node_gpus,
                         const std::vector<uint32_t> &domain_nodes);

}  // namespace topoaware
