// SPDX-License-Identifier: MIT

package durability

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"fastcp/internal/fsdir"

	"golang.org/x/sys/unix"
)

// Side records. A filesystem without user extended attributes (sshfs and
// many other FUSE filesystems, ramfs, some SMB servers) cannot carry a
// temporary file's mark, or --resume's record, on the file itself. There
// they go into a file of their own beside it, named as the temporary file
// with SideSuffix, made with O_EXCL and mode 0600 right after it, and
// adopted only under the same trust rule (trust.go). Besides the value the
// extended attribute would hold, a side record names the process that
// writes the temporary file: its machine (/etc/machine-id), its boot, its
// PID namespace, its PID and that PID's start time. A free lock proves
// little on such a filesystem: sshfs keeps locks in the client's kernel,
// so a copy running on another machine, or through another mount of the
// same directory, holds none that this one can see. The writer's name
// settles it: a writer of this machine's current boot is alive exactly
// while its PID runs with the same start time, one of an earlier boot of
// this machine is gone, and one of another machine (or PID namespace)
// cannot be judged from here: its leftover is left alone, and named with
// the command that removes it.
//
// A copy with --resume always makes one; a plain copy makes one for a
// source of at least sideRecordMin bytes, a leftover worth finding again
// (a smaller one is named, not removed). Commit removes it right before
// the rename, as it removes the mark; Abort and a fatal signal remove it
// with the temporary file, and --resume's last checkpoint at a signal is
// recorded in it.

// SideSuffix ends the name of a temporary file's side record.
const SideSuffix = ".rec"

// sideRecordMin is the smallest source whose plain copy gets a side record
// where the filesystem has no user extended attributes.
const sideRecordMin = 8 << 20

// sideMagic starts a side record: its format, version 1.
const sideMagic = "fastcp-side-1"

// sideSize is what a side record is padded to, so that a new record
// rewrites the old one in one write, and the file never shrinks.
const sideSize = 1024

// sideName is the name of the side record of the temporary file name.
func sideName(name string) string { return name + SideSuffix }

// writer names the process that writes a temporary file.
type writer struct {
	machine, boot, pidns string
	pid                  int
	start                uint64 // the PID's start time, in clock ticks after boot
}

// thisWriter is this process.
var thisWriter = sync.OnceValue(func() writer {
	w := writer{machine: machineID(), boot: readTrim("/proc/sys/kernel/random/boot_id"), pid: os.Getpid()}
	w.pidns, _ = os.Readlink("/proc/self/ns/pid")
	w.start, _ = startTime(w.pid)
	return w
})

// machineID is this machine's ID (systemd's or D-Bus's), "" when it has none.
func machineID() string {
	for _, p := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if id := readTrim(p); id != "" {
			return id
		}
	}
	return ""
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startTime is when process pid started, in clock ticks after boot (field
// 22 of /proc/PID/stat); fs.ErrNotExist when no such process runs.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold any byte.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errBadSide
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, errBadSide
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// writerState is what can be told of a side record's writer.
type writerState int

const (
	writerGone    writerState = iota // dead: its leftover may be adopted
	writerRunning                    // a copy still writing it
	writerUnknown                    // elsewhere: cannot be told from here
)

// state says whether w, as a side record names it, still runs; why says
// why it cannot be told.
func (w writer) state() (s writerState, why string) {
	self := thisWriter()
	switch {
	case self.machine == "" || w.machine != self.machine:
		return writerUnknown, "it was written on another machine"
	case w.boot != self.boot:
		return writerGone, "" // this machine has restarted since
	case self.pidns == "" || w.pidns != self.pidns:
		return writerUnknown, "it was written in another PID namespace"
	}
	start, err := startTime(w.pid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writerGone, ""
	case err != nil:
		return writerUnknown, "its writer's process cannot be read: " + err.Error()
	case start == w.start:
		return writerRunning, ""
	}
	return writerGone, "" // the PID is another process's now
}

var errBadSide = errors.New("not a side record of fastcp")

// encodeSide is the content of a side record holding value, written by
// this process.
func encodeSide(value []byte) []byte {
	w := thisWriter()
	b := fmt.Appendf(nil, "%s machine=%s boot=%s pidns=%s pid=%d start=%d len=%d\n",
		sideMagic, w.machine, w.boot, w.pidns, w.pid, w.start, len(value))
	b = append(b, value...)
	b = append(b, '\n')
	for len(b)%sideSize != 0 {
		b = append(b, '\n')
	}
	return b
}

// decodeSide reads a side record's content: its writer and value.
func decodeSide(b []byte) (w writer, value []byte, err error) {
	head, rest, ok := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(head))
	if !ok || len(f) != 7 || f[0] != sideMagic {
		return w, nil, errBadSide
	}
	get := func(i int, key string) string {
		v, found := strings.CutPrefix(f[i], key+"=")
		if !found {
			err = errBadSide
		}
		return v
	}
	w.machine, w.boot, w.pidns = get(1, "machine"), get(2, "boot"), get(3, "pidns")
	pid, perr := strconv.Atoi(get(4, "pid"))
	start, serr := strconv.ParseUint(get(5, "start"), 10, 64)
	n, nerr := strconv.Atoi(get(6, "len"))
	if err != nil || perr != nil || serr != nil || nerr != nil || pid <= 0 || n < 0 || n > len(rest) {
		return w, nil, errBadSide
	}
	w.pid, w.start = pid, start
	return w, rest[:n], nil
}

// sideRecord is the open side record of a temporary file.
type sideRecord struct {
	mu   sync.Mutex // the keeper's checkpoints and the session's removal
	fd   int        // -1 once closed
	name string     // in the temporary file's directory
	id   identity
	raw  []byte // its content as read (an adopted leftover's), for the check after the lock
}

// createSide makes the side record of the temporary file name in dir,
// holding value. A name taken is an orphan of a copy that died between
// its removals (the temporary name itself was free): removed if its
// writer is gone, and the create tried once more.
func createSide(dir *fsdir.Dir, name string, value []byte) (*sideRecord, error) {
	sname := sideName(name)
	for try := 0; ; try++ {
		fd, err := openat(dir.Fd(), sname, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST && try == 0 && removeOrphanSide(dir, name, true) == leftoverRemoved {
			continue
		}
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			unlinkat(dir.Fd(), sname, 0) // made a moment ago under O_EXCL
			return nil, err
		}
		r := &sideRecord{fd: fd, name: sname, id: identityOf(&st)}
		if err := r.write(value); err != nil {
			r.remove(dir.Fd())
			return nil, err
		}
		return r, nil
	}
}

// write records value (written by this process) in r.
func (r *sideRecord) write(value []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return unix.EBADF
	}
	b := encodeSide(value)
	for off := 0; off < len(b); {
		n, err := unix.Pwrite(r.fd, b[off:], int64(off))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		off += n
	}
	return nil
}

// sync makes r's record durable.
func (r *sideRecord) sync(sys *sysCalls) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return unix.EBADF
	}
	return ignoringEINTR(func() error { return sys.fdatasync(r.fd) })
}

// read reads r's whole content.
func (r *sideRecord) read() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return readAllAt(r.fd)
}

// readAllAt reads fd from offset 0 to its end, at most 64 KiB.
func readAllAt(fd int) ([]byte, error) {
	b := make([]byte, 0, sideSize)
	for len(b) < 64<<10 {
		if len(b) == cap(b) {
			b = append(b, make([]byte, sideSize)...)[:len(b)]
		}
		n, err := unix.Pread(fd, b[len(b):cap(b)], int64(len(b)))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
	return nil, errBadSide
}

// remove unlinks r if its name in dirfd still is r's file, and closes it.
func (r *sideRecord) remove(dirfd int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if entryIs(dirfd, r.name, r.id) {
		unlinkat(dirfd, r.name, 0)
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// close closes r, leaving it in place.
func (r *sideRecord) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// openSide opens the side record of the leftover name in dir for
// adoption, under the trust rule (openLeftover), and reads it. Its errors
// are those of openLeftover (unix.ENOENT: there is none), or errBadSide.
func openSide(dir *fsdir.Dir, name string, source identity) (*sideRecord, writer, []byte, error) {
	sname := sideName(name)
	fd, st, err := openLeftover(dir.Fd(), sname, shownIn(dir, sname), unix.O_RDWR, source)
	if err != nil {
		return nil, writer{}, nil, err
	}
	r := &sideRecord{fd: fd, name: sname, id: identityOf(st)}
	raw, err := r.read()
	if err != nil {
		r.close()
		return nil, writer{}, nil, err
	}
	w, value, err := decodeSide(raw)
	if err != nil {
		r.close()
		return nil, writer{}, nil, err
	}
	r.raw = raw
	return r, w, value, nil
}

// unchanged is the side half of lockedLeftover: r's name in dirfd still
// is r's file, which still passes the trust rule and holds what was read.
func (r *sideRecord) unchanged(dirfd int, source identity) (what leftover, why string) {
	var st unix.Stat_t
	if err := unix.Fstat(r.fd, &st); err != nil || identityOf(&st) != r.id || !entryIs(dirfd, r.name, r.id) {
		return leftoverForeign, "its side record was renamed or replaced while it was being locked"
	}
	if why := judge(&st, source); why != "" {
		return leftoverRefused, why
	}
	raw, err := r.read()
	if err != nil || !bytes.Equal(raw, r.raw) {
		return leftoverForeign, "its side record changed while it was being locked"
	}
	return leftoverLocked, ""
}

// removeOrphanSide removes the side record of the temporary file name in
// dir when that file is gone (a copy died between removing the one and
// the other), or is this copy's own, just made under the free name
// (mine), and the record's writer is gone too.
func removeOrphanSide(dir *fsdir.Dir, name string, mine bool) leftover {
	var st unix.Stat_t
	tempGone := func() bool {
		return mine || unix.Fstatat(dir.Fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) == unix.ENOENT
	}
	if !tempGone() {
		return leftoverInUse // its temporary file is there: not an orphan
	}
	r, w, _, err := openSide(dir, name, identity{})
	if err != nil {
		return leftoverUnknown
	}
	defer r.close()
	if s, _ := w.state(); s != writerGone {
		return leftoverUnknown
	}
	if what, _ := r.unchanged(dir.Fd(), identity{}); what != leftoverLocked {
		return what
	}
	if !tempGone() {
		return leftoverInUse
	}
	if err := unlinkat(dir.Fd(), r.name, 0); err != nil {
		return leftoverUnknown
	}
	return leftoverRemoved
}
