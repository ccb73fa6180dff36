// Package kubeconfig finds the cluster the way kubectl does, for the CLI's verbs that read it:
// --kubeconfig, else KUBECONFIG, else ~/.kube/config, else the in-cluster service account; --context
// picks a context, and the namespace is -n or else the context's.
package kubeconfig

import (
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Load returns the client configuration and the namespace to work in: namespace when given, else
// the context's, else "default".
func Load(path, kubeContext, namespace string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	if namespace == "" {
		if namespace, _, err = loader.Namespace(); err != nil {
			return nil, "", err
		}
	}
	return cfg, namespace, nil
}
