# SPDX-License-Identifier: GPL-2.0-or-later
# Debian helpers shared by tools/fresh-root.sh and tests/lib/trixie.sh. Sourced, not run.

# The mirror this machine uses for Debian (first URIs of its Debian entry, not the security one),
# else deb.debian.org: debootstrap roots get their packages where this machine gets its own.
ta_debian_mirror() {
  local m=""
  if [ -r /etc/apt/sources.list.d/debian.sources ]; then
    m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources |
        grep -v security | head -n1)
  elif [ -r /etc/apt/sources.list ]; then
    m=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
        /etc/apt/sources.list)
  fi
  echo "${m:-http://deb.debian.org/debian}"
}
