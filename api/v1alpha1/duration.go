package v1alpha1

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Duration is a length of time written the Go way, such as "90s", "45m" or "1h30m". It is kept as the
// string the user wrote, not decoded into a time.Duration, so that a value the API server once
// stored and Go cannot parse fails only its own suite instead of the decoding of every suite in
// the cluster. The CRD refuses such values (the rule below, and bounds on each field); Parse and
// FirstInvalidValue judge values stored before the rules existed.
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$')",message="must be a duration such as 90s, 45m or 1h30m: a number and a unit h, m or s, without a sign (write a day as 24h)"
type Duration string

// durationSyntax is the CRD's rule on every Duration. Six digits per number and 16 characters keep
// every accepted value below time.Duration's 2562047h, so no value it accepts overflows.
var durationSyntax = regexp.MustCompile(`^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$`)

// DurationOf is d as a Duration, written like time.Duration.String ("30m0s").
func DurationOf(d time.Duration) *Duration {
	s := Duration(d.String())
	return &s
}

// Parse is the duration, or an error that says how to write it.
func (d Duration) Parse() (time.Duration, error) {
	if !durationSyntax.MatchString(string(d)) {
		return 0, fmt.Errorf("%q is not a duration: %s", string(d), durationHint(string(d)))
	}
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: %s", string(d), durationHint(string(d)))
	}
	return v, nil
}

// Duration is the parsed duration, or 0 when it does not parse.
func (d Duration) Duration() time.Duration {
	v, err := d.Parse()
	if err != nil {
		return 0
	}
	return v
}

var daysSyntax = regexp.MustCompile(`^([0-9]{1,5})d$`)

// durationHint says how to write s as a duration, with s's own value where that is easy to see.
func durationHint(s string) string {
	if m := daysSyntax.FindStringSubmatch(s); m != nil {
		days, _ := strconv.Atoi(m[1])
		return fmt.Sprintf("write it as %dh", days*24)
	}
	return "write it as a number and a unit h, m or s without a sign, such as 90s, 45m or 1h30m"
}
