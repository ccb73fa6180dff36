// Package preflight tells whether a cluster can run a BenchmarkSuite before anyone waits hours for
// one: the APIs vmbench needs, room on the nodes for a run's members, KVM, the namespace's Pod
// Security level, quotas and limit ranges, shared storage and the images. Every check is a pure
// function over objects read from the cluster (see Cluster), so that it can be tested with fixtures;
// Gather reads them and PullImages creates the only objects preflight ever makes.
package preflight

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Result is the verdict of one check.
type Result string

const (
	// Pass means the check found nothing in the suite's way.
	Pass Result = "pass"
	// Warn means the suite can run, but something deserves attention (emulated VMs, a storage class
	// whose access modes cannot be read, the platforms of a suite not given with -f).
	Warn Result = "warn"
	// Fail means the suite cannot run as it is.
	Fail Result = "fail"
	// Skip means the check could not see what it needs, or does not apply to the suite.
	Skip Result = "skip"
)

// Check is one line of the preflight's table.
type Check struct {
	// Name says what was checked, e.g. "api/mpijobs" or "node/worker-1".
	Name   string `json:"check"`
	Result Result `json:"result"`
	// Detail is what was found, with the figures.
	Detail string `json:"detail"`
	// Action says what to do about a warning or a failure.
	Action string `json:"action,omitempty"`
}

// Report is every check of one preflight, in the order they ran.
type Report []Check

// Failed reports whether any check failed: the suite could not run.
func (r Report) Failed() bool {
	for _, c := range r {
		if c.Result == Fail {
			return true
		}
	}
	return false
}

// Count returns how many checks ended with the result.
func (r Report) Count(result Result) int {
	n := 0
	for _, c := range r {
		if c.Result == result {
			n++
		}
	}
	return n
}

// WriteTable writes the aligned CHECK, RESULT, DETAIL table and a summary line. The action follows
// the detail after " -> ".
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tDETAIL")
	for _, c := range r {
		detail := c.Detail
		if c.Action != "" {
			detail += " -> " + c.Action
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Result, oneLine(detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d pass, %d warn, %d fail, %d skip\n", r.Count(Pass), r.Count(Warn), r.Count(Fail), r.Count(Skip))
	return err
}

// WriteJSON writes the checks as a JSON object with the suite, the namespace and the verdict.
func (r Report) WriteJSON(w io.Writer, suite, namespace string) error {
	out := struct {
		Suite     string  `json:"suite"`
		Namespace string  `json:"namespace"`
		Failed    bool    `json:"failed"`
		Checks    []Check `json:"checks"`
	}{Suite: suite, Namespace: namespace, Failed: r.Failed(), Checks: r}
	if out.Checks == nil {
		out.Checks = []Check{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// oneLine keeps a table row on one line whatever an API server's message holds.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func pass(name, detail string) Check { return Check{Name: name, Result: Pass, Detail: detail} }

func skip(name, detail string) Check { return Check{Name: name, Result: Skip, Detail: detail} }

func warn(name, detail, action string) Check {
	return Check{Name: name, Result: Warn, Detail: detail, Action: action}
}

func fail(name, detail, action string) Check {
	return Check{Name: name, Result: Fail, Detail: detail, Action: action}
}
