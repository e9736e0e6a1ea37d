// SPDX-License-Identifier: MIT

package durability

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// --resume. A copy made with --resume records in its temporary file, in the
// extended attribute that marks every temporary file as fastcp's
// (MarkXattr: the record replaces the plain mark):
//   - the source's identity: st_dev, st_ino, size, mtime and ctime in ns;
//   - a checkpoint: an offset below which the temporary file's data is on
//     stable storage (fdatasync returned before the offset was recorded).
//
// A later run with --resume finds the leftover under DEST's first
// temporary name (FirstTemp), and continues it from the checkpoint when its
// lock is free (no copy is writing it), the source is the same file
// unchanged, and the checkpoint lies within the source and the file. Any
// other leftover is started over. Nothing is done to the leftover before
// its lock is held and the name is checked to still be the locked file
// with the record read (lockedLeftover): a copy that has just finished
// renamed that file over its DEST, which must not be cut back. The xattr is written again at every
// checkpoint and, on SIGINT, SIGTERM or SIGHUP, once more after a last
// fdatasync (Session.Interrupt), so that the next run loses nothing.
//
// What the record cannot tell: a source rewritten in place whose size,
// mtime and ctime all came out the same (ctime cannot be set by a user,
// but a clock set back, or a filesystem restored from a backup, can do it).

// resumeAlign is what a resumed copy's start is rounded down to.
const resumeAlign = 1 << 20

// ResumeAlign is what a resumed copy's start is rounded down to: a hash
// state recorded with a checkpoint is of use when it was saved at a
// multiple of it (HashState).
const ResumeAlign = resumeAlign

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

// resumeRecord is a resume record: which source, and how far; and, for a
// copy with --checksum, its hash's state at Hash.Off, at most the
// checkpoint.
type resumeRecord struct {
	ID         SourceID
	Checkpoint int64
	Hash       HashState
	// HashWhy says why a record's hash state was not taken (a field that
	// does not parse, a check that fails): it is then Hash's zero value.
	HashWhy string
}

// HashState is the state of a copy's hash (--checksum) after the first
// Off bytes of the source: the algorithm's name and the state that
// checksum.SaveState made. The zero value is none.
type HashState struct {
	Alg   string
	Off   int64
	State []byte
}

// valid reports whether h is a state at most off bytes in.
func (h HashState) valid(off int64) bool {
	return h.Alg != "" && len(h.State) > 0 && h.Off >= 0 && h.Off <= off
}

// The hash state's fields follow the record's, and a CRC-32C of the whole
// text before it ends it: a state changed by a bit is not taken (a state
// parses whatever its chaining values, and would give a wrong digest).
func (r resumeRecord) encode() []byte {
	b := fmt.Appendf(nil, "%s dev=%d ino=%d size=%d mtime=%d ctime=%d checkpoint=%d",
		resumeMagic, r.ID.Dev, r.ID.Ino, r.ID.Size, r.ID.Mtime, r.ID.Ctime, r.Checkpoint)
	if r.Hash.valid(r.Checkpoint) {
		b = fmt.Appendf(b, " hash=%s hashoff=%d state=%s", r.Hash.Alg, r.Hash.Off, base64.RawStdEncoding.EncodeToString(r.Hash.State))
		b = fmt.Appendf(b, " crc=%08x", crc32.Checksum(b, castagnoli()))
	}
	return b
}

var errBadRecord = errors.New("not a resume record")

func decodeRecord(b []byte) (resumeRecord, error) {
	f := strings.Fields(string(b))
	keys := []string{"dev", "ino", "size", "mtime", "ctime", "checkpoint"}
	if len(f) == len(keys)+5 && f[0] == resumeMagic {
		r, err := decodeRecord([]byte(strings.Join(f[:len(keys)+1], " ")))
		if err == nil {
			r.Hash, r.HashWhy = decodeHash(b, f[len(keys)+1:], r.Checkpoint)
		}
		return r, err
	}
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

// decodeHash reads a record's hash fields (f: hash=, hashoff=, state=,
// crc=; b: the whole record), or says why they cannot be taken.
func decodeHash(b []byte, f []string, checkpoint int64) (HashState, string) {
	var h HashState
	alg, ok1 := strings.CutPrefix(f[0], "hash=")
	off, ok2 := strings.CutPrefix(f[1], "hashoff=")
	state, ok3 := strings.CutPrefix(f[2], "state=")
	sum, ok4 := strings.CutPrefix(f[3], "crc=")
	i := bytes.LastIndex(b, []byte(" crc="))
	if !ok1 || !ok2 || !ok3 || !ok4 || i < 0 {
		return h, "its hash state does not parse"
	}
	if want := fmt.Sprintf("%08x", crc32.Checksum(b[:i], castagnoli())); sum != want {
		return h, "its record's checksum does not match: the record was changed"
	}
	n, err := strconv.ParseInt(off, 10, 64)
	if err != nil || n < 0 || n > checkpoint {
		return h, "its hash state is not at an offset below the checkpoint"
	}
	st, err := base64.RawStdEncoding.DecodeString(state)
	if err != nil || len(st) == 0 {
		return h, "its hash state does not parse"
	}
	return HashState{Alg: alg, Off: n, State: st}, ""
}

// WriteRecord gives the open file fd the resume record of a copy of the
// source id that reached checkpoint, as an interrupted copy would have
// left it: for benchmarks and tests that need a leftover of a given size.
func WriteRecord(fd int, id SourceID, checkpoint int64) error {
	return WriteRecordHash(fd, id, checkpoint, HashState{})
}

// WriteRecordHash is WriteRecord for a copy with --checksum whose hash
// had state h: as a copy interrupted with --resume --checksum leaves it.
func WriteRecordHash(fd int, id SourceID, checkpoint int64, h HashState) error {
	return ignoringEINTR(func() error {
		return fsetxattr(fd, MarkXattr, resumeRecord{ID: id, Checkpoint: checkpoint, Hash: h}.encode(), 0)
	})
}

// The calls of the record, as variables so that tests can inject ENOTSUP
// (beside sys.go's unlinkat, openat and flock).
var (
	fsetxattr = unix.Fsetxattr
	fgetxattr = unix.Fgetxattr
)

// keeper is the resume state of one temporary file being written: what the
// signal handler needs to record a last checkpoint. fd is a descriptor of
// its own, closed only under the session's lock once the file is
// committed or removed, so the handler never flushes a number that meanwhile
// names another file.
type keeper struct {
	mu   sync.Mutex
	sys  *sysCalls // the destination's
	fd   int
	side *sideRecord // where the record goes when not into fd's xattr
	rec  resumeRecord
	// hashNow, when set (--checksum), is the copy's latest hash state,
	// for a fatal signal's last record.
	hashNow func() HashState
	final   bool          // the signal handler recorded: no more records
	reached *atomic.Int64 // the copy's progress (copier.Options.Reached)
	dest    string
}

// stop ends the recording: a checkpoint that comes later (from the
// copier's flush goroutine) writes nothing, so the record cannot reappear
// once Commit removed it, nor go to a descriptor closed meanwhile.
func (k *keeper) stop() {
	k.mu.Lock()
	k.final = true
	k.mu.Unlock()
}

func (k *keeper) write(off int64, h HashState) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.final || off < k.rec.Checkpoint {
		return nil
	}
	r := k.rec
	r.Checkpoint = off
	r.Hash = h
	if !h.valid(off) {
		r.Hash = HashState{}
	}
	if err := k.record(r); err != nil {
		return &Error{Op: OpSetxattrResume, Err: err}
	}
	k.rec = r
	return nil
}

// record writes r where k keeps its file's record: the file's xattr, or
// its side record, made durable (the xattr goes with the file's next
// flush or journal commit).
func (k *keeper) record(r resumeRecord) error {
	if k.side == nil {
		return ignoringEINTR(func() error { return fsetxattr(k.fd, MarkXattr, r.encode(), 0) })
	}
	if err := k.side.write(r.encode()); err != nil {
		return err
	}
	return k.side.sync(k.sys)
}

// ErrNoXattrs says that the destination's filesystem takes no user
// extended attributes, and the temporary file has no side record either:
// no checkpoint can be recorded.
var ErrNoXattrs = errors.New("the filesystem takes no user extended attributes")

// StartRecord makes d resumable: it records src's identity with
// checkpoint 0. reached is the copy's progress, read on a fatal signal.
// When the filesystem takes no user xattrs, the record goes into the
// temporary file's side record (SideRecord); without one the error wraps
// ErrNoXattrs, and d goes on as a plain copy (removed on a signal, as
// without --resume).
func (d *Destination) StartRecord(id SourceID, reached *atomic.Int64) error {
	return d.startRecord(resumeRecord{ID: id}, reached)
}

func (d *Destination) startRecord(r resumeRecord, reached *atomic.Int64) error {
	switch {
	case d.unnamed:
		return errors.New("an unnamed temporary file cannot be resumed (Options.Named)")
	case d.entry == nil:
		return errors.New("an in-place destination cannot be resumed")
	}
	fd, err := unix.FcntlInt(uintptr(d.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return &Error{Op: OpFcntl, Err: err}
	}
	err = ignoringEINTR(func() error { return fsetxattr(fd, MarkXattr, r.encode(), 0) })
	if err != nil && (err == unix.ENOTSUP || err == unix.EPERM) && d.side != nil {
		// No user xattrs here: the record goes into the side record.
		if err := d.side.write(r.encode()); err != nil {
			unix.Close(fd)
			return &Error{Op: OpSetxattrResume, Err: err}
		}
		k := &keeper{sys: d.sys, fd: fd, side: d.side, rec: r, reached: reached, dest: d.Path}
		d.session.keep(d.entry, k)
		d.keeper = k
		return nil
	}
	if err != nil {
		unix.Close(fd)
		if err == unix.ENOTSUP || err == unix.EPERM {
			// EOPNOTSUPP (== ENOTSUP): no xattr handler for "user."
			// (tmpfs before 6.6, some FUSE and network filesystems);
			// EPERM: user xattrs refused on this kind of file.
			return fmt.Errorf("%w (%s)", ErrNoXattrs, unix.ErrnoName(err.(unix.Errno)))
		}
		return &Error{Op: OpSetxattrResume, Err: err}
	}
	k := &keeper{sys: d.sys, fd: fd, rec: r, reached: reached, dest: d.Path}
	d.session.keep(d.entry, k)
	d.keeper = k
	return nil
}

// Checkpoint records that the temporary file's data below off is on stable
// storage (copier.Options.Checkpoint: called after an fdatasync).
func (d *Destination) Checkpoint(off int64) error {
	if d.keeper == nil {
		return nil
	}
	return d.keeper.write(off, HashState{})
}

// FlushCheckpoint makes the data written through fd, a descriptor of the
// temporary file, durable (fdatasync, EINTR retried) for the checkpoint
// that Checkpoint then records (copier.Options.CheckpointFlush: the copier
// runs it on a goroutine of its own, on a duplicate descriptor, while the
// copy goes on). Its error is final: the kernel may have dropped the pages,
// and no later flush would say so.
func (d *Destination) FlushCheckpoint(fd int) error {
	return ignoringEINTR(func() error { return d.sys.fdatasync(fd) })
}

// CheckpointHash is Checkpoint for a copy with --checksum: h, its hash's
// state at h.Off (at most off, and taken when the fdatasync began), is
// recorded with the checkpoint, so that a resumed copy hashes on from
// there instead of reading the part done again.
func (d *Destination) CheckpointHash(off int64, h HashState) error {
	if d.keeper == nil {
		return nil
	}
	return d.keeper.write(off, h)
}

// SetHashNow gives a resumable destination the copy's latest hash state,
// which a fatal signal records with its last checkpoint (when it is not
// past it).
func (d *Destination) SetHashNow(f func() HashState) {
	if d.keeper != nil {
		d.keeper.mu.Lock()
		d.keeper.hashNow = f
		d.keeper.mu.Unlock()
	}
}

// ResumedHash is the hash state that the leftover Continue took up had
// recorded with its checkpoint (the zero value: none), and why none could
// be taken from it, if it had fields that were not usable.
func (d *Destination) ResumedHash() (HashState, string) {
	if d.keeper == nil {
		return HashState{}, ""
	}
	return d.resumed.Hash, d.resumed.HashWhy
}

// Resumable reports whether d records checkpoints.
func (d *Destination) Resumable() bool { return d.keeper != nil }

// Kept is a temporary file that a fatal signal left in place to be
// resumed: Done of Size bytes of the copy to Dest are in it on stable
// storage. Err, when set, is why the last flush failed (Done is then the
// checkpoint recorded before).
type Kept struct {
	Temp, Dest string
	Done, Size int64
	Err        error
}

// settleTime bounds how long Interrupt waits for the copies' calls in
// flight to return.
const settleTime = time.Second

// settle waits, until deadline at most, for the copy's progress to move
// once: the call in flight when the signal came has then returned and
// counted its bytes. A copy whose progress is at the source's end has no
// call in flight.
func (k *keeper) settle(deadline time.Time) {
	if k.reached == nil {
		return
	}
	start := k.reached.Load()
	if start >= k.rec.ID.Size {
		return
	}
	for k.reached.Load() == start && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// keepForExit flushes the file and records how far the copy got; the
// session is locked.
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
	if err := ignoringEINTR(func() error { return k.sys.fdatasync(k.fd) }); err != nil {
		kept.Err = &Error{Op: OpFdatasync, Err: err}
		return kept
	}
	r := k.rec
	r.Checkpoint = off
	if k.hashNow != nil {
		if h := k.hashNow(); h.valid(off) {
			r.Hash = h
		}
	}
	if err := k.record(r); err != nil {
		kept.Err = &Error{Op: OpSetxattrResume, Err: err}
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
	// WhyChangedMeanwhile: the leftover changed between the look at
	// it and its lock (another copy finished it, or recorded it at
	// its end); it is not acted on.
	WhyChangedMeanwhile = "leftover changed"
)

// FreshStart says why a leftover was not resumed.
type FreshStart struct {
	Temp   string
	Why    string // WhyNoCheckpoint, WhyChanged, WhyForeign or WhyChangedMeanwhile
	Detail string
	// Kept: the leftover was left where it is (not fastcp's, or not
	// this user's to take); the sweep of the fresh copy does not name it
	// again, so the warning must.
	Kept bool
	// Unjudged: a leftover of this user's that cannot be proved dead
	// (no locks, no record, written on another machine), kept; Side is
	// its side record's path, if it has one. The warning says how to
	// remove them.
	Unjudged bool
	Side     string
	// Swept: what the sweep of DEST's other leftovers found, once the
	// first name was free again (as Destination.Leftovers).
	Swept []Leftover
}

func (e *FreshStart) Error() string { return e.Why + ": " + e.Detail }

// Continue looks for the leftover of an interrupted copy of the source id
// to DEST (name in dir, as for Create), under DEST's first temporary name
// (FirstTemp), and continues it. It returns:
//   - a Destination and the offset to copy from, when the leftover is
//     resumed (it was cut back to its checkpoint, and is locked, registered
//     with o.Session and recorded as Create's files are; DEST's other
//     leftovers were swept, as Create sweeps them: Leftovers);
//   - (nil, 0, nil): nothing there (Create, with Named, then sweeps
//     DEST's other leftovers);
//   - a *FreshStart error: a leftover that cannot be resumed; when it was
//     a dead one of fastcp's (it carries fastcp's mark), it was removed, so
//     Create takes the name (and DEST's other leftovers were swept:
//     FreshStart.Swept); a file without the mark is left alone, and
//     so is one that changed between the look and the lock
//     (WhyChangedMeanwhile: another copy finished or recorded it);
//   - a *LiveError: a copy is writing it; it is left alone.
//
// reached is the copy's progress, as for StartRecord.
func Continue(dir *fsdir.Dir, name string, id SourceID, o Options, reached *atomic.Int64) (*Destination, int64, error) {
	in, base, path, err := entryIn(o.sysOf(), dir, name)
	if err != nil {
		// Create reports what is wrong with the directory.
		return nil, 0, nil
	}
	return continueIn(in, base, path, id, o, reached)
}

// continueIn is Continue for base in dir (path names it); it owns dir.
func continueIn(dir *fsdir.Dir, base, path string, id SourceID, o Options, reached *atomic.Int64) (*Destination, int64, error) {
	if o.Session == nil {
		o.Session = NewSession()
	}
	name := filepath.Base(FirstTemp(base))
	temp := shownIn(dir, name)
	flags := unix.O_RDWR | o.Sync.OpenFlags()
	fd, fst, err := openLeftover(dir.Fd(), name, temp, flags, identity{dev: id.Dev, ino: id.Ino})
	var refused *Distrusted
	switch {
	case err == unix.ENOENT:
		dir.Release()
		return nil, 0, nil
	case errors.As(err, &refused):
		// Not this user's to adopt (trust.go): left alone, and named
		// here only, not again by the sweep of the fresh copy.
		o.Session.reported(dir, name)
		dir.Release()
		return nil, 0, &FreshStart{Temp: temp, Why: WhyForeign, Detail: refused.Why, Kept: true}
	case err != nil:
		dir.Release()
		return nil, 0, &FreshStart{Temp: temp, Why: WhyForeign, Detail: err.Error()}
	}
	st := *fst
	var side *sideRecord // where the filesystem keeps no user xattrs
	var wr writer        // who wrote side
	unjudged := false
	// swept sweeps the dead leftovers of other copies to DEST once the
	// first name is free again (Create then takes it, and sweeps only a
	// name it finds taken): a copy that found the first name taken went
	// on under a random one, and may have died there.
	swept := func() []Leftover { return o.Session.sweep(dir, base, name, identity{dev: id.Dev, ino: id.Ino}) }
	fresh := func(why, detail string, remove bool) (*Destination, int64, error) {
		kept := true
		if remove && entryIs(dir.Fd(), name, identityOf(&st)) {
			// Locked by fd, marked as fastcp's: a dead leftover.
			kept = unlinkat(dir.Fd(), name, 0) != nil
		}
		fs := &FreshStart{Temp: temp, Why: why, Detail: detail, Kept: kept, Unjudged: unjudged && kept}
		if side != nil {
			if kept {
				fs.Side = shownIn(dir, side.name)
				side.close()
			} else {
				side.remove(dir.Fd())
			}
		}
		if kept {
			o.Session.reported(dir, name)
		}
		unix.Close(fd)
		if !kept {
			fs.Swept = swept()
		}
		dir.Release()
		return nil, 0, fs
	}
	// The mark first, then the lock, then the check that the file is
	// still the one judged, as the sweep does (leftovers.go): a file
	// fastcp did not mark is not locked, not cut, not removed.
	rec, unread, noX := readRecord(fd)
	if noX {
		// No user xattrs here: the record is in the side record, if
		// the file has one.
		sr, w, value, err := openSide(dir, name, identity{dev: id.Dev, ino: id.Ino})
		switch {
		case err == nil:
			side, wr, rec, unread = sr, w, value, ""
		case err == unix.ENOENT:
			unjudged = true
			unread = "the filesystem keeps no user extended attributes, and it has no side record"
		case errors.As(err, &refused):
			o.Session.reported(dir, name)
			unix.Close(fd)
			dir.Release()
			return nil, 0, &FreshStart{Temp: temp, Why: WhyForeign, Detail: "its side record: " + refused.Why, Kept: true}
		default:
			unread = "reading its side record: " + err.Error()
		}
	}
	if unread != "" {
		return fresh(WhyForeign, unread, false)
	}
	switch err := ignoringEINTR(func() error { return flock(fd, unix.LOCK_EX|unix.LOCK_NB) }); err {
	case nil:
	case unix.EWOULDBLOCK:
		unix.Close(fd)
		dir.Release()
		return nil, 0, &LiveError{Temp: temp}
	default:
		// No locks here (ENOLCK, EOPNOTSUPP): whether a copy still
		// writes it cannot be told, so it is not touched.
		unjudged = true
		return fresh(WhyForeign, "its lock cannot be taken: "+err.Error(), false)
	}
	// Locked: whoever held the lock is gone, or has just finished with
	// the file (committed it: renamed over DEST; or recorded a last
	// checkpoint at a signal). Only the file that was judged is cut back.
	switch lst, what, why := lockedLeftover(dir.Fd(), name, fd, identityOf(&st), rec, identity{dev: id.Dev, ino: id.Ino}, side); what {
	case leftoverLocked:
		st = lst
	case leftoverGone:
		// Not a leftover any more (another copy's DEST, or removed):
		// the copy starts over under a temporary name of its own.
		if side != nil {
			side.close()
		}
		unix.Close(fd)
		f := &FreshStart{Temp: temp, Why: WhyChangedMeanwhile, Detail: why, Swept: swept()}
		dir.Release()
		return nil, 0, f
	default:
		return fresh(WhyChangedMeanwhile, why, false)
	}
	if side != nil {
		// The lock may be this machine's alone: the side record says
		// whose copy wrote the file, and whether it still runs.
		switch s, why := wr.state(); s {
		case writerRunning:
			side.close()
			unix.Close(fd)
			dir.Release()
			return nil, 0, &LiveError{Temp: temp}
		case writerUnknown:
			unjudged = true
			return fresh(WhyForeign, why+", so whether that copy still runs cannot be told", false)
		}
	}
	r, why, detail, remove := judgeRecord(rec, id, st.Size)
	if why != "" {
		return fresh(why, detail, remove)
	}
	if err := ignoringEINTR(func() error { return unix.Ftruncate(fd, r.Checkpoint) }); err != nil {
		return fresh(WhyForeign, "cutting it back to its checkpoint: "+err.Error(), false)
	}
	// The lock's own descriptor, as Create makes one: Commit closes File
	// before the rename, and the lock must last until its end.
	lockFd, err := o.sysOf().dupFd(fd)
	if err != nil {
		return fresh(WhyForeign, err.Error(), false)
	}
	e, _ := o.Session.create(o.sysOf(), dir, name, func() (identity, error) { return identityOf(&st), nil })
	d := &Destination{Path: path, File: sysx.NewFile(fd, temp), temp: temp,
		session: o.Session, dir: dir, base: base, entry: e, lockFd: lockFd, side: side}
	if side != nil {
		_ = o.Session.unlessInterrupted(func() error { e.side = side; return nil })
	}
	d.setup(o, nil)
	d.resumed = r
	if !r.Hash.valid(r.Checkpoint) {
		// A state past where the copy goes on is of no use.
		if r.Hash.Alg != "" && r.HashWhy == "" {
			d.resumed.HashWhy = "its hash state lies past the point the copy goes on from"
		}
		r.Hash, d.resumed.Hash = HashState{}, HashState{}
	}
	if err := d.startRecord(r, reached); err != nil {
		d.Abort()
		return nil, 0, &FreshStart{Temp: temp, Why: WhyNoCheckpoint, Detail: err.Error()}
	}
	// Only the leftover under the first name is continued: the others
	// are swept as Create sweeps them.
	d.swept = swept()
	return d, r.Checkpoint, nil
}

// maxRecord bounds a resume record's length: its fields, and a SHA-512
// state in base64.
const maxRecord = 1024

// readRecord reads the resume record (or the mere mark) of the leftover
// open as fd; unread says why there is none to judge, noXattrs that the
// filesystem keeps no user xattrs (the record may be in a side record).
func readRecord(fd int) (rec []byte, unread string, noXattrs bool) {
	b := make([]byte, maxRecord)
	n, err := fgetxattr(fd, MarkXattr, b)
	switch {
	case err == unix.ENODATA:
		return nil, "it is not marked as fastcp's", false
	case err == unix.ENOTSUP:
		return nil, ErrNoXattrs.Error() + ": it cannot be told from a file of someone else's", true
	case err == unix.ERANGE:
		return nil, errBadRecord.Error(), false
	case err != nil:
		return nil, "reading its resume record: " + err.Error(), false
	}
	return b[:n], "", false
}

// judgeRecord decides from a leftover's resume record (rec: its xattr's
// value) whether it may be continued for the source id; size is the
// leftover's. When it may not, why and detail say so, and remove says
// whether it is fastcp's own dead leftover, which is removed. r is the
// record, its checkpoint aligned where the copy continues.
func judgeRecord(rec []byte, id SourceID, size int64) (r resumeRecord, why, detail string, remove bool) {
	if bytes.HasPrefix(rec, []byte(markMagic)) {
		return r, WhyNoCheckpoint, "it has no resume record", true
	}
	r, err := decodeRecord(rec)
	switch {
	case err != nil:
		// Not a value fastcp writes: not removed.
		return r, WhyForeign, err.Error(), bytes.HasPrefix(rec, []byte(resumeMagic))
	case r.ID.Dev != id.Dev || r.ID.Ino != id.Ino:
		return r, WhyForeign, "it is a copy of another source", true
	case r.ID != id:
		return r, WhyChanged, "size, mtime or ctime differ from the interrupted copy's", true
	case r.Checkpoint > id.Size || r.Checkpoint > size:
		return r, WhyForeign, fmt.Sprintf("its checkpoint %d lies past the end of the file", r.Checkpoint), true
	case r.Checkpoint == 0:
		return r, WhyNoCheckpoint, "no checkpoint was recorded", true
	}
	if r.Checkpoint < id.Size {
		// Continue at a MiB boundary: O_DIRECT (the direct strategy) and
		// FICLONERANGE need aligned offsets, and the checkpoint of an
		// interrupted copy is usually one already.
		r.Checkpoint &^= resumeAlign - 1
		if r.Checkpoint == 0 {
			return r, WhyNoCheckpoint, "the checkpoint lies within the first MiB", true
		}
	}
	return r, "", "", false
}
