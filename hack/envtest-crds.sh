#!/usr/bin/env bash
# Puts the CRDs of vmbench's child kinds into bin/crds for envtest, from the Go module cache:
# - MPIJob: the CRD that ships in github.com/kubeflow/mpi-operator;
# - VirtualMachineInstance, VirtualMachineInstanceMigration and KubeVirt (the cluster's KubeVirt configuration, which vmbench reads):
#   KubeVirt ships no CRD file (virt-operator makes its CRDs in code), so they are generated with
#   controller-gen from the kubevirt.io/api Go types of the pinned version.
# Nothing is committed: both come from the dependencies at build time.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
CONTROLLER_GEN=${CONTROLLER_GEN:?set CONTROLLER_GEN}

out="${BIN}/crds"
mpi_dir=$(cd "${ROOT}" && go list -m -f '{{.Dir}}' github.com/kubeflow/mpi-operator)
kubevirt_version=$(cd "${ROOT}" && go list -m -f '{{.Version}}' kubevirt.io/api)
stamp="${out}/.kubevirt-${kubevirt_version}-vmi-vmim-kubevirt"
[ -f "${stamp}" ] && [ -f "${out}/kubeflow.org_mpijobs.yaml" ] && exit 0

mkdir -p "${out}"
cp "${mpi_dir}/manifests/base/kubeflow.org_mpijobs.yaml" "${out}/"
chmod u+w "${out}/kubeflow.org_mpijobs.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
(cd "${ROOT}" && "${CONTROLLER_GEN}" crd:allowDangerousTypes=true paths=kubevirt.io/api/core/v1 output:crd:dir="${tmp}")
cp "${tmp}/kubevirt.io_virtualmachineinstances.yaml" "${tmp}/kubevirt.io_virtualmachineinstancemigrations.yaml" "${tmp}/kubevirt.io_kubevirts.yaml" "${out}/"
touch "${stamp}"
log "envtest CRDs in ${out}: MPIJob (mpi-operator module), VirtualMachineInstance, VirtualMachineInstanceMigration and KubeVirt (generated from kubevirt.io/api ${kubevirt_version})"
