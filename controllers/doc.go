// Package controllers holds no code: its packages are vmbench's reconcilers, each a package of its
// own, and the rooms they share.
//
//	suite/       the BenchmarkSuite reconciler: admission, runs, collection, status
//	  failure/   why a run cannot go on: start-up and member failures, in KubeVirt's and the kubelet's words
//	  summary/   a suite's results in status: samples, noise, ratios, the headline, compaction
//	schedule/    the BenchmarkSchedule reconciler: when to start, history, change points, confirmation
//	archive/     the archive reconciler: finished suites to object storage
//	runqueue/    the Lease-held run queue the suite reconciler admits suites through
//	masterkey/   the manager's master key: loaded, minted and recorded
//	conditions/  causes and the bounded one-line messages of conditions and events
//	runenv/      the run environment: a node's kernel, runtime and kubelet, the KubeVirt version
//	cachepolicy/ what the manager caches, and as what
//	archivemark/ the archive's marks on a suite, which schedules read before they prune
//	scheme/      the scheme of every kind the manager reads or writes
//
// No reconciler package imports another (layout_test.go): cmd/manager wires them together.
package controllers
