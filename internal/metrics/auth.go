package metrics

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
//
// Anyone who reaches the port can send a bearer token, so a stranger must not cost the API server a
// review per request, nor push the scrapers' answers out of the caches:
//   - a token that is not shaped like one is refused before any review;
//   - the answers "not authenticated" and "denied" live in caches of their own, so a flood of them
//     never evicts a scraper's "yes";
//   - concurrent requests with one token share one review;
//   - reviews are spent from two token buckets: one for tokens and decisions the API server said yes
//     to before (the scrapers' renewals), one for everything else, so strangers can spend only the
//     second. A request past the budget is answered 429 without a review.
const (
	// tokenTTL is how long the answer of a TokenReview is kept, either way.
	tokenTTL = time.Minute
	// allowTTL and denyTTL are how long the answer of a SubjectAccessReview is kept.
	allowTTL = 5 * time.Minute
	denyTTL  = 30 * time.Second
	// reviewTimeout bounds one review request.
	reviewTimeout = 10 * time.Second
	// cacheEntries bounds each cache: a flood of made-up tokens costs neither the API server
	// unbounded reviews nor the manager unbounded memory.
	cacheEntries = 4096
	// minTokenBytes and maxTokenBytes bound a plausible bearer token: a service account's JWT is
	// about a kilobyte, a bootstrap token 23 bytes.
	minTokenBytes = 16
	maxTokenBytes = 16 << 10
)

// reviewBudget is how many reviews a second (and at once) each bucket allows; tests change it.
type reviewBudget struct {
	// known is for tokens and decisions the API server said yes to before.
	knownPerSecond float64
	knownBurst     int
	// unknown is for everything else: new scrapers, strangers and denied users.
	unknownPerSecond float64
	unknownBurst     int
}

var defaultReviewBudget = reviewBudget{knownPerSecond: 5, knownBurst: 20, unknownPerSecond: 1, unknownBurst: 10}

// reviewBackoff spaces the attempts of a review that failed on the way (the API server unreachable,
// failing, or answering 429 under API Priority and Fairness); a refusal is not retried. Steps is the
// most requests one review sends: client-go's own Retry-After loop is turned off, and each attempt
// is spent from the review's bucket.
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// errTooManyReviews says that a review was not sent because its bucket is empty.
var errTooManyReviews = errors.New("the budget of reviews is spent")

// reviewer asks the API server about a scraper, once per call.
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
	g := newGate(apiReviewer{authn: authn.RESTClient(), authz: authz.RESTClient()}, time.Now, defaultReviewBudget)
	return g.filter, nil
}

// apiReviewer reviews through the API server, one request per call: the gate retries.
type apiReviewer struct {
	authn rest.Interface
	authz rest.Interface
}

func (r apiReviewer) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	out := &authenticationv1.TokenReview{}
	if err := r.authn.Post().Resource("tokenreviews").Body(review).MaxRetries(0).Do(ctx).Into(out); err != nil {
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
	out := &authorizationv1.SubjectAccessReview{}
	if err := r.authz.Post().Resource("subjectaccessreviews").Body(review).MaxRetries(0).Do(ctx).Into(out); err != nil {
		return false, "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	return out.Status.Allowed, out.Status.Reason, nil
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
	reviewer reviewer
	now      func() time.Time
	// users are the tokens the API server authenticated, strangers those it did not, by hash.
	users     *lruCache[authenticationv1.UserInfo]
	strangers *lruCache[struct{}]
	// allowed and denied are the answers of SubjectAccessReviews, by decisionKey.
	allowed *lruCache[struct{}]
	denied  *lruCache[struct{}]
	// known spends reviews of what the API server said yes to before, unknown all others.
	known, unknown *rate.Limiter
	flights        singleflight.Group

	mu sync.Mutex
	// throttled counts the requests refused for the budget since throttleLogged.
	throttled      int
	throttleLogged time.Time
}

type tokenAnswer struct {
	user          authenticationv1.UserInfo
	authenticated bool
}

func newGate(r reviewer, now func() time.Time, budget reviewBudget) *gate {
	return &gate{
		reviewer:  r,
		now:       now,
		users:     newLRUCache[authenticationv1.UserInfo](cacheEntries),
		strangers: newLRUCache[struct{}](cacheEntries),
		allowed:   newLRUCache[struct{}](cacheEntries),
		denied:    newLRUCache[struct{}](cacheEntries),
		known:     rate.NewLimiter(rate.Limit(budget.knownPerSecond), budget.knownBurst),
		unknown:   rate.NewLimiter(rate.Limit(budget.unknownPerSecond), budget.unknownBurst),
	}
}

func (g *gate) filter(log logr.Logger, handler http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, ok := bearerToken(req)
		if !ok {
			log.V(4).Info("metrics request without a bearer token", "remote", req.RemoteAddr)
			http.Error(w, "Unauthorized: send the bearer token of a service account (or user) the API server knows", http.StatusUnauthorized)
			return
		}
		if err := plausibleToken(token); err != nil {
			log.V(4).Info("metrics request with a malformed bearer token", "remote", req.RemoteAddr, "reason", err.Error())
			http.Error(w, "Unauthorized: the bearer token "+err.Error(), http.StatusUnauthorized)
			return
		}
		user, ok, err := g.authenticate(req.Context(), token)
		if errors.Is(err, errTooManyReviews) {
			g.tooMany(log, w, req)
			return
		}
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
		if errors.Is(err, errTooManyReviews) {
			g.tooMany(log, w, req)
			return
		}
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

// tooMany answers a request whose review the budget does not allow now, and logs such refusals at
// most once a minute, with their count.
func (g *gate) tooMany(log logr.Logger, w http.ResponseWriter, req *http.Request) {
	g.mu.Lock()
	g.throttled++
	now := g.now()
	if now.Sub(g.throttleLogged) >= time.Minute {
		log.Info("metrics requests refused without a review: more new bearer tokens than the review budget allows; "+
			"if they are not your scrapers', admit only the monitoring namespace to the metrics port (the chart's metrics.networkPolicy)",
			"refused", g.throttled, "since", g.throttleLogged, "lastRemote", req.RemoteAddr)
		g.throttled, g.throttleLogged = 0, now
	}
	g.mu.Unlock()
	w.Header().Set("Retry-After", "1")
	http.Error(w, "Too Many Requests: the metrics endpoint reviews only a few new bearer tokens a second; retry later", http.StatusTooManyRequests)
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

// plausibleToken refuses, before any review, a bearer token no authenticator could accept: outside
// minTokenBytes..maxTokenBytes, with a character RFC 6750's b64token does not have, or shaped as a
// JWT whose header or claims are not base64url JSON objects, or which is unsigned.
func plausibleToken(token string) error {
	if len(token) < minTokenBytes || len(token) > maxTokenBytes {
		return fmt.Errorf("is %d bytes long; a service account token is %d to %d", len(token), minTokenBytes, maxTokenBytes)
	}
	body := strings.TrimRight(token, "=")
	for i := 0; i < len(body); i++ {
		c := body[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte("-._~+/", c) >= 0 {
			continue
		}
		return fmt.Errorf("holds the byte 0x%02x at %d, which a bearer token (RFC 6750) does not have", c, i)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || !strings.HasPrefix(parts[0], "eyJ") {
		return nil
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if raw, err := base64.RawURLEncoding.DecodeString(parts[0]); err != nil || json.Unmarshal(raw, &header) != nil {
		return errors.New("is shaped as a JWT whose header is not base64url-encoded JSON")
	}
	if header.Alg == "" || strings.EqualFold(header.Alg, "none") || parts[2] == "" {
		return errors.New("is an unsigned JWT")
	}
	var claims map[string]json.RawMessage
	if raw, err := base64.RawURLEncoding.DecodeString(parts[1]); err != nil || json.Unmarshal(raw, &claims) != nil {
		return errors.New("is shaped as a JWT whose claims are not base64url-encoded JSON")
	}
	return nil
}

func (g *gate) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	answer := func() (tokenAnswer, bool) {
		now := g.now()
		if u, ok := g.users.get(key, now); ok {
			return tokenAnswer{user: u, authenticated: true}, true
		}
		if _, ok := g.strangers.get(key, now); ok {
			return tokenAnswer{}, true
		}
		return tokenAnswer{}, false
	}
	if a, ok := answer(); ok {
		return a.user, a.authenticated, nil
	}
	v, err, _ := g.flights.Do("token:"+key, func() (any, error) {
		// A flight that ended between the look-up above and this one has answered.
		if a, ok := answer(); ok {
			return a, nil
		}
		var a tokenAnswer
		err := g.review(ctx, g.users.has(key), func(ctx context.Context) (err error) {
			a.user, a.authenticated, err = g.reviewer.authenticate(ctx, token)
			return err
		})
		if err != nil {
			return nil, err
		}
		if a.authenticated {
			g.strangers.remove(key)
			g.users.put(key, a.user, g.now(), tokenTTL)
		} else {
			g.users.remove(key)
			g.strangers.put(key, struct{}{}, g.now(), tokenTTL)
		}
		return a, nil
	})
	if err != nil {
		return authenticationv1.UserInfo{}, false, err
	}
	a := v.(tokenAnswer)
	return a.user, a.authenticated, nil
}

func (g *gate) authorize(ctx context.Context, user authenticationv1.UserInfo, verb, path string) (bool, string, error) {
	key := decisionKey(user, verb, path)
	answer := func() (bool, bool) {
		now := g.now()
		if _, ok := g.allowed.get(key, now); ok {
			return true, true
		}
		if _, ok := g.denied.get(key, now); ok {
			return false, true
		}
		return false, false
	}
	if allowed, ok := answer(); ok {
		return allowed, "remembered", nil
	}
	type decision struct {
		allowed bool
		reason  string
	}
	v, err, _ := g.flights.Do("decision:"+key, func() (any, error) {
		if allowed, ok := answer(); ok {
			return decision{allowed, "remembered"}, nil
		}
		var d decision
		err := g.review(ctx, g.allowed.has(key), func(ctx context.Context) (err error) {
			d.allowed, d.reason, err = g.reviewer.authorize(ctx, user, verb, path)
			return err
		})
		if err != nil {
			return nil, err
		}
		if d.allowed {
			g.denied.remove(key)
			g.allowed.put(key, struct{}{}, g.now(), allowTTL)
		} else {
			g.allowed.remove(key)
			g.denied.put(key, struct{}{}, g.now(), denyTTL)
		}
		return d, nil
	})
	if err != nil {
		return false, "", err
	}
	d := v.(decision)
	return d.allowed, d.reason, nil
}

// review sends a review through call until it is answered, refused for good (a status below 500
// other than 429) or reviewBackoff's steps are spent; each attempt is spent from the known or the
// unknown bucket. It runs for every request that waits on it, so one client's going away does not
// cancel it; reviewTimeout and the steps bound it.
func (g *gate) review(ctx context.Context, known bool, call func(context.Context) error) error {
	ctx = context.WithoutCancel(ctx)
	bucket := g.unknown
	if known {
		bucket = g.known
	}
	backoff := reviewBackoff
	var last error
	for {
		if !bucket.AllowN(g.now(), 1) {
			if last != nil {
				return last
			}
			return errTooManyReviews
		}
		callCtx, cancel := context.WithTimeout(ctx, reviewTimeout)
		last = call(callCtx)
		cancel()
		if last == nil || !retryable(last) || backoff.Steps <= 1 {
			return last
		}
		time.Sleep(backoff.Step())
	}
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

// lruCache keeps at most size values, each until its expiry; when full, it drops what expired,
// then the least recently used. An expired value is not returned, but has still says it was there.
type lruCache[V any] struct {
	mu      sync.Mutex
	size    int
	order   *list.List // of *lruEntry[V], the most recently used first
	entries map[string]*list.Element
}

type lruEntry[V any] struct {
	key     string
	value   V
	expires time.Time
}

func newLRUCache[V any](size int) *lruCache[V] {
	return &lruCache[V]{size: size, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *lruCache[V]) get(key string, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	e := el.Value.(*lruEntry[V])
	if !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.value, true
}

// has says whether key is in the cache, expired or not.
func (c *lruCache[V]) has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[key]
	return ok
}

// put stores value until now+ttl as the most recently used.
func (c *lruCache[V]) put(key string, value V, now time.Time, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*lruEntry[V])
		e.value, e.expires = value, now.Add(ttl)
		c.order.MoveToFront(el)
		return
	}
	if len(c.entries) >= c.size {
		for el := c.order.Back(); el != nil; {
			prev := el.Prev()
			if e := el.Value.(*lruEntry[V]); !now.Before(e.expires) {
				c.order.Remove(el)
				delete(c.entries, e.key)
			}
			el = prev
		}
		for len(c.entries) >= c.size {
			el := c.order.Back()
			c.order.Remove(el)
			delete(c.entries, el.Value.(*lruEntry[V]).key)
		}
	}
	c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, value: value, expires: now.Add(ttl)})
}

func (c *lruCache[V]) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.Remove(el)
		delete(c.entries, key)
	}
}

func (c *lruCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
