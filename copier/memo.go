// SPDX-License-Identifier: MIT

package copier

import (
	"maps"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Memo remembers which strategies a pair of filesystems refused, so a run
// over many files pays for a refusal once, not once per file. It is safe for
// concurrent use; the zero value is ready.
//
// Every copy looks its strategies up, and refusals are few and learnt
// early: the map is never changed, but replaced (under mu) by a copy with
// the new entry, so a lookup takes no lock.
type Memo struct {
	mu      sync.Mutex
	refused atomic.Pointer[map[memoKey]memoEntry]
}

type memoKey struct {
	srcDev, dstDev uint64
	s              Strategy
}

type memoEntry struct{ err error }

// memoizable reports whether a refusal is a property of the filesystems
// (the same for every file on them) rather than of one file: an unaligned
// FICLONERANGE (EINVAL) or an O_APPEND file (EBADF) says nothing about the
// next file, a missing syscall or an unsupported filesystem does.
func memoizable(err error) bool {
	errno, ok := asType[unix.Errno](err)
	if !ok {
		return false
	}
	switch errno {
	case unix.ENOSYS, unix.EXDEV, unix.EOPNOTSUPP, unix.ENOTTY:
		return true
	}
	return false
}

func (m *Memo) lookup(srcDev, dstDev uint64, s Strategy) error {
	if m == nil {
		return nil
	}
	refused := m.refused.Load()
	if refused == nil {
		return nil
	}
	return (*refused)[memoKey{srcDev, dstDev, s}].err
}

func (m *Memo) remember(srcDev, dstDev uint64, s Strategy, err error) {
	if m == nil || !memoizable(err) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	refused := make(map[memoKey]memoEntry)
	if old := m.refused.Load(); old != nil {
		refused = maps.Clone(*old)
	}
	refused[memoKey{srcDev, dstDev, s}] = memoEntry{err}
	m.refused.Store(&refused)
}
