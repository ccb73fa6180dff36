package runner

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// targetDir is where a storage benchmark works on node. A shared target gets a directory per run
// and node, so that the nodes (and other runs on the same volume) do not share files.
func targetDir(plan runplan.Plan, target vmbenchv1.StorageTarget, n runplan.Node) (string, error) {
	switch target {
	case vmbenchv1.StorageLocal, "":
		if plan.LocalDir == "" {
			return "", errors.New("the plan has no local directory")
		}
		return plan.LocalDir, nil
	case vmbenchv1.StorageRootFS:
		if plan.RootFSDir == "" {
			return "", errors.New("target RootFS, but the plan has no directory on the nodes' root file system")
		}
		return plan.RootFSDir, nil
	case vmbenchv1.StorageShared:
		if plan.SharedDir == "" {
			return "", errors.New("target Shared, but the suite has no shared storage")
		}
		return path.Join(plan.SharedDir, plan.Run, n.Name), nil
	}
	return "", fmt.Errorf("unknown storage target %q", target)
}

// storage runs argv(dir) on every node after creating dir, and removes dir/file afterwards. On the
// Shared target, every execution fails with the reason when the runner could not make the target
// ready (prepareShared).
func (r *Runner) storage(plan runplan.Plan, target vmbenchv1.StorageTarget, prefix string, tool results.Tool,
	file string, argv func(dir string) []string) []execution {
	var out []execution
	for _, n := range plan.Nodes {
		dir, err := targetDir(plan, target, n)
		if err == nil && target == vmbenchv1.StorageShared {
			err = r.sharedErrs[n.Name]
		}
		if err != nil {
			out = append(out, failed(n.Name, err))
			continue
		}
		out = append(out, execution{label: n.Name, prefix: prefix, tool: tool,
			run: func(ctx context.Context) ([]byte, []byte, error) {
				if _, raw, err := r.tool(ctx, n, Command{Argv: []string{"mkdir", "-p", dir}}); err != nil {
					return nil, raw, err
				}
				return r.tool(ctx, n, Command{Argv: argv(dir)})
			},
			cleanup: r.remove(n, path.Join(dir, file))})
	}
	return out
}

func (r *Runner) iozone(plan runplan.Plan, p *vmbenchv1.IozoneParams) []execution {
	targets := p.Targets
	if len(targets) == 0 {
		targets = []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal}
	}
	var out []execution
	for _, t := range targets {
		prefix := ""
		if len(targets) > 1 {
			prefix = strings.ToLower(string(t)) + "_"
		}
		execs := r.storage(plan, t, prefix, results.Iozone, "iozone.tmp", func(dir string) []string {
			return IozoneArgv(p, dir)
		})
		if p.Auto {
			for i := range execs {
				execs[i].parse = parseIozoneAuto
			}
		}
		out = append(out, execs...)
	}
	return out
}

func (r *Runner) fio(plan runplan.Plan, p *vmbenchv1.FioParams) []execution {
	return r.storage(plan, p.Target, "", results.Fio, "fio.dat", func(dir string) []string {
		return FioArgv(p, dir)
	})
}
