package preflight

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The manager's defaults for the flags preflight reads (cmd/manager), for a Deployment that leaves
// them out.
const (
	defaultRunnerImage = "vmbench/runner:dev"
	defaultVMDiskImage = "vmbench/vm-disk:dev"
	defaultPullPolicy  = corev1.PullIfNotPresent
	defaultEmulation   = "allow"
)

// Manager is the installed vmbench manager as its Deployment configures it.
type Manager struct {
	Namespace, Name     string
	RunnerImage, VMDisk string
	PullPolicy          corev1.PullPolicy
	// Emulation is the --emulation flag: allow or forbid.
	Emulation string
	// Available and Replicas are the Deployment's available and desired replicas.
	Available, Replicas int32
}

// ManagerFrom finds the vmbench manager among the Deployments of its namespace: the one whose
// container takes --runner-image, or else the one labelled as vmbench's manager. nil when none is.
func ManagerFrom(deployments []appsv1.Deployment) *Manager {
	var found *appsv1.Deployment
	for i := range deployments {
		d := &deployments[i]
		if managerContainer(d) != nil {
			found = d
			break
		}
		if found == nil && d.Labels["app.kubernetes.io/name"] == "vmbench" && d.Labels["app.kubernetes.io/component"] == "manager" {
			found = d
		}
	}
	if found == nil {
		return nil
	}
	m := &Manager{
		Namespace: found.Namespace, Name: found.Name,
		RunnerImage: defaultRunnerImage, VMDisk: defaultVMDiskImage, PullPolicy: defaultPullPolicy, Emulation: defaultEmulation,
		Available: found.Status.AvailableReplicas, Replicas: 1,
	}
	if found.Spec.Replicas != nil {
		m.Replicas = *found.Spec.Replicas
	}
	c := managerContainer(found)
	if c == nil && len(found.Spec.Template.Spec.Containers) > 0 {
		c = &found.Spec.Template.Spec.Containers[0]
	}
	if c == nil {
		return m
	}
	args := append(append([]string{}, c.Command...), c.Args...)
	for flag, dst := range map[string]*string{"runner-image": &m.RunnerImage, "vm-disk-image": &m.VMDisk, "emulation": &m.Emulation} {
		if v, ok := flagValue(args, flag); ok {
			*dst = v
		}
	}
	if v, ok := flagValue(args, "image-pull-policy"); ok {
		m.PullPolicy = corev1.PullPolicy(v)
	}
	return m
}

func managerContainer(d *appsv1.Deployment) *corev1.Container {
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		if _, ok := flagValue(append(append([]string{}, c.Command...), c.Args...), "runner-image"); ok {
			return c
		}
	}
	return nil
}

// flagValue reads a Go flag from a command line in any of its spellings: -name=v, --name=v,
// -name v, --name v. The last one wins, as with the flag package.
func flagValue(args []string, name string) (string, bool) {
	value, found := "", false
	for i, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		switch {
		case strings.HasPrefix(a, name+"="):
			value, found = strings.TrimPrefix(a, name+"="), true
		case a == name && i+1 < len(args) && len(args[i]) > len(a):
			value, found = args[i+1], true
		}
	}
	return value, found
}

// CheckManager says whether the vmbench manager is installed and available, and with which images.
func CheckManager(m *Manager, managerNamespace string, err error) Check {
	const name = "manager"
	install := "install vmbench (helm install vmbench charts/vmbench -n vmbench-system --create-namespace), or name its namespace with --manager-namespace"
	switch {
	case apierrors.IsForbidden(err):
		return warn(name, fmt.Sprintf("cannot read Deployments in %q: %s; the manager's images cannot be checked", managerNamespace, firstLine(err)),
			"grant list on deployments there, or ask the cluster's admin which images the manager runs")
	case err != nil:
		return warn(name, fmt.Sprintf("cannot read Deployments in %q: %s", managerNamespace, firstLine(err)), "")
	case m == nil:
		return fail(name, fmt.Sprintf("no vmbench manager Deployment in namespace %q: suites would stay Pending", managerNamespace), install)
	}
	images := fmt.Sprintf("runner %s, VM disk %s, pull policy %s", m.RunnerImage, m.VMDisk, m.PullPolicy)
	if m.Available == 0 {
		return fail(name, fmt.Sprintf("%s/%s has no available replica (0 of %d): suites would stay Pending; %s", m.Namespace, m.Name, m.Replicas, images),
			fmt.Sprintf("kubectl -n %s describe deployment %s, and its pods' events and logs", m.Namespace, m.Name))
	}
	return pass(name, fmt.Sprintf("%s/%s available (%d of %d); %s", m.Namespace, m.Name, m.Available, m.Replicas, images))
}
