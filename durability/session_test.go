// SPDX-License-Identifier: MIT

package durability

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"fastcp/internal/fsdir"

	"golang.org/x/sys/unix"
)

// Two copies of one run (-j) create their entries at once: the second
// create starts while the first is still under way, where on a network
// filesystem each is a round trip. Each create waits for the other to have
// started; with creates taken one at a time both would wait in vain.
func TestCreatesRunAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := NewSession()
	started := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, err := replace(s, fsdir.Cwd, filepath.Join(dir, []string{"a", "b"}[i]), func(e Entry) error {
				close(started[i])
				select {
				case <-started[1-i]:
				case <-time.After(20 * time.Second):
					t.Errorf("create %d: the other create did not start meanwhile", i)
				}
				return unix.Symlinkat("target", e.Dir, e.Name)
			}, nil)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b"} {
		if got, err := os.Readlink(filepath.Join(dir, n)); err != nil || got != "target" {
			t.Errorf("%s: %q, %v; want a link to target", n, got, err)
		}
	}
}

// Interrupt during a create never leaves the entry behind: the create and
// its registration happen wholly before Interrupt looks (which then
// removes the entry, and the copy is held off for good) or, with the
// rename, wholly before it. Either way no temporary name is left.
func TestInterruptDuringACreate(t *testing.T) {
	t.Parallel()
	for range 20 {
		dir := t.TempDir()
		s := NewSession()
		inCreate, release := make(chan struct{}), make(chan struct{})
		created := make(chan error, 1)
		go func() {
			_, err := replace(s, fsdir.Cwd, filepath.Join(dir, "a"), func(e Entry) error {
				if err := unix.Symlinkat("target", e.Dir, e.Name); err != nil {
					return err
				}
				close(inCreate)
				<-release
				return nil
			}, nil)
			created <- err
		}()
		<-inCreate
		interrupted := make(chan Interrupted, 1)
		go func() { interrupted <- s.Interrupt() }()
		close(release)
		<-interrupted
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != "a" {
				t.Fatalf("left behind after Interrupt: %s", e.Name())
			}
		}
		s.mu.Unlock()
		if err := <-created; len(ents) == 1 && err != nil {
			t.Fatalf("DEST is there, but Replace failed: %v", err)
		}
	}
}
