# The common base of virt-handler and virt-launcher. Debian trixie, because its libvirt 11.3 and
# QEMU 10.0 are close to what KubeVirt v1.7 is built for (libvirt 10.10, QEMU 9.1); bookworm's 9.0
# and 7.2 are too old. BASE_IMAGE is vmbench/debian:trixie (hack/images/debian-base.sh trixie).
ARG BASE_IMAGE=vmbench/debian:trixie
FROM ${BASE_IMAGE}

# uid/gid 107 is KubeVirt's qemu user: the non-root launcher runs as it and disks are owned by it.
# Created first, so that no system user a package adds can take 107.
RUN groupadd --gid 107 qemu && \
    useradd --uid 107 --gid 107 --home-dir /home/qemu --create-home --shell /bin/bash qemu

# Debian ships no virtqemud: libvirtd stands in for it (the virtqemud shim in virt-launcher).
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libvirt-daemon libvirt-daemon-driver-qemu libvirt-daemon-log libvirt-clients \
      qemu-system-x86 qemu-utils ovmf seabios ipxe-qemu swtpm swtpm-tools passt virtiofsd \
      xorriso nftables iptables iproute2 ethtool procps util-linux mount tar kmod libcap2-bin >/dev/null && \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb

# KubeVirt's nsswitch.conf (files first), taken from the module by hack/images/kubevirt.sh.
COPY nsswitch.conf /etc/nsswitch.conf
