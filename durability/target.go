// SPDX-License-Identifier: MIT

// Package durability decides how a destination comes into being and when it
// is safe: a temporary file beside DEST renamed over it only after the copy
// succeeded (or DEST itself where the in-place rule, WritesInPlace, says
// so: --inplace, devices, FIFOs, /proc and /sys files), O_SYNC or
// O_DSYNC set in the open call, writeback started behind the copy, the
// --sync flush, the read-back of --verify, the directory fsync, drop-behind
// for --nocache, and the cleanup of temporary files on errors and fatal
// signals.
//
// The order of a durable commit (every --sync mode but none) is the one
// that survives a crash at any point with either the old DEST or the whole
// new one:
//
//	copy -> fdatasync/fsync the temporary file -> [verify] -> close
//	     -> rename it over DEST -> fsync DEST's directory
//
// An unnamed (O_TMPFILE) temporary file is linked in before the close,
// which needs its descriptor: under its temporary name, then renamed, or
// under DEST's own name when there was no DEST (the link is then the
// rename; a close that fails unlinks DEST again):
//
//	copy -> fdatasync/fsync -> [verify] -> linkat -> close
//	     -> [rename over DEST] -> fsync DEST's directory
//
// The data must be on the device before the rename or link is (ext4's
// auto_da_alloc hides a missing fsync for renames over an existing file,
// xfs and btrfs do not), and the rename itself is only durable once the
// directory holding the new entry was fsynced: "Calling fsync() does not
// necessarily ensure that the entry in the directory containing the file
// has also reached disk. For that an explicit fsync() on a file descriptor
// for the directory is also needed." (fsync(2)). Only DEST's own directory
// is synced: its parents' entries did not change.
package durability

import (
	"errors"
	"fastcp/checksum"
	"fastcp/internal/fsdir"
	"os"
	"runtime"
	"time"

	"fastcp/internal/sysx"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temporary file fastcp creates, so a
// leftover (after SIGKILL or a power cut) can be recognised: ".fastcp-".
const TempPrefix = ".fastcp-"

// maxTempBase bounds how much of DEST's name goes into the temporary name,
// which must stay within NAME_MAX (255 bytes).
const maxTempBase = 200

// Options say how a destination is opened and committed.
type Options struct {
	// InPlace writes into Path itself, where WritesInPlace says so
	// (--inplace, devices, FIFOs, /proc and /sys files).
	InPlace bool
	// Truncate, with InPlace, empties a regular file first (as O_TRUNC,
	// once it proved not to be Source: truncateInPlace).
	Truncate bool
	// Perm is the mode a new in-place file is created with.
	Perm os.FileMode
	// UnnamedPerm is the mode an unnamed temporary file is created with
	// (the umask or the directory's default ACL apply, as to any new
	// file); 0 means 0600. Nobody can open a file that has no name, so it
	// may have its final mode from the start, as cp's DEST has: the
	// caller then need not chmod it (Stat says what the kernel made of
	// it). A named temporary file, which others could open, is 0600
	// until it is complete.
	UnnamedPerm os.FileMode
	// Sync is the --sync mode: how the data and the directory entry are
	// made durable before Commit returns.
	Sync SyncMode
	// NoCache drops the destination's and the source's pages from the
	// page cache behind the copy (--nocache).
	NoCache bool
	// Verify makes Commit read the destination back past the page cache
	// and compare its checksum with the source's before the rename. With
	// Checksum, and the digest the copy made of the source (SetDigest),
	// the destination's digest is compared with it, and the source is
	// not read again unless VerifySource says so.
	Verify       bool
	VerifySource bool
	// Checksum is the algorithm of the digest SetDigest gives (--checksum).
	Checksum checksum.Algorithm
	// New says that DEST did not exist when the copy was decided. An
	// unnamed temporary file is then linked in under DEST's own name,
	// with no rename: a DEST that appeared meanwhile makes Commit fail
	// with EEXIST, as cp's O_EXCL create does.
	New bool
	// FreshDir says that DEST's directory was made by this run (as
	// Session.DirCreated): nothing can be left over in it, so an unnamed
	// file does not look for a leftover under the first temporary name.
	FreshDir bool
	// Named gives the temporary file its name from the start instead of
	// making an unnamed (O_TMPFILE) one: a copy that will be recorded
	// (StartRecord, for --resume) needs it.
	Named bool

	// Session is the run's set of destinations being written, which a
	// fatal signal removes (Session.Interrupt); nil: a session of this
	// destination alone.
	Session *Session

	// sys is the destination's system calls (sys.go); nil: the real ones.
	sys *sysCalls

	// Source, when set, is the file being copied: with NoCache its pages
	// are dropped behind the copy from Written, and at Abort. Without it
	// the source is dropped only at Commit (from Commit's argument).
	Source sysx.Descriptor
	// WritebackWindow is how many bytes one sync_file_range call starts
	// writing; 0 means DefaultWritebackWindow.
	WritebackWindow int64
	// WritebackDepth is how many started windows may be in flight before
	// Written waits for the oldest; 0 means DefaultWritebackDepth.
	WritebackDepth int
	// FlushEvery is how many bytes are started between background
	// fdatasyncs during the copy (--sync modes and --verify); < 0 none; 0
	// means every 128 MiB when Source is in the page cache, else none.
	FlushEvery int64
}

// sourceIdentity is the identity of o.Source, zero when there is none: the
// one file a sweep for this copy must never take for a leftover.
func (o *Options) sourceIdentity() identity {
	var st unix.Stat_t
	if o.Source == nil || unix.Fstat(int(o.Source.Fd()), &st) != nil {
		return identity{}
	}
	return identityOf(&st)
}

// sourceSize is o.Source's size, 0 when there is none.
func (o *Options) sourceSize() int64 {
	var st unix.Stat_t
	if o.Source == nil || unix.Fstat(int(o.Source.Fd()), &st) != nil {
		return 0
	}
	return st.Size
}

// noXattrs reports whether err says that the filesystem keeps no user
// extended attributes (EPERM: not on this kind of file).
func noXattrs(err error) bool {
	return err != nil && (isUnsupported(err) || errors.Is(err, unix.EPERM))
}

// Destination is a file being written.
type Destination struct {
	Path string     // the name the data ends up under
	File *sysx.File // where the copy writes
	// Stat is the fstat of File made when it was opened (nil if that
	// failed), for the copier, which would otherwise make the same call.
	Stat *unix.Stat_t
	// file and stat hold what File and Stat point to when Destination
	// made them: one allocation a copy rather than three, for trees of
	// small files.
	file sysx.File
	stat unix.Stat_t
	temp string // the temporary file's path; "" when in place, or while it has no name
	done bool
	// closed: File was closed (by Commit, or by cleanup).
	closed bool
	// unnamed: File is an O_TMPFILE file, which Commit links in (its
	// identity is Stat's).
	unnamed bool
	// side: the temporary file's side record, where the filesystem keeps
	// no user xattrs (siderecord.go); nil otherwise.
	side *sideRecord

	session *Session
	dir     *fsdir.Dir // DEST's directory; nil when writing in place
	base    string     // DEST's name in dir
	entry   *tempEntry // the temporary file; nil once renamed or removed
	lockFd  int        // holds the temporary file's lock; -1: none
	swept   []Leftover

	opts  Options
	sys   *sysCalls // opts.sysOf()
	fd    int       // File's descriptor, kept alive with File
	ftype uint32    // S_IFMT of the open destination
	wb    writeback
	stats Stats
	// srcSums checksums Options.Source behind the copy for --verify.
	srcSums *sourceSums
	// srcCache is what --nocache may drop of Options.Source: what the
	// copy brings into the page cache (nil without both).
	srcCache *sourceCache
	// digest is the source's, made by the copy (SetDigest): --verify
	// compares the destination's with it; digestFunc, when set, gives it
	// after the flush (SetDigestFunc).
	digest     []byte
	digestFunc func() ([]byte, error)
	// keeper, with --resume, records checkpoints (resume.go); resumed is
	// the record of the leftover Continue took up.
	keeper  *keeper
	resumed resumeRecord
}

// Stats says what the durability steps of one destination did and cost.
type Stats struct {
	// Pipelined is true when writeback ran behind the copy.
	Pipelined bool
	// Unsupported is why sync_file_range was given up (EINVAL, ENOSYS,
	// EOPNOTSUPP, ESPIPE), nil when it worked or was not tried.
	Unsupported error
	// WritebackCalls counts sync_file_range calls; Started is the bytes
	// whose write-out they started before the final flush.
	WritebackCalls int
	Started        int64
	// WritebackWait is the time Written spent waiting for older windows.
	WritebackWait time.Duration
	// BackgroundFlushes counts the fdatasyncs run during the copy.
	BackgroundFlushes int
	// Flush is the time of the final fdatasync/fsync (or, for --nocache
	// without --sync, of waiting for the last windows).
	Flush time.Duration
	// Verify is the time of --verify's read-back and comparison;
	// VerifyRead says how the destination was read back: ReadEvicted,
	// ReadDirect or ReadPageCache.
	Verify     time.Duration
	VerifyRead string
	// DirSync is the time of the directory fsync.
	DirSync time.Duration
}

// Stats returns what the durability steps did so far.
func (d *Destination) Stats() Stats {
	s := d.stats
	s.Pipelined = d.wb.calls > 0 && d.wb.unsupported == nil
	s.Unsupported = d.wb.unsupported
	s.WritebackCalls = d.wb.calls
	s.Started = d.wb.started
	s.WritebackWait = d.wb.waited
	s.BackgroundFlushes = d.wb.flushes
	return s
}

// InPlace reports whether the copy writes into Path itself.
func (d *Destination) InPlace() bool { return d.opts.InPlace }

// TempPath returns the temporary file's path: "" when in place, and for an
// unnamed (O_TMPFILE) file until Commit links it in.
func (d *Destination) TempPath() string { return d.temp }

// SideRecord is the path of the temporary file's side record, which holds
// its mark and --resume's record where the filesystem keeps no user
// extended attributes (siderecord.go); "" when it has none.
func (d *Destination) SideRecord() string {
	if d.side == nil {
		return ""
	}
	return shownIn(d.dir, d.side.name)
}

// Unnamed reports whether the temporary file is an O_TMPFILE file that has
// no name until Commit (see tempfile.go).
func (d *Destination) Unnamed() bool { return d.unnamed }

// Leftovers returns what Create's sweep found: the dead temporary files of
// interrupted copies to the same DEST that it removed, and those it could
// not judge and kept (see leftovers.go). The sweep runs only when the first
// temporary name was taken.
func (d *Destination) Leftovers() []Leftover { return d.swept }

// Create opens the destination name in dir (an entry of dir, or a path
// relative to it; in fsdir.Cwd, any path): a new temporary file in DEST's
// directory (unnamed where the filesystem allows it, see tempfile.go), of
// mode o.UnnamedPerm (see Options; 0600 when 0) when it has no name, 0600 when it has one, or DEST
// itself when o.InPlace (created, if it must be, with o.Perm; 0666 when
// 0). The open call carries O_SYNC or O_DSYNC when o.Sync asks for them.
// Every call is relative to DEST's directory, which the Destination holds
// (a reference of its own) until it is committed or aborted. The caller
// defers Abort, which does nothing after Commit.
func Create(dir *fsdir.Dir, name string, o Options) (*Destination, error) {
	in, base, path, err := entryIn(o.sysOf(), dir, name)
	if err != nil {
		return nil, err
	}
	return createIn(in, base, path, o)
}

// createIn opens the destination base in dir (path names it); it owns
// dir's reference from here on.
func createIn(dir *fsdir.Dir, base, path string, o Options) (*Destination, error) {
	if o.Session == nil {
		o.Session = NewSession()
	}
	flags := o.Sync.OpenFlags()
	sys := o.sysOf()
	d := &Destination{Path: path, session: o.Session, lockFd: -1, sys: sys}
	var st *unix.Stat_t // the new temporary file's, from its create
	if o.InPlace {
		flags |= os.O_WRONLY | os.O_CREATE
		perm := o.Perm
		if perm == 0 {
			perm = 0o666
		}
		f, err := openInPlace(dir, base, path, flags, perm)
		if err == nil && o.Truncate {
			if err = truncateInPlace(f, o); err != nil {
				sys.closeFile(f)
			}
		}
		if err != nil {
			dir.Release()
			return nil, err
		}
		// In place, dir (if any) is only DEST's directory, for the
		// directory fsync and the read-back of --verify.
		d.File, d.dir, d.base = f, dir, base
		o.Session.writingInPlace(d, true)
	} else if createUnnamed(dir, flags, o.Named, o.UnnamedPerm, &d.file, &d.stat) {
		d.File, d.dir, d.base, d.unnamed = &d.file, dir, base, true
		st = &d.stat
		if !o.FreshDir && firstTempTaken(dir, base) {
			d.swept = o.Session.sweep(dir, base, "", o.sourceIdentity())
		}
	} else {
		f, e, lockFd, firstTaken, tst, markErr, err := createTempFile(sys, o.Session, dir, base, flags)
		if err != nil {
			dir.Release()
			return nil, err
		}
		d.File, d.temp, d.dir, d.base, d.entry, d.lockFd = f, e.path(), dir, base, e, lockFd
		st = tst
		if noXattrs(markErr) && (o.Named || o.sourceSize() >= sideRecordMin) {
			// Registered with the entry under the session's lock, so
			// that a fatal signal removes it with the file.
			_ = o.Session.unlessInterrupted(func() error {
				if side, err := createSide(dir, e.name, []byte(markMagic)); err == nil {
					e.side, d.side = side, side
				}
				return nil
			})
		}
		if firstTaken || o.Named && !o.FreshDir {
			// Taken: by a leftover of an interrupted copy, or by a copy
			// to the same DEST still running. A copy that will be
			// recorded (--resume) sweeps even when the first name was
			// free: two copies that raced left the later one's file
			// under a random name, and when the power was cut after the
			// first committed, only that one is left, which no later
			// copy would otherwise look for.
			d.swept = o.Session.sweep(dir, base, e.name, o.sourceIdentity())
		}
	}
	d.setup(o, st)
	return d, nil
}

// setup readies a Destination whose File is open: its stat (st, when the
// caller already made one since the open; else an fstat now), the
// writeback pipeline, the source's checksums for --verify.
func (d *Destination) setup(o Options, st *unix.Stat_t) {
	d.opts = o
	d.sys = o.sysOf()
	d.fd = int(d.File.Fd())
	if st == nil {
		st = &d.stat
		if err := unix.Fstat(d.fd, st); err != nil {
			st = nil
		}
	}
	if st != nil {
		d.ftype = st.Mode & unix.S_IFMT
		d.Stat = st
	}
	if o.NoCache && o.Source != nil {
		// Before the copy reads anything.
		d.srcCache = newSourceCache(d.sys, o.Source)
	}
	d.wb.init(d, o)
	if o.Verify && o.Checksum == checksum.None && o.Source != nil && d.syncable() {
		var sst unix.Stat_t
		if err := unix.Fstat(int(o.Source.Fd()), &sst); err == nil && sst.Mode&unix.S_IFMT == unix.S_IFREG {
			d.srcSums = startSourceSums(d.sys, o.Source, d.srcCache)
		}
	}
}

// SetDigestFunc gives Commit what to call once the copy is flushed, and
// before it is verified or renamed: the copy's hash, still catching up
// with the copy while the flush runs, is awaited there, and the source
// checked for a change; the digest f returns is SetDigest's, and an error
// fails Commit as it is (not wrapped), the temporary file removed.
func (d *Destination) SetDigestFunc(f func() ([]byte, error)) { d.digestFunc = f }

// takeDigest calls the function SetDigestFunc gave, once.
func (d *Destination) takeDigest() error {
	f := d.digestFunc
	if f == nil {
		return nil
	}
	d.digestFunc = nil
	digest, err := f()
	if err != nil {
		return err
	}
	d.SetDigest(digest)
	return nil
}

// SetDigest gives the digest (of Options.Checksum's algorithm) that the
// copy made of the source's bytes as it read them: with --verify, Commit
// compares the destination read back with it.
func (d *Destination) SetDigest(digest []byte) {
	if d.opts.Checksum != checksum.None && len(digest) == d.opts.Checksum.Size() {
		d.digest = digest
	}
}

// openInPlace opens DEST itself for an in-place copy: base in dir, with
// exactly flags in one open (no fcntl that could carry O_SYNC); path names
// it in messages.
func openInPlace(dir *fsdir.Dir, base, path string, flags int, perm os.FileMode) (*sysx.File, error) {
	fd, err := sysx.Openat(dir.Fd(), base, flags|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return sysx.NewFile(fd, path), nil
}

// ErrIsSource is Create's error for an in-place DEST that, once open,
// proves to be the copy's source (Options.Source): its name was swapped for
// a link to the source after the caller checked that they differ.
var ErrIsSource = errors.New("DEST is the source")

// truncateInPlace empties the regular file f, DEST opened in place, as
// O_TRUNC in the open would, but only once its fstat proved it is not the
// copy's source: the caller's check that DEST and SOURCE differ looked at
// the name before this open, and a name swapped meanwhile for a link to
// SOURCE must not cut SOURCE short.
func truncateInPlace(f *sysx.File, o Options) error {
	fd := int(f.Fd())
	defer runtime.KeepAlive(f)
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	if src := o.sourceIdentity(); src != (identity{}) && identityOf(&st) == src {
		return ErrIsSource
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil // O_TRUNC does nothing to a FIFO or a device either
	}
	if err := ignoringEINTR(func() error { return unix.Ftruncate(fd, 0) }); err != nil {
		return &os.PathError{Op: "open", Path: f.Name(), Err: err}
	}
	return nil
}

// syncable reports whether the destination holds data that fsync and
// sync_file_range can write out: a regular file or a block device. A FIFO
// or a character device has no page cache, and fsync on one fails with
// EINVAL ("fd is bound to a special file ... which does not support
// synchronization", fsync(2)).
func (d *Destination) syncable() bool {
	return d.ftype == unix.S_IFREG || d.ftype == unix.S_IFBLK
}

// Abort gives up: closes the file and removes the temporary file (if its
// name still is this copy's file). An in-place destination is left as it
// is (partial). Nothing is flushed or waited for: a background fdatasync
// still running finishes on its own descriptor. After Commit, Abort does
// nothing.
func (d *Destination) Abort() {
	if d.done {
		return
	}
	d.done = true
	d.wb.abandon()
	d.abandonSourceSums()
	if d.opts.NoCache {
		if d.opts.InPlace && d.syncable() {
			// In place: drop what is already clean; dirty pages stay
			// (POSIX_FADV_DONTNEED never discards them).
			d.sys.fadvise(d.fd, 0, 0, unix.FADV_DONTNEED)
		}
		d.srcCache.drop(0, 0)
	}
	d.cleanup()
}

// cleanup ends Commit and Abort, whichever way they went: it removes the
// temporary file unless it was renamed over DEST (or never had a name),
// closes File unless Commit did, and releases the lock and the directory.
// After a successful Commit only the release is left to do.
func (d *Destination) cleanup() {
	d.removeTemp()
	if !d.closed {
		d.closed = true
		d.sys.closeFile(d.File)
	}
	d.release()
}

// abandonSourceSums stops the source checksummer, if one still runs.
func (d *Destination) abandonSourceSums() {
	if d.srcSums != nil {
		d.srcSums.abandon()
		d.srcSums = nil
	}
}

// removeTemp removes the temporary file, if any, and forgets it.
func (d *Destination) removeTemp() {
	if d.entry != nil {
		d.session.remove(d.entry)
		d.entry = nil
	}
}

// release drops the lock and the directory and, for an in-place
// destination, the session's note of it: the end of cleanup.
func (d *Destination) release() {
	if d.lockFd >= 0 {
		unix.Close(d.lockFd)
		d.lockFd = -1
	}
	d.dir.Release()
	if d.opts.InPlace {
		d.session.writingInPlace(d, false)
	}
}

// Written is the copier's hook (copier.Options.Written): bytes [off, off+n)
// of the destination were just written. With a --sync mode or --nocache it
// starts their writeback behind the copy (see writeback). A writeback error
// found here is kept and returned by Commit.
func (d *Destination) Written(off, n int64) error {
	if d.done {
		return nil
	}
	if d.srcSums != nil {
		d.srcSums.written(off + n)
	}
	d.wb.written(off, n)
	runtime.KeepAlive(d.File)
	if d.wb.err != nil {
		// Final (the kernel may have dropped the pages): stop the copy
		// now rather than at Commit. Commit reports it again.
		return &Error{Op: d.wb.errOp, Err: d.wb.err}
	}
	return nil
}

// WrittenDirect is the copier's hook for bytes [off, off+n) written with
// O_DIRECT (copier.Options.WrittenDirect): they left no dirty page, so there
// is nothing to write back behind the copy, and the final fdatasync/fsync
// (which flushes the device's write cache: O_DIRECT alone is not durable)
// and the directory fsync are all that is left of a --sync mode. --verify's
// source reader may read up to there.
func (d *Destination) WrittenDirect(off, n int64) error {
	if d.done {
		return nil
	}
	if d.srcSums != nil {
		d.srcSums.written(off + n)
	}
	return nil
}

// Commit finishes a successful copy of src (which may be nil when there is
// nothing to drop or verify): it reports any writeback error seen during the
// copy, flushes the file as the --sync mode says, verifies it, closes it (a
// close error is a failure: NFS and some FUSE filesystems report write errors
// there), renames the temporary file over Path (an unnamed one is linked in
// first, under Path itself when there was no DEST: see the package comment)
// and fsyncs Path's directory. Attributes must be set on File before. On an
// error before the rename the temporary file is removed and Path is
// untouched; no step is retried.
func (d *Destination) Commit(src sysx.Descriptor) error {
	if d.done {
		return errors.New("destination already finished")
	}
	d.done = true
	// Whatever step fails, the file is closed and the temporary file
	// removed; after the rename only the release is left.
	defer d.cleanup()
	if src == nil {
		src = d.opts.Source
	}
	err := d.settle(src)
	d.abandonSourceSums() // unless verify took its result
	if err != nil {
		return err
	}
	if d.keeper != nil {
		d.keeper.stop()
	}
	linked, err := d.name()
	if err != nil {
		return &Error{Op: OpCreate, Err: err}
	}
	d.closed = true
	if err := d.sys.closeFile(d.File); err != nil {
		if linked && entryIs(d.dir.Fd(), d.base, identityOf(d.Stat)) {
			// A write error the close reported: DEST goes again, as
			// it was (absent).
			unlinkat(d.dir.Fd(), d.base, 0)
		}
		return &Error{Op: OpClose, Err: err}
	}
	if d.entry != nil {
		err := d.session.commit(d.entry, d.base)
		d.entry = nil
		if err != nil {
			return &Error{Op: OpRename, Err: err}
		}
	}
	// The directory entry: the rename above, or the entry an in-place
	// copy created. A device's entry in /dev did not change. (The rule
	// of every directory fsync is in dir.go.)
	if d.opts.Sync != SyncNone && d.ftype == unix.S_IFREG {
		t := time.Now()
		err := d.sys.syncDir(d.dir)
		d.stats.DirSync = time.Since(t)
		if err != nil {
			return &Error{Op: OpFsyncDir, Err: err}
		}
	}
	return nil
}

// name gives the complete file its name before the close: an unnamed file
// is linked in under DEST's own name (linked: nothing is left to rename)
// or under its temporary name; a named one loses its mark.
func (d *Destination) name() (linked bool, err error) {
	switch {
	case d.unnamed && d.opts.New:
		// Complete, and nothing to replace: it gets DEST's name.
		if err := d.session.unlessInterrupted(func() error { return linkFd(d.fd, d.dir.Fd(), d.base) }); err != nil {
			return false, err
		}
		return true, nil
	case d.unnamed:
		// Complete: it gets its temporary name now, and is renamed
		// over DEST by Commit.
		e, err := nameTemp(d.sys, d.session, d.dir, d.base, d.fd, identityOf(d.Stat))
		if err != nil {
			return false, err
		}
		d.entry, d.temp = e, e.path()
	case d.entry != nil:
		// The mark (or --resume's record) goes before the rename: DEST
		// appears with its attributes final. A copy killed in the few
		// microseconds between leaves a complete temporary file that no
		// later run can prove is a leftover: it is kept (not removed).
		// Under the session's lock: a fatal signal's Interrupt, which
		// records --resume's last checkpoint in that attribute and says
		// the file is kept, comes wholly before or after the removal,
		// never between its record and its message.
		_ = d.session.unlessInterrupted(func() error {
			if d.side != nil {
				d.side.remove(d.dir.Fd())
				d.entry.side, d.side = nil, nil
				return nil
			}
			return ignoringEINTR(func() error { return unix.Fremovexattr(d.fd, MarkXattr) })
		})
	}
	return false, nil
}

// settle does everything between the last byte copied and the close: it
// reports a writeback error seen during the copy, flushes, verifies and
// drops pages for --nocache.
func (d *Destination) settle(src sysx.Descriptor) error {
	defer runtime.KeepAlive(d.File)
	t := time.Now()
	if err := d.wb.waitFlush(); err != nil {
		// A failed background fdatasync is final, and so is a failed
		// sync_file_range wait, which already consumed the error: the
		// file's error cursor moved past it (file_check_and_advance_wb_err
		// in mm/filemap.c), so the fdatasync below would return 0.
		return &Error{Op: d.wb.errOp, Err: err}
	}
	if !d.syncable() {
		// A FIFO or character device: nothing to flush or drop on this
		// side (the source may still have pages to drop).
		if err := d.takeDigest(); err != nil {
			return err
		}
		if d.opts.NoCache {
			d.dropSource(src)
		}
		return d.verifyIfAsked(src)
	}
	op := d.opts.Sync.FlushOp()
	if op == "" && d.opts.Verify {
		// Reading the data back from the device needs it there first.
		op = "fdatasync"
	}
	if op != "" {
		if err := d.sys.flush(d.fd, op); err != nil {
			d.stats.Flush = time.Since(t)
			return &Error{Op: op, Err: err}
		}
	} else if d.opts.NoCache {
		// --nocache without a flush: write back and wait for the last
		// windows (and what is still pending), so they can be dropped.
		if err := d.wb.drain(); err != nil {
			d.stats.Flush = time.Since(t)
			return &Error{Op: d.wb.errOp, Err: err}
		}
	}
	d.stats.Flush = time.Since(t)
	if err := d.takeDigest(); err != nil {
		return err
	}
	if err := d.verifyIfAsked(src); err != nil {
		return err
	}
	if d.opts.NoCache {
		// Every page is clean now: drop the whole file, the windows the
		// pipeline did not drop included.
		d.sys.fadvise(d.fd, 0, 0, unix.FADV_DONTNEED)
		d.dropSource(src)
	}
	return nil
}

func (d *Destination) verifyIfAsked(src sysx.Descriptor) error {
	if !d.opts.Verify {
		return nil
	}
	t := time.Now()
	err := d.verify(src)
	d.stats.Verify = time.Since(t)
	return err
}

// dropSource drops src's cached pages (--nocache) but those that were
// cached before the copy, when src is Options.Source; another source,
// which Create did not see before the copy, is dropped whole. It is
// advice: errors (ESPIPE for a FIFO source) change nothing and are ignored.
func (d *Destination) dropSource(src sysx.Descriptor) {
	if src == nil {
		return
	}
	if d.srcCache != nil && src == d.opts.Source {
		d.srcCache.drop(0, 0)
		return
	}
	d.sys.fadvise(int(src.Fd()), 0, 0, unix.FADV_DONTNEED)
	runtime.KeepAlive(src)
}
