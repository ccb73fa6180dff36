package platform

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Children carry their TypeMeta so that server-side apply knows what it applies.
func metav1TypeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func metav1ObjectMetaLabels(l map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Labels: l}
}

func metav1ObjectMetaNamed(run Run, name string, l map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: run.Suite.Namespace, Labels: l}
}
