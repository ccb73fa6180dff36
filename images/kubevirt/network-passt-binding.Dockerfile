# The passt network-binding sidecar: a static binary that serves KubeVirt's hook socket itself, so
# no sidecar-shim is needed. Registered in the KubeVirt CR by hack/kind/kubevirt.sh where bridge
# binding cannot work.
FROM scratch

COPY network-passt-binding /network-passt-binding
USER 107

ENTRYPOINT ["/network-passt-binding"]
