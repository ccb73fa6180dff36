package preflight

import (
	"fmt"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
)

// rwxProvisioners offer ReadWriteMany volumes whatever the class's parameters: file systems shared
// over the network. A class of another provisioner may or may not; the API does not say.
var rwxProvisioners = []string{
	"nfs.csi.k8s.io",
	"cephfs.csi.ceph.com", // also as <operator namespace>.cephfs.csi.ceph.com
	"efs.csi.aws.com",
	"file.csi.azure.com",
	"kubernetes.io/azure-file",
	"filestore.csi.storage.gke.io",
	"k8s-sigs.io/nfs-subdir-external-provisioner",
	"cluster.local/nfs-subdir-external-provisioner",
	"nfs.csi.netapp.com",
	"csi.trident.netapp.io",
	"driver.longhorn.io", // ReadWriteMany through its share manager
	// hack/kind's vmbench-shared class: local-path-provisioner with sharedFileSystemPath, a host
	// directory that every kind node mounts at the same path.
	"vmbench.io/shared-host-path",
}

func knownRWX(provisioner string) bool {
	for _, p := range rwxProvisioners {
		if provisioner == p || strings.HasSuffix(provisioner, "."+p) {
			return true
		}
	}
	return false
}

// CheckSharedStorage says whether the storage class of spec.sharedStorage exists, and whether it is
// known to offer ReadWriteMany, which every pod of a Container or Host run mounting one claim needs.
// VM runs need no class: their master VM exports its disk over NFS.
func CheckSharedStorage(needs Needs, classes []storagev1.StorageClass, classErr error) Check {
	const name = "shared-storage"
	if needs.Shared == nil {
		return skip(name, "no Container or Host platform uses the Shared storage target (VMs share their master's disk over NFS)")
	}
	className := needs.Shared.StorageClassName
	if classErr != nil {
		return warn(name, fmt.Sprintf("cannot read storage classes to find %q: %s", className, firstLine(classErr)),
			"check that the class exists and offers ReadWriteMany")
	}
	var names []string
	for _, c := range classes {
		names = append(names, c.Name)
		if c.Name != className {
			continue
		}
		if knownRWX(c.Provisioner) {
			return pass(name, fmt.Sprintf("storage class %q (%s) offers ReadWriteMany", className, c.Provisioner))
		}
		return warn(name, fmt.Sprintf("storage class %q exists (provisioner %s), but whether it offers ReadWriteMany cannot be read from the API", className, c.Provisioner),
			"make sure it provides ReadWriteMany volumes (NFS, CephFS, a cloud file service): otherwise every run's claim stays Pending (ClaimPending)")
	}
	existing := "there are none"
	if len(names) > 0 {
		existing = "there are: " + list(names, maxNodesInSentence)
	}
	return fail(name, fmt.Sprintf("storage class %q of spec.sharedStorage not found; %s", className, existing),
		"name a ReadWriteMany storage class in spec.sharedStorage.storageClassName, or use the Local target")
}
