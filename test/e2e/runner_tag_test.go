//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
)

// A runner image retagged between two runs of a schedule, as an upgrade that moves to a new tag
// does: the same image (one digest) under a second tag in the registry beside the cluster, and the
// manager restarted with --runner-image naming it.

// runnerImageRefOf is the runner image that a record's container run was created with, as the
// manager's --runner-image wrote it (RunnerImage is the same image by digest, which a second tag
// of the image does not change).
func runnerImageRefOf(env vmbenchv1.RunEnvironment) string { return env.RunnerImageRef }

// historyRunnerImageRef is how `vmbench history` names runnerImageRefOf's field among the
// environment changes: the manager's own name of it (history.EnvironmentChanges).
const historyRunnerImageRef = "runnerImageRef"

// runnerTagChange is the manager's runner image moved to a second tag of the same image.
type runnerTagChange struct {
	from, to string
	// done is when no manager with the first tag ran any more: suites scheduled after it run the
	// second.
	done time.Time
}

// managerDeployment is the manager's Deployment (the chart's release in vmbench-system).
func (e *env) managerDeployment() *appsv1.Deployment {
	deployments := &appsv1.DeploymentList{}
	e.g.Expect(k8s.List(e.ctx, deployments, client.InNamespace("vmbench-system"),
		client.MatchingLabels{"app.kubernetes.io/name": "vmbench"})).To(Succeed())
	e.g.Expect(deployments.Items).To(HaveLen(1), "the manager's Deployment")
	return &deployments.Items[0]
}

// changeRunnerTag pushes the manager's runner image under a second tag (its manifest copied, so
// the digest stays) and restarts the manager with --runner-image naming it. When the test ends the
// manager runs with the first tag again. The second tag stays in the registry until the next
// hack/install.sh, whose prune keeps one tag.
func (e *env) changeRunnerTag() runnerTagChange {
	from := e.managerFlags()["--runner-image"]
	repository, tag, ok := strings.Cut(strings.TrimPrefix(from, localRegistry+"/"), ":")
	e.g.Expect(ok && strings.HasPrefix(from, localRegistry+"/") && !strings.Contains(tag, "@")).To(BeTrue(),
		"the manager's runner image %q is no %s/<repository>:<tag>: hack/install.sh installs it so", from, localRegistry)
	second := tag + "-second"
	e.g.Expect(retag(repository, tag, second)).To(Succeed())
	to := localRegistry + "/" + repository + ":" + second
	e.t.Cleanup(func() {
		if e.t.Failed() {
			e.managerLogs()
		}
		e.t.Logf("%s manager back to runner image %s", time.Now().Format(time.TimeOnly), from)
		e.setRunnerImage(from)
	})
	e.t.Logf("%s manager to runner image %s", time.Now().Format(time.TimeOnly), to)
	e.setRunnerImage(to)
	return runnerTagChange{from: from, to: to, done: time.Now()}
}

// retag gives the manifest of repository:from in the registry beside the cluster the tag to too,
// as `docker tag` and `docker push` would, with the registry's HTTP API: the manifest is read as
// stored and put back unchanged, so both tags name one digest.
func retag(repository, from, to string) error {
	registry := &http.Client{Timeout: 30 * time.Second}
	base := "http://" + localRegistry + "/v2/" + repository + "/manifests/"
	req, err := http.NewRequest(http.MethodGet, base+from, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", strings.Join([]string{"application/vnd.docker.distribution.manifest.v2+json",
		"application/vnd.oci.image.manifest.v1+json", "application/vnd.docker.distribution.manifest.list.v2+json",
		"application/vnd.oci.image.index.v1+json"}, ", "))
	resp, err := registry.Do(req)
	if err != nil {
		return err
	}
	manifest, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", req.URL, resp.Status, manifest)
	}
	digest, mediaType := resp.Header.Get("Docker-Content-Digest"), resp.Header.Get("Content-Type")
	put, err := http.NewRequest(http.MethodPut, base+to, bytes.NewReader(manifest))
	if err != nil {
		return err
	}
	put.Header.Set("Content-Type", mediaType)
	resp, err = registry.Do(put)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT %s: %s: %s", put.URL, resp.Status, body)
	}
	if got := resp.Header.Get("Docker-Content-Digest"); got != digest {
		return fmt.Errorf("PUT %s: the registry stored digest %s, not %s of tag %s", put.URL, got, digest, from)
	}
	return nil
}

// setRunnerImage sets the manager's --runner-image and waits until every manager pod runs with it:
// the manager that ran with another one has exited (and given up its leader lease on the way).
func (e *env) setRunnerImage(image string) {
	flag := "--runner-image=" + image
	e.g.Eventually(func(g Gomega) {
		d := e.managerDeployment()
		args := d.Spec.Template.Spec.Containers[0].Args
		found := false
		for i, a := range args {
			if strings.HasPrefix(a, "--runner-image=") {
				args[i], found = flag, true
			}
		}
		g.Expect(found).To(BeTrue(), "the manager has no --runner-image: %v", args)
		g.Expect(k8s.Update(e.ctx, d)).To(Succeed())
	}, time.Minute, time.Second).Should(Succeed())
	e.g.Eventually(func(g Gomega) {
		d := e.managerDeployment()
		replicas := ptr.Deref(d.Spec.Replicas, 1)
		g.Expect(d.Status.ObservedGeneration).To(BeNumerically(">=", d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(replicas))
		g.Expect(d.Status.AvailableReplicas).To(Equal(replicas))
		pods := &corev1.PodList{}
		g.Expect(k8s.List(e.ctx, pods, client.InNamespace("vmbench-system"),
			client.MatchingLabels{"app.kubernetes.io/name": "vmbench", "app.kubernetes.io/component": "manager"})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(int(replicas)), "manager pods, terminating ones included")
		for _, p := range pods.Items {
			g.Expect(p.Spec.Containers[0].Args).To(ContainElement(flag), "manager pod %s", p.Name)
		}
	}, 5*time.Minute, 2*time.Second).Should(Succeed(), "the manager restarted with %s", flag)
}

// managerLogs logs the manager pods' logs, before a restart replaces them.
func (e *env) managerLogs() {
	pods, err := clientset.CoreV1().Pods("vmbench-system").List(e.ctx,
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=vmbench,app.kubernetes.io/component=manager"})
	if err != nil {
		e.t.Logf("listing the manager's pods: %v", err)
		return
	}
	for _, p := range pods.Items {
		log, _ := clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](300)}).DoRaw(e.ctx)
		e.t.Logf("---- controller log %s (runner image changed) ----\n%s", p.Name, log)
	}
}

// expectRunnerTagChange checks the records of a schedule whose manager moved to a second tag of
// its runner image: the digest is the same in every record; the first record, made before the
// change, has the first tag, and every record of a suite scheduled after it has the second.
func (e *env) expectRunnerTagChange(records []history.Record, change runnerTagChange) {
	digest, after := "", 0
	for i, r := range records {
		var env *vmbenchv1.RunEnvironment
		for j := range r.Environments {
			if r.Environments[j].Platform == vmbenchv1.PlatformContainer {
				env = &r.Environments[j]
			}
		}
		e.g.Expect(env).NotTo(BeNil(), "suite %s records no container environment: %+v", r.Suite, r.Environments)
		e.t.Logf("record of %s, scheduled %s: runner image %s, as written %s", r.Suite, r.Scheduled.Format(time.TimeOnly),
			env.RunnerImage, runnerImageRefOf(*env))
		if i == 0 {
			digest = env.RunnerImage
			e.g.Expect(runnerImageRefOf(*env)).To(Equal(change.from), "suite %s ran before the change", r.Suite)
		}
		e.g.Expect(env.RunnerImage).To(Equal(digest), "suite %s: a second tag of one image, one digest", r.Suite)
		if r.Scheduled.After(change.done) {
			e.g.Expect(runnerImageRefOf(*env)).To(Equal(change.to), "suite %s was scheduled after the change (%s)", r.Suite,
				change.done.Format(time.TimeOnly))
			after++
		}
	}
	e.g.Expect(after).To(BeNumerically(">", 0), "no record of a suite scheduled after the change (%s)", change.done.Format(time.TimeOnly))
}
