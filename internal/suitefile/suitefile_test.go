package suitefile

import (
	"strings"
	"testing"
)

const suiteDoc = `apiVersion: vmbench.io/v1alpha1
kind: BenchmarkSuite
metadata:
  name: demo
  namespace: bench
spec:
  repetitions: 2
`

const tablesDoc = `apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-vm-1-tables
  labels:
    vmbench.io/suite: demo
    vmbench.io/tables-of: demo-vm-1
data:
  net.master-node01.csv: |
    start_s,end_s,bits_per_s
    0,1,1000
`

// indent puts a document into a YAML list item.
func indent(doc string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = "- " + lines[i]
		} else {
			lines[i] = "  " + lines[i]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestDecodeAll(t *testing.T) {
	list := "apiVersion: v1\nkind: List\nitems:\n" + indent(suiteDoc) + indent(tablesDoc)
	cmList := "apiVersion: v1\nkind: List\nitems:\n" + indent(tablesDoc) + indent(strings.Replace(tablesDoc, "demo-vm-1-tables", "demo-vm-2-tables", 1))
	tests := []struct {
		name       string
		data       string
		configMaps []string
	}{
		{"a suite alone", suiteDoc, nil},
		{"a suite as JSON", `{"apiVersion": "vmbench.io/v1alpha1", "kind": "BenchmarkSuite", "metadata": {"name": "demo"}}`, nil},
		// kubectl get benchmarksuite,configmap -o yaml
		{"one List of both", list, []string{"demo-vm-1-tables"}},
		// kubectl get benchmarksuite demo -o yaml; echo ---; kubectl get configmap -l ... -o yaml
		{"the suite, then a List of ConfigMaps", suiteDoc + "---\n" + cmList, []string{"demo-vm-1-tables", "demo-vm-2-tables"}},
		{"a leading separator and single documents", "---\n" + tablesDoc + "---\n" + suiteDoc + "---\n", []string{"demo-vm-1-tables"}},
		{"a ConfigMapList without item kinds", suiteDoc + "---\napiVersion: v1\nkind: ConfigMapList\nitems:\n" +
			indent(strings.Replace(strings.Replace(tablesDoc, "apiVersion: v1\n", "", 1), "kind: ConfigMap\n", "", 1)), []string{"demo-vm-1-tables"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved, err := DecodeAll([]byte(tt.data), "")
			if err != nil {
				t.Fatal(err)
			}
			if saved.Suite == nil || saved.Suite.Name != "demo" {
				t.Fatalf("suite %+v", saved.Suite)
			}
			var names []string
			for _, cm := range saved.ConfigMaps {
				names = append(names, cm.Name)
				if len(cm.Data) == 0 {
					t.Errorf("ConfigMap %s lost its data", cm.Name)
				}
			}
			if strings.Join(names, " ") != strings.Join(tt.configMaps, " ") {
				t.Errorf("ConfigMaps %v, want %v", names, tt.configMaps)
			}
			if suite, err := Decode([]byte(tt.data), "demo"); err != nil || suite.Name != "demo" {
				t.Errorf("Decode by name = %v, %v", suite, err)
			}
		})
	}
}

func TestDecodeAllErrors(t *testing.T) {
	tests := []struct {
		name, data, suite, want string
	}{
		{"a ConfigMap alone", tablesDoc, "", `not a BenchmarkSuite: kind "ConfigMap", apiVersion "v1"`},
		{"no kind", "spec:\n  repetitions: 3\n", "", "not a BenchmarkSuite: no kind field"},
		{"empty", "", "", "not a BenchmarkSuite: the file is empty"},
		{"only separators", "---\n---\n", "", "not a BenchmarkSuite: the file is empty"},
		{"a Pod in the list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n", "",
			"list item 0 is a Pod, not a BenchmarkSuite or a ConfigMap"},
		{"a Pod beside the suite", suiteDoc + "---\napiVersion: v1\nkind: Pod\n", "", `not a BenchmarkSuite: kind "Pod", apiVersion "v1"`},
		{"two suites", suiteDoc + "---\n" + strings.Replace(suiteDoc, "name: demo", "name: other", 1), "", "holds 2 suites (demo, other); name the one to report"},
		{"no such suite", suiteDoc, "other", `holds no suite named "other" (it has: demo)`},
		{"a list of nothing", "apiVersion: v1\nkind: List\nitems: []\n", "", "holds no BenchmarkSuite"},
		{"garbage", "\x00\x01: [unclosed\n", "", "not YAML or JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved, err := DecodeAll([]byte(tt.data), tt.suite)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("DecodeAll() = %+v, %v, want an error containing %q", saved, err, tt.want)
			}
		})
	}
}
