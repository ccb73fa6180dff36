# virt-launcher: runs libvirt and QEMU for one VMI. The layout follows upstream's
# cmd/virt-launcher/BUILD.bazel; qemu.conf, virtqemud.conf, hooks/qemu and node-labeller.sh are
# KubeVirt's own, taken from the module by hack/images/kubevirt.sh.
ARG BASE_IMAGE
FROM ${BASE_IMAGE}

RUN mkdir -p /usr/lib64/qemu-kvm /var/lib/kubevirt-node-labeller
# /var/run must be the relative link ../run, as in upstream's CentOS Stream image, not Debian's
# absolute /run. For live migration virt-handler reaches this container's /var/run/kubevirt and
# /var/run/libvirt as /proc/<pid>/root/var/run/... (KubeVirt v1.7 pkg/virt-handler/migration-source.go
# and migration-target.go, plain paths, no safepath). The kernel resolves an absolute link met on that
# walk against virt-handler's own root: the migration proxy sockets then land in virt-handler's
# /run/kubevirt (the node's hostPath) and libvirt here fails with "Failed to connect socket to
# '/var/run/kubevirt/migrationproxy/<vmi-uid>-source.sock': No such file or directory".
# hack/kind/README.md, "Live migration on the kind cluster".
RUN ln -sfn ../run /var/run && [ "$(readlink /var/run)" = ../run ]
COPY qemu.conf virtqemud.conf /etc/libvirt/
COPY qemu /etc/libvirt/hooks/qemu
COPY virtqemud /usr/sbin/virtqemud
COPY virt-launcher virt-launcher-monitor virt-freezer virt-probe virt-tail container-disk node-labeller.sh /usr/bin/
# The non-root monitor hands this capability to virtqemud for ports below 1024 (upstream sets it too).
RUN setcap cap_net_bind_service+ep /usr/bin/virt-launcher-monitor

ENTRYPOINT ["/usr/bin/virt-launcher"]
