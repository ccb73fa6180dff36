package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// fakeReviewer knows tokens and which users may get which paths, and counts the reviews.
type fakeReviewer struct {
	mu      sync.Mutex
	users   map[string]authenticationv1.UserInfo
	allowed map[string]bool // user name + " " + verb + " " + path
	err     error
	authn   int
	authz   int
	asked   []string
}

func (f *fakeReviewer) authenticate(_ context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.authn++
	if f.err != nil {
		return authenticationv1.UserInfo{}, false, f.err
	}
	u, ok := f.users[token]
	return u, ok, nil
}

func (f *fakeReviewer) authorize(_ context.Context, user authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.authz++
	q := user.Username + " " + verb + " " + path
	f.asked = append(f.asked, q)
	return f.allowed[q], "no RBAC rule", nil
}

func (f *fakeReviewer) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.authn, f.authz
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// serve runs one request through the gate in front of a handler that answers "metrics" and
// reports whether the Authorization header reached it.
func serve(t *testing.T, g *gate, method, path, authorization string) (int, string) {
	t.Helper()
	h, err := g.filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("the token reached the metrics handler")
		}
		_, _ = io.WriteString(w, "metrics")
	}))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(method, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestGateAuthenticatesAndAuthorizes(t *testing.T) {
	scraper := authenticationv1.UserInfo{Username: "system:serviceaccount:monitoring:prometheus", Groups: []string{"system:serviceaccounts"}}
	stranger := authenticationv1.UserInfo{Username: "system:serviceaccount:team:app"}
	f := &fakeReviewer{
		users:   map[string]authenticationv1.UserInfo{"scraper-token": scraper, "stranger-token": stranger},
		allowed: map[string]bool{scraper.Username + " get /metrics": true},
	}
	g := newGate(f, (&clock{t: time.Unix(1000, 0)}).now)
	tests := []struct {
		name, method, path, authorization string
		want                              int
		body                              string
	}{
		{"no header", http.MethodGet, "/metrics", "", http.StatusUnauthorized, "bearer token"},
		{"not a bearer token", http.MethodGet, "/metrics", "Basic c2NyYXBlcjpzZWNyZXQ=", http.StatusUnauthorized, "bearer token"},
		{"an empty bearer token", http.MethodGet, "/metrics", "Bearer ", http.StatusUnauthorized, "bearer token"},
		{"an unknown token", http.MethodGet, "/metrics", "Bearer made-up", http.StatusUnauthorized, "does not authenticate"},
		{"a user without the right", http.MethodGet, "/metrics", "Bearer stranger-token", http.StatusForbidden, "denied for user " + stranger.Username},
		{"the scraper", http.MethodGet, "/metrics", "Bearer scraper-token", http.StatusOK, "metrics"},
		{"the scraper, lower-case scheme", http.MethodGet, "/metrics", "bearer scraper-token", http.StatusOK, "metrics"},
		{"the scraper on another path", http.MethodGet, "/debug", "Bearer scraper-token", http.StatusForbidden, "may not get the non-resource URL /debug"},
		{"the scraper with another verb", http.MethodPost, "/metrics", "Bearer scraper-token", http.StatusForbidden, "may not post"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := serve(t, g, tt.method, tt.path, tt.authorization)
			if code != tt.want || !strings.Contains(body, tt.body) {
				t.Errorf("%s %s with %q: %d %q, want %d with %q", tt.method, tt.path, tt.authorization, code, body, tt.want, tt.body)
			}
		})
	}
	if n, _ := f.counts(); n != 3 {
		t.Errorf("%d TokenReviews for 3 distinct tokens: the answers are not remembered", n)
	}
	want := []string{stranger.Username + " get /metrics", scraper.Username + " get /metrics", scraper.Username + " get /debug", scraper.Username + " post /metrics"}
	if fmt.Sprint(f.asked) != fmt.Sprint(want) {
		t.Errorf("SubjectAccessReviews asked %q, want %q", f.asked, want)
	}
}

func TestGateRemembersAnswersForTheirTime(t *testing.T) {
	scraper := authenticationv1.UserInfo{Username: "scraper"}
	stranger := authenticationv1.UserInfo{Username: "stranger"}
	f := &fakeReviewer{
		users:   map[string]authenticationv1.UserInfo{"s": scraper, "x": stranger},
		allowed: map[string]bool{"scraper get /metrics": true},
	}
	c := &clock{t: time.Unix(1000, 0)}
	g := newGate(f, c.now)
	expect := func(token string, code, authn, authz int) {
		t.Helper()
		if got, _ := serve(t, g, http.MethodGet, "/metrics", "Bearer "+token); got != code {
			t.Fatalf("at %v: %d, want %d", c.t.Sub(time.Unix(1000, 0)), got, code)
		}
		if n, z := f.counts(); n != authn || z != authz {
			t.Fatalf("at %v: %d TokenReviews and %d SubjectAccessReviews, want %d and %d", c.t.Sub(time.Unix(1000, 0)), n, z, authn, authz)
		}
	}
	expect("s", http.StatusOK, 1, 1)
	expect("x", http.StatusForbidden, 2, 2)
	c.t = c.t.Add(29 * time.Second)
	expect("s", http.StatusOK, 2, 2)
	expect("x", http.StatusForbidden, 2, 2)
	// A denial is asked again after 30 s, a token after a minute, an allowance after 5 minutes.
	c.t = c.t.Add(2 * time.Second)
	expect("x", http.StatusForbidden, 2, 3)
	c.t = c.t.Add(30 * time.Second)
	expect("s", http.StatusOK, 3, 3)
	c.t = c.t.Add(4 * time.Minute)
	expect("s", http.StatusOK, 4, 4)
}

func TestGateDoesNotRememberFailures(t *testing.T) {
	f := &fakeReviewer{err: errors.New("connection refused")}
	g := newGate(f, (&clock{t: time.Unix(1000, 0)}).now)
	for range 2 {
		if code, body := serve(t, g, http.MethodGet, "/metrics", "Bearer t"); code != http.StatusInternalServerError || !strings.Contains(body, "manager's log") {
			t.Fatalf("a failed TokenReview: %d %q, want 500 pointing to the log", code, body)
		}
	}
	if n, _ := f.counts(); n != 2 {
		t.Errorf("%d TokenReviews for two requests while the API server fails: a failure was remembered", n)
	}
}

func TestDecisionKeyTellsUsersApart(t *testing.T) {
	base := authenticationv1.UserInfo{Username: "u", UID: "1", Groups: []string{"a", "b"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}
	same := authenticationv1.UserInfo{Username: "u", UID: "1", Groups: []string{"b", "a"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}
	if decisionKey(base, "get", "/metrics") != decisionKey(same, "get", "/metrics") {
		t.Error("the order of the groups changes the key")
	}
	for name, other := range map[string]authenticationv1.UserInfo{
		"another name":  {Username: "v", UID: "1", Groups: []string{"a", "b"}, Extra: base.Extra},
		"another UID":   {Username: "u", UID: "2", Groups: []string{"a", "b"}, Extra: base.Extra},
		"fewer groups":  {Username: "u", UID: "1", Groups: []string{"a"}, Extra: base.Extra},
		"joined groups": {Username: "u", UID: "1", Groups: []string{"ab"}, Extra: base.Extra},
		"other extra":   {Username: "u", UID: "1", Groups: []string{"a", "b"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"w"}}},
		"no extra":      {Username: "u", UID: "1", Groups: []string{"a", "b"}},
	} {
		if decisionKey(base, "get", "/metrics") == decisionKey(other, "get", "/metrics") {
			t.Errorf("%s: same key", name)
		}
	}
	if decisionKey(base, "get", "/metrics") == decisionKey(base, "get", "/metricsx") {
		t.Error("another path: same key")
	}
}

func TestTTLCacheIsBounded(t *testing.T) {
	c := newTTLCache[bool](8)
	now := time.Unix(1000, 0)
	for i := range 100 {
		c.put(fmt.Sprint(i), true, now, time.Minute)
		if c.len() > 8 {
			t.Fatalf("%d entries after %d puts, the bound is 8", c.len(), i+1)
		}
	}
	if _, ok := c.get("99", now); !ok {
		t.Error("the last value put is gone")
	}
	if _, ok := c.get("99", now.Add(time.Minute)); ok {
		t.Error("a value outlived its time")
	}
}

// fakeAPIServer answers TokenReviews and SubjectAccessReviews as the API server would, failing the
// first `fail` requests with status `code`.
type fakeAPIServer struct {
	mu       sync.Mutex
	fail     int
	code     int
	requests int
	tokens   []authenticationv1.TokenReview
	access   []authorizationv1.SubjectAccessReview
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if s.fail > 0 {
		s.fail--
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.code)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Code: int32(s.code), Reason: metav1.StatusReasonUnknown, Message: "injected"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		var tr authenticationv1.TokenReview
		decode(r, &tr)
		s.tokens = append(s.tokens, tr)
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: tr.Spec.Token == "good",
			User: authenticationv1.UserInfo{Username: "scraper", UID: "7", Groups: []string{"g"}, Extra: map[string]authenticationv1.ExtraValue{"scope": {"x"}}}}
		_ = json.NewEncoder(w).Encode(tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		var sar authorizationv1.SubjectAccessReview
		decode(r, &sar)
		s.access = append(s.access, sar)
		sar.Status.Allowed = sar.Spec.User == "scraper"
		_ = json.NewEncoder(w).Encode(sar)
	default:
		http.NotFound(w, r)
	}
}

// decode reads a request body in JSON or protobuf, whichever the client sent.
func decode(r *http.Request, into runtime.Object) {
	body, _ := io.ReadAll(r.Body)
	_, _, _ = scheme.Codecs.UniversalDeserializer().Decode(body, nil, into)
}

func TestAPIReviewerAsksTheAPIServer(t *testing.T) {
	reviewBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	t.Cleanup(func() {
		reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	})
	api := &fakeAPIServer{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	filter, err := withAuthenticationAndAuthorization(&rest.Config{Host: srv.URL}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "metrics") }))
	if err != nil {
		t.Fatal(err)
	}
	get := func(token string) int {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}

	// Two failures on the way are retried.
	api.fail, api.code = 2, http.StatusServiceUnavailable
	if code := get("good"); code != http.StatusOK {
		t.Fatalf("an allowed scraper after two 503s: %d; %d requests, reviews %+v", code, api.requests, api.tokens)
	}
	if len(api.tokens) != 1 || api.tokens[0].Spec.Token != "good" {
		t.Errorf("TokenReviews %+v, want one of the token", api.tokens)
	}
	want := authorizationv1.SubjectAccessReviewSpec{User: "scraper", UID: "7", Groups: []string{"g"},
		Extra: map[string]authorizationv1.ExtraValue{"scope": {"x"}}, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}
	if len(api.access) != 1 || fmt.Sprintf("%+v %+v", api.access[0].Spec, *api.access[0].Spec.NonResourceAttributes) != fmt.Sprintf("%+v %+v", want, *want.NonResourceAttributes) {
		t.Errorf("SubjectAccessReviews %+v, want one of %+v", api.access, want)
	}
	if code := get("bad"); code != http.StatusUnauthorized {
		t.Errorf("an unknown token: %d, want 401", code)
	}

	// A refusal is not retried: the manager may not create reviews.
	before := api.requests
	api.fail, api.code = 5, http.StatusForbidden
	if code := get("other"); code != http.StatusInternalServerError {
		t.Errorf("the manager may not create TokenReviews: %d, want 500", code)
	}
	if n := api.requests - before; n != 1 {
		t.Errorf("a Forbidden TokenReview was sent %d times, want once", n)
	}
	// Failures on the way that do not stop are given up after the backoff's steps.
	before = api.requests
	api.fail, api.code = 100, http.StatusInternalServerError
	if code := get("another"); code != http.StatusInternalServerError {
		t.Errorf("an API server that keeps failing: %d, want 500", code)
	}
	if n := api.requests - before; n != reviewBackoff.Steps {
		t.Errorf("a failing TokenReview was sent %d times, want %d", n, reviewBackoff.Steps)
	}
}
