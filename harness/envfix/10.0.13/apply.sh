#!/bin/sh
# Run in the root of a generated QEMU tree; see README.
exec "$(dirname "$0")/../edk2-standins.sh"
