package platform

import "k8s.io/apimachinery/pkg/api/resource"

func resourceCPU(cpus int32) *resource.Quantity {
	return resource.NewQuantity(int64(cpus), resource.DecimalSI)
}
