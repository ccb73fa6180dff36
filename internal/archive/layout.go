package archive

import (
	"path"
	"strings"
)

// The archive's layout, below an optional prefix:
//
//	<prefix>/<namespace>/<suite>/<suite-uid>/tables/<configmap>.json   one per result-table ConfigMap
//	<prefix>/<namespace>/<suite>/<suite-uid>/suite.json                 the suite with its status
//
// The UID keeps apart suites of one name made one after the other. The tables are written first
// and suite.json last, so that a suite.json means the suite's archive is whole.

// SuiteFile is the name of the suite's object in its directory.
const SuiteFile = "suite.json"

// SuiteDir is the directory of one suite's archive.
func SuiteDir(prefix, namespace, suite, uid string) string {
	parts := []string{namespace, suite, uid}
	if p := strings.Trim(prefix, "/"); p != "" {
		parts = append([]string{p}, parts...)
	}
	return strings.Join(parts, "/")
}

// SuiteKey is the key of a suite's suite.json.
func SuiteKey(dir string) string { return path.Join(dir, SuiteFile) }

// TableKey is the key of one result-table ConfigMap of a suite.
func TableKey(dir, configMap string) string { return path.Join(dir, "tables", configMap+".json") }
