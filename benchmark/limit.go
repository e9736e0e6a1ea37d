// SPDX-License-Identifier: MIT

package benchmark

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"fastcp/copier"

	"golang.org/x/sys/unix"
)

// The device limit's requests: limitDepth of limitBlockBytes in flight on
// each side, as `fio --ioengine=libaio --direct=1 --bs=4M --iodepth=8` with
// a read job and a write job at once.
const (
	limitBlockBytes = 4 << 20
	limitDepth      = 8
)

// deviceLimit measures what the device gives a copy: the source read
// (cold) and a new file of the same size in the copies' directory written,
// both at once, O_DIRECT, limitDepth requests in flight on each side. The
// written file is preallocated first (as fio lays out its files) and
// removed after; nothing is flushed, as in section 1's copies.
func (b *bench) deviceLimit() DeviceLimit {
	d := DeviceLimit{BlockBytes: limitBlockBytes, Depth: limitDepth}
	b.prog.set("section 1/%d: the device's O_DIRECT read and write at once", sections)
	mem, err := unix.Mmap(-1, 0, 2*limitDepth*limitBlockBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		d.Error = copier.ErrnoText(os.NewSyscallError("mmap", err))
		return d
	}
	defer unix.Munmap(mem)
	// As the copier's own buffers: huge pages, so a request is not cut
	// at the device's segment limit. Advice only.
	_ = unix.Madvise(mem, unix.MADV_HUGEPAGE)

	src, err := os.Open(b.srcPath)
	if err != nil {
		d.Error = errText(err)
		return d
	}
	defer src.Close()
	if err := evict(src); err != nil {
		d.Error = errText(err)
		return d
	}
	if d.ReadResident, err = residentFraction(src, b.size); err != nil {
		d.Error = errText(err)
		return d
	}
	rfd, err := unix.Open(b.srcPath, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		d.Error = copier.ErrnoText(os.NewSyscallError("open(O_DIRECT)", err))
		return d
	}
	defer unix.Close(rfd)

	path := filepath.Join(b.dstDir, "o_direct")
	f, err := b.ws.create(path)
	if err != nil {
		d.Error = errText(err)
		return d
	}
	defer os.Remove(path)
	defer f.Close()
	// The whole blocks only, as fio writes them; the size differs from the
	// source's by less than a block.
	whole := max(b.size/limitBlockBytes*limitBlockBytes, limitBlockBytes)
	if err := limitDest(f, whole); err != nil {
		d.Error = errText(err)
		return d
	}

	var reads, writes side
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		reads.run(rfd, mem[:limitDepth*limitBlockBytes], b.size, t0, unix.Pread, "pread64")
	}()
	go func() {
		defer wg.Done()
		writes.run(int(f.Fd()), mem[limitDepth*limitBlockBytes:], whole, t0, unix.Pwrite, "pwrite64")
	}()
	wg.Wait()
	if err := errors.Join(reads.err, writes.err); err != nil {
		d.Error = copier.ErrnoText(err)
		return d
	}
	d.ReadS, d.WriteS = reads.secs, writes.secs
	// Out of the way of the copies that follow, untimed.
	if err := evict(f); err != nil {
		d.Error = errText(err)
		return d
	}
	d.ReadMBps = mbPerSec(b.size, d.ReadS)
	d.WriteMBps = mbPerSec(whole, d.WriteS)
	d.LimitMBps = min(d.ReadMBps, d.WriteMBps)
	return d
}

// limitDest readies the device limit's written file: O_DIRECT, and its
// blocks preallocated where the filesystem can (as the copier does).
func limitDest(f *os.File, size int64) error {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(f.Fd(), unix.F_SETFL, fl|unix.O_DIRECT)
	}
	if err != nil {
		return os.NewSyscallError("fcntl(F_SETFL, O_DIRECT)", err)
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil && err != unix.EOPNOTSUPP {
		return os.NewSyscallError("fallocate", err)
	}
	return nil
}

// side is one direction of the device limit: limitDepth goroutines, each
// with a block of its own, taking the next block's offset in turn.
type side struct {
	secs float64
	err  error
}

func (s *side) run(fd int, mem []byte, total int64, t0 time.Time, call func(int, []byte, int64) (int, error), name string) {
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range limitDepth {
		buf := mem[i*limitBlockBytes : (i+1)*limitBlockBytes]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				off := next.Add(limitBlockBytes) - limitBlockBytes
				if off >= total {
					return
				}
				// O_DIRECT counts are whole blocks: the source's
				// unaligned end is read as one, and comes back short.
				n := (min(limitBlockBytes, total-off) + 4095) &^ 4095
				if err := fullIO(fd, buf[:n], off, call); err != nil {
					mu.Lock()
					s.err = errors.Join(s.err, os.NewSyscallError(name, err))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	s.secs = time.Since(t0).Seconds()
}

// fullIO reads or writes all of b at off (a short O_DIRECT read of the
// source's last block returns what the file has: rounded up to the
// alignment, the buffer is whole blocks).
func fullIO(fd int, b []byte, off int64, call func(int, []byte, int64) (int, error)) error {
	for n := 0; n < len(b); {
		m, err := call(fd, b[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if m <= 0 {
			return fmt.Errorf("end of file at %d", off+int64(n))
		}
		n += m
		if n%4096 != 0 {
			// The source's unaligned end.
			return nil
		}
	}
	return nil
}
