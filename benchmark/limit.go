package benchmark

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"fastcp/copier"

	"golang.org/x/sys/unix"
)

// limitBlockBytes is the block of the device limit's reads and writes: as
// `dd bs=8M iflag=direct` and `oflag=direct`.
const limitBlockBytes = 8 << 20

// deviceLimit measures the device's O_DIRECT sequential read of the source
// (cold) and write of a new file of the same size in the copies' directory,
// one block at a time, untimed set-up aside. The written file is removed.
func (b *bench) deviceLimit() DeviceLimit {
	d := DeviceLimit{BlockBytes: limitBlockBytes}
	b.prog.set("section 1/%d: the device's O_DIRECT read and write", sections)
	buf, err := unix.Mmap(-1, 0, limitBlockBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		d.Error = copier.ErrnoText(os.NewSyscallError("mmap", err))
		return d
	}
	defer unix.Munmap(buf)

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
	t0 := time.Now()
	var n int64
	for n < b.size {
		m, err := unix.Pread(rfd, buf, n)
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			unix.Close(rfd)
			if err == nil {
				err = fmt.Errorf("end of file at %d of %d bytes", n, b.size)
			}
			d.Error = copier.ErrnoText(os.NewSyscallError("pread64", err))
			return d
		}
		n += int64(m)
	}
	d.ReadS = time.Since(t0).Seconds()
	unix.Close(rfd)

	path := filepath.Join(b.dstDir, "o_direct")
	f, err := b.ws.create(path)
	if err != nil {
		d.Error = errText(err)
		return d
	}
	defer os.Remove(path)
	defer f.Close()
	wfd := int(f.Fd())
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(f.Fd(), unix.F_SETFL, fl|unix.O_DIRECT)
	}
	if err != nil {
		d.Error = copier.ErrnoText(os.NewSyscallError("fcntl(F_SETFL, O_DIRECT)", err))
		return d
	}
	// The whole blocks only, as dd writes them; the size differs from the
	// source's by less than a block.
	whole := b.size / limitBlockBytes * limitBlockBytes
	if whole == 0 {
		whole = limitBlockBytes
	}
	t0 = time.Now()
	for n = 0; n < whole; {
		m, err := unix.Pwrite(wfd, buf, n)
		if err == unix.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			if err == nil {
				err = errShort
			}
			d.Error = copier.ErrnoText(os.NewSyscallError("pwrite64", err))
			return d
		}
		n += int64(m)
	}
	d.WriteS = time.Since(t0).Seconds()
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

var errShort = fmt.Errorf("short write")
