//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	archivecontroller "github.com/vmbench/vmbench/controllers/archive"
	"github.com/vmbench/vmbench/internal/archive"
)

// The archive in the e2e: make test-e2e runs SeaweedFS in the cluster (hack/kind/archive.sh) and
// installs the chart with archive.s3 pointing at its S3 API, so the manager archives every finished
// suite there, signing with the archive identity's keys. The tests read the objects back from the
// same server through its filer's HTTP API (port "filer" of the Service), which serves the
// bucket's objects under /buckets/<bucket>/, by the API server's service proxy, as they read the
// manager's metrics: no port-forward, and no S3 signature, which the proxy would not pass on.

// archiveFilerPort is the Service port of the e2e's SeaweedFS for its filer's HTTP API.
const archiveFilerPort = "filer"

// archiveSetup is where the manager archives: its --archive-s3-* flags.
type archiveSetup struct {
	endpoint, bucket, prefix string
	// service and namespace are the endpoint's in-cluster Service.
	service, namespace string
}

// archiveOfManager reads the manager's archive flags; the test fails where the install has none.
func (e *env) archiveOfManager() archiveSetup {
	flags := e.managerFlags()
	a := archiveSetup{endpoint: flags["--archive-s3-endpoint"], bucket: flags["--archive-s3-bucket"], prefix: flags["--archive-s3-prefix"]}
	e.g.Expect(a.endpoint).NotTo(BeEmpty(),
		"the manager has no --archive-s3-endpoint: make test-e2e installs it with VMBENCH_E2E_ARCHIVE=1 hack/install.sh, which runs SeaweedFS in the cluster (hack/kind/archive.sh)")
	e.g.Expect(a.bucket).NotTo(BeEmpty(), "the manager has no --archive-s3-bucket")
	u, err := url.Parse(a.endpoint)
	e.g.Expect(err).NotTo(HaveOccurred())
	// http://<service>.<namespace>.svc:<port>
	parts := strings.Split(u.Hostname(), ".")
	e.g.Expect(len(parts)).To(BeNumerically(">=", 3), "archive endpoint %s is no in-cluster Service", a.endpoint)
	e.g.Expect(parts[2]).To(Equal("svc"), "archive endpoint %s is no in-cluster Service", a.endpoint)
	a.service, a.namespace = parts[0], parts[1]
	return a
}

// managerFlags are the manager container's --name=value arguments.
func (e *env) managerFlags() map[string]string {
	flags := map[string]string{}
	for _, a := range e.managerDeployment().Spec.Template.Spec.Containers[0].Args {
		if name, value, ok := strings.Cut(a, "="); ok {
			flags[name] = value
		}
	}
	return flags
}

// archived reads the object key of the archive's bucket from the server; a missing one is an
// error that says 404.
func (e *env) archived(a archiveSetup, key string) ([]byte, error) {
	return clientset.CoreV1().RESTClient().Get().
		AbsPath("/api/v1/namespaces", a.namespace, "services", a.service+":"+archiveFilerPort, "proxy", "buckets", a.bucket, key).
		DoRaw(e.ctx)
}

// archivedNames are the names of the objects in the directory dir of the bucket, from the filer's
// JSON listing.
func (e *env) archivedNames(a archiveSetup, dir string) []string {
	raw, err := clientset.CoreV1().RESTClient().Get().
		AbsPath("/api/v1/namespaces", a.namespace, "services", a.service+":"+archiveFilerPort, "proxy", "buckets", a.bucket, dir).
		Param("limit", "10000").SetHeader("Accept", "application/json").DoRaw(e.ctx)
	e.g.Expect(err).NotTo(HaveOccurred(), "listing %s in bucket %s", dir, a.bucket)
	var listing struct {
		Entries []struct{ FullPath string }
	}
	e.g.Expect(json.Unmarshal(raw, &listing)).To(Succeed(), "the filer's listing of %s: %s", dir, raw)
	var names []string
	for _, entry := range listing.Entries {
		names = append(names, path.Base(entry.FullPath))
	}
	slices.Sort(names)
	return names
}

// expectArchived checks that the finished suite is in the archive as the cluster has it: the
// Archived event names its directory and its number of result tables; suite.json holds the suite,
// its spec and results as the cluster has them; each result-table ConfigMap of the suite is under
// tables/ with the cluster's data, and nothing else is. It returns the suite's directory and its
// number of result tables.
func (e *env) expectArchived(name string) (dir string, tables int) {
	a := e.archiveOfManager()
	suite := &vmbenchv1.BenchmarkSuite{}
	e.g.Expect(k8s.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, suite)).To(Succeed())
	dir = archive.SuiteDir(a.prefix, suite.Namespace, suite.Name, string(suite.UID))

	maps := &corev1.ConfigMapList{}
	e.g.Expect(k8s.List(e.ctx, maps, client.InNamespace(e.ns), client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name},
		client.HasLabels{vmbenchv1.LabelTablesOf})).To(Succeed())
	var tableNames []string
	for _, cm := range maps.Items {
		if owner := metav1.GetControllerOf(&cm); owner != nil && owner.UID == suite.UID {
			tableNames = append(tableNames, cm.Name)
		}
	}
	slices.Sort(tableNames)
	e.t.Logf("suite %s: archive %s, %d result-table ConfigMaps %v", name, dir, len(tableNames), tableNames)

	// The event comes once suite.json is written, the last object.
	want := fmt.Sprintf("s3://%s/%s/ at ", a.bucket, dir)
	e.g.Eventually(func(g Gomega) {
		events, err := clientset.CoreV1().Events(e.ns).List(e.ctx, metav1.ListOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		var notes []string
		for _, ev := range events.Items {
			if ev.InvolvedObject.UID == suite.UID && (ev.Reason == archivecontroller.ReasonArchived || ev.Reason == archivecontroller.ReasonArchiveFailed) {
				notes = append(notes, ev.Reason+": "+ev.Message)
			}
		}
		g.Expect(notes).To(ContainElement(And(HavePrefix(archivecontroller.ReasonArchived+": results archived to "+want),
			HaveSuffix(fmt.Sprintf(": suite.json and %d result-table ConfigMaps", len(tableNames))))), "the suite's archive events")
	}, 2*time.Minute, 2*time.Second).Should(Succeed())

	raw, err := e.archived(a, archive.SuiteKey(dir))
	e.g.Expect(err).NotTo(HaveOccurred(), "reading %s back", archive.SuiteKey(dir))
	got := &vmbenchv1.BenchmarkSuite{}
	e.g.Expect(json.Unmarshal(raw, got)).To(Succeed())
	e.g.Expect(got.APIVersion).To(Equal(vmbenchv1.GroupVersion.String()))
	e.g.Expect(got.Kind).To(Equal("BenchmarkSuite"))
	e.g.Expect(got.UID).To(Equal(suite.UID))
	e.g.Expect(got.ManagedFields).To(BeEmpty(), "the archive leaves managedFields out")
	e.g.Expect(got.Status.Phase).To(Equal(suite.Status.Phase))
	for field, pair := range map[string][2]any{
		"spec": {got.Spec, suite.Spec}, "status.results": {got.Status.Results, suite.Status.Results},
		"status.ratios": {got.Status.Ratios, suite.Status.Ratios}, "status.environments": {got.Status.Environments, suite.Status.Environments},
		"status.parametersHash": {got.Status.ParametersHash, suite.Status.ParametersHash},
	} {
		archivedJSON, err := json.Marshal(pair[0])
		e.g.Expect(err).NotTo(HaveOccurred())
		clusterJSON, err := json.Marshal(pair[1])
		e.g.Expect(err).NotTo(HaveOccurred())
		e.g.Expect(archivedJSON).To(MatchJSON(clusterJSON), "the archived suite's %s", field)
	}

	var wantFiles []string
	for _, cm := range maps.Items {
		if !slices.Contains(tableNames, cm.Name) {
			continue
		}
		wantFiles = append(wantFiles, cm.Name+".json")
		raw, err := e.archived(a, archive.TableKey(dir, cm.Name))
		e.g.Expect(err).NotTo(HaveOccurred(), "reading %s back", archive.TableKey(dir, cm.Name))
		got := &corev1.ConfigMap{}
		e.g.Expect(json.Unmarshal(raw, got)).To(Succeed())
		e.g.Expect(got.Kind).To(Equal("ConfigMap"))
		e.g.Expect(got.UID).To(Equal(cm.UID), "ConfigMap %s", cm.Name)
		e.g.Expect(got.Data).To(Equal(cm.Data), "ConfigMap %s", cm.Name)
		e.g.Expect(got.BinaryData).To(Equal(cm.BinaryData), "ConfigMap %s", cm.Name)
	}
	slices.Sort(wantFiles)
	if len(wantFiles) > 0 {
		e.g.Expect(e.archivedNames(a, path.Join(dir, "tables"))).To(Equal(wantFiles), "the archive's tables of %s", name)
	}
	wantTop := []string{archive.SuiteFile}
	if len(wantFiles) > 0 {
		wantTop = append(wantTop, "tables")
	}
	e.g.Expect(e.archivedNames(a, dir)).To(ConsistOf(wantTop), "the archive's directory of %s", name)
	return dir, len(wantFiles)
}

// expectStillArchived checks that the suite of the archive directory dir, deleted from the cluster,
// is still in the archive.
func (e *env) expectStillArchived(dir string, uid string) {
	a := e.archiveOfManager()
	raw, err := e.archived(a, archive.SuiteKey(dir))
	e.g.Expect(err).NotTo(HaveOccurred(), "reading %s back after the suite was deleted", archive.SuiteKey(dir))
	got := &vmbenchv1.BenchmarkSuite{}
	e.g.Expect(json.Unmarshal(raw, got)).To(Succeed())
	e.g.Expect(string(got.UID)).To(Equal(uid))
}
