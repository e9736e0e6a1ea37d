// SPDX-License-Identifier: MIT

package benchmark

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"unsafe"

	"fastcp/durability"
	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// privatePrefix starts the name of the directory that holds every file the
// benchmark makes, so that cleaning up is one RemoveAll and a leftover
// (after SIGKILL) is recognisable.
const privatePrefix = ".fastcp-bench-"

// statfs is a variable so that tests can pretend a filesystem is full.
var statfs = unix.Statfs

// workspace is the set of private directories the benchmark made. Files are
// only created inside them, under mu, so that the interrupt handler (which
// takes mu and never gives it back: the process is exiting) cannot race
// with a new file appearing while it removes the directories.
type workspace struct {
	mu   sync.Mutex
	dirs []string
}

// mkdir makes a private directory in parent.
func (w *workspace) mkdir(parent string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, err := os.MkdirTemp(parent, privatePrefix)
	if err != nil {
		return "", err
	}
	w.dirs = append(w.dirs, d)
	return d, nil
}

// create makes a new file (which must not exist) in a private directory.
func (w *workspace) create(path string) (*os.File, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
}

// remove removes every private directory and what is in it.
func (w *workspace) remove() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.removeLocked()
}

func (w *workspace) removeLocked() error {
	var first error
	for _, d := range w.dirs {
		if err := os.RemoveAll(d); err != nil && first == nil {
			first = err
		}
	}
	w.dirs = nil
	return first
}

// interrupted is the durability.AtInterrupt hook: it runs on the signal
// handler's goroutine right before the process exits, and keeps mu locked
// so that nothing new appears in the directories.
func (w *workspace) interrupted() {
	w.mu.Lock()
	w.removeLocked()
}

// checkSpace refuses a directory with less than need bytes available to an
// unprivileged user, before anything is created.
func checkSpace(dir string, need int64) error {
	var st unix.Statfs_t
	if err := statfs(dir, &st); err != nil {
		return fmt.Errorf("cannot get the free space of %s: %s", quote(dir), errText(err))
	}
	avail := int64(math.MaxInt64) // an exabyte filesystem must not overflow
	if st.Bsize > 0 && st.Bavail < uint64(math.MaxInt64/st.Bsize) {
		avail = int64(st.Bavail) * st.Bsize
	}
	if avail < need {
		return fmt.Errorf("not enough free space in %s for the benchmark: %s available, %s needed (twice --bench-size); try a smaller --bench-size",
			quote(dir), formatSize(avail), formatSize(need))
	}
	return nil
}

// checkDir makes sure dir is an existing directory.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cannot access %s: %s", quote(dir), errText(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", quote(dir))
	}
	return nil
}

// genChunkBytes is how much random data is generated and written at once.
const genChunkBytes = 4 << 20

// writeRandom fills f with size bytes from a ChaCha8 generator seeded from
// the system's random source: incompressible (so compressing or deduplicating
// filesystems cannot cheat), and generated at several GB/s, so the disk, not
// /dev/urandom, sets the pace. A second goroutine generates the next chunk
// while this one is written. The file is then flushed to disk.
func writeRandom(f *os.File, size int64) error {
	// math/rand/v2's global source is seeded by the runtime from the
	// system's random source; crypto/rand would add its package setup to
	// the start of every fastcp run.
	var seed [32]byte
	for i := 0; i < len(seed); i += 8 {
		binary.LittleEndian.PutUint64(seed[i:], rand.Uint64())
	}
	gen := rand.NewChaCha8(seed)
	free := make(chan []byte, 2)
	full := make(chan []byte, 2)
	free <- make([]byte, genChunkBytes)
	free <- make([]byte, genChunkBytes)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for left := size; left > 0; {
			var b []byte
			select {
			case b = <-free:
			case <-stop:
				return
			}
			b = b[:min(int64(len(b)), left)]
			gen.Read(b)
			left -= int64(len(b))
			full <- b
		}
	}()
	for off := int64(0); off < size; {
		b := <-full
		if _, err := f.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
		free <- b[:cap(b)]
	}
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return os.NewSyscallError("fdatasync", err)
	}
	return nil
}

// evict writes f's dirty pages back and drops its pages from the page
// cache, so the next read of it comes from the disk.
var evict = sysx.Evict

// residentFraction reports how much of f (size bytes) is in the page cache
// (mincore): it checks that an eviction worked (tmpfs, for one, cannot
// evict: its pages are the file).
func residentFraction(f *os.File, size int64) (float64, error) {
	if size <= 0 {
		return 0, nil
	}
	in, err := sysx.ResidentBytes(int(f.Fd()))
	if err != nil {
		return 0, os.NewSyscallError("mincore", err)
	}
	page := int64(os.Getpagesize())
	return float64(in) / float64((size+page-1)/page*page), nil
}

// warm reads f once so that its pages are in the page cache.
func warm(f *os.File, size int64) error {
	fd := int(f.Fd())
	buf := make([]byte, genChunkBytes)
	for off := int64(0); off < size; {
		n, err := unix.Pread(fd, buf, off)
		if err != nil {
			return os.NewSyscallError("pread64", err)
		}
		if n == 0 {
			break
		}
		off += int64(n)
	}
	return nil
}

// fsMagic names filesystems by their statfs f_type, for when
// /proc/self/mountinfo does not answer. A switch, not a map: a package
// map is built at every start, benchmark or not.
func fsMagic(t int64) (string, bool) {
	switch t {
	case 0xEF53:
		return "ext4", true
	case 0x58465342:
		return "xfs", true
	case 0x9123683E:
		return "btrfs", true
	case 0x01021994:
		return "tmpfs", true
	case 0x2FC12FC1:
		return "zfs", true
	case 0x6969:
		return "nfs", true
	case 0xF2F52010:
		return "f2fs", true
	case 0x4d44:
		return "vfat", true
	case 0x65735546:
		return "fuse", true
	case 0x794c7630:
		return "overlay", true
	}
	return "", false
}

// fsTypeOf is fsType, a variable for the tests.
var fsTypeOf = fsType

// fsType names the filesystem dir is on ("ext4"), from the mount table
// entry with dir's device number, else from statfs's magic number.
func fsType(dir string) string {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err == nil {
		if t := mountinfoType(unix.Major(st.Dev), unix.Minor(st.Dev)); t != "" {
			return t
		}
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(dir, &sf); err != nil {
		return "unknown"
	}
	if n, ok := fsMagic(int64(sf.Type)); ok {
		return n
	}
	return fmt.Sprintf("0x%x", sf.Type)
}

// mountinfoType finds the filesystem type of device maj:min in
// /proc/self/mountinfo ("36 25 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw").
func mountinfoType(maj, min uint32) string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	want := fmt.Sprintf("%d:%d", maj, min)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[2] != want {
			continue
		}
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) {
				return fields[i+1]
			}
		}
	}
	return ""
}

// register makes the signal handler (s.Interrupt) remove the workspace.
func (w *workspace) register(s *durability.Session) (unregister func()) {
	if s == nil {
		return func() {}
	}
	return s.AtInterrupt(w.interrupted)
}

// FIEMAP, from linux/fiemap.h and linux/fs.h (golang.org/x/sys/unix does
// not define them).
const (
	fsIocFiemap        = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync     = 0x1        // write back dirty data before mapping
	fiemapExtentLast   = 0x1
	fiemapExtentShared = 0x2000
	fiemapBatch        = 64 // extents asked for per call
)

// fiemapHeader is struct fiemap without its flexible array of extents.
type fiemapHeader struct {
	start, length                     uint64
	flags, mappedExtents, extentCount uint32
	_                                 uint32
}

// fiemapExtent is struct fiemap_extent.
type fiemapExtent struct {
	logical, physical, length uint64
	_                         [2]uint64
	flags                     uint32
	_                         [3]uint32
}

// sharedExtents reports whether any extent of f is shared with another file
// (FIEMAP_EXTENT_SHARED): a clone or an xfs/btrfs copy_file_range moved no
// data, and its MB/s is the cost of sharing metadata, not of copying. A
// filesystem without FIEMAP (tmpfs) shares nothing.
func sharedExtents(f *os.File) (bool, error) {
	var buf struct {
		h   fiemapHeader
		ext [fiemapBatch]fiemapExtent
	}
	fd := f.Fd()
	for start := uint64(0); ; {
		buf.h = fiemapHeader{start: start, length: ^uint64(0) - start, flags: fiemapFlagSync, extentCount: fiemapBatch}
		_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, fsIocFiemap, uintptr(unsafe.Pointer(&buf)))
		if e == unix.EOPNOTSUPP || e == unix.ENOTTY {
			return false, nil
		}
		if e != 0 {
			return false, os.NewSyscallError("ioctl(FS_IOC_FIEMAP)", e)
		}
		n := int(buf.h.mappedExtents)
		if n == 0 {
			return false, nil
		}
		for _, x := range buf.ext[:n] {
			if x.flags&fiemapExtentShared != 0 {
				return true, nil
			}
			if x.flags&fiemapExtentLast != 0 {
				return false, nil
			}
		}
		last := buf.ext[n-1]
		start = last.logical + last.length
	}
}

// isRemote reports whether a filesystem type (as fsType names it) is a
// network or FUSE one: its files live elsewhere, across a network, or
// behind a FUSE daemon (sshfs, rclone, s3fs; fuseblk is a FUSE driver of a
// local disk, ntfs-3g, but a FUSE daemon all the same).
func isRemote(fs string) bool {
	switch fs {
	case "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p",
		"ceph", "glusterfs", "afs", "lustre", "beegfs",
		"orangefs", "gpfs", "fuse", "fuseblk", "virtiofs":
		return true
	}
	return strings.HasPrefix(fs, "fuse.")
}

// localDirs are where a benchmark into a network or FUSE mount puts its
// source, in order of preference: the system's temporary directories, the
// one that survives a reboot (and so is on a disk more often) first.
var localDirs = func() []string { return []string{"/var/tmp", "/tmp"} }

// localSource is where the source goes for a benchmark into dir, when dir
// is on a network or FUSE filesystem: a copy onto a mount reads from a
// local disk, and a source on the mount would measure mount-to-mount
// copies (and a cache the mount keeps of its own). The first of localDirs
// on a local filesystem with room for twice size, preferring one that can
// evict its pages (not tmpfs); "" when dir is local, or none will do. why
// says so, for the report.
func localSource(dir string, size int64) (from, why string) {
	fs := fsTypeOf(dir)
	if !isRemote(fs) {
		return "", ""
	}
	var memory string // a tmpfs one, if no disk will do
	for _, d := range localDirs() {
		t := fsTypeOf(d)
		if checkDir(d) != nil || isRemote(t) || checkSpace(d, 2*size) != nil {
			continue
		}
		if t == "tmpfs" || t == "ramfs" {
			if memory == "" {
				memory = d
			}
			continue
		}
		from = d
		break
	}
	if from == "" {
		from = memory
	}
	if from == "" {
		return "", ""
	}
	return from, fmt.Sprintf("%s is on a %s mount, and copies onto one read from a local disk; --bench-from=DIR puts the source elsewhere", dir, fs)
}
