# Minimal x86_64 devices for the aio-poll-weight tests and benchmark
# (a build-environment fix; see harness/envfix/10.0.13/README).
CONFIG_I440FX=y
CONFIG_Q35=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_BLK=y
