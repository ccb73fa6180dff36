package metrics

import (
	"context"
	"encoding/base64"
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

// pad makes the tests' short names into tokens of a plausible length.
const pad = "-0123456789abcdef"

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
		users:   map[string]authenticationv1.UserInfo{"scraper-token-0123456789": scraper, "stranger-token-0123456789": stranger},
		allowed: map[string]bool{scraper.Username + " get /metrics": true},
	}
	g := newGate(f, (&clock{t: time.Unix(1000, 0)}).now, defaultReviewBudget)
	tests := []struct {
		name, method, path, authorization string
		want                              int
		body                              string
	}{
		{"no header", http.MethodGet, "/metrics", "", http.StatusUnauthorized, "bearer token"},
		{"not a bearer token", http.MethodGet, "/metrics", "Basic c2NyYXBlcjpzZWNyZXQ=", http.StatusUnauthorized, "bearer token"},
		{"an empty bearer token", http.MethodGet, "/metrics", "Bearer ", http.StatusUnauthorized, "bearer token"},
		{"an unknown token", http.MethodGet, "/metrics", "Bearer made-up-0123456789abcdef", http.StatusUnauthorized, "does not authenticate"},
		{"a user without the right", http.MethodGet, "/metrics", "Bearer stranger-token-0123456789", http.StatusForbidden, "denied for user " + stranger.Username},
		{"the scraper", http.MethodGet, "/metrics", "Bearer scraper-token-0123456789", http.StatusOK, "metrics"},
		{"the scraper, lower-case scheme", http.MethodGet, "/metrics", "bearer scraper-token-0123456789", http.StatusOK, "metrics"},
		{"the scraper on another path", http.MethodGet, "/debug", "Bearer scraper-token-0123456789", http.StatusForbidden, "may not get the non-resource URL /debug"},
		{"the scraper with another verb", http.MethodPost, "/metrics", "Bearer scraper-token-0123456789", http.StatusForbidden, "may not post"},
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
		users:   map[string]authenticationv1.UserInfo{"s" + pad: scraper, "x" + pad: stranger},
		allowed: map[string]bool{"scraper get /metrics": true},
	}
	c := &clock{t: time.Unix(1000, 0)}
	g := newGate(f, c.now, defaultReviewBudget)
	expect := func(token string, code, authn, authz int) {
		t.Helper()
		if got, _ := serve(t, g, http.MethodGet, "/metrics", "Bearer "+token+pad); got != code {
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
	saved := reviewBackoff
	reviewBackoff = wait.Backoff{Duration: time.Millisecond, Steps: 1}
	t.Cleanup(func() { reviewBackoff = saved })
	f := &fakeReviewer{err: errors.New("connection refused")}
	g := newGate(f, (&clock{t: time.Unix(1000, 0)}).now, defaultReviewBudget)
	for range 2 {
		if code, body := serve(t, g, http.MethodGet, "/metrics", "Bearer t"+pad); code != http.StatusInternalServerError || !strings.Contains(body, "manager's log") {
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

func TestLRUCacheIsBounded(t *testing.T) {
	c := newLRUCache[bool](8)
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
	if !c.has("99") {
		t.Error("an expired value is forgotten before the cache needs its room: a scraper's renewal would not count as known")
	}
}

// TestLRUCacheDropsExpiredFirst protects the scrapers' answers in a full cache: what expired goes
// before anything still valid, and then the least recently used, never the whole cache.
func TestLRUCacheDropsExpiredFirst(t *testing.T) {
	c := newLRUCache[int](8)
	t0 := time.Unix(1000, 0)
	for i := range 4 {
		c.put(fmt.Sprint("valid", i), i, t0, time.Hour)
	}
	for i := range 4 {
		c.put(fmt.Sprint("expiring", i), i, t0.Add(time.Second), time.Second)
	}
	later := t0.Add(time.Minute)
	c.put("new", 0, later, time.Minute)
	for i := range 4 {
		if _, ok := c.get(fmt.Sprint("valid", i), later); !ok {
			t.Errorf("valid%d, still valid though the least recently used, was dropped while expired entries were there", i)
		}
	}
	if c.len() != 5 {
		t.Errorf("%d entries, want the 4 valid and the new one", c.len())
	}

	// Full of valid entries: the least recently used goes, and only it.
	for _, k := range []string{"valid1", "new", "valid0", "valid2", "valid3"} {
		c.get(k, later) // valid1 is now the least recently used
	}
	for i := range 3 {
		c.put(fmt.Sprint("more", i), i, later, time.Minute)
	}
	c.put("one more", 0, later, time.Minute)
	if _, ok := c.get("valid1", later); ok {
		t.Error("valid1, the least recently used, is still there")
	}
	for _, k := range []string{"valid0", "valid2", "valid3", "more0", "more2", "new", "one more"} {
		if _, ok := c.get(k, later); !ok {
			t.Errorf("%s was dropped with the least recently used", k)
		}
	}
}

func TestPlausibleToken(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	jwt := func(header, claims, sig string) string { return b64(header) + "." + b64(claims) + "." + sig }
	for _, tt := range []struct {
		name, token string
		ok          bool
	}{
		{"a service account JWT", jwt(`{"alg":"RS256","kid":"k"}`, `{"iss":"https://kubernetes.default.svc","sub":"system:serviceaccount:monitoring:prometheus"}`, "c2lnbmF0dXJl"), true},
		{"a bootstrap token", "abcdef.0123456789abcdef", true},
		{"an OpenShift token", "sha256~" + strings.Repeat("A1_-", 11), true},
		{"a padded opaque token", "YWJjZGVmZ2hpamtsbW5vcA==", true},
		{"too short", "abc", false},
		{"too long", strings.Repeat("a", maxTokenBytes+1), false},
		{"a space inside", "abcdefgh ijklmnopqrst", false},
		{"a quote", `abcdefghijklmnop"`, false},
		{"padding inside", "abcdefgh==ijklmnop", false},
		{"a JWT with alg none", jwt(`{"alg":"none"}`, `{"sub":"x"}`, "sig"), false},
		{"an unsigned JWT", jwt(`{"alg":"RS256"}`, `{"sub":"x"}`, ""), false},
		{"a JWT whose header is not JSON", "eyJ" + b64("garbage-header") + "." + b64(`{"sub":"x"}`) + ".sig", false},
		{"a JWT whose claims are not JSON", jwt(`{"alg":"RS256"}`, "not json at all", "sig"), false},
	} {
		err := plausibleToken(tt.token)
		if (err == nil) != tt.ok {
			t.Errorf("%s: plausibleToken = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// blockingReviewer is a fakeReviewer whose TokenReviews wait until release is closed.
type blockingReviewer struct {
	*fakeReviewer
	started chan struct{}
	release chan struct{}
}

func (b blockingReviewer) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	b.started <- struct{}{}
	<-b.release
	return b.fakeReviewer.authenticate(ctx, token)
}

// TestGateIsCheapForStrangers protects the API server and the scrapers from a flood of made-up
// tokens (S10): they cost at most the unknown bucket's burst of TokenReviews, malformed ones none,
// a repeated one a single review; the scraper's cached answer survives, and its renewal after the
// flood is reviewed from the bucket strangers cannot spend.
func TestGateIsCheapForStrangers(t *testing.T) {
	scraper := authenticationv1.UserInfo{Username: "scraper"}
	f := &fakeReviewer{
		users:   map[string]authenticationv1.UserInfo{"scraper" + pad: scraper},
		allowed: map[string]bool{"scraper get /metrics": true},
	}
	c := &clock{t: time.Unix(1000, 0)}
	g := newGate(f, c.now, defaultReviewBudget)
	scrape := func(wantAuthn, wantAuthz int) {
		t.Helper()
		if code, body := serve(t, g, http.MethodGet, "/metrics", "Bearer scraper"+pad); code != http.StatusOK {
			t.Fatalf("the scraper: %d %q", code, body)
		}
		if n, z := f.counts(); n != wantAuthn || z != wantAuthz {
			t.Fatalf("after the scrape: %d TokenReviews and %d SubjectAccessReviews, want %d and %d", n, z, wantAuthn, wantAuthz)
		}
	}
	scrape(1, 1)

	// 5000 made-up tokens, 1 ms apart: the burst of the unknown bucket plus its rate over 5 s.
	const flood = 5000
	refused := map[int]int{}
	for i := range flood {
		c.t = c.t.Add(time.Millisecond)
		code, _ := serve(t, g, http.MethodGet, "/metrics", fmt.Sprintf("Bearer made-up-%016x", i))
		refused[code]++
	}
	maxReviews := defaultReviewBudget.unknownBurst + int(defaultReviewBudget.unknownPerSecond*5)
	n, _ := f.counts()
	if reviews := n - 1; reviews > maxReviews || reviews < defaultReviewBudget.unknownBurst {
		t.Errorf("%d made-up tokens cost %d TokenReviews, want %d to %d", flood, reviews, defaultReviewBudget.unknownBurst, maxReviews)
	}
	if refused[http.StatusUnauthorized]+refused[http.StatusTooManyRequests] != flood {
		t.Errorf("made-up tokens answered %v, want only 401 and 429", refused)
	}
	// Within its minute the scraper's answer is still cached: no review.
	scrape(n, 1)

	// Malformed tokens cost no review at all, a repeated unknown token one.
	for i := range flood {
		if code, _ := serve(t, g, http.MethodGet, "/metrics", fmt.Sprintf("Bearer not a token %d", i)); code != http.StatusUnauthorized {
			t.Fatalf("a malformed token: %d, want 401", code)
		}
	}
	c.t = c.t.Add(20 * time.Second) // the unknown bucket refills
	for range flood {
		if code, _ := serve(t, g, http.MethodGet, "/metrics", "Bearer the-same-made-up-token"); code != http.StatusUnauthorized {
			t.Fatalf("a repeated unknown token: %d, want 401", code)
		}
	}
	if n2, _ := f.counts(); n2 != n+1 {
		t.Errorf("%d malformed and %d repeated unknown tokens cost %d TokenReviews, want 1", flood, flood, n2-n)
	}

	// The scraper's answer expires during a flood that has spent the unknown bucket: its renewal
	// is reviewed from the known bucket.
	c.t = c.t.Add(tokenTTL)
	for i := range flood {
		serve(t, g, http.MethodGet, "/metrics", fmt.Sprintf("Bearer other-made-up-%016x", i))
	}
	if code, _ := serve(t, g, http.MethodGet, "/metrics", fmt.Sprintf("Bearer still-made-up-%016x", 0)); code != http.StatusTooManyRequests {
		t.Fatalf("a new made-up token after the flood: %d, want 429 (the unknown bucket is spent)", code)
	}
	before, _ := f.counts()
	scrape(before+1, 1)
}

// TestGateSharesAReview protects the API server from concurrent requests with one token: they wait
// for one TokenReview.
func TestGateSharesAReview(t *testing.T) {
	f := blockingReviewer{fakeReviewer: &fakeReviewer{}, started: make(chan struct{}, 100), release: make(chan struct{})}
	g := newGate(f, (&clock{t: time.Unix(1000, 0)}).now, defaultReviewBudget)
	const n = 50
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _ := serve(t, g, http.MethodGet, "/metrics", "Bearer one-unknown-token"+pad)
			codes <- code
		}()
	}
	<-f.started
	// Let the others reach the flight; those that come after it ended find the cached answer.
	time.Sleep(50 * time.Millisecond)
	close(f.release)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusUnauthorized {
			t.Errorf("a request with the unknown token: %d, want 401", code)
		}
	}
	if got, _ := f.counts(); got != 1 {
		t.Errorf("%d concurrent requests with one token cost %d TokenReviews, want 1", n, got)
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
		if s.code == http.StatusTooManyRequests {
			// API Priority and Fairness asks the client to come back: client-go would do so by
			// itself, up to 10 times, if the reviewer did not turn its retries off.
			w.Header().Set("Retry-After", "1")
		}
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
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: tr.Spec.Token == "good"+pad,
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
	savedBackoff, savedBudget := reviewBackoff, defaultReviewBudget
	reviewBackoff = wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	defaultReviewBudget = reviewBudget{knownPerSecond: 1, knownBurst: 100, unknownPerSecond: 1, unknownBurst: 100}
	t.Cleanup(func() { reviewBackoff, defaultReviewBudget = savedBackoff, savedBudget })
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
		req.Header.Set("Authorization", "Bearer "+token+pad)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}

	// Two failures on the way are retried.
	api.fail, api.code = 2, http.StatusServiceUnavailable
	if code := get("good"); code != http.StatusOK {
		t.Fatalf("an allowed scraper after two 503s: %d; %d requests, reviews %+v", code, api.requests, api.tokens)
	}
	if len(api.tokens) != 1 || api.tokens[0].Spec.Token != "good"+pad {
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

	// API Priority and Fairness answering 429 under load: retried, so that a scrape does not fail
	// for a moment's overload (mutant A1) ...
	before = api.requests
	api.fail, api.code = 2, http.StatusTooManyRequests
	if code := get("a-third"); code != http.StatusUnauthorized {
		t.Errorf("an unknown token after two 429s: %d, want 401", code)
	}
	if n := api.requests - before; n != 3 {
		t.Errorf("a TokenReview answered 429 twice took %d requests, want 3", n)
	}
	// ... but not for ever: at most the backoff's steps, client-go's own Retry-After loop off.
	before = api.requests
	api.fail, api.code = 100, http.StatusTooManyRequests
	if code := get("a-fourth"); code != http.StatusInternalServerError {
		t.Errorf("an API server that keeps answering 429: %d, want 500", code)
	}
	if n := api.requests - before; n != reviewBackoff.Steps {
		t.Errorf("a TokenReview answered 429 each time was sent %d times, want %d", n, reviewBackoff.Steps)
	}
	api.fail = 0
}
