// SPDX-License-Identifier: MIT

package integration_test

// The trust rule for leftovers: in a directory another user can write to,
// she plants files under DEST's temporary name (with a forged resume
// record, a lock, a lease) and keeps them open; root's copy must neither
// adopt them nor wait for them nor fail because of them. The attacker is a
// real second uid: this test binary run again as ccNobody.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"fastcp/integration_test/fsfixture"

	"golang.org/x/sys/unix"
)

// attackerEnv carries a plant to the test binary run as the attacker.
const attackerEnv = "FASTCP_IT_ATTACKER"

// plant is what the attacker does in the directory she gets as fd 3: create
// Name holding Content, or else Size bytes of 0xEE, with the Xattr value
// (if any), hold it (Hold: "fd",
// "flock" or "lease"), say "ready", and when her stdin closes, write what
// her descriptor reads of the file then.
type plant struct {
	Name    string
	Content string
	Size    int
	Xattr   string
	Hold    string
}

// attacker is the second user's side of a test (run by TestMain).
func attacker() int {
	var p plant
	if err := json.Unmarshal([]byte(os.Getenv(attackerEnv)), &p); err != nil {
		os.Stderr.WriteString(err.Error())
		return 2
	}
	signal.Ignore(syscall.SIGIO) // a lease break is signalled
	fail := func(err error) int { os.Stderr.WriteString("attacker: " + err.Error() + "\n"); return 2 }
	mode := unix.O_RDWR
	if p.Hold == "lease" {
		mode = unix.O_RDONLY // a read lease takes a read-only descriptor
	}
	content := []byte(p.Content)
	if p.Content == "" {
		content = bytes.Repeat([]byte{0xEE}, p.Size)
	}
	if err := os.WriteFile("/proc/self/fd/3/"+p.Name, content, 0o600); err != nil {
		return fail(err)
	}
	fd, err := unix.Openat(3, p.Name, mode|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	if p.Xattr != "" {
		if err := unix.Fsetxattr(fd, "user.fastcp.temp", []byte(p.Xattr), 0); err != nil {
			return fail(err)
		}
	}
	switch p.Hold {
	case "flock":
		err = unix.Flock(fd, unix.LOCK_EX)
	case "lease":
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
	}
	if err != nil {
		return fail(err)
	}
	os.Stdout.WriteString("ready\n")
	io.Copy(io.Discard, os.Stdin)
	b, err := io.ReadAll(io.NewSectionReader(os.NewFile(uintptr(fd), p.Name), 0, 1<<40))
	if err != nil {
		return fail(err)
	}
	os.Stdout.Write(b)
	return 0
}

// sharedDir is a fresh tmpfs (user xattrs) mounted on a directory that
// ccNobody can reach, mode 1777 as a spool's; it also holds a copy of
// this test binary that she can run.
func sharedDir(t *testing.T) (dir, self string) {
	t.Helper()
	needMount(t)
	base, err := os.MkdirTemp("/tmp", "fastcp-trust-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	fs, err := fsfixture.Mount(base, "tmpfs", 256<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Unmount() })
	if err := os.Chmod(fs.Dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	self = filepath.Join(base, "attacker")
	if err := os.WriteFile(self, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return fs.Dir, self
}

// attack is the attacker's process, holding her plant.
type attack struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   bytes.Buffer
	read  chan struct{} // closed once out has all she printed
	ino   uint64
}

// startAttack runs the attacker as ccNobody with the plant p in dir and
// waits until she holds it.
func startAttack(t *testing.T, dir, self string, p plant) *attack {
	t.Helper()
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := &attack{cmd: exec.Command(self)}
	a.cmd.Env = append(os.Environ(), attackerEnv+"="+string(js))
	a.cmd.ExtraFiles = []*os.File{d}
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ccNobody, Gid: ccNobody, Groups: []uint32{}}}
	a.cmd.Stderr = os.Stderr
	if a.stdin, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Kill(); a.cmd.Wait() })
	line := make([]byte, len("ready\n"))
	if _, err := io.ReadFull(stdout, line); err != nil || string(line) != "ready\n" {
		t.Fatalf("the attacker did not get ready: %v %q", err, line)
	}
	a.read = make(chan struct{})
	go func() {
		defer close(a.read)
		io.Copy(&a.out, stdout)
	}()
	a.ino = lstatT(t, filepath.Join(dir, p.Name)).Ino
	return a
}

// finish lets the attacker read her file back and returns what she read.
func (a *attack) finish(t *testing.T) []byte {
	t.Helper()
	a.stdin.Close()
	// Wait closes her stdout: read it to its end first.
	<-a.read
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("the attacker: %v", err)
	}
	return a.out.Bytes()
}

// A planted leftover with the source's true identity in its record, held
// open by its owner: root's --resume (with and without -a and --verify,
// to a new and to an existing DEST) copies from the start under another
// temporary name, names the plant in one warning, and leaves it alone:
// DEST is root's own new file with the source's bytes, and not one of
// them went through the attacker's descriptor.
func TestResumePlantedRecord(t *testing.T) {
	dir, self := sharedDir(t)
	const size = 8 << 20
	src := filepath.Join(dir, "src")
	writePattern(t, src, size, t.Name())
	if err := os.Chmod(src, 0o600); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(src)
	for _, tc := range []struct {
		name       string
		args       []string
		existing   bool
		checkpoint int64
	}{
		{"new DEST", nil, false, 4 << 20},
		{"existing DEST", nil, true, 4 << 20},
		{"new DEST, checkpoint at the end", nil, false, size},
		{"-a", []string{"-a"}, false, 4 << 20},
		{"-a, existing DEST", []string{"-a"}, true, size},
		{"--verify", []string{"--verify"}, false, 4 << 20},
		{"--verify, existing DEST", []string{"--verify"}, true, 4 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(dir, "dst")
			os.Remove(dst)
			os.Remove(filepath.Join(dir, resumeTemp))
			if tc.existing {
				writeFile(t, dst, []byte("old\n"), 0o644)
			}
			junk := bytes.Repeat([]byte{0xEE}, int(tc.checkpoint))
			a := startAttack(t, dir, self, plant{Name: resumeTemp, Size: len(junk), Xattr: recordFor(statT(t, src), tc.checkpoint), Hold: "fd"})
			r := fastcp(t, dir, append(append([]string{"--resume"}, tc.args...), "src", "dst")...)
			want := "fastcp: warning: copying 'dst' from the start: foreign leftover (it is owned by uid 65534, not by this user); '" + resumeTemp + "' left alone\n"
			if r.code != 0 || r.stderr != want {
				t.Fatalf("%v, want exit 0 and stderr %q", r, want)
			}
			assertFileBytes(t, dst, data)
			if st := lstatT(t, dst); st.Uid != 0 || st.Ino == a.ino {
				t.Errorf("DEST is owned by uid %d, inode %d (the plant's: %d)", st.Uid, st.Ino, a.ino)
			}
			if got := a.finish(t); !bytes.Equal(got, junk) {
				t.Errorf("the attacker's descriptor read %d bytes other than her own", len(got))
			}
			assertFileBytes(t, filepath.Join(dir, resumeTemp), junk)
			if left := tempFiles(t, dir); len(left) != 1 {
				t.Errorf("temporary files left: %v, want only the plant", left)
			}
		})
	}
}

// A plant that its owner holds locked (with fastcp's mark) or leased: root's
// copy neither fails ("another copy is running") nor waits for the lock
// or for the lease to break (lease-break-time, 45 s by default): none of
// its threads ever sleeps in the kernel for them (fastcpNeverWaiting).
func TestResumePlantedLockAndLease(t *testing.T) {
	dir, self := sharedDir(t)
	src := filepath.Join(dir, "src")
	writePattern(t, src, 2<<20, t.Name())
	for _, tc := range []struct {
		hold, xattr string
		args        []string
	}{
		{"flock", markValue, []string{"--resume"}},
		{"lease", "", []string{"--resume"}},
		{"lease", "", nil},
		{"flock", markValue, nil},
	} {
		t.Run(tc.hold+strings.Join(tc.args, ""), func(t *testing.T) {
			dst := filepath.Join(dir, "dst")
			os.Remove(dst)
			os.Remove(filepath.Join(dir, resumeTemp))
			a := startAttack(t, dir, self, plant{Name: resumeTemp, Content: "hers\n", Xattr: tc.xattr, Hold: tc.hold})
			r := fastcpNeverWaiting(t, dir, append(tc.args, "src", "dst")...)
			var want string
			if tc.args != nil {
				want = "fastcp: warning: copying 'dst' from the start: foreign leftover (it is owned by uid 65534, not by this user); '" + resumeTemp + "' left alone\n"
			} else {
				want = "fastcp: warning: leaving '" + resumeTemp + "' alone: it is owned by uid 65534, not by this user\n"
			}
			if r.code != 0 || r.stderr != want {
				t.Fatalf("%v, want exit 0 and stderr %q", r, want)
			}
			sameFiles(t, src, dst)
			if got := a.finish(t); string(got) != "hers\n" {
				t.Errorf("the attacker's file reads %q", got)
			}
		})
	}
}

// A leftover copied by its own name (salvaging it): the sweep, and the
// clean-up of --resume of "a copy of another source", must not remove the
// copy's own SOURCE.
func TestCopyLeftoverByName(t *testing.T) {
	dir := fsDir(t, "tmpfs")
	leftover := ".fastcp-big.000000000000"
	data := randomBytes(3<<20, t.Name())
	writeFile(t, join(dir, "other"), []byte("other"), 0o600)
	for _, tc := range []struct {
		name, xattr, warning string
		args                 []string
	}{
		{"plain", markValue, "fastcp: warning: leaving '" + leftover + "' alone: it is the source of this copy\n", nil},
		{"--resume, another source's record", recordFor(statT(t, join(dir, "other")), 1<<20),
			"fastcp: warning: copying 'big' from the start: foreign leftover (it is the source of this copy); '" + leftover + "' left alone\n", []string{"--resume"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(join(dir, "big"))
			p := join(dir, leftover)
			writeFile(t, p, data, 0o600)
			if err := unix.Setxattr(p, resumeXattr, []byte(tc.xattr), 0); err != nil {
				t.Fatal(err)
			}
			r := fastcp(t, dir, append(tc.args, leftover, "big")...)
			if r.code != 0 || r.stderr != tc.warning {
				t.Fatalf("%v, want exit 0 and stderr %q", r, tc.warning)
			}
			assertFileBytes(t, p, data)
			assertFileBytes(t, join(dir, "big"), data)
		})
	}
}

// Two DEST names alike in their first 200 bytes have temporary names of
// their own: a --resume to one runs while a --resume to the other is
// running, and a plain copy to one leaves the other's kept leftover, which
// its own --resume then continues.
func TestLongNamesOwnTemps(t *testing.T) {
	dir := fsDir(t, "tmpfs")
	writePattern(t, join(dir, "src"), 64<<20, t.Name())
	long := strings.Repeat("n", 200)
	a, b := long+"-a", long+"-b"
	run := startSlow(t, dir, "pwrite64", 20*time.Millisecond, "--resume", "--strategy=rw", "--buffer-size=1M", "src", a)
	var temp string
	run.waitUntil(t, "8 MiB copied", func() bool {
		if names := tempFiles(t, dir); len(names) == 1 {
			temp = join(dir, names[0])
			return sizeOf(temp) >= 8<<20
		}
		return false
	})
	if r := fastcp(t, dir, "--resume", "src", b); r.code != 0 || r.stderr != "" {
		t.Fatalf("--resume to the second name while the first runs: %v", r)
	}
	sameFiles(t, join(dir, "src"), join(dir, b))
	if code := run.signal(t, syscall.SIGINT); code != 130 {
		t.Fatalf("exit status %d after SIGINT, want 130; stderr %q", code, run.output())
	}
	ckpt := checkpointOf(temp)
	if ckpt < 8<<20 {
		t.Fatalf("checkpoint %d kept, want at least 8 MiB", ckpt)
	}
	if r := fastcp(t, dir, "src", b); r.code != 0 || r.stderr != "" {
		t.Fatalf("a plain copy to the second name: %v", r)
	}
	r := fastcp(t, dir, "--resume", "--debug", "src", a)
	if res := parseResumed(t, r.stdout); r.code != 0 || r.stderr != "" || len(res.offsets) != 1 || res.offsets[0] != ckpt&^(1<<20-1) {
		t.Fatalf("%v: want a resume from %d", r, ckpt&^(1<<20-1))
	}
	sameFiles(t, join(dir, "src"), join(dir, a))
	assertNoTemps(t, dir)
}

// lockWaits are where a thread sleeps in the kernel (/proc/PID/task/TID/
// wchan) while it waits for another process's file: a lease to break
// (an open that conflicts with it), a flock or a POSIX lock to be released.
var lockWaits = []string{"__break_lease", "break_lease", "locks_lock_inode_wait", "flock_lock_inode_wait", "posix_lock_inode_wait"}

// fastcpNeverWaiting runs fastcp as fastcp does, watching its threads the
// while: one that sleeps in a lockWaits function fails the test at once,
// and fastcp is killed.
func fastcpNeverWaiting(t *testing.T, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for {
		select {
		case err := <-waited:
			return cmdResult(t, cmd, err, stdout.String(), stderr.String())
		case <-time.After(time.Millisecond):
		}
		if w := sleepingIn(cmd.Process.Pid, lockWaits); w != "" {
			cmd.Process.Kill()
			<-waited
			t.Fatalf("fastcp %s: a thread of it sleeps in %s, waiting for another process's file", strings.Join(args, " "), w)
		}
	}
}

// sleepingIn returns the function of funcs that a thread of process pid
// sleeps in ("" for none).
func sleepingIn(pid int, funcs []string) string {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/wchan", pid, task.Name()))
		if err == nil && slices.Contains(funcs, string(b)) {
			return string(b)
		}
	}
	return ""
}
