# virt-handler: the node agent. passt-repair, qemu-img, nftables and the rest come with the node base;
# the qemu user 107 must exist here too (without it a VMI stays Scheduled: "failed to look up user qemu").
ARG BASE_IMAGE
FROM ${BASE_IMAGE}

COPY virt-handler virt-chroot /usr/bin/

ENTRYPOINT ["/usr/bin/virt-handler"]
