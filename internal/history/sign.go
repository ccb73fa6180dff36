package history

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A signed record line is the record's JSON object with a first member "sig": the hex HMAC-SHA256,
// under the schedule's history key, of the JSON object without that member, byte for byte. The line
// stays one JSON record, so readers without the key (vmbench history) read it as before.
const (
	sigPrefix = `{"sig":"`
	sigHexLen = 2 * sha256.Size
)

// Reasons a line fails verification.
var (
	// ErrUnsigned: the line carries no signature, as lines written by someone else, or by a vmbench
	// older than signed records, do not.
	ErrUnsigned = errors.New("the line carries no signature")
	// ErrBadSignature: the signature does not match the line, which someone other than the manager
	// wrote or changed.
	ErrBadSignature = errors.New("the line's signature does not match it")
)

// SignLine encodes rec as one signed line under key.
func SignLine(key []byte, rec Record) (string, error) {
	if len(key) == 0 {
		return "", errors.New("signing a history record: no key")
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return "", fmt.Errorf("encoding the record of suite %s: %w", rec.Suite, err)
	}
	return sigPrefix + hex.EncodeToString(lineMAC(key, body)) + `",` + string(body[1:]), nil
}

// VerifyLine decodes a signed line and checks its signature under key: ErrUnsigned or
// ErrBadSignature when it does not verify, a decoding error when it verifies but is no record.
func VerifyLine(key []byte, line string) (Record, error) {
	var rec Record
	rest, ok := strings.CutPrefix(line, sigPrefix)
	if !ok || len(rest) < sigHexLen+2 || rest[sigHexLen:sigHexLen+2] != `",` {
		return rec, ErrUnsigned
	}
	got, err := hex.DecodeString(rest[:sigHexLen])
	if err != nil {
		return rec, ErrBadSignature
	}
	body := "{" + rest[sigHexLen+2:]
	if len(key) == 0 || !hmac.Equal(got, lineMAC(key, []byte(body))) {
		return rec, ErrBadSignature
	}
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		return rec, fmt.Errorf("a signed line is not a history record: %w", err)
	}
	return rec, nil
}

func lineMAC(key, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("vmbench history record\x00"))
	h.Write(body)
	return h.Sum(nil)
}
