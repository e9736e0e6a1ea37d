// SPDX-License-Identifier: MIT

package benchmark

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"fastcp/copier"

	"golang.org/x/sys/unix"
)

// The device limit's requests: limitDepth of limitBlockBytes in flight on
// each side, as `fio --ioengine=libaio --direct=1 --bs=4M --iodepth=8
// --mem=shmhuge --end_fsync=1` with a read job and a write job at once.
const (
	limitBlockBytes = 4 << 20
	limitDepth      = 8
	hugePageBytes   = 2 << 20
	// maxLimitDepth bounds the depth when small pages make the requests
	// smaller (the same bytes in flight).
	maxLimitDepth = 64
)

// Where the limit's buffers come from (DeviceLimit.Buffers).
const (
	buffersHugeTLB = "2 MiB huge pages (hugetlb)"
	buffersTHP     = "2 MiB transparent huge pages"
	buffersSmall   = "4 KiB pages"
)

// limitProbe measures what the device gives a copy: the source read
// (cold) and a new file of the same size in the copies' directory written,
// both at once, O_DIRECT, depth requests in flight on each side, the
// written file preallocated first (as fio lays out its files), flushed
// (fdatasync, as fio's end_fsync) and removed after each run. It runs
// once a round of section 1, among the copies, so that it sees the same
// weather they do.
//
// The buffers are huge pages where the system has them (hugetlb pages an
// administrator reserved, else transparent huge pages, checked in
// /proc/self/smaps): a request of small pages is a list of 4 KiB segments,
// and a device takes a bounded number of them (virtio: 254), so a 4 MiB
// request of 4 KiB pages is split, and the limit would read low. Without
// huge pages, the requests are cut to what the device takes in one
// (max_segments pages), with more of them in flight.
type limitProbe struct {
	b      *bench
	mem    []byte
	unmap  func()
	block  int
	depth  int
	kind   string // buffersHugeTLB, buffersTHP, buffersSmall
	rfd    int
	path   string // the written file
	err    error  // set up failed: why
	runs   []limitRun
	failed error // a run failed: why (the limit is then unknown)
}

// limitRun is one run's figures.
type limitRun struct {
	read, write, flush time.Duration
	resident           float64
	writeBytes         int64
}

func (b *bench) newLimitProbe() *limitProbe {
	p := &limitProbe{b: b, rfd: -1, path: filepath.Join(b.dstDir, "o_direct")}
	mem, unmap, kind, err := limitBuffers(2 * limitDepth * limitBlockBytes)
	if err != nil {
		p.err = err
		return p
	}
	p.mem, p.unmap, p.kind = mem, unmap, kind
	p.block, p.depth = limitBlockBytes, limitDepth
	if kind == buffersSmall {
		// The device's segments of 4 KiB pages, at most: one request
		// is not split. The bytes in flight stay the same.
		seg := min(maxSegments(b.srcDir), maxSegments(b.dstDir))
		blk := limitBlockBytes
		for blk > 64<<10 && blk/os.Getpagesize() > seg {
			blk /= 2
		}
		p.block = blk
		p.depth = min(limitDepth*limitBlockBytes/blk, maxLimitDepth)
	}
	fd, err := unix.Open(b.srcPath, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		p.err = os.NewSyscallError("open(O_DIRECT)", err)
		return p
	}
	p.rfd = fd
	return p
}

// close releases the buffers and the source's descriptor.
func (p *limitProbe) close() {
	if p.unmap != nil {
		p.unmap()
		p.unmap = nil
	}
	if p.rfd >= 0 {
		unix.Close(p.rfd)
		p.rfd = -1
	}
}

// ok reports whether the probe can still run.
func (p *limitProbe) ok() bool { return p.err == nil && p.failed == nil }

// run measures once; a failure makes the limit unknown.
func (p *limitProbe) run() {
	if !p.ok() {
		return
	}
	r, err := p.measure()
	if err != nil {
		p.failed = err
		return
	}
	p.runs = append(p.runs, r)
}

func (p *limitProbe) measure() (limitRun, error) {
	var r limitRun
	b := p.b
	src, err := os.Open(b.srcPath)
	if err != nil {
		return r, err
	}
	defer src.Close()
	if err := evict(src); err != nil {
		return r, err
	}
	if r.resident, err = residentFraction(src, b.size); err != nil {
		return r, err
	}
	f, err := b.ws.create(p.path)
	if err != nil {
		return r, err
	}
	defer os.Remove(p.path)
	defer f.Close()
	// The whole blocks only, as fio writes them; the size differs from the
	// source's by less than a block.
	r.writeBytes = max(b.size/int64(p.block)*int64(p.block), int64(p.block))
	if err := limitDest(f, r.writeBytes); err != nil {
		return r, err
	}
	half := p.depth * p.block
	var reads, writes side
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		reads.run(p, p.rfd, p.mem[:half], b.size, unix.Pread, "pread64")
		reads.took = time.Since(t0)
	}()
	go func() {
		defer wg.Done()
		writes.run(p, int(f.Fd()), p.mem[half:2*half], r.writeBytes, unix.Pwrite, "pwrite64")
		if writes.err == nil {
			t := time.Now()
			if err := unix.Fdatasync(int(f.Fd())); err != nil {
				writes.err = os.NewSyscallError("fdatasync", err)
			}
			r.flush = time.Since(t)
		}
		writes.took = time.Since(t0)
	}()
	wg.Wait()
	if err := errors.Join(reads.err, writes.err); err != nil {
		return r, err
	}
	r.read, r.write = reads.took, writes.took
	return r, nil
}

// result is the limit over the runs: medians, and the spread of the
// limit (the slower side of each run).
func (p *limitProbe) result() DeviceLimit {
	d := DeviceLimit{BlockBytes: p.block, Depth: p.depth, Buffers: p.kind, Runs: len(p.runs)}
	switch {
	case p.err != nil:
		d.Error = copier.ErrnoText(p.err)
		return d
	case p.failed != nil:
		d.Error = copier.ErrnoText(p.failed)
		return d
	case len(p.runs) == 0:
		d.Error = "not measured"
		return d
	}
	var reads, writes, flushes, limits []float64
	for _, r := range p.runs {
		rs, ws := r.read.Seconds(), r.write.Seconds()
		reads, writes, flushes = append(reads, rs), append(writes, ws), append(flushes, r.flush.Seconds())
		limits = append(limits, min(mbPerSec(p.b.size, rs), mbPerSec(r.writeBytes, ws)))
		d.ReadResident = max(d.ReadResident, r.resident)
	}
	d.ReadS, d.WriteS, d.FlushS = summarize(reads).median, summarize(writes).median, summarize(flushes).median
	d.ReadMBps = mbPerSec(p.b.size, d.ReadS)
	d.WriteMBps = mbPerSec(p.runs[0].writeBytes, d.WriteS)
	d.LimitMBps = min(d.ReadMBps, d.WriteMBps)
	l := summarize(limits)
	// The two medians may come from different runs (the reads of one,
	// the writes of another), so the slower of them can lie outside the
	// runs' own limits: the spread shown takes it in.
	d.LimitMinMBps, d.LimitMaxMBps = min(l.min, d.LimitMBps), max(l.max, d.LimitMBps)
	return d
}

// limitBuffers maps n bytes for O_DIRECT buffers, in huge pages where the
// system has them: hugetlb pages first (reserved by the administrator in
// vm.nr_hugepages), then transparent huge pages (asked for with
// MADV_HUGEPAGE and checked), else small pages.
func limitBuffers(n int) (mem []byte, release func(), kind string, err error) {
	n = (n + hugePageBytes - 1) / hugePageBytes * hugePageBytes
	if m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_HUGETLB); err == nil {
		return m, func() { unix.Munmap(m) }, buffersHugeTLB, nil
	}
	// One huge page more, to start the buffers on a huge page's boundary.
	m, err := unix.Mmap(-1, 0, n+hugePageBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, "", os.NewSyscallError("mmap", err)
	}
	release = func() { unix.Munmap(m) }
	addr := uintptr(unsafe.Pointer(&m[0]))
	skip := (hugePageBytes - addr%hugePageBytes) % hugePageBytes
	mem = m[skip : skip+uintptr(n)]
	kind = buffersSmall
	if unix.Madvise(mem, unix.MADV_HUGEPAGE) == nil {
		// Fault every page in now, then ask the kernel what it gave.
		for i := 0; i < len(mem); i += os.Getpagesize() {
			mem[i] = 0
		}
		if hugeBytes(uintptr(unsafe.Pointer(&mem[0]))-skip) >= int64(n) {
			kind = buffersTHP
		}
	}
	return mem, release, kind, nil
}

// hugeBytes is the AnonHugePages of the mapping that starts at addr, from
// /proc/self/smaps; 0 when it cannot be read.
var hugeBytes = func(addr uintptr) int64 {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0
	}
	defer f.Close()
	start := fmt.Sprintf("%08x-", addr)
	sc := bufio.NewScanner(f)
	found := false
	for sc.Scan() {
		l := sc.Text()
		if !found {
			found = strings.HasPrefix(l, start)
			continue
		}
		if v, ok := strings.CutPrefix(l, "AnonHugePages:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
		if i := strings.IndexByte(l, ' '); i > 0 && strings.Contains(l[:i], "-") {
			return 0 // the next mapping's first line: none in this one
		}
	}
	return 0
}

// maxSegments is how many segments one request to the device under dir
// may have (sysfs queue/max_segments of the device or, for a partition,
// its disk); 128, a common value, when it cannot be read.
func maxSegments(dir string) int {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err == nil {
		base := fmt.Sprintf("/sys/dev/block/%d:%d/", unix.Major(st.Dev), unix.Minor(st.Dev))
		for _, p := range []string{base + "queue/max_segments", base + "../queue/max_segments"} {
			if b, err := os.ReadFile(p); err == nil {
				if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
					return n
				}
			}
		}
	}
	return 128
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

// side is one direction of the device limit: depth goroutines, each with a
// block of its own, taking the next block's offset in turn.
type side struct {
	took time.Duration
	err  error
}

func (s *side) run(p *limitProbe, fd int, mem []byte, total int64, call func(int, []byte, int64) (int, error), name string) {
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	blk := int64(p.block)
	for i := range p.depth {
		buf := mem[i*p.block : (i+1)*p.block]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				off := next.Add(blk) - blk
				if off >= total {
					return
				}
				// O_DIRECT counts are whole blocks: the source's
				// unaligned end is read as one, and comes back short.
				n := (min(blk, total-off) + 4095) &^ 4095
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
