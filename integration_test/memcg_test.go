// SPDX-License-Identifier: MIT

package integration_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// memCgroup is a memory cgroup made for one run of fastcp: the page cache
// that run brings in (the pages it reads and writes) is charged to it,
// whatever else the machine does, where /proc/meminfo's Cached moves with
// every process. Made under this process's own memory cgroup, v1
// (memory.stat "cache", memory.max_usage_in_bytes) or v2 (memory.stat
// "file", memory.peak).
type memCgroup struct {
	dir string
	v2  bool
}

// newMemCgroup makes a fresh memory cgroup, removed when t ends, or says
// why none can be made here (no memory controller mounted, no right to
// make one, v2 without the controller delegated).
func newMemCgroup(t *testing.T) (*memCgroup, error) {
	t.Helper()
	parent, v2, err := ownMemCgroup()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "fastcp-test-")
	if err != nil {
		return nil, err
	}
	c := &memCgroup{dir: dir, v2: v2}
	t.Cleanup(func() {
		// A v1 cgroup gives its charges to its parent when removed;
		// force_empty first, where it exists, frees what it can.
		os.WriteFile(filepath.Join(dir, "memory.force_empty"), []byte("0"), 0)
		for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
			time.Sleep(20 * time.Millisecond) // the exited child's task leaves
		}
	})
	stat := "memory.stat"
	if _, err := os.Stat(filepath.Join(dir, stat)); err != nil {
		return nil, fmt.Errorf("the new cgroup has no %s (the memory controller is not enabled for it)", stat)
	}
	return c, nil
}

// ownMemCgroup is the directory of this process's memory cgroup, from
// /proc/self/cgroup and where /proc/self/mountinfo says the hierarchy is
// mounted (a v1 "memory" hierarchy first, else the v2 one).
func ownMemCgroup() (dir string, v2 bool, err error) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	var v1Path, v2Path string
	for _, l := range strings.Split(strings.TrimSpace(string(cg)), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2Path = f[2]
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				v1Path = f[2]
			}
		}
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", false, err
	}
	defer mi.Close()
	var v1Mount, v1Root, v2Mount, v2Root string
	s := bufio.NewScanner(mi)
	for s.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		pre, post, ok := strings.Cut(s.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		switch {
		case qf[0] == "cgroup" && hasOption(qf[2], "memory"):
			v1Mount, v1Root = pf[4], pf[3]
		case qf[0] == "cgroup2" && v2Mount == "":
			v2Mount, v2Root = pf[4], pf[3]
		}
	}
	under := func(mount, root, path string) string {
		rel, err := filepath.Rel(root, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = "."
		}
		return filepath.Join(mount, rel)
	}
	switch {
	case v1Mount != "" && v1Path != "":
		return under(v1Mount, v1Root, v1Path), false, nil
	case v2Mount != "" && v2Path != "":
		d := under(v2Mount, v2Root, v2Path)
		ctl, err := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
		if err != nil || !hasOption(strings.ReplaceAll(strings.TrimSpace(string(ctl)), " ", ","), "memory") {
			return "", false, fmt.Errorf("the memory controller is not enabled below %s", d)
		}
		return d, true, nil
	}
	return "", false, fmt.Errorf("no memory cgroup hierarchy is mounted")
}

func hasOption(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}

// run runs fastcp with args in dir as the cgroup's only process (moved
// into it by the shell that then becomes fastcp, before fastcp starts).
func (c *memCgroup) run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	shArgs := append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, c.dir, setup.Bin}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", shArgs...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.WaitDelay = 5 * time.Second
	return runCmd(t, cmd)
}

// cached is the page cache charged to the cgroup now.
func (c *memCgroup) cached() (int64, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, "memory.stat"))
	if err != nil {
		return 0, err
	}
	key := "cache "
	if c.v2 {
		key = "file "
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %q in %s/memory.stat", strings.TrimSpace(key), c.dir)
}

// peak is the most memory (page cache and the process's own) ever charged
// to the cgroup.
func (c *memCgroup) peak() (int64, error) {
	name := "memory.max_usage_in_bytes"
	if c.v2 {
		name = "memory.peak"
	}
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
