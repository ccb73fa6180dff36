package archive

import "net/http"

// SetPageSize sets how many keys one ListObjectsV2 request asks for, so that tests page.
func SetPageSize(s *S3, n int) { s.pageSize = n }

// WrapTransport puts wrap around the client's transport, so that tests can change requests after
// they were signed.
func WrapTransport(s *S3, wrap func(http.RoundTripper) http.RoundTripper) {
	s.transport.mu.Lock()
	defer s.transport.mu.Unlock()
	s.transport.next = wrap(s.transport.next)
}
