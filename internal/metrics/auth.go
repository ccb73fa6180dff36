package metrics

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The secure metrics endpoint asks the API server who a scraper is (TokenReview) and whether it may
// get the path it asked for (SubjectAccessReview), the way an aggregated API server delegates both.
// It does so with the typed clients the manager links anyway: controller-runtime's
// filters.WithAuthenticationAndAuthorization does the same through k8s.io/apiserver, whose
// authenticator and authorizer factories bring CEL, gRPC and OpenTelemetry into the binary and
// double its size.
const (
	// tokenTTL is how long the answer of a TokenReview is kept, either way.
	tokenTTL = time.Minute
	// allowTTL and denyTTL are how long the answer of a SubjectAccessReview is kept.
	allowTTL = 5 * time.Minute
	denyTTL  = 30 * time.Second
	// reviewTimeout bounds one review request.
	reviewTimeout = 10 * time.Second
	// cacheEntries bounds each cache: a flood of made-up tokens costs the API server reviews, never
	// the manager memory.
	cacheEntries = 4096
)

// reviewBackoff spaces the retries of a review that failed on the way (the API server unreachable,
// overloaded or failing), as kube-apiserver's webhook clients do; a refusal is not retried.
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// reviewer asks the API server about a scraper.
type reviewer interface {
	// authenticate is the user the API server knows by token; ok is false when it knows none.
	authenticate(ctx context.Context, token string) (user authenticationv1.UserInfo, ok bool, err error)
	// authorize says whether user may use verb on the non-resource path.
	authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (allowed bool, reason string, err error)
}

// withAuthenticationAndAuthorization is the metrics server's filter provider for secure serving.
// The manager's service account needs create on tokenreviews and subjectaccessreviews; a scraper
// needs get on the non-resource URL /metrics.
func withAuthenticationAndAuthorization(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationv1client.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("the TokenReview client of the metrics endpoint: %w", err)
	}
	authz, err := authorizationv1client.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("the SubjectAccessReview client of the metrics endpoint: %w", err)
	}
	g := newGate(apiReviewer{tokens: authn.TokenReviews(), access: authz.SubjectAccessReviews()}, time.Now)
	return g.filter, nil
}

// apiReviewer reviews through the API server.
type apiReviewer struct {
	tokens authenticationv1client.TokenReviewInterface
	access authorizationv1client.SubjectAccessReviewInterface
}

func (r apiReviewer) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	var out *authenticationv1.TokenReview
	err := retry(ctx, func(ctx context.Context) (err error) {
		out, err = r.tokens.Create(ctx, review, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("TokenReview: %w", err)
	}
	return out.Status.User, out.Status.Authenticated, nil
}

func (r apiReviewer) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}
	if len(user.Extra) > 0 {
		review.Spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range user.Extra {
			review.Spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	var out *authorizationv1.SubjectAccessReview
	err := retry(ctx, func(ctx context.Context) (err error) {
		out, err = r.access.Create(ctx, review, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return false, "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	return out.Status.Allowed, out.Status.Reason, nil
}

// retry calls create, each call bounded by reviewTimeout, until it succeeds, fails for good (the API
// server refused the request) or reviewBackoff is spent.
func retry(ctx context.Context, create func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, reviewBackoff, func(ctx context.Context) (bool, error) {
		callCtx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		last = create(callCtx)
		switch {
		case last == nil:
			return true, nil
		case !retryable(last):
			return false, last
		}
		return false, nil
	})
	if err != nil && last != nil && !errors.Is(err, last) {
		return last
	}
	return err
}

// retryable says whether a failed review may succeed when sent again: not when the API server
// answered with a refusal (a status below 500 other than 429).
func retryable(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError
	}
	return true
}

// gate lets through the requests of scrapers the API server authenticates and authorizes, and
// remembers its answers for a while.
type gate struct {
	reviewer  reviewer
	now       func() time.Time
	tokens    *ttlCache[tokenAnswer]
	decisions *ttlCache[bool]
}

type tokenAnswer struct {
	user          authenticationv1.UserInfo
	authenticated bool
}

func newGate(r reviewer, now func() time.Time) *gate {
	return &gate{reviewer: r, now: now, tokens: newTTLCache[tokenAnswer](cacheEntries), decisions: newTTLCache[bool](cacheEntries)}
}

func (g *gate) filter(log logr.Logger, handler http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearerToken(req)
		if !ok {
			log.V(4).Info("metrics request without a bearer token", "remote", req.RemoteAddr)
			http.Error(w, "Unauthorized: send the bearer token of a service account (or user) the API server knows", http.StatusUnauthorized)
			return
		}
		user, ok, err := g.authenticate(req.Context(), token)
		if err != nil {
			log.Error(err, "cannot authenticate a metrics request: the manager's service account needs create on tokenreviews.authentication.k8s.io")
			http.Error(w, "Authentication failed: the API server did not review the token; see the manager's log", http.StatusInternalServerError)
			return
		}
		if !ok {
			log.V(4).Info("metrics request with a token the API server does not authenticate", "remote", req.RemoteAddr)
			http.Error(w, "Unauthorized: the API server does not authenticate this bearer token", http.StatusUnauthorized)
			return
		}
		verb, path := strings.ToLower(req.Method), req.URL.Path
		allowed, reason, err := g.authorize(req.Context(), user, verb, path)
		if err != nil {
			log.Error(err, "cannot authorize a metrics request: the manager's service account needs create on subjectaccessreviews.authorization.k8s.io",
				"user", user.Username)
			http.Error(w, fmt.Sprintf("Authorization for user %s failed: the API server did not review the access; see the manager's log", user.Username),
				http.StatusInternalServerError)
			return
		}
		if !allowed {
			log.V(4).Info("metrics request denied", "user", user.Username, "verb", verb, "path", path, "reason", reason)
			http.Error(w, fmt.Sprintf("Authorization denied for user %s: it may not %s the non-resource URL %s; bind it to a ClusterRole that allows it",
				user.Username, verb, path), http.StatusForbidden)
			return
		}
		req.Header.Del("Authorization")
		handler.ServeHTTP(w, req)
	}), nil
}

// bearerToken is the token of an "Authorization: Bearer <token>" header.
func bearerToken(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false
	}
	return token, true
}

func (g *gate) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	key := fmt.Sprintf("%x", sha256.Sum256([]byte(token)))
	if a, ok := g.tokens.get(key, g.now()); ok {
		return a.user, a.authenticated, nil
	}
	user, ok, err := g.reviewer.authenticate(ctx, token)
	if err != nil {
		return user, false, err
	}
	g.tokens.put(key, tokenAnswer{user: user, authenticated: ok}, g.now(), tokenTTL)
	return user, ok, nil
}

func (g *gate) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	key := decisionKey(user, verb, path)
	if allowed, ok := g.decisions.get(key, g.now()); ok {
		return allowed, "remembered", nil
	}
	allowed, reason, err := g.reviewer.authorize(ctx, user, verb, path)
	if err != nil {
		return false, "", err
	}
	ttl := denyTTL
	if allowed {
		ttl = allowTTL
	}
	g.decisions.put(key, allowed, g.now(), ttl)
	return allowed, reason, nil
}

// decisionKey is everything a SubjectAccessReview is made of.
func decisionKey(user authenticationv1.UserInfo, verb, path string) string {
	var b strings.Builder
	field := func(s string) { fmt.Fprintf(&b, "%d:%s;", len(s), s) }
	field(user.Username)
	field(user.UID)
	field(verb)
	field(path)
	groups := append([]string(nil), user.Groups...)
	sort.Strings(groups)
	for _, g := range groups {
		field(g)
	}
	b.WriteString("|")
	keys := make([]string, 0, len(user.Extra))
	for k := range user.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field(k)
		for _, v := range user.Extra[k] {
			field(v)
		}
		b.WriteString("|")
	}
	return fmt.Sprintf("%x", sha256.Sum256([]byte(b.String())))
}

// ttlCache keeps at most size values, each until its expiry.
type ttlCache[V any] struct {
	mu      sync.Mutex
	size    int
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value   V
	expires time.Time
}

func newTTLCache[V any](size int) *ttlCache[V] {
	return &ttlCache[V]{size: size, entries: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// put stores value until now+ttl; when the cache is full it first drops what expired, then, if
// it is still full, everything.
func (c *ttlCache[V]) put(key string, value V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.size {
			c.entries = map[string]ttlEntry[V]{}
		}
	}
	c.entries[key] = ttlEntry[V]{value: value, expires: now.Add(ttl)}
}

func (c *ttlCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
