// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// shellCmd is bash -c script with $0 set to the fastcp binary, in dir, in a
// session and process group of its own (setsid), as a terminal's shell
// would start a job: the test can signal the whole group as a Ctrl-C does.
func shellCmd(ctx context.Context, t testing.TB, dir, script string, args ...string) *exec.Cmd {
	t.Helper()
	bash := needTool(t, "bash")
	cmd := exec.CommandContext(ctx, bash, append([]string{"-c", script, setup.Bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// startCopyingShell starts script with shellCmd, its output in buffers,
// and waits until the fastcp it runs holds a temporary file with data in
// dir; it returns that fastcp's pid. The shell is killed when the test ends.
func startCopyingShell(ctx context.Context, t *testing.T, dir, script string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, int) {
	t.Helper()
	cmd := shellCmd(ctx, t, dir, script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var pid int
	if !waitFor(func() bool {
		pid = traceePid(cmd.Process.Pid)
		if pid == 0 {
			return false
		}
		_, ok := openTempWithData(pid, dir)
		return ok
	}) {
		t.Fatalf("the copy did not start; stderr %q", stderr.String())
	}
	return cmd, &stdout, &stderr, pid
}

// TestCtrlCStopsLoop is the Ctrl-C of a terminal (SIGINT to the foreground
// process group) during the first copy of a shell loop: fastcp must die of
// the signal, so that bash, which waits for it, ends the loop and dies of
// SIGINT too. A fastcp that exited 130 would have "handled" it, and bash
// would go on to copy the next files.
func TestCtrlCStopsLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := join(dir, "first")
	mkfifo(t, fifo)
	writeFile(t, join(dir, "second"), []byte("second\n"), 0o644)
	writeFile(t, join(dir, "third"), []byte("third\n"), 0o644)
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	defer release()
	wrote := fifoWriter(fifo, randomBytes(64<<10, "loop"), hold)

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd, stdout, stderr, _ := startCopyingShell(ctx, t, dir, `for f in first second third; do "$0" "$f" "copy-$f"; done; echo loop-ended`)
	// The process group of the job: bash and fastcp, as the terminal
	// driver sends a Ctrl-C.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	release()
	waitFIFOPeer(t, fifo, wrote)
	if got := waitStatus(err); got != 130 {
		t.Errorf("bash's wait status %d, want 130 (died of SIGINT); stdout %q, stderr %q", got, stdout.String(), stderr.String())
	}
	if ee, ok := err.(*exec.ExitError); !ok || !ee.Sys().(syscall.WaitStatus).Signaled() {
		t.Errorf("bash did not die of SIGINT (%v): the loop took fastcp's status for a handled signal", err)
	}
	for _, name := range []string{"copy-first", "copy-second", "copy-third"} {
		if _, err := os.Lstat(join(dir, name)); err == nil {
			t.Errorf("%s exists: the loop went on after Ctrl-C", name)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q: the loop ran to its end", stdout.String())
	}
	assertNoTemps(t, dir)
}

// TestSignalStatusSeenByShell: a shell that waits for fastcp reads a
// death by the signal in $? (128+N), for SIGINT (restored to the default
// with env --default-signal, since a background job of a non-interactive
// shell starts with it ignored), SIGTERM and SIGHUP.
func TestSignalStatusSeenByShell(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		want string
	}{
		{"SIGINT", syscall.SIGINT, "130"},
		{"SIGTERM", syscall.SIGTERM, "143"},
		{"SIGHUP", syscall.SIGHUP, "129"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fifo := join(dir, "src")
			mkfifo(t, fifo)
			hold := make(chan struct{})
			var once sync.Once
			release := func() { once.Do(func() { close(hold) }) }
			defer release()
			wrote := fifoWriter(fifo, randomBytes(64<<10, "status"), hold)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd, stdout, stderr, pid := startCopyingShell(ctx, t, dir, `env --default-signal=INT "$0" src dst & wait $!; echo "status $?"`)
			if err := syscall.Kill(pid, c.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			release()
			waitFIFOPeer(t, fifo, wrote)
			// bash may report the job's death on stderr ("Hangup").
			if err != nil || stdout.String() != "status "+c.want+"\n" || strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("%v, stdout %q, stderr %q: want the shell to read status %s", err, stdout.String(), stderr.String(), c.want)
			}
			if _, err := os.Lstat(join(dir, "dst")); err == nil {
				t.Error("dst exists after the signal")
			}
			assertNoTemps(t, dir)
		})
	}
}

// TestVerboseIntoHead: fastcp -rv into `head -n 1` dies of SIGPIPE (bash's
// PIPESTATUS 141) as cp does, says nothing on stderr ("write error" is for
// a stdout that fails otherwise), and every file it left in the copy is
// complete, with no temporary file.
func TestVerboseIntoHead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tree := mustMkdir(t, join(dir, "tree"))
	const n = 2000
	for i := range n {
		writeFile(t, join(tree, fmt.Sprintf("file-with-a-name-long-enough-to-fill-the-pipe-%04d", i)), []byte(fmt.Sprint(i)), 0o644)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := shellCmd(ctx, t, dir, `"$0" -rv tree copy | head -n 1; echo "status ${PIPESTATUS[0]}"`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "'tree' -> 'copy'\nstatus 141\n" || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q: want one line, then status 141 and no message", stdout.String(), stderr.String())
	}
	ents, err := os.ReadDir(join(dir, "copy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) == n {
		t.Logf("all %d files were copied before the SIGPIPE", n)
	}
	for _, e := range ents {
		want, err := os.ReadFile(join(tree, e.Name()))
		if err != nil {
			t.Errorf("%s in the copy: %v", e.Name(), err)
			continue
		}
		assertFileBytes(t, join(dir, "copy", e.Name()), want)
	}
	assertNoTemps(t, join(dir, "copy"))
}

// TestPipeDest: a DEST that is a pipe, named by a magic link (/dev/stdout,
// /dev/fd/1, /proc/self/fd/1, bash's >(cmd)), is written into, as cp
// writes it: the link is opened, never resolved by name (its target reads
// "pipe:[N]"). A reader that leaves early makes fastcp die of SIGPIPE,
// without a message.
func TestPipeDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := randomBytes(3<<20+123, "pipe-dest")
	writeFile(t, join(dir, "src"), data, 0o644)
	for _, c := range []struct {
		name, script string
	}{
		{"dev-stdout", `"$0" src /dev/stdout | cat > out`},
		{"dev-fd-1", `"$0" src /dev/fd/1 | cat > out`},
		{"proc-self-fd-1", `"$0" src /proc/self/fd/1 | cat > out`},
		{"process-substitution", `"$0" src >(cat > out.part && mv out.part out); while [ ! -e out ]; do sleep 0.01; done`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			os.Remove(join(dir, "out"))
			cmd := shellCmd(ctx, t, dir, `set -o pipefail; `+c.script)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || stderr.Len() != 0 {
				t.Fatalf("%v, stderr %q", err, stderr.String())
			}
			assertFileBytes(t, join(dir, "out"), data)
		})
	}
	t.Run("reader-leaves", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		cmd := shellCmd(ctx, t, dir, `"$0" src /dev/stdout | head -c 100 >/dev/null; echo "status ${PIPESTATUS[0]}"`)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != "status 141\n" || stderr.Len() != 0 {
			t.Errorf("%v, stdout %q, stderr %q: want a silent death by SIGPIPE", err, stdout.String(), stderr.String())
		}
	})
}

// TestBackgroundJobOnTerminal runs fastcp --progress as a background job
// of a job-control shell on a pseudo-terminal with stty tostop: a write to
// the terminal would stop it (SIGTTOU), and bash's wait would report the
// stop (status 150). fastcp must draw nothing while in the background and
// run to its end; the same copy in the foreground draws its bar.
func TestBackgroundJobOnTerminal(t *testing.T) {
	t.Parallel()
	bash := needTool(t, "bash")
	dir := t.TempDir()
	data := randomBytes(1<<20, "background")
	for _, c := range []struct {
		name, job string
		wantBar   bool
	}{
		{"background", `"$0" --progress src dst-bg & wait $!; echo "status $?"`, false},
		{"foreground", `"$0" --progress src dst-fg; echo "status $?"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fifo := join(dir, "src")
			os.Remove(fifo)
			mkfifo(t, fifo)
			// The source comes slowly, over a second: several redraws.
			wrote := make(chan error, 1)
			go func() {
				f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					wrote <- err
					return
				}
				defer f.Close()
				for i := 0; i < len(data); i += len(data) / 8 {
					if _, err := f.Write(data[i : i+len(data)/8]); err != nil {
						wrote <- err
						return
					}
					time.Sleep(150 * time.Millisecond)
				}
				wrote <- nil
			}()
			master, slave := openPTY(t, 80)
			defer master.Close()
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bash, "-c", `set -m; stty tostop; `+c.job, setup.Bin)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C", "TERM=xterm")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			cmd.WaitDelay = 5 * time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			var out bytes.Buffer
			read := make(chan struct{})
			go func() { io.Copy(&out, master); close(read) }()
			err := cmd.Wait()
			waitFIFOPeer(t, fifo, wrote)
			// The shell and its job have ended, and with them the last
			// holders of the terminal: the read ends (EIO) once it has
			// drained what they wrote. Closing the master before that
			// would lose their last lines, the status among them.
			select {
			case <-read:
			case <-time.After(10 * time.Second):
				master.Close()
				<-read
				t.Fatalf("the terminal was still open 10s after the shell ended; it showed %q", out.String())
			}
			got := out.String()
			if err != nil || !strings.Contains(got, "status 0") {
				t.Fatalf("%v; terminal: %q: want the job to end with status 0", err, got)
			}
			if bar := strings.Contains(got, "copying 'dst-"); bar != c.wantBar {
				t.Errorf("bar drawn: %v, want %v; terminal: %q", bar, c.wantBar, got)
			}
			dst := "dst-fg"
			if !c.wantBar {
				dst = "dst-bg"
			}
			assertFileBytes(t, join(dir, dst), data)
		})
	}
}
