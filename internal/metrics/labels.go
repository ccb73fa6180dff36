package metrics

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLabelValueBytes caps every label value. Benchmark and platform names are short by the CRD's
// validation; metric names and units come from the tools' output, with the status's limit of 64
// and 16 characters but any content.
const MaxLabelValueBytes = 64

// labelValue makes s a label value Prometheus and a dashboard can live with: valid UTF-8, every
// character that is not printable (control characters, line breaks, invisible formatting) replaced
// by '_', and at most MaxLabelValueBytes bytes, cut at a character boundary. An invalid value would
// fail the whole scrape; a newline or an escape sequence would reach the screens of those who read
// the series.
func labelValue(s string) string {
	var b strings.Builder
	b.Grow(min(len(s), MaxLabelValueBytes))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size <= 1 || !unicode.IsPrint(r) {
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > MaxLabelValueBytes {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
