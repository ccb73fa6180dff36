# The vmbench manager. The binary is built on the host (`make build`), so that the same Dockerfile
# works offline on a base image made from Debian packages (hack/) and online on the public one.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
COPY bin/manager /usr/local/bin/manager
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/manager"]
