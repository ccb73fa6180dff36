package conditions

import (
	"errors"
	"strings"
)

// What every reconciler says in its conditions and events: why something cannot go on, in one line
// of bounded length.

// cause is why a run cannot go on, in the words of the object that says so.
type Cause struct {
	Reason  string
	Message string
	// Terminal causes do not heal by waiting: the run fails at once rather than at its startup
	// limit. Pod Security's refusals are: the namespace's level is an admin's decision.
	Terminal bool
}

func (c *Cause) String() string {
	if c == nil {
		return ""
	}
	return c.Reason + ": " + c.Message
}

func OneLineString(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func OneLine(err error) string {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		parts := make([]string, 0, len(joined.Unwrap()))
		for _, e := range joined.Unwrap() {
			parts = append(parts, e.Error())
		}
		return strings.Join(parts, "; ")
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
