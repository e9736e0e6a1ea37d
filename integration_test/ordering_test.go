// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWarningsFollowTheirEntry: what a copy cannot keep of the DEST it
// replaces is said after that entry's -v line, not before it, even
// without -j. Copied by uid 65534 over a root-owned DEST of mode 0666 with
// a security.* attribute: the new file cannot be given to root ("now
// belongs to"), nor take the attribute ("lost its extended attribute").
func TestWarningsFollowTheirEntry(t *testing.T) {
	t.Parallel()
	scratch, bin := ccUserScratch(t)
	dir := mustMkdir(t, join(scratch, "order"))
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	src, dst := join(dir, "src"), join(dir, "dst")
	writeFile(t, src, []byte("new\n"), 0o644)
	if err := os.Chown(src, ccNobody, ccNobody); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, []byte("old\n"), 0o666)
	if err := unix.Chmod(dst, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(dst, "security.fastcptest", []byte("kept"), 0); err != nil {
		t.Skipf("security.* attributes refused here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-v", "src", "dst")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ccNobody, Gid: ccNobody, Groups: []uint32{}}}
	var both bytes.Buffer
	cmd.Stdout, cmd.Stderr = &both, &both
	if err := cmd.Run(); err != nil {
		t.Fatalf("fastcp: %v: %s", err, both.String())
	}
	want := "'src' -> 'dst'\n" +
		"fastcp: warning: 'dst' now belongs to uid 65534, gid 65534 (was 0, 0): Operation not permitted; --inplace keeps the owner\n" +
		"fastcp: warning: 'dst' lost its extended attribute 'security.fastcptest': Operation not permitted; --inplace keeps it\n"
	if got := both.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	assertFileBytes(t, dst, []byte("new\n"))
}
