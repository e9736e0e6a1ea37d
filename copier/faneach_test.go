// SPDX-License-Identifier: MIT

package copier

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cachedAll is a SourceCached that says the whole source is in the page
// cache (size bytes), or less by short.
func cachedAll(size, short int64) func() (int64, error) {
	return func() (int64, error) { return size - short, nil }
}

// A small source, or one wholly in the page cache, is copied by the kernel
// into each destination on its own; otherwise, and with a hash or
// --nocache, the destinations share one read.
func TestCopyManyOwnKernelCopies(t *testing.T) {
	t.Parallel()
	// Below the rw loop's buffer, and a few bytes past it: a source of
	// that size or more is small no longer.
	small, large := randomBytes(t, 64<<10+3), randomBytes(t, DefaultBufferSize+17)
	// Every case's source, by size; none changes them (the page cache
	// each case says the source has is its own SourceCached).
	paths := map[int]string{len(small): srcFile(t, small), len(large): srcFile(t, large)}
	cases := []struct {
		name string
		data []byte
		opts func(size int64) Options
		own  bool
	}{
		{"small", small, func(int64) Options { return Options{} }, true},
		{"small, not known cached", small, func(int64) Options { return Options{SourceCached: cachedAll(0, 0)} }, true},
		{"cached", large, func(n int64) Options { return Options{SourceCached: cachedAll(n, 0)} }, true},
		{"cached but one page", large, func(n int64) Options { return Options{SourceCached: cachedAll(n, 4096)} }, false},
		{"cache not asked", large, func(int64) Options { return Options{} }, false},
		{"cache unknown", large, func(int64) Options {
			return Options{SourceCached: func() (int64, error) { return 0, unix.ENOSYS }}
		}, false},
		{"small with a hash", small, func(int64) Options { return Options{Hash: sha256.New()} }, false},
		{"cached with a hash", large, func(n int64) Options { return Options{SourceCached: cachedAll(n, 0), Hash: sha256.New()} }, false},
		{"cached, --nocache", large, func(n int64) Options { return Options{SourceCached: cachedAll(n, 0), NoCache: true} }, false},
		{"small, forced rw", small, func(int64) Options { return Options{Strategy: RW} }, false},
	}
	for _, c := range cases {
		for _, n := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				t.Parallel()
				size := int64(len(c.data))
				src, dsts := manyFrom(t, paths[len(c.data)], n)
				var progress countingCounter
				o := c.opts(size)
				o.Progress = &progress
				res, errs := CopyMany(src, destsOf(dsts), o)
				for i, d := range dsts {
					if errs[i] != nil {
						t.Fatalf("destination %d: %v", i, errs[i])
					}
					mustHold(t, d, c.data)
					r := res[i]
					if r.Size != size {
						t.Errorf("destination %d: size %d, want %d", i, r.Size, size)
					}
					switch {
					case c.own && (r.Each != n || r.Shared != 0 || r.Strategy != CopyFileRange && r.Strategy != Sendfile):
						t.Errorf("destination %d: %v, own %d, shared %d; want a kernel copy of its own, one of %d", i, r.Strategy, r.Each, r.Shared, n)
					case !c.own && (r.Each != 0 || r.Shared != n || r.SharedRead.Bytes != size):
						t.Errorf("destination %d: own %d, shared %d reading %d bytes; want one read of %d shared by %d", i, r.Each, r.Shared, r.SharedRead.Bytes, size, n)
					}
				}
				if progress.n != size {
					t.Errorf("progress %d, want %d", progress.n, size)
				}
			})
		}
	}
}

// A source wholly cached is copied into every destination at once, and a
// destination that fails does so alone: the others get every byte, and
// the progress counts what reached those still written.
func TestCopyManyOwnCopiesAtOnceFailAlone(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// A few bytes past the rw loop's buffer: smaller, the copies would be
	// made one after the other.
	data := randomBytes(t, DefaultBufferSize+17)
	src, dsts := many(t, data, 3)
	first, bad := int(dsts[0].Fd()), int(dsts[1].Fd())
	started := make(chan struct{})
	var once sync.Once
	var waitErr error
	kernelCopy := func(dst int) error {
		switch dst {
		case bad:
			// The second destination starts while the first is held.
			once.Do(func() { close(started) })
			return unix.ENOSPC
		case first:
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				waitErr = errors.New("the first destination's copy waited 10 s for the second to start: one after the other")
			}
		}
		return nil
	}
	kernelCopiesThrough(t, sys, kernelCopy, 0)
	var progress countingCounter
	res, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, SourceCached: cachedAll(int64(len(data)), 0), Progress: &progress})
	if waitErr != nil {
		t.Error(waitErr)
	}
	if !errors.Is(errs[1], unix.ENOSPC) {
		t.Errorf("destination 1: %v, want ENOSPC", errs[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] != nil {
			t.Fatalf("destination %d: %v", i, errs[i])
		}
		mustHold(t, dsts[i], data)
		if res[i].Each != 3 {
			t.Errorf("destination %d: own %d, want 3", i, res[i].Each)
		}
	}
	if progress.n != int64(len(data)) {
		t.Errorf("progress %d, want %d", progress.n, len(data))
	}
}

// When one of the copies made beside each other fails, the progress goes
// on with the others while they are still being made: it is the least of
// theirs, no longer held at the failed copy's count until the end.
func TestCopyManyProgressGoesOnPastAFailedCopy(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// A few bytes past the rw loop's buffer (the copies made at once), a
	// call of a few blocks at a time: the held copy makes many calls.
	const call = 64 << 10
	data := randomBytes(t, DefaultBufferSize+17)
	src, dsts := many(t, data, 3)
	held, bad := int(dsts[0].Fd()), int(dsts[2].Fd())
	progress := &notifyingCounter{more: make(chan struct{}, 1)}
	var heldCalls atomic.Int32
	var waitErr error
	kernelCopy := func(dst int) error {
		switch dst {
		case bad:
			return unix.ENOSPC
		case held:
			// Its second call waits for progress: the copy still running
			// beside it moved on, and the failed one is left out.
			if heldCalls.Add(1) == 2 && !progress.waitPast(0, 10*time.Second) {
				waitErr = errors.New("no progress in 10 s while a copy was held: the failed copy's count held it back")
			}
		}
		return nil
	}
	kernelCopiesThrough(t, sys, kernelCopy, call)
	_, errs := CopyMany(src, destsOf(dsts), Options{sys: sys, SourceCached: cachedAll(int64(len(data)), 0), Progress: progress})
	if waitErr != nil {
		t.Error(waitErr)
	}
	if heldCalls.Load() < 2 {
		t.Errorf("the held copy made %d calls, want several", heldCalls.Load())
	}
	if !errors.Is(errs[2], unix.ENOSPC) {
		t.Errorf("destination 2: %v, want ENOSPC", errs[2])
	}
	for _, i := range []int{0, 1} {
		if errs[i] != nil {
			t.Fatalf("destination %d: %v", i, errs[i])
		}
		mustHold(t, dsts[i], data)
	}
	if n := progress.n.Load(); n != int64(len(data)) {
		t.Errorf("progress %d, want %d", n, len(data))
	}
}

// kernelCopiesThrough makes sys's copy_file_range and sendfile call first
// with the destination's descriptor, failing with its error, and move at
// most most bytes a call (0: as many as asked).
func kernelCopiesThrough(t *testing.T, sys *sysCalls, first func(dst int) error, most int) {
	t.Helper()
	capped := func(n int) int {
		if most > 0 {
			return min(n, most)
		}
		return n
	}
	inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
		if err := first(wfd); err != nil {
			return 0, err
		}
		return defaultSys.copyFileRange(rfd, roff, wfd, woff, capped(n), flags)
	})
	inject(t, &sys.sendfile, func(out, in int, off *int64, n int) (int, error) {
		if err := first(out); err != nil {
			return 0, err
		}
		return defaultSys.sendfile(out, in, off, capped(n))
	})
}

// notifyingCounter counts and says so on more, for a test to wait on.
type notifyingCounter struct {
	n    atomic.Int64
	more chan struct{}
}

func (c *notifyingCounter) Add(n int64) {
	c.n.Add(n)
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// waitPast waits until the count is past v, for at most d.
func (c *notifyingCounter) waitPast(v int64, d time.Duration) bool {
	deadline := time.After(d)
	for c.n.Load() <= v {
		select {
		case <-c.more:
		case <-deadline:
			return false
		}
	}
	return true
}

// The progress of copies made beside each other is the least of theirs,
// leaving out those that failed, and never goes back.
func TestEachProgress(t *testing.T) {
	t.Parallel()
	var out countingCounter
	p := &eachProgress{out: &out, n: make([]int64, 3), gone: make([]bool, 3), sent: 10}
	c := func(i int) Counter { return eachCounter{p, i} }
	step := func(what string, f func(), want int64) {
		t.Helper()
		f()
		if out.n != want {
			t.Errorf("after %s: %d given, want %d", what, out.n, want)
		}
	}
	step("each starts at 10", func() { c(0).Add(10); c(1).Add(10); c(2).Add(10) }, 0)
	step("two move on", func() { c(0).Add(50); c(2).Add(30) }, 0)
	step("the third moves on", func() { c(1).Add(100) }, 30)
	step("the slowest fails", func() { p.drop(2) }, 50)
	step("the first catches up", func() { c(0).Add(60) }, 100)
	step("every one fails", func() { p.drop(0); p.drop(1) }, 100)
	step("the end", func() { p.finish(200) }, 190)
}
