// SPDX-License-Identifier: MIT

package integration_test

// A device or FIFO DEST is written in place; a copy into one that fails
// (ENOSPC on a small block device, EPIPE from a FIFO whose reader left)
// leaves part of the copy there, and fastcp says so, as it does after a
// fatal signal.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestPartialDeviceNamed(t *testing.T) {
	needLoop(t)
	losetup := needTool(t, "losetup")
	dir := t.TempDir()
	img := join(dir, "img")
	if err := os.WriteFile(img, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(losetup, "-f", "--show", img).Output()
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command(losetup, "-d", dev).Run() })
	writeFile(t, join(dir, "src"), randomBytes(2<<20, t.Name()), 0o644)
	for _, strategy := range []string{"auto", "rw"} {
		r := fastcp(t, dir, "--strategy="+strategy, "src", dev)
		if r.code != 1 || !strings.Contains(r.stderr, "No space left on device") ||
			!strings.HasSuffix(r.stderr, "fastcp: "+q(dev)+" was written in place and is now incomplete\n") {
			t.Errorf("--strategy=%s: %v, want ENOSPC and the device named as incomplete", strategy, r)
		}
	}
}

func TestPartialFIFONamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, join(dir, "src"), randomBytes(8<<20, t.Name()), 0o644)
	fifo := join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		f, err := os.Open(fifo)
		if err == nil {
			_, err = io.ReadFull(f, make([]byte, 1000))
			f.Close()
		}
		read <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := fastcpCmd(ctx, dir, "src", "fifo")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if e := <-read; e != nil {
		t.Fatal(e)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
		t.Errorf("%v, want a death by SIGPIPE, as cp's", err)
	}
	if want := "fastcp: interrupted: 'fifo' was written in place and is now incomplete\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// --sync=data --verify of a sparse file of 1 TiB with 2 MiB of data reads
// back and checksums the data only: the holes read as zeros on both sides
// and are not read (reading them took over 120 s). Every byte fastcp reads
// or copies is counted (strace): a few chunks around the data, far from
// the holes' TiB.
func TestVerifySparseReadsDataOnly(t *testing.T) {
	dir := fsDir(t, "tmpfs")
	const size = 1 << 40
	data := randomBytes(1<<20, t.Name())
	f, err := os.Create(join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, size / 2} {
		if _, err := f.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	reads := []string{"read", "pread64", "readv", "preadv", "preadv2", "copy_file_range", "sendfile", "splice"}
	r, calls, _ := durRunStrace(t, dir, []string{"-e", "trace=" + strings.Join(reads, ",")}, nil, "--sync=data", "--verify", "src", "dst")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%v: want a verified copy", r)
	}
	var moved int64
	for _, c := range calls {
		if n, err := strconv.ParseInt(c.ret, 10, 64); err == nil && n > 0 {
			moved += n
		}
	}
	t.Logf("%d bytes read or copied in %d calls", moved, len(calls))
	if moved >= 1<<30 {
		t.Errorf("%d bytes read or copied for 2 MiB of data: the holes were read", moved)
	}
	g, err := os.Open(join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if st := statT(t, join(dir, "dst")); st.Size != size {
		t.Fatalf("DEST has %d bytes, want %d", st.Size, size)
	}
	for _, off := range []int64{0, size / 2} {
		b := make([]byte, len(data))
		if _, err := g.ReadAt(b, off); err != nil || !bytes.Equal(b, data) {
			t.Errorf("DEST's data at %d differs (%v)", off, err)
		}
	}
}

// SIGTERM while a sendfile call of the whole file is in flight (48 MiB,
// one call; strace holds its return): the call has written every byte
// when fastcp records its last checkpoint, and the message and the record
// say so, where they said 0.
func TestResumeSignalDuringSendfileKeepsItsBytes(t *testing.T) {
	dir := fsDir(t, "tmpfs")
	const size = 48 << 20
	writePattern(t, join(dir, "src"), size, t.Name())
	strace := durStrace(t)
	cmd := exec.Command(strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=sendfile",
		"-e", "inject=sendfile:delay_exit=400000", setup.Bin, "--resume", "--strategy=sendfile", "src", "dst")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	s := &slowRun{cmd: cmd, waited: make(chan error, 1)}
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-s.waited })
	temp := join(dir, resumeTemp)
	s.waitUntil(t, "the whole file written", func() bool { return sizeOf(temp) == size })
	if code := s.signal(t, syscall.SIGTERM); code != 143 {
		t.Fatalf("exit status %d after SIGTERM, want 143; stderr %q", code, s.output())
	}
	m := keptRE.FindStringSubmatch(strings.TrimSpace(s.output()))
	if m == nil || m[3] != "50331648" || checkpointOf(temp) != size {
		t.Fatalf("stderr %q, checkpoint %d: want all %d bytes kept", s.output(), checkpointOf(temp), size)
	}
	r := fastcp(t, dir, "--resume", "src", "dst")
	if r.code != 0 || r.stderr != "" {
		t.Fatal(r)
	}
	sameFiles(t, join(dir, "src"), join(dir, "dst"))
}
