package kubeconfig

import (
	"os"
	"path/filepath"
	"testing"
)

const config = `apiVersion: v1
kind: Config
clusters:
- name: kind
  cluster: {server: "https://127.0.0.1:6443"}
- name: prod
  cluster: {server: "https://prod.example:6443"}
users:
- name: admin
  user: {token: secret}
contexts:
- name: kind
  context: {cluster: kind, user: admin}
- name: prod
  context: {cluster: prod, user: admin, namespace: bench}
current-context: kind
`

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, context, namespace string
		wantHost, wantNamespace  string
	}{
		{name: "current context, no namespace", wantHost: "https://127.0.0.1:6443", wantNamespace: "default"},
		{name: "another context and its namespace", context: "prod", wantHost: "https://prod.example:6443", wantNamespace: "bench"},
		{name: "-n wins over the context's namespace", context: "prod", namespace: "other", wantHost: "https://prod.example:6443", wantNamespace: "other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ns, err := Load(path, tt.context, tt.namespace)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantHost || ns != tt.wantNamespace {
				t.Errorf("host %s, namespace %s; want %s, %s", cfg.Host, ns, tt.wantHost, tt.wantNamespace)
			}
		})
	}
	if _, _, err := Load(path, "missing", ""); err == nil {
		t.Error("an unknown context loaded")
	}
	if _, _, err := Load(filepath.Join(t.TempDir(), "absent"), "", ""); err == nil {
		t.Error("an absent kubeconfig loaded")
	}
}
