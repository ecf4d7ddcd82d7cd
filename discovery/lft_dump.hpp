// SPDX-License-Identifier: GPL-2.0-or-later
// Reads saved unicast forwarding tables: the output of dump_fts (formerly dump_lfts.sh), of
// ibroute run once per switch (concatenated), and OpenSM's own opensm-lfts.dump (a decimal range,
// "#" before the destination), as admins already collect them. One file holds one
// subnet (dump_fts walks the subnet of one local port); give one file per subnet.
//
//   Unicast lids [0x0-0xc] of switch DR path slid 0; dlid 0; 0,1 guid 0x0002c90200402338 (leaf01):
//     Lid  Out   Destination
//          Port     Info
//   0x0001 001 : (Channel Adapter portguid 0x0002c9020025874d: 'n01 mlx5_0')
//   0x0002 002 : (path #2 out of 2: portguid 0x0002c9020025874d)
//   0x0003 000 : (Switch portguid 0x0002c90200402338: 'leaf01')
//   12 valid lids dumped
//
// Which port owns a LID is read from the destination column when it is there; with -n (no
// destinations), or for a LID the tool could not name, it is found by following the tables over
// the fabric's cables until a switch sends the LID into a CA port (or keeps it: port 0).
#pragma once

#include <istream>
#include <string>
#include <utility>
#include <vector>

#include "fabric.hpp"
#include "ibnetdiscover_parser.hpp"  // ParseError

namespace topoaware {

// What a dump says of one LID's owner (from one switch's destination column).
struct LidNote {
  uint16_t lid = 0;
  uint64_t port_guid = 0;  // 0 if the line named none
  bool base = false;       // "(<type> portguid ...)": the port's base LID (else a "path #k" line)
  int paths = 1;           // "path #k out of n": n = 2^LMC
};

struct LftDump {
  std::vector<SwitchLft> switches;  // in file order; lid = 0 (found by resolve_lft_dump)
  std::vector<LidNote> notes;
  std::string source;
  // Tables whose header's range ends at a LID the table does not list, where that LID starts a
  // 64-LID block: (switch GUID, LID). dump_fts of infiniband-diags 44.0 prints such a range but
  // stops before the last block when it holds only that LID, so the route to it is unknown.
  std::vector<std::pair<uint64_t, uint16_t>> unlisted_top;
};

// Throws ParseError (file:line) on text that is not such a dump, or on a dump with no table.
LftDump parse_lft_dump(std::istream &in, const std::string &filename);
LftDump parse_lft_dump_file(const std::string &path);

// One subnet of routes from a dump and the fabric's cabling (port GUIDs, cables). What could not be
// resolved (a switch the fabric does not have, a LID nobody owns) goes to `problems`.
Subnet resolve_lft_dump(const LftDump &dump, const Fabric &fabric, std::vector<std::string> &problems);

// The CA ports' LIDs found by following the tables over the cables: for every LID some switch
// routes, the CA port a switch finally sends it into (LMC from runs of consecutive LIDs, aligned
// as the subnet manager assigns them). Used where neither a walk nor a dump names the owners;
// LIDs marked in `known` (indexed by LID) are skipped.
std::vector<PortLid> lids_from_tables(const std::vector<SwitchLft> &switches, const Fabric &fabric,
                                      const std::vector<bool> &known = {});
// Each switch's own LID: the one its table keeps (port 0).
void switch_lids_from_tables(std::vector<SwitchLft> &switches);

}  // namespace topoaware
