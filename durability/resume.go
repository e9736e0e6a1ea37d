package durability

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// --resume. A copy made with --resume records in its temporary file, in the
// extended attribute ResumeXattr:
//   - the source's identity: st_dev, st_ino, size, mtime and ctime in ns;
//   - a checkpoint: an offset below which the temporary file's data is on
//     stable storage (fdatasync returned before the offset was recorded).
//
// A later run with --resume finds the leftover under DEST's first
// temporary name (FirstTemp), and continues it from the checkpoint when its
// lock is free (no copy is writing it), the source is the same file
// unchanged, and the checkpoint lies within the source and the file. Any
// other leftover is started over. The xattr is written again at every
// checkpoint and, on SIGINT, SIGTERM or SIGHUP, once more after a last
// fdatasync (RemoveTempsForExit), so that the next run loses nothing.
//
// What the record cannot tell: a source rewritten in place whose size,
// mtime and ctime all came out the same (ctime cannot be set by a user,
// but a clock set back, or a filesystem restored from a backup, can do it).

// ResumeXattr is the extended attribute that carries a temporary file's
// resume record.
const ResumeXattr = "user.fastcp.temp"

// resumeAlign is what a resumed copy's start is rounded down to.
const resumeAlign = 1 << 20

// resumeMagic starts every record: its format, version 1.
const resumeMagic = "fastcp-resume-1"

// SourceID is the identity of a source at the moment it was copied.
type SourceID struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // ns since the epoch
}

// IDOf returns the identity of the file st describes.
func IDOf(st *unix.Stat_t) SourceID {
	return SourceID{Dev: st.Dev, Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

// resumeRecord is a resume record: which source, and how far.
type resumeRecord struct {
	ID         SourceID
	Checkpoint int64
}

func (r resumeRecord) encode() []byte {
	return fmt.Appendf(nil, "%s dev=%d ino=%d size=%d mtime=%d ctime=%d checkpoint=%d",
		resumeMagic, r.ID.Dev, r.ID.Ino, r.ID.Size, r.ID.Mtime, r.ID.Ctime, r.Checkpoint)
}

var errBadRecord = errors.New("not a resume record")

func decodeRecord(b []byte) (resumeRecord, error) {
	f := strings.Fields(string(b))
	keys := []string{"dev", "ino", "size", "mtime", "ctime", "checkpoint"}
	if len(f) != len(keys)+1 || f[0] != resumeMagic {
		return resumeRecord{}, errBadRecord
	}
	var v [6]int64
	for i, k := range keys {
		s, ok := strings.CutPrefix(f[i+1], k+"=")
		if !ok {
			return resumeRecord{}, errBadRecord
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || (k != "mtime" && k != "ctime" && n < 0) {
			return resumeRecord{}, errBadRecord
		}
		v[i] = n
	}
	return resumeRecord{ID: SourceID{Dev: uint64(v[0]), Ino: uint64(v[1]), Size: v[2], Mtime: v[3], Ctime: v[4]}, Checkpoint: v[5]}, nil
}

// WriteRecord gives the open file fd the resume record of a copy of the
// source id that reached checkpoint, as an interrupted copy would have
// left it: for benchmarks and tests that need a leftover of a given size.
func WriteRecord(fd int, id SourceID, checkpoint int64) error {
	return ignoringEINTR(func() error {
		return fsetxattr(fd, ResumeXattr, resumeRecord{ID: id, Checkpoint: checkpoint}.encode(), 0)
	})
}

// The calls of the record, as variables so that tests can inject ENOTSUP.
var (
	fsetxattr = unix.Fsetxattr
	fgetxattr = unix.Fgetxattr
)

// keeper is the resume state of one temporary file being written: what the
// signal handler needs to record a last checkpoint. fd is a descriptor of
// its own, closed only under the registry's lock once the file is
// committed or removed, so the handler never flushes a number that meanwhile
// names another file.
type keeper struct {
	mu      sync.Mutex
	fd      int
	rec     resumeRecord
	final   bool          // the signal handler recorded: no more records
	reached *atomic.Int64 // the copy's progress (copier.Options.Reached)
	dest    string
}

func (k *keeper) write(off int64) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.final || off < k.rec.Checkpoint {
		return nil
	}
	r := k.rec
	r.Checkpoint = off
	if err := ignoringEINTR(func() error { return fsetxattr(k.fd, ResumeXattr, r.encode(), 0) }); err != nil {
		return &Error{Op: "setxattr " + ResumeXattr, Err: err}
	}
	k.rec = r
	return nil
}

// ErrNoXattrs says that the destination's filesystem takes no user
// extended attributes: no checkpoint can be recorded there.
var ErrNoXattrs = errors.New("the filesystem takes no user extended attributes")

// StartRecord makes d resumable: it records src's identity with
// checkpoint 0. reached is the copy's progress, read on a fatal signal.
// When the filesystem takes no user xattrs the error wraps ErrNoXattrs, and
// d goes on as a plain copy (removed on a signal, as without --resume).
func (d *Destination) StartRecord(id SourceID, reached *atomic.Int64) error {
	return d.startRecord(resumeRecord{ID: id}, reached)
}

func (d *Destination) startRecord(r resumeRecord, reached *atomic.Int64) error {
	if d.temp == "" {
		return errors.New("an in-place destination cannot be resumed")
	}
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return &Error{Op: "fcntl", Err: err}
	}
	err = ignoringEINTR(func() error { return fsetxattr(fd, ResumeXattr, r.encode(), 0) })
	if err != nil {
		unix.Close(fd)
		if err == unix.ENOTSUP || err == unix.EPERM {
			// EOPNOTSUPP (== ENOTSUP): no xattr handler for "user."
			// (tmpfs before 6.6, some FUSE and network filesystems);
			// EPERM: user xattrs refused on this kind of file.
			return fmt.Errorf("%w (%s)", ErrNoXattrs, unix.ErrnoName(err.(unix.Errno)))
		}
		return &Error{Op: "setxattr " + ResumeXattr, Err: err}
	}
	k := &keeper{fd: fd, rec: r, reached: reached, dest: d.Path}
	reg.Lock()
	if reg.keep == nil {
		reg.keep = make(map[string]*keeper)
	}
	reg.keep[d.temp] = k
	reg.Unlock()
	d.keeper = k
	return nil
}

// Checkpoint records that the temporary file's data below off is on stable
// storage (copier.Options.Checkpoint: called after an fdatasync).
func (d *Destination) Checkpoint(off int64) error {
	if d.keeper == nil {
		return nil
	}
	return d.keeper.write(off)
}

// Resumable reports whether d records checkpoints.
func (d *Destination) Resumable() bool { return d.keeper != nil }

// forgetKeeper drops the resume state of temp; the registry must be locked.
func forgetKeeper(temp string) {
	if k := reg.keep[temp]; k != nil {
		unix.Close(k.fd)
		delete(reg.keep, temp)
	}
}

// Kept is a temporary file that a fatal signal left in place to be
// resumed: Done of Size bytes of the copy to Dest are in it on stable
// storage. Err, when set, is why the last flush failed (Done is then the
// checkpoint recorded before).
type Kept struct {
	Temp, Dest string
	Done, Size int64
	Err        error
}

// keepForExit flushes the file and records how far the copy got; the
// registry is locked.
func (k *keeper) keepForExit(temp string) Kept {
	k.mu.Lock()
	defer k.mu.Unlock()
	kept := Kept{Temp: temp, Dest: k.dest, Done: k.rec.Checkpoint, Size: k.rec.ID.Size}
	k.final = true
	off := int64(0)
	if k.reached != nil {
		off = k.reached.Load()
	}
	if off <= k.rec.Checkpoint {
		return kept
	}
	// Everything below off was written before this call: the flush covers it.
	if err := ignoringEINTR(func() error { return fdatasync(k.fd) }); err != nil {
		kept.Err = &Error{Op: "fdatasync", Err: err}
		return kept
	}
	r := k.rec
	r.Checkpoint = off
	if err := ignoringEINTR(func() error { return fsetxattr(k.fd, ResumeXattr, r.encode(), 0) }); err != nil {
		kept.Err = &Error{Op: "setxattr " + ResumeXattr, Err: err}
		return kept
	}
	kept.Done = off
	return kept
}

// LiveError is a leftover whose lock is held: another copy to the same
// DEST is writing it.
type LiveError struct{ Temp string }

func (e *LiveError) Error() string { return "another copy is writing " + e.Temp }

// Leftover reasons for a fresh start.
const (
	WhyNoCheckpoint = "no checkpoint"
	WhyChanged      = "source changed"
	WhyForeign      = "foreign leftover"
)

// FreshStart says why a leftover was not resumed.
type FreshStart struct {
	Temp   string
	Why    string // WhyNoCheckpoint, WhyChanged or WhyForeign
	Detail string
}

func (e *FreshStart) Error() string { return e.Why + ": " + e.Detail }

// Continue looks for the leftover of an interrupted copy of the source id
// to path, under FirstTemp(path), and continues it. It returns:
//   - a Destination, its lock's release and the offset to copy from, when
//     the leftover is resumed (it was cut back to its checkpoint, and is
//     locked and recorded as Create's files are);
//   - (nil, nil, 0, nil): nothing there;
//   - a *FreshStart error: a leftover that cannot be resumed; when it was
//     a dead one of fastcp's, it was removed, so Create takes the name;
//   - a *LiveError: a copy is writing it; it is left alone.
//
// reached is the copy's progress, as for StartRecord.
func Continue(path string, id SourceID, o Options, reached *atomic.Int64) (*Destination, func(), int64, error) {
	temp := FirstTemp(path)
	var lst unix.Stat_t
	switch err := unix.Lstat(temp, &lst); {
	case err == unix.ENOENT:
		return nil, nil, 0, nil
	case err != nil:
		return nil, nil, 0, &FreshStart{Temp: temp, Why: WhyForeign, Detail: err.Error()}
	case lst.Mode&unix.S_IFMT != unix.S_IFREG:
		// A symlink, FIFO or device is nothing fastcp wrote, and is
		// not even opened.
		return nil, nil, 0, &FreshStart{Temp: temp, Why: WhyForeign, Detail: "not a regular file"}
	}
	flags := unix.O_RDWR | unix.O_NOFOLLOW | unix.O_NOCTTY | unix.O_CLOEXEC | o.Sync.OpenFlags()
	fd, err := unix.Open(temp, flags, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(temp, flags, 0)
	}
	switch {
	case err == unix.ENOENT:
		return nil, nil, 0, nil
	case err != nil:
		return nil, nil, 0, &FreshStart{Temp: temp, Why: WhyForeign, Detail: err.Error()}
	}
	fresh := func(why, detail string, remove bool) (*Destination, func(), int64, error) {
		if remove {
			removeLocked(fd, temp)
		}
		unix.Close(fd)
		return nil, nil, 0, &FreshStart{Temp: temp, Why: why, Detail: detail}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fresh(WhyForeign, err.Error(), false)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 || st.Dev != lst.Dev || st.Ino != lst.Ino {
		return fresh(WhyForeign, "not a regular file with one link", false)
	}
	switch err := ignoringEINTR(func() error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) }); err {
	case nil:
	case unix.EWOULDBLOCK:
		unix.Close(fd)
		return nil, nil, 0, &LiveError{Temp: temp}
	default:
		// No locks here (ENOLCK, EOPNOTSUPP): whether a copy still
		// writes it cannot be told, so it is not touched.
		return fresh(WhyForeign, "its lock cannot be taken: "+err.Error(), false)
	}
	b := make([]byte, 256)
	n, err := fgetxattr(fd, ResumeXattr, b)
	switch {
	case err == unix.ENODATA:
		return fresh(WhyNoCheckpoint, "it has no resume record", true)
	case err == unix.ENOTSUP:
		return fresh(WhyNoCheckpoint, ErrNoXattrs.Error(), true)
	case err != nil:
		return fresh(WhyNoCheckpoint, "reading its resume record: "+err.Error(), true)
	}
	r, err := decodeRecord(b[:n])
	switch {
	case err != nil:
		return fresh(WhyForeign, err.Error(), true)
	case r.ID.Dev != id.Dev || r.ID.Ino != id.Ino:
		return fresh(WhyForeign, "it is a copy of another source", true)
	case r.ID != id:
		return fresh(WhyChanged, "size, mtime or ctime differ from the interrupted copy's", true)
	case r.Checkpoint > id.Size || r.Checkpoint > st.Size:
		return fresh(WhyForeign, fmt.Sprintf("its checkpoint %d lies past the end of the file", r.Checkpoint), true)
	case r.Checkpoint == 0:
		return fresh(WhyNoCheckpoint, "no checkpoint was recorded", true)
	}
	if r.Checkpoint < id.Size {
		// Continue at a MiB boundary: O_DIRECT (the direct strategy) and
		// FICLONERANGE need aligned offsets, and the checkpoint of an
		// interrupted copy is usually one already.
		r.Checkpoint &^= resumeAlign - 1
		if r.Checkpoint == 0 {
			return fresh(WhyNoCheckpoint, "the checkpoint lies within the first MiB", true)
		}
	}
	if err := ignoringEINTR(func() error { return unix.Ftruncate(fd, r.Checkpoint) }); err != nil {
		return fresh(WhyForeign, "cutting it back to its checkpoint: "+err.Error(), false)
	}
	// The lock's own descriptor, as lockTemp makes one: Commit closes File
	// before the rename, and the lock must last until release.
	lockFd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return fresh(WhyForeign, err.Error(), false)
	}
	reg.Lock()
	if reg.temps == nil {
		reg.temps = make(map[string]struct{})
	}
	reg.temps[temp] = struct{}{}
	reg.Unlock()
	d := &Destination{Path: path, File: os.NewFile(uintptr(fd), temp), temp: temp}
	d.setup(o)
	if err := d.startRecord(r, reached); err != nil {
		d.Abort()
		unix.Close(lockFd)
		return nil, nil, 0, &FreshStart{Temp: temp, Why: WhyNoCheckpoint, Detail: err.Error()}
	}
	return d, func() { unix.Close(lockFd) }, r.Checkpoint, nil
}

// removeLocked removes temp, whose lock fd holds, if the name still is that
// file.
func removeLocked(fd int, temp string) {
	var st, fst unix.Stat_t
	if unix.Fstat(fd, &fst) != nil || unix.Lstat(temp, &st) != nil || st.Dev != fst.Dev || st.Ino != fst.Ino {
		return
	}
	unix.Unlink(temp)
}
