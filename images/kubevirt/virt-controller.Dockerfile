# virt-controller: the Go binary on Debian bookworm, as upstream's user 1001.
ARG BASE_IMAGE=vmbench/debian:bookworm
FROM ${BASE_IMAGE}

COPY . /usr/bin/
USER 1001

ENTRYPOINT ["/usr/bin/virt-controller"]
