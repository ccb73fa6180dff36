# virt-launcher: runs libvirt and QEMU for one VMI. The layout follows upstream's
# cmd/virt-launcher/BUILD.bazel; qemu.conf, virtqemud.conf, hooks/qemu and node-labeller.sh are
# KubeVirt's own, taken from the module by hack/images/kubevirt.sh.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}

RUN mkdir -p /usr/lib64/qemu-kvm /var/lib/kubevirt-node-labeller
COPY qemu.conf virtqemud.conf /etc/libvirt/
COPY qemu /etc/libvirt/hooks/qemu
COPY virtqemud /usr/sbin/virtqemud
COPY virt-launcher virt-launcher-monitor virt-freezer virt-probe virt-tail container-disk node-labeller.sh /usr/bin/
# The non-root monitor hands this capability to virtqemud for ports below 1024 (upstream sets it too).
RUN setcap cap_net_bind_service+ep /usr/bin/virt-launcher-monitor

ENTRYPOINT ["/usr/bin/virt-launcher"]
