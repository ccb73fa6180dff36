// Package suitefile reads BenchmarkSuites saved as YAML or JSON: a manifest, or the output of
// kubectl get benchmarksuite -o yaml, alone or in a list.
package suitefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Read decodes a saved suite: one BenchmarkSuite, or a list (kubectl get -o yaml without a
// name) from which name picks one.
func Read(path, name string, stdin io.Reader) (*vmbenchv1.BenchmarkSuite, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	suite, err := Decode(data, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return suite, nil
}

// Decode decodes a suite, or picks the one named name from a list; see Read.
func Decode(data []byte, name string) (*vmbenchv1.BenchmarkSuite, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %v", firstLine(err))
	}
	group := vmbenchv1.GroupVersion.Group + "/"
	switch {
	case head.Kind == "BenchmarkSuite" && strings.HasPrefix(head.APIVersion, group):
		var suite vmbenchv1.BenchmarkSuite
		if err := yaml.Unmarshal(data, &suite); err != nil {
			return nil, fmt.Errorf("not a valid BenchmarkSuite: %v", firstLine(err))
		}
		if name != "" && suite.Name != name {
			return nil, fmt.Errorf("holds suite %q, not %q", suite.Name, name)
		}
		return &suite, nil
	case head.Kind == "List" || head.Kind == "BenchmarkSuiteList":
		var list struct {
			Items []vmbenchv1.BenchmarkSuite `json:"items"`
		}
		if err := yaml.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("not a list of BenchmarkSuites: %v", firstLine(err))
		}
		var names []string
		for i := range list.Items {
			item := &list.Items[i]
			if item.Kind != "" && item.Kind != "BenchmarkSuite" {
				return nil, fmt.Errorf("list item %d is a %s, not a BenchmarkSuite", i, item.Kind)
			}
			if name == item.Name || (name == "" && len(list.Items) == 1) {
				return item, nil
			}
			names = append(names, item.Name)
		}
		if name == "" {
			return nil, fmt.Errorf("holds %d suites (%s); name the one to report", len(list.Items), strings.Join(names, ", "))
		}
		return nil, fmt.Errorf("holds no suite named %q (it has: %s)", name, strings.Join(names, ", "))
	case head.Kind == "":
		return nil, errors.New("not a BenchmarkSuite: no kind field (save one with kubectl get benchmarksuite NAME -o yaml)")
	}
	return nil, fmt.Errorf("not a BenchmarkSuite: kind %q, apiVersion %q", head.Kind, head.APIVersion)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
