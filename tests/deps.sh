#!/usr/bin/env bash
# Installs the Debian packages listed in tests/debian-packages.txt that are
# missing. As root it runs apt-get; otherwise it prints the exact command
# and fails, so that a build never starts half-equipped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
missing=()
while read -r pkg; do
	case "$pkg" in '' | '#'*) continue ;; esac
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)
	case "$status" in *" installed") ;; *) missing+=("$pkg") ;; esac
done <"$here/debian-packages.txt"
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "mxprof: missing Debian packages; run as root:" >&2
	echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "mxprof: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null ||
	{ echo "mxprof: apt-get install ${missing[*]} failed" >&2; exit 1; }
