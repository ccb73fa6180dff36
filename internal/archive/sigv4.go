package archive

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"
)

// AWS Signature Version 4 for S3, header form: every request carries the SHA-256 of its payload in
// x-amz-content-sha256, and the signature covers it, so that a body changed on the way is refused.

const (
	sigAlgorithm = "AWS4-HMAC-SHA256"
	sigService   = "s3"
	amzDate      = "20060102T150405Z"
)

// payloadHash is the hex SHA-256 of a request's body, as x-amz-content-sha256 carries it.
func payloadHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// sign adds x-amz-date, x-amz-content-sha256, the session token if any, and the Authorization
// header to req. Every header already in req.Header is signed, with Host. req.URL's path and query
// must already be in canonical form (uriEncode), as they are sent as they are.
func sign(req *http.Request, payload string, cred Credentials, region string, now time.Time) {
	now = now.UTC()
	req.Header.Set("X-Amz-Date", now.Format(amzDate))
	req.Header.Set("X-Amz-Content-Sha256", payload)
	if cred.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", cred.SessionToken)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	values := map[string]string{"host": host}
	for name, vs := range req.Header {
		trimmed := make([]string, len(vs))
		for i, v := range vs {
			trimmed[i] = strings.Join(strings.Fields(v), " ")
		}
		values[strings.ToLower(name)] = strings.Join(trimmed, ",")
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.Sort(names)
	var headers strings.Builder
	for _, n := range names {
		headers.WriteString(n + ":" + values[n] + "\n")
	}
	signed := strings.Join(names, ";")
	path := req.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	canonical := strings.Join([]string{req.Method, path, req.URL.RawQuery, headers.String(), signed, payload}, "\n")

	day := now.Format("20060102")
	scope := day + "/" + region + "/" + sigService + "/aws4_request"
	sum := sha256.Sum256([]byte(canonical))
	toSign := sigAlgorithm + "\n" + now.Format(amzDate) + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+cred.SecretAccessKey), day)
	for _, part := range []string{region, sigService, "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	signature := hex.EncodeToString(hmacSHA256(key, toSign))
	req.Header.Set("Authorization", sigAlgorithm+" Credential="+cred.AccessKeyID+"/"+scope+",SignedHeaders="+signed+",Signature="+signature)
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// uriEncode percent-encodes s the way SigV4 canonicalises it: every byte but the unreserved
// characters A-Z, a-z, 0-9, '-', '.', '_' and '~', with upper-case hex; '/' is kept when keepSlash
// (object keys in a path), encoded otherwise (query values).
func uriEncode(s string, keepSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		case c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// canonicalQuery is a query in SigV4's canonical form, which is also how it is sent: names sorted,
// names and values encoded by uriEncode.
func canonicalQuery(params map[string]string) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = uriEncode(n, false) + "=" + uriEncode(params[n], false)
	}
	return strings.Join(parts, "&")
}
