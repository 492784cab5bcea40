#!/bin/sh
# 061-specs: every regression spec under spec/, as TAP from `hgc check`.
cd "$(dirname "$0")/.." || exit 1
exec "${HGC:-$PWD/build/hgc}" check spec
