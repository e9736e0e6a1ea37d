// SPDX-License-Identifier: MIT

package integration_test

import (
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Without -j a tree is copied several files at once: while the copy of
// src/a/fifo (read as data, --copy-contents) waits for its writer to
// finish, src/b/file is copied and appears whole in DEST. With -j 1 it
// waits its turn, as in cp. Either way the run ends with every byte in
// place and exit 0.
func TestTreeCopiesFilesAtOnceByDefault(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		args   []string
		atOnce bool
	}{
		{name: "default", atOnce: true},
		{name: "-j 1", args: []string{"-j", "1"}},
		{name: "-j 2", args: []string{"-j", "2"}, atOnce: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mustMkdir(t, join(dir, "src", "a"))
			mustMkdir(t, join(dir, "src", "b"))
			fifo := join(dir, "src", "a", "fifo")
			if err := unix.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			data := randomBytes(5000, "b/file")
			writeFile(t, join(dir, "src", "b", "file"), data, 0o644)

			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd := fastcpCmd(ctx, dir, append(append([]string(nil), c.args...), "-r", "--copy-contents", "src", "dst")...)
			done := make(chan result, 1)
			go func() { done <- runCmd(t, cmd) }()

			// The writer connects once fastcp reads the FIFO, writes,
			// and holds its end open: the FIFO's copy cannot end.
			hold := make(chan struct{})
			wrote := fifoWriter(fifo, []byte("through the FIFO\n"), hold)
			copied := join(dir, "dst", "b", "file")
			appeared := func() bool { _, err := os.Lstat(copied); return err == nil }
			if c.atOnce {
				if !waitFor(appeared) {
					close(hold)
					t.Fatal("dst/b/file did not appear while dst/a/fifo's copy was held")
				}
				assertFileBytes(t, copied, data)
			} else {
				time.Sleep(500 * time.Millisecond)
				if appeared() {
					t.Error("-j 1: dst/b/file appeared while dst/a/fifo's copy was held")
				}
			}
			close(hold)
			if err := waitFIFOPeer(t, fifo, wrote); err != nil {
				t.Fatal(err)
			}
			wantSuccess(t, <-done)
			assertFileBytes(t, join(dir, "dst", "a", "fifo"), []byte("through the FIFO\n"))
			assertFileBytes(t, copied, data)
		})
	}
}
