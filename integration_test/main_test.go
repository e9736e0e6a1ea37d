// SPDX-License-Identifier: MIT

// Package integration_test runs the built fastcp binary the way users do:
// on real ext4, xfs, btrfs and tmpfs mounts, with FIFOs, /proc files,
// devices, symlinks and signals, and asserts exit status, messages, bytes
// and what must not exist afterwards.
//
// TestMain builds the binary once. As root it also mounts one loop ext4,
// xfs and btrfs image and one tmpfs for the whole package. So that the
// mounts are removed even when a test panics (a panic in a test goroutine
// ends the process without running TestMain's defers), the test binary
// runs twice: a parent that builds, mounts, starts itself again as the
// child that runs the tests, and cleans up whatever happened to the child.
package integration_test

import (
	"bufio"
	"encoding/json"
	"fastcp/internal/sysx"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"fastcp/integration_test/fsfixture"
)

// stateEnv carries the parent's setup (as JSON) to the child that runs the tests.
const stateEnv = "FASTCP_IT_STATE"

// tempPrefix names the package's scratch directory: fastcp-it-PID-XXXX.
const tempPrefix = "fastcp-it-"

// Sizes of the package-wide filesystems. The images are sparse files on
// the root filesystem: they cost only what the tests write.
var mountSizes = map[string]int64{
	"ext4":  1 << 30,
	"xfs":   1 << 30,
	"btrfs": 1 << 30,
	"tmpfs": 512 << 20,
}

// state is what the child needs from the parent.
type state struct {
	Bin      string            // the built fastcp
	Root     string            // the scratch directory
	Mounts   map[string]string // kind -> mount point
	MountErr map[string]string // kind -> why mounting failed (as root)
	Missing  map[string]string // kind -> why it cannot be made here (mkfs.xfs is not installed)
	NoMount  string            // as root: why nothing can be mounted here (no CAP_SYS_ADMIN)
	NoLoop   string            // as root: why no loop device can be set up here
}

// mkfsPackage names what provides each kind's mkfs, for the skip message.
var mkfsPackage = map[string]string{"ext4": "e2fsprogs", "xfs": "xfsprogs", "btrfs": "btrfs-progs"}

// setup is the child's copy of the parent's state.
var setup state

func TestMain(m *testing.M) {
	if os.Getenv(attackerEnv) != "" {
		os.Exit(attacker()) // a second user's process (trust_test.go)
	}
	if s := os.Getenv(stateEnv); s != "" {
		if err := json.Unmarshal([]byte(s), &setup); err != nil {
			fmt.Fprintf(os.Stderr, "integration_test: bad %s: %v\n", stateEnv, err)
			os.Exit(2)
		}
		os.Exit(m.Run())
	}
	os.Exit(parent())
}

// parent builds fastcp, mounts the filesystems, runs the tests in a child
// process and removes everything afterwards, whatever the child did.
func parent() int {
	sweepStale()
	root, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration_test:", err)
		return 1
	}
	defer cleanupRoot(root)

	st := state{Root: root, Bin: filepath.Join(root, "fastcp"), Mounts: map[string]string{}, MountErr: map[string]string{}, Missing: map[string]string{}}
	if err := build(st.Bin); err != nil {
		fmt.Fprintln(os.Stderr, "integration_test: building fastcp:", err)
		return 1
	}
	if fsfixture.IsRoot() {
		st.NoMount, st.NoLoop = probeMounts(root)
		for _, kind := range fsfixture.Kinds {
			if why := cannotMount(st, kind); why != "" {
				// A container without CAP_SYS_ADMIN or loop devices: the
				// tests on it skip (fsDir), except under CI=true.
				st.Missing[kind] = why
				continue
			}
			if pkg, ok := mkfsPackage[kind]; ok {
				if _, err := exec.LookPath("mkfs." + kind); err != nil {
					// The tests on it skip (fsDir), except under CI=true.
					st.Missing[kind] = fmt.Sprintf("mkfs.%s is not installed (%s)", kind, pkg)
					continue
				}
			}
			fs, err := fsfixture.Mount(root, kind, mountSizes[kind])
			if err != nil {
				st.MountErr[kind] = err.Error()
				fmt.Fprintf(os.Stderr, "integration_test: mounting %s: %v\n", kind, err)
				continue
			}
			defer fs.Unmount()
			st.Mounts[kind] = fs.Dir
		}
	}
	tmp := filepath.Join(root, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "integration_test:", err)
		return 1
	}
	js, err := json.Marshal(st)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration_test:", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration_test:", err)
		return 1
	}
	child := exec.Command(self, os.Args[1:]...)
	// t.TempDir() lands under root, so that cleanupRoot also finds bind
	// mounts a crashed test left behind.
	child.Env = append(os.Environ(), stateEnv+"="+string(js), "TMPDIR="+tmp)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "integration_test:", err)
		return 1
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				child.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = child.Wait()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "integration_test:", err)
	return 1
}

// probeMounts tries, once for the package, what the root-only tests do:
// mount a tmpfs, and set up a loop device. Each result is empty when it
// works, or why it does not (a container without CAP_SYS_ADMIN, or without
// /dev/loop-control), so that the tests needing it skip with that reason.
func probeMounts(root string) (noMount, noLoop string) {
	dir, err := os.MkdirTemp(root, "probe-")
	if err != nil {
		return err.Error(), err.Error()
	}
	defer os.RemoveAll(dir)
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return err.Error(), err.Error()
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		noMount = fmt.Sprintf("mounting is not permitted here (mount -t tmpfs: %v: %s)", err, firstLine(out))
	} else {
		exec.Command("umount", mnt).Run()
	}
	img := filepath.Join(dir, "img")
	if err := os.WriteFile(img, make([]byte, 1<<20), 0o600); err != nil {
		return noMount, err.Error()
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		return noMount, fmt.Sprintf("no loop device can be set up here (losetup: %v: %s)", err, firstLine(out))
	}
	exec.Command("losetup", "-d", strings.TrimSpace(string(out))).Run()
	return noMount, ""
}

// firstLine is the first line of a command's output, for a one-line reason.
func firstLine(out []byte) string {
	l, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return l
}

// cannotMount says why the package's filesystem of kind cannot be mounted
// here (empty: it can be tried).
func cannotMount(st state, kind string) string {
	if kind == "tmpfs" || st.NoMount != "" {
		return st.NoMount
	}
	return st.NoLoop // a loop-mounted image
}

// build compiles fastcp from the module root (the parent of this package's
// directory, which is the test's working directory), with env added to the
// environment (CGO_ENABLED=0 for a static binary).
func build(out string, env ...string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		if _, serr := os.Stat(goBin); serr != nil {
			goBin = "/usr/local/go/bin/go"
		}
	}
	cmd := exec.Command(goBin, "build", "-o", out, ".")
	cmd.Dir = ".."
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, b)
	}
	return nil
}

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var mps []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := sysx.UnescapeOctal(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			mps = append(mps, mp)
		}
	}
	sort.Slice(mps, func(i, j int) bool { return len(mps[i]) > len(mps[j]) })
	return mps
}

// cleanupRoot unmounts whatever is still mounted under root (bind mounts or
// small tmpfs mounts of a test that crashed, then the package's own) and
// removes it.
func cleanupRoot(root string) {
	for _, mp := range mountsUnder(root) {
		if err := exec.Command("umount", mp).Run(); err != nil {
			exec.Command("umount", "-l", mp).Run()
		}
	}
	// Loop devices a crashed test attached to images under root (mounted
	// ones went away with their mounts).
	backing, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, b := range backing {
		file, err := os.ReadFile(b)
		if err == nil && strings.HasPrefix(string(file), root+"/") {
			exec.Command("losetup", "-d", "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(b)))).Run()
		}
	}
	os.RemoveAll(root)
}

// sweepStale removes the scratch directories (and their mounts) of earlier
// runs whose process is gone: a run killed with SIGKILL cleans up nothing.
func sweepStale() {
	if !fsfixture.IsRoot() {
		return
	}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, dir := range matches {
		rest := strings.TrimPrefix(filepath.Base(dir), tempPrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			continue // still running (or not ours to judge)
		}
		cleanupRoot(dir)
	}
}
