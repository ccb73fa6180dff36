package summary

import (
	"fmt"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/runplan"
)

// What backed the Shared storage target, per platform, as its runs recorded it.

// maxSharedStorage is the longest PlatformSharedStorage.BackedBy the schema admits.
const MaxSharedStorage = 256

// sharedStorageOf says what backed a run's Shared target, from what the run was built with and what
// its runner saw: a Container or Host run's claim and its class, a VM run's NFS server on the master
// VM (none when the runner could not export it), and what the nodes had mounted; the run's own name,
// which its claim and its VMs' addresses carry, is written <run>, so that a platform's runs read
// alike.
func sharedStorageOf(run string, platformType vmbenchv1.PlatformType, claim *vmbenchv1.SharedStorage, started *runplan.Message) string {
	var s string
	switch {
	case platformType == vmbenchv1.PlatformVM && started.SharedServer != "":
		s = fmt.Sprintf("NFSv4.2 export of VM %s (%s)", vmbenchv1.RoleMaster, started.SharedServer)
	case platformType != vmbenchv1.PlatformVM && claim != nil:
		s = fmt.Sprintf("PVC %s of storage class %s (ReadWriteMany)", platform.SharedClaimName(run), claim.StorageClassName)
	default:
		return ""
	}
	if started.SharedMount != "" {
		s += ", mounted as " + started.SharedMount
	}
	return conditions.Truncate(strings.ReplaceAll(s, run, "<run>"), MaxSharedStorage)
}

// recordSharedStorage keeps what backed the Shared target of run's platform, as run recorded it: one
// entry per platform, the latest run's, so that the status holds it once however many runs there are.
func recordSharedStorage(st *vmbenchv1.BenchmarkSuiteStatus, run *vmbenchv1.RunStatus, backedBy string) {
	if backedBy == "" {
		return
	}
	entry := vmbenchv1.PlatformSharedStorage{Platform: run.Platform, BackedBy: backedBy, Run: run.Name}
	for i := range st.SharedStorage {
		if st.SharedStorage[i].Platform == run.Platform {
			st.SharedStorage[i] = entry
			return
		}
	}
	st.SharedStorage = append(st.SharedStorage, entry)
}
