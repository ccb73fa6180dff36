#!/usr/bin/env bash
# Puts the CRDs of vmbench's child kinds into bin/crds for envtest, from the Go module cache:
# - MPIJob: the CRD that ships in github.com/kubeflow/mpi-operator;
# - VirtualMachineInstance, VirtualMachineInstanceMigration and KubeVirt (the cluster's KubeVirt configuration, which vmbench reads),
#   and MigrationPolicy (migrations.kubevirt.io, which a VM platform's vm.migrationPolicy makes):
#   KubeVirt ships no CRD file (virt-operator makes its CRDs in code), so they are generated with
#   controller-gen from the kubevirt.io/api Go types of the pinned version. The MigrationPolicy types
#   carry no kubebuilder scope marker (only +genclient:nonNamespaced), so its CRD is made
#   cluster-scoped here, as virt-operator makes it.
# Nothing is committed: both come from the dependencies at build time.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
CONTROLLER_GEN=${CONTROLLER_GEN:?set CONTROLLER_GEN}

out="${BIN}/crds"
mpi_dir=$(cd "${ROOT}" && go list -m -f '{{.Dir}}' github.com/kubeflow/mpi-operator)
kubevirt_version=$(cd "${ROOT}" && go list -m -f '{{.Version}}' kubevirt.io/api)
stamp="${out}/.kubevirt-${kubevirt_version}-vmi-vmim-kubevirt-migrationpolicy"
[ -f "${stamp}" ] && [ -f "${out}/kubeflow.org_mpijobs.yaml" ] && exit 0

mkdir -p "${out}"
cp "${mpi_dir}/manifests/base/kubeflow.org_mpijobs.yaml" "${out}/"
chmod u+w "${out}/kubeflow.org_mpijobs.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
(cd "${ROOT}" && "${CONTROLLER_GEN}" crd:allowDangerousTypes=true paths=kubevirt.io/api/core/v1 output:crd:dir="${tmp}")
cp "${tmp}/kubevirt.io_virtualmachineinstances.yaml" "${tmp}/kubevirt.io_virtualmachineinstancemigrations.yaml" "${tmp}/kubevirt.io_kubevirts.yaml" "${out}/"
(cd "${ROOT}" && "${CONTROLLER_GEN}" crd paths=kubevirt.io/api/migrations/v1alpha1 output:crd:dir="${tmp}/migrations")
sed 's/^  scope: Namespaced$/  scope: Cluster/' "${tmp}/migrations/migrations.kubevirt.io_migrationpolicies.yaml" >"${out}/migrations.kubevirt.io_migrationpolicies.yaml"
grep -q '^  scope: Cluster$' "${out}/migrations.kubevirt.io_migrationpolicies.yaml"
touch "${stamp}"
log "envtest CRDs in ${out}: MPIJob (mpi-operator module), VirtualMachineInstance, VirtualMachineInstanceMigration, KubeVirt and MigrationPolicy (generated from kubevirt.io/api ${kubevirt_version})"
