package metrics

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// ServerOptions serve the metrics on addr. Secure serves them over HTTPS (a self-signed certificate
// unless one is configured) to clients whose bearer token the API server authenticates (TokenReview)
// and allows to get the non-resource URL /metrics (SubjectAccessReview): the results of every tenant's
// suites are in them. Without secure they go over plain HTTP to anyone who reaches the port.
func ServerOptions(addr string, secure bool) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: addr}
	if secure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}
