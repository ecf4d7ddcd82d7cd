// SPDX-License-Identifier: GPL-2.0-or-later
// A node's GPUs and NICs (probe_node_devices) kept for the rest of the boot, so that a layout step
// does not run hwloc again on every node (about 40 ms of a node's CPU per step; on a busy node
// slurmstepd's other work waits for it). spank_topoaware's root side (slurmstepd, before the step's
// tasks) writes the result as node.<NODE>.devices in its state folder, with the inputs it depends
// on; a later step whose inputs are the same reads it back instead (C API: topoaware_node_devices_load
// in capi/task_c.h). No Slurm here.
#pragma once

#include <string>

#include "hwloc_probe.hpp"

namespace topoaware {

// The largest devices file read back (a node with hundreds of GPUs and NICs stays far below it).
constexpr size_t kMaxDevicesFile = 1u << 20;

// What a probe's result depends on, one item per line: this file format and the build, the kernel's
// boot id, the node, the excluded NICs, the hwloc library and the environment it reads
// (HWLOC_XMLFILE with the identity of that file, HWLOC_FSROOT, HWLOC_COMPONENTS), and the
// InfiniBand devices the kernel has now (a driver loaded after the probe). "" when the boot id
// cannot be read: then nothing is kept in a file.
std::string devices_cache_key(const std::string &node, const ProbeOptions &opts);

// The file's text: {"key": KEY, "devices": {...}} (JSON).
std::string devices_to_text(const std::string &key, const NodeDevices &d);

// Reads a file's text back: true with *out when its key is `key`, false when the key differs.
// Throws std::runtime_error when the text is not such a file.
bool devices_from_text(const std::string &text, const std::string &key, NodeDevices *out);

// "node.<NODE>.devices", or "" when the node name could not be a plain file name (only letters,
// digits, '.', '_' and '-', not starting with '.', at most 128 characters).
std::string devices_file_name(const std::string &node);

// The devices this process loaded (topoaware_node_devices_load) if they were probed with the same
// options, else nullptr: the task plan then takes them instead of probing again.
const NodeDevices *kept_node_devices(const ProbeOptions &opts);

}  // namespace topoaware
