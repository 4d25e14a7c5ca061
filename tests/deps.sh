#!/usr/bin/env bash
# Installs the Debian packages listed in tests/debian-packages.txt that are
# missing. As root it runs apt-get; otherwise it prints the exact command
# and fails, so that a build never starts half-equipped. Then npm's
# playwright-core, into $BUILD/npm (see the end).
set -u
here=$(cd "$(dirname "$0")" && pwd)
missing=()
while read -r pkg; do
	case "$pkg" in '' | '#'*) continue ;; esac
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)
	case "$status" in *" installed") ;; *) missing+=("$pkg") ;; esac
done <"$here/debian-packages.txt"
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "mxprof: missing Debian packages; run as root:" >&2
		echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
	echo "mxprof: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null && apt-get install -y -qq "${missing[@]}" >/dev/null ||
		{ echo "mxprof: apt-get install ${missing[*]} failed" >&2; exit 1; }
fi
# playwright-core (npm), which drives Chromium in the test of the HTML page
# (tests/integration/report_html.sh), goes into the build folder; without
# it that test skips its browser part, so a failure here is a warning.
pw=$here/../${BUILD:-build}/npm
# Debian's nodejs comes without npm (NodeSource's has it: then Debian's npm
# package conflicts with it), so npm is installed only where it is missing.
if ! command -v npm >/dev/null && [ "$(id -u)" -eq 0 ]; then
	apt-get install -y -qq npm >/dev/null 2>&1 || echo "mxprof: apt-get install npm failed" >&2
fi
if [ ! -f "$pw/node_modules/playwright-core/package.json" ] && command -v npm >/dev/null; then
	mkdir -p "$pw" && npm install --prefix "$pw" --no-audit --no-fund --silent \
		playwright-core@1.65.1 >/dev/null 2>&1 ||
		echo "mxprof: npm install playwright-core failed; report_html skips its browser part" >&2
fi
exit 0
