#!/bin/sh
# Print a deb822 deb-src entry for SUITE built from the machine's own Debian
# entry: the same URIs and Signed-By keyring, type deb-src, component main.
# --binary ARCH prints a binary (deb) entry for that architecture instead.
usage="usage: derive-src-entry.sh [--binary ARCH] SUITE [SOURCES_DIR]
  SOURCES_DIR defaults to /etc/apt (reads sources.list and sources.list.d/)."

set -eu
type=deb-src arch=""
if [ "${1:-}" = --binary ]; then
	[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
	type=deb arch=$2
	shift 2
fi
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "$usage" >&2; exit 2; }
suite=$1
etc=${2:-/etc/apt}

# The Debian entry is the first one whose suite is a plain release name (no
# -security or -updates suffix); both deb822 and one-line files are read.
entry=$(
	for f in "$etc"/sources.list.d/*.sources; do
		if [ -f "$f" ]; then awk 'BEGIN { RS = ""; FS = "\n" }
		{
			uris = ""; suites = ""; key = ""; types = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^#/) continue
				split($i, kv, ":[ \t]*")
				k = tolower(kv[1]); v = substr($i, length(kv[1]) + 2)
				sub(/^[ \t]+/, "", v)
				if (k == "uris") uris = v
				else if (k == "suites") suites = v
				else if (k == "signed-by") key = v
				else if (k == "types") types = v
			}
			if (types !~ /deb/ || uris == "") next
			n = split(suites, s, /[ \t]+/)
			for (j = 1; j <= n; j++)
				if (s[j] != "" && s[j] !~ /[-\/]/) { print uris "|" key; exit }
		}' "$f"; fi
	done
	for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
		if [ -f "$f" ]; then awk '$1 == "deb" || $1 == "deb-src" {
			key = ""; i = 2
			if ($2 ~ /^\[/) {
				while (i <= NF) {
					if ($i ~ /signed-by=/) {
						key = $i; sub(/.*signed-by=/, "", key)
						sub(/\]$/, "", key)
					}
					if ($i ~ /\]$/) { i++; break }
					i++
				}
			}
			if ($(i + 1) !~ /[-\/]/) { print $i "|" key; exit }
		}' "$f"; fi
	done | head -n 1
)
entry=$(echo "$entry" | head -n 1)
[ -n "$entry" ] || { echo "derive-src-entry: no Debian entry found in $etc" >&2; exit 1; }
uris=${entry%%|*}
key=${entry#*|}
echo "Types: $type"
echo "URIs: $uris"
echo "Suites: $suite"
echo "Components: main"
[ -z "$arch" ] || echo "Architectures: $arch"
[ -z "$key" ] || echo "Signed-By: $key"
