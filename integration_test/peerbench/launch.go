// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// The launcher: every timed command is started by a fresh copy of this
// binary (launchMode), which times and waits for it and reports back on
// descriptor 3. Go starts a child with vfork (CLONE_VM), and execve records
// the peak RSS of the memory it leaves, the parent's, in the child's
// ru_maxrss: a child of the harness, which holds scenario data, read at
// least 30 MiB whatever it used. A child of the launcher reads at least the
// launcher's few MiB (rssFloor measures it, through the launcher too).
// The launcher's own start-up is outside the time it reports.

// launchEnv marks the process as the launcher.
const launchEnv = "PEERBENCH_LAUNCHER"

// launchMode reports whether this process is the launcher; if so it runs
// os.Args[1:] and returns the status to exit with.
func launchMode() (int, bool) {
	if os.Getenv(launchEnv) != "1" {
		return 0, false
	}
	report := os.NewFile(3, "report")
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = dropEnv(os.Environ(), launchEnv)
	// The kernel adds a child's I/O counts to its parent's when the
	// parent reaps it: what the launcher's grew by is the command's.
	readBefore := readBytes()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil && cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "peerbench launcher: %v\n", err)
		return 127, true
	}
	read := readBytes() - readBefore
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Fprintf(report, "%d %d %d %d %d\n", wall.Nanoseconds(), ru.Utime.Nano(), ru.Stime.Nano(), ru.Maxrss, read)
	report.Close()
	return cmd.ProcessState.ExitCode(), true
}

// readBytes is read_bytes of /proc/self/io: the bytes this process, and
// the children it reaped, had the block layer read from storage (page
// cache hits are not counted), or -1 when the kernel does not say.
func readBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "read_bytes: "); ok {
			var n int64
			if _, err := fmt.Sscanf(v, "%d", &n); err == nil {
				return n
			}
		}
	}
	return -1
}

func dropEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// launch runs argv through the launcher and returns what it measured and
// the command's stdout. A non-zero exit is an error quoting stderr.
func launch(ctx context.Context, argv []string) (sample, string, error) {
	self, err := os.Executable()
	if err != nil {
		return sample{}, "", err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return sample{}, "", err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, self, argv...)
	cmd.Env = append(os.Environ(), launchEnv+"=1")
	cmd.ExtraFiles = []*os.File{w}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		return sample{}, "", err
	}
	var rep bytes.Buffer
	rep.ReadFrom(r)
	err = cmd.Wait()
	if err != nil {
		return sample{}, "", fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	var wall, user, sys, kib, read int64
	if _, err := fmt.Sscanf(rep.String(), "%d %d %d %d %d", &wall, &user, &sys, &kib, &read); err != nil {
		return sample{}, "", fmt.Errorf("%s: the launcher reported %q: %v", strings.Join(argv, " "), rep.String(), err)
	}
	return sample{
		wall:   time.Duration(wall),
		user:   time.Duration(user),
		sys:    time.Duration(sys),
		maxRSS: kib << 10, // KiB on Linux
		read:   read,
	}, stdout.String(), nil
}
