// Package suitefile reads BenchmarkSuites saved as YAML or JSON: a manifest, or the output of
// kubectl get benchmarksuite -o yaml, alone or in a list; with the suite's ConfigMaps beside it, in
// the same list or in further YAML documents, as
//
//	kubectl get benchmarksuite demo -o yaml; echo ---; kubectl get configmap -l vmbench.io/suite=demo -o yaml
//
// gives them.
package suitefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Saved is what a file holds: one suite, and the ConfigMaps saved with it (its result tables among
// them, and anything else; package tables picks the suite's).
type Saved struct {
	Suite      *vmbenchv1.BenchmarkSuite
	ConfigMaps []corev1.ConfigMap
}

// Read decodes a saved suite: one BenchmarkSuite, or a list (kubectl get -o yaml without a
// name) from which name picks one.
func Read(path, name string, stdin io.Reader) (*vmbenchv1.BenchmarkSuite, error) {
	saved, err := ReadAll(path, name, stdin)
	if err != nil {
		return nil, err
	}
	return saved.Suite, nil
}

// ReadAll is Read that keeps the ConfigMaps of the file too.
func ReadAll(path, name string, stdin io.Reader) (Saved, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return Saved{}, err
	}
	saved, err := DecodeAll(data, name)
	if err != nil {
		return Saved{}, fmt.Errorf("%s: %w", path, err)
	}
	return saved, nil
}

// Decode decodes a suite, or picks the one named name from a list; see Read.
func Decode(data []byte, name string) (*vmbenchv1.BenchmarkSuite, error) {
	saved, err := DecodeAll(data, name)
	if err != nil {
		return nil, err
	}
	return saved.Suite, nil
}

type head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// DecodeAll decodes every YAML document (or the JSON) of data: BenchmarkSuites, ConfigMaps, and
// lists of them (List, BenchmarkSuiteList, ConfigMapList); it picks the suite named name, or the
// only one, and keeps every ConfigMap.
func DecodeAll(data []byte, name string) (Saved, error) {
	docs, err := documents(data)
	if err != nil {
		return Saved{}, err
	}
	var suites []*vmbenchv1.BenchmarkSuite
	var saved Saved
	var other *head
	group := vmbenchv1.GroupVersion.Group + "/"
	for _, doc := range docs {
		var h head
		if err := yaml.Unmarshal(doc, &h); err != nil {
			return Saved{}, fmt.Errorf("not YAML or JSON: %v", firstLine(err))
		}
		switch {
		case h.Kind == "BenchmarkSuite" && strings.HasPrefix(h.APIVersion, group):
			var suite vmbenchv1.BenchmarkSuite
			if err := yaml.Unmarshal(doc, &suite); err != nil {
				return Saved{}, fmt.Errorf("not a valid BenchmarkSuite: %v", firstLine(err))
			}
			suites = append(suites, &suite)
		case h.Kind == "ConfigMap" && h.APIVersion == "v1":
			var cm corev1.ConfigMap
			if err := yaml.Unmarshal(doc, &cm); err != nil {
				return Saved{}, fmt.Errorf("not a valid ConfigMap: %v", firstLine(err))
			}
			saved.ConfigMaps = append(saved.ConfigMaps, cm)
			if other == nil {
				other = &h
			}
		case h.Kind == "List" || h.Kind == "BenchmarkSuiteList" || h.Kind == "ConfigMapList":
			inList, cms, err := listItems(doc, h.Kind)
			if err != nil {
				return Saved{}, err
			}
			suites = append(suites, inList...)
			saved.ConfigMaps = append(saved.ConfigMaps, cms...)
		case h.Kind == "":
			return Saved{}, errors.New("not a BenchmarkSuite: no kind field (save one with kubectl get benchmarksuite NAME -o yaml)")
		default:
			return Saved{}, fmt.Errorf("not a BenchmarkSuite: kind %q, apiVersion %q", h.Kind, h.APIVersion)
		}
	}
	var names []string
	for _, s := range suites {
		if name == s.Name || (name == "" && len(suites) == 1) {
			saved.Suite = s
			return saved, nil
		}
		names = append(names, s.Name)
	}
	switch {
	case len(suites) == 0 && other != nil:
		return Saved{}, fmt.Errorf("not a BenchmarkSuite: kind %q, apiVersion %q", other.Kind, other.APIVersion)
	case len(suites) == 0:
		return Saved{}, errors.New("holds no BenchmarkSuite (save one with kubectl get benchmarksuite NAME -o yaml)")
	case name == "":
		return Saved{}, fmt.Errorf("holds %d suites (%s); name the one to report", len(suites), strings.Join(names, ", "))
	}
	return Saved{}, fmt.Errorf("holds no suite named %q (it has: %s)", name, strings.Join(names, ", "))
}

// listItems reads the BenchmarkSuites and ConfigMaps of a list; an item without a kind is a
// ConfigMap in a ConfigMapList, else a BenchmarkSuite.
func listItems(doc []byte, kind string) ([]*vmbenchv1.BenchmarkSuite, []corev1.ConfigMap, error) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(doc, &list); err != nil {
		return nil, nil, fmt.Errorf("not a list of BenchmarkSuites: %v", firstLine(err))
	}
	var suites []*vmbenchv1.BenchmarkSuite
	var cms []corev1.ConfigMap
	for i, raw := range list.Items {
		var h head
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, nil, fmt.Errorf("list item %d: %v", i, firstLine(err))
		}
		itemKind := h.Kind
		if itemKind == "" {
			itemKind = "BenchmarkSuite"
			if kind == "ConfigMapList" {
				itemKind = "ConfigMap"
			}
		}
		switch itemKind {
		case "BenchmarkSuite":
			var s vmbenchv1.BenchmarkSuite
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, nil, fmt.Errorf("list item %d is not a valid BenchmarkSuite: %v", i, firstLine(err))
			}
			suites = append(suites, &s)
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := json.Unmarshal(raw, &cm); err != nil {
				return nil, nil, fmt.Errorf("list item %d is not a valid ConfigMap: %v", i, firstLine(err))
			}
			cms = append(cms, cm)
		default:
			return nil, nil, fmt.Errorf("list item %d is a %s, not a BenchmarkSuite or a ConfigMap", i, itemKind)
		}
	}
	return suites, cms, nil
}

// documents splits YAML into its documents, each as JSON; JSON is one document. Empty documents
// (a leading ---) are passed over.
func documents(data []byte) ([][]byte, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var docs [][]byte
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not YAML or JSON: %v", firstLine(err))
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		docs = append(docs, raw)
	}
	if len(docs) == 0 {
		return nil, errors.New("not a BenchmarkSuite: the file is empty (save one with kubectl get benchmarksuite NAME -o yaml)")
	}
	return docs, nil
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
