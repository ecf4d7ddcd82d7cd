// SPDX-License-Identifier: GPL-2.0-or-later
#include "routes.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace topoaware {

const SwitchLft *Subnet::find_switch(uint64_t guid) const {
  auto it = std::lower_bound(switches.begin(), switches.end(), guid,
                             [](const SwitchLft &s, uint64_t g) { return s.guid < g; });
  return it != switches.end() && it->guid == guid ? &*it : nullptr;
}

const PortLid *Subnet::find_port(uint64_t guid, int port) const {
  auto key = std::make_pair(guid, port);
  auto it = std::lower_bound(ports.begin(), ports.end(), key, [](const PortLid &p, const std::pair<uint64_t, int> &k) {
    return std::make_pair(p.guid, p.port) < k;
  });
  return it != ports.end() && it->guid == guid && it->port == port ? &*it : nullptr;
}

size_t Routes::switch_count() const {
  size_t n = 0;
  for (const auto &s : subnets) n += s.switches.size();
  return n;
}

void Routes::canonicalize() {
  // Two walks of one subnet (from two ports on it) are one subnet: merge subnets sharing a switch.
  std::map<uint64_t, size_t> owner;
  std::vector<Subnet> merged;
  for (auto &sn : subnets) {
    size_t into = merged.size();
    for (const auto &s : sn.switches) {
      auto it = owner.find(s.guid);
      if (it != owner.end()) into = std::min(into, it->second);
    }
    if (into == merged.size()) merged.emplace_back();
    Subnet &m = merged[into];
    for (auto &s : sn.switches) owner[s.guid] = into, m.switches.push_back(std::move(s));
    for (auto &p : sn.ports) m.ports.push_back(std::move(p));
  }
  subnets = std::move(merged);
  for (auto &sn : subnets) {
    std::stable_sort(sn.switches.begin(), sn.switches.end(),
                     [](const SwitchLft &a, const SwitchLft &b) { return a.guid < b.guid; });
    // The same switch read twice (two walks merged): the later reading wins.
    std::vector<SwitchLft> sw;
    for (auto &s : sn.switches) {
      if (!sw.empty() && sw.back().guid == s.guid)
        sw.back() = std::move(s);
      else
        sw.push_back(std::move(s));
    }
    sn.switches = std::move(sw);
    std::stable_sort(sn.ports.begin(), sn.ports.end(), [](const PortLid &a, const PortLid &b) {
      return std::make_pair(a.guid, a.port) < std::make_pair(b.guid, b.port);
    });
    sn.ports.erase(std::unique(sn.ports.begin(), sn.ports.end(),
                               [](const PortLid &a, const PortLid &b) { return a.guid == b.guid && a.port == b.port; }),
                   sn.ports.end());
  }
  subnets.erase(std::remove_if(subnets.begin(), subnets.end(), [](const Subnet &s) { return s.switches.empty(); }),
                subnets.end());
  std::sort(subnets.begin(), subnets.end(),
            [](const Subnet &a, const Subnet &b) { return a.switches.front().guid < b.switches.front().guid; });
}

std::string lft_to_base64(const std::vector<uint8_t> &out) {
  std::string text(4 * ((out.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(&text[0]), out.data(), static_cast<int>(out.size()));
  text.resize(static_cast<size_t>(n));
  return text;
}

std::vector<uint8_t> lft_from_base64(const std::string &text) {
  if (text.size() % 4 != 0) throw std::invalid_argument("LFT is not base64 (length not a multiple of 4)");
  if (text.size() / 4 * 3 > kMaxUnicastLid + 3) throw std::invalid_argument("LFT longer than the unicast LID space");
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
              (c == '=' && i + 2 >= text.size() && (i + 1 == text.size() || text[i + 1] == '='));
    if (!ok) throw std::invalid_argument("LFT is not base64 (character " + std::to_string(i) + ")");
  }
  std::vector<uint8_t> out(text.size() / 4 * 3);
  if (!text.empty()) {
    int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char *>(text.data()),
                            static_cast<int>(text.size()));
    if (n < 0) throw std::invalid_argument("LFT is not base64");
  }
  // EVP_DecodeBlock counts the padding as zero bytes: drop them.
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  out.resize(out.size() - pad);
  if (out.size() > kMaxUnicastLid + 1) throw std::invalid_argument("LFT longer than the unicast LID space");
  return out;
}

}  // namespace topoaware
