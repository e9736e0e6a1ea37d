// SPDX-License-Identifier: MIT

package durability

import (
	"fastcp/internal/sysx"
	"hash/crc32"
	"runtime"
	"sync/atomic"
)

// sourceSums checksums the source behind the copy for --verify, when the
// source is known from the start (Options.Source): a --sync copy spends
// most of its time waiting for the device, so reading the source's pages
// while they are still cached from the copy and checksumming them is
// almost free then, and the verification after the flush only has the
// destination left to read. It never reads past what the copy reported
// written (Written), so it reads cached pages instead of competing with the
// copy for the device; at Commit it reads whatever is left to the end.
type sourceSums struct {
	sys   *sysCalls
	src   sysx.Descriptor
	cache *sourceCache // --nocache: drops what the copy brought in; nil: nothing
	mark  atomic.Int64 // the end of what the copy wrote so far
	final atomic.Bool  // Commit: read to the end without waiting
	stop  atomic.Bool  // Abort: give up
	wake  chan struct{}
	done  chan sums
}

func startSourceSums(sys *sysCalls, src sysx.Descriptor, cache *sourceCache) *sourceSums {
	s := &sourceSums{sys: sys, src: src, cache: cache, wake: make(chan struct{}, 1), done: make(chan sums, 1)}
	go s.run()
	return s
}

// written moves the mark; called from Written.
func (s *sourceSums) written(end int64) {
	if end > s.mark.Load() {
		s.mark.Store(end)
	}
	s.poke()
}

func (s *sourceSums) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// result reads what is left and returns the checksums.
func (s *sourceSums) result() sums {
	s.final.Store(true)
	s.poke()
	return <-s.done
}

// abandon stops the reader and waits for it, so that it never touches the
// source's descriptor after the caller closed it.
func (s *sourceSums) abandon() {
	s.stop.Store(true)
	s.poke()
	<-s.done
}

func (s *sourceSums) run() {
	defer runtime.KeepAlive(s.src)
	fd := int(s.src.Fd())
	buf, put := chunkBuf(1)
	defer put()
	holes := s.sys.newHoleMap(fd)
	defer holes.close()
	var r sums
	for {
		if s.stop.Load() {
			s.done <- r
			return
		}
		final := s.final.Load()
		if !final && r.size+verifyChunk > s.mark.Load() {
			<-s.wake
			continue
		}
		if n, ok := holes.hole(r.size, verifyChunk); ok {
			// A hole: its checksum is that of zeros (holes.go).
			r.crcs = append(r.crcs, zeroSum(n))
			r.size += int64(n)
			if n < verifyChunk {
				s.done <- r
				return
			}
			continue
		}
		n, err := readFull(fd, buf, r.size)
		if err != nil {
			r.err = err
			s.done <- r
			return
		}
		if n < verifyChunk && !final {
			// Shorter than what was copied: the source shrank. Let the
			// read at Commit say what it holds then.
			<-s.wake
			continue
		}
		if n > 0 {
			r.crcs = append(r.crcs, crc32.Checksum(buf[:n], castagnoli()))
			s.cache.drop(r.size, int64(n))
			r.size += int64(n)
		}
		if n < verifyChunk {
			s.done <- r
			return
		}
	}
}
