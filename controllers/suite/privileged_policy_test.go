package suite

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// N12: what needs the namespace's vmbench.io/privileged-platforms=true is what the admission policy
// gates (a Host platform, a runtimeClassName, a toleration of the control plane's taint), and the
// run is refused when the namespace no longer carries the label.
func TestPrivilegedRunNeedsTheNamespacesLabelNow(t *testing.T) {
	container := vmbenchv1.Platform{Name: "container", Type: vmbenchv1.PlatformContainer}
	host := vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}
	kata := vmbenchv1.Platform{Name: "sandbox", Type: vmbenchv1.PlatformContainer, RuntimeClassName: ptr.To("kata")}
	tolerating := func(key string) *vmbenchv1.BenchmarkSuite {
		s := testSuite()
		s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: key, Operator: corev1.TolerationOpExists}}
		return s
	}
	tests := []struct {
		name     string
		suite    *vmbenchv1.BenchmarkSuite
		platform vmbenchv1.Platform
		label    string
		want     string // "" : the run may start
	}{
		{name: "a container platform needs nothing", suite: testSuite(), platform: container},
		{name: "Host without the label", suite: testSuite(), platform: host, want: "platform host is of type Host"},
		{name: "Host with the label", suite: testSuite(), platform: host, label: "true"},
		{name: "Host with another value", suite: testSuite(), platform: host, label: "yes", want: "platform host is of type Host"},
		{name: "a RuntimeClass without the label", suite: testSuite(), platform: kata, want: "platform sandbox has runtimeClassName kata"},
		{name: "a control-plane toleration without the label", suite: tolerating("node-role.kubernetes.io/control-plane"), platform: container,
			want: "spec.placement.tolerations tolerates node-role.kubernetes.io/control-plane"},
		{name: "another toleration needs nothing", suite: tolerating("dedicated"), platform: container},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tt.suite.Namespace}}
			if tt.label != "" {
				ns.Labels = map[string]string{vmbenchv1.LabelPrivilegedPlatforms: tt.label}
			}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(ns).Build()
			r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New()}
			held, err := r.privilegedRefusal(t.Context(), tt.suite, tt.platform)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if held != nil {
					t.Fatalf("refused: %s", held)
				}
				return
			}
			if held == nil {
				t.Fatalf("the run may start; want it refused with %q", tt.want)
			}
			for _, w := range []string{ReasonPrivilegedPlatformNotAllowed + ": " + tt.want, "namespace bench does not carry that label now",
				"kubectl label namespace bench vmbench.io/privileged-platforms=true"} {
				if !strings.Contains(held.String(), w) {
					t.Errorf("%s\ndoes not say %q", held, w)
				}
			}
		})
	}
}

// N12: a manager that may not read the namespace cannot show the permission, so the Host run is
// not started, and the message says what to grant; another read error is retried, not judged.
func TestPrivilegedRunIsNotStartedWhenTheNamespaceCannotBeRead(t *testing.T) {
	host := vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}
	reading := func(err error) *SuiteReconciler {
		c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return err
			},
		}).Build()
		return &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New()}
	}
	forbidden := apierrors.NewForbidden(corev1.Resource("namespaces"), "bench", errors.New("no RBAC"))
	held, err := reading(forbidden).privilegedRefusal(t.Context(), testSuite(), host)
	if err != nil || held == nil {
		t.Fatalf("forbidden: want the run refused, got %v, %v", held, err)
	}
	for _, w := range []string{ReasonPrivilegedPlatformNotAllowed + ": platform host is of type Host", "vmbench may not read the namespace to check it",
		"grant vmbench's service account get on namespaces"} {
		if !strings.Contains(held.String(), w) {
			t.Errorf("%s\ndoes not say %q", held, w)
		}
	}
	held, err = reading(errors.New("connection refused")).privilegedRefusal(t.Context(), testSuite(), host)
	if held != nil || err == nil || !strings.Contains(err.Error(), "reading namespace bench") {
		t.Errorf("a failed read: want an error to retry, got %v, %v", held, err)
	}
}
