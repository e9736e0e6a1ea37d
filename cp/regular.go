// SPDX-License-Identifier: MIT

package cp

// The copy of a file's data: a regular file, or a FIFO or device read as
// data, into DEST. The steps: check DEST (checkDest), open SOURCE, open
// DEST (a temporary file, the leftover --resume continues, or DEST itself),
// transfer the bytes (copier), commit (attributes, backup, rename).

import (
	"errors"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"fastcp/checksum"
	"fastcp/copier"
	"fastcp/durability"
	"fastcp/internal/fsdir"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// copyData and copyMany are the copy engine (one DEST, several); package
// variables so tests can make them fail.
var (
	copyData = copier.Copy
	copyMany = copier.CopyMany
)

// fileCopy is one copy of data in progress, from step to step.
type fileCopy struct {
	*job
	slot   int // the job's place among the copies of one SOURCE (copyFiles)
	ex     destInfo
	srcF   *sysx.File
	before unix.Stat_t // SOURCE as opened
	// inPlace: DEST itself is written; pseudo: a regular DEST on /proc or
	// /sys; special: an in-place DEST that is not a regular file (a
	// device, a FIFO, a pseudo file); newFile: DEST gets a new file's mode.
	inPlace, pseudo, special, newFile bool
	resumable                         bool // --resume: checkpoints recorded, a leftover continued

	dest       *durability.Destination
	start      int64         // where the transfer starts (a resumed leftover's checkpoint)
	reached    *atomic.Int64 // the transfer's progress, for the checkpoints
	checkpoint func(int64) error
	copied     int64     // bytes the transfer wrote
	hash       hash.Hash // --checksum: the source's bytes, as the transfer read them
	hashedTo   int64     // what hash was given already: [0, hashedTo)
	// hashWait waits for a hash still catching up with the copy (nil:
	// none); digest is the hash's, once complete.
	hashWait func(abandon bool) (copier.HashStats, error)
	digest   []byte
}

// copyFiles copies the data of one SOURCE to the DEST of each job of js
// (the same source entry, one job per -t DIRECTORY; one job but with
// several -t): through a temporary file renamed over DEST when DEST is or
// will be a regular file, in place for a device or FIFO DEST or
// --inplace, with SOURCE opened and read once for all of them
// (copier.CopyMany). It reports, job by job, whether DEST now holds the
// copy.
func copyFiles(js []*job) []bool {
	a := js[0].a
	ok := make([]bool, len(js))
	// One DEST is the common case (a tree of small files): the lists
	// below then live on the stack.
	var buf [2][1]*fileCopy
	cs := buf[0][:0]
	for i, j := range js {
		c, kept := j.startCopy()
		if c == nil {
			ok[i] = kept
			continue
		}
		c.slot = i
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return ok
	}
	srcF, before, err := cs[0].openSource()
	if err != nil {
		// Said once, for the first DEST: it is SOURCE's.
		cs[0].r.fail(err.Error())
		for _, c := range cs[1:] {
			c.r.failQuietly()
		}
		return ok
	}
	defer srcF.Close()
	// The file is copied as it is now, and -p and -a take its mode,
	// owner and times from this look, made on what is read: the same
	// file as looked at before, perhaps rewritten since.
	js[0].e.st = before
	live := buf[1][:0]
	defer func() {
		for _, c := range live {
			c.dest.Abort()
		}
	}()
	for _, c := range cs {
		c.srcF, c.before = srcF, before
		c.classify()
		if c.ex.act == actKeepData {
			ok[c.slot] = c.attributesOnly(srcF, c.ex.where())
			continue
		}
		if !c.openDest() {
			continue
		}
		live = append(live, c)
	}
	if len(live) > 1 && !a.opts.AttributesOnly {
		copyShared(live, ok)
		return ok
	}
	for _, c := range live {
		ok[c.slot] = c.copyAlone()
	}
	return ok
}

// startCopy takes a job's DEST as far as the opening of SOURCE: cp's
// rules for an existing DEST, --verify's, the -v line. A nil copy is a
// DEST that is not written: kept says whether it counts as the copy (-u,
// -n).
func (j *job) startCopy() (c *fileCopy, kept bool) {
	ex, ok := j.checkDest(true)
	if !ok {
		return nil, ex.kept
	}
	c = &fileCopy{job: j, ex: ex}
	if !c.verifiable() {
		return nil, false
	}
	o := j.a.opts
	// As cp: the -v line comes before the source is opened, so a file
	// that then fails is named twice, by -v and by the error.
	if o.Verbose {
		j.r.out(copyingLine(j.src, j.dst, ex.backup))
	}
	removes := ex.backup != "" || ex.st != nil && unlinksFirst(o, &j.e.st, ex.st)
	if sourceThroughDest(j.src, entryAt{j.sd, j.e.name}, &j.e.st, entryAt{j.dd, j.name}, ex.st, removes) {
		j.r.fail(output.CannotOpenForReading(j.src, unix.ENOENT))
		return nil, false
	}
	return c, false
}

// copyAlone copies SOURCE to the one DEST (all of copyFiles' copies but
// those of several -t): the transfer, the hash, the check that SOURCE did
// not change, the commit.
func (c *fileCopy) copyAlone() bool {
	o, j := c.a.opts, c.job
	res, err := c.transfer()
	if o.Debug {
		for _, l := range output.DebugLines(&res) {
			j.r.out(l)
		}
	}
	err = hashShort(err)
	if res.HashWait != nil {
		// The hash catches up while the flush runs: awaited in
		// Commit, once flushed, or given up here.
		c.hashWait = res.HashWait
		defer c.endHash()
	}
	if err == nil && !o.AttributesOnly {
		err = sourceChanged(c.srcF, &c.before, res.Size)
	}
	switch {
	case err != nil || c.hash == nil:
	case c.hashWait != nil:
		done := res // the closure's own copy: res itself stays on the stack
		c.dest.SetDigestFunc(func() ([]byte, error) { return c.takeDigest(&done) })
	default:
		// The source did not change while it was copied and hashed.
		c.dest.SetDigest(c.digestOf(&res))
	}
	c.copied = res.Bytes
	return c.finish(err)
}

// finish commits the copy (err nil) or gives it up, and gives the
// entry's record the manifest's line.
func (c *fileCopy) finish(err error) bool {
	if !c.commit(err) {
		return false
	}
	if c.digest != nil && !c.special {
		c.job.digest = c.digest
		c.job.noteSum(c.digest)
	}
	return true
}

// copyShared copies SOURCE, read once, to the DEST of every copy of live
// (several -t DIRECTORYs): one hash, one check that SOURCE did not
// change, then each DEST committed on its own, all at once (each flush
// waits for its own device). A DEST that failed is given up alone.
func copyShared(live []*fileCopy, ok []bool) {
	lead := live[0]
	a, o, srcF, before := lead.a, lead.a.opts, lead.srcF, &lead.before
	start := live[0].start
	for _, c := range live[1:] {
		start = min(start, c.start)
	}
	errs := make([]error, len(live))
	h, err := sharedHash(live, start)
	if err != nil {
		for i := range live {
			errs[i] = err
		}
		commitAll(live, errs, ok)
		return
	}
	dests := make([]copier.Dest, len(live))
	for i, c := range live {
		dests[i] = copier.Dest{File: c.dest.File, Stat: c.destStat(), Written: c.dest.Written, WrittenDirect: c.dest.WrittenDirect,
			Start: c.start, Checkpoint: c.checkpoint, Reached: c.reached}
	}
	copts := lead.copyOptions()
	copts.Hash = h
	if a.progress != nil && h != nil {
		copts.HashWaiting = func() { a.progress.Doing("hashing", lead.dst) }
	}
	res, errs := copyMany(srcF, dests, copts)
	var digest []byte
	var changed error
	checked := false
	for i, c := range live {
		if o.Debug {
			for _, l := range output.DebugLines(&res[i]) {
				c.r.out(l)
			}
		}
		err := hashShort(errs[i])
		if err == nil && !o.AttributesOnly {
			if !checked {
				changed, checked = sourceChanged(srcF, before, res[i].Size), true
			}
			err = changed
		}
		if err == nil && h != nil {
			if digest == nil {
				digest = h.Sum(nil)
			}
			c.digest = digest
			if o.Debug {
				c.r.out(output.ChecksumDebug(o.Checksum.String(), digest, &res[i]))
			}
			c.dest.SetDigest(digest)
		}
		c.copied = res[i].Bytes
		errs[i] = err
	}
	commitAll(live, errs, ok)
}

// sharedHash is the hash of several copies of one SOURCE (--checksum),
// given SOURCE's bytes below start, where the read for all of them
// begins: a leftover's saved state continued (--resume), the rest read
// from SOURCE. nil without --checksum.
func sharedHash(live []*fileCopy, start int64) (hash.Hash, error) {
	o := live[0].a.opts
	if o.Checksum == checksum.None || o.AttributesOnly {
		return nil, nil
	}
	var h hash.Hash
	var from int64
	for _, c := range live {
		if c.hash != nil && c.hashedTo <= start && (h == nil || c.hashedTo > from) {
			h, from = c.hash, c.hashedTo
		}
	}
	if h == nil {
		h = o.Checksum.New()
	}
	if from < start {
		if err := checksum.ReadRange(h, int(live[0].srcF.Fd()), from, start, nil); err != nil {
			if errors.Is(err, checksum.ErrShort) {
				err = copier.ErrHashShort
			}
			return nil, hashShort(&copier.Error{Side: copier.SideRead, Err: err})
		}
	}
	return h, nil
}

// commitAll commits every copy of live whose error is nil, and gives up
// the others, at once where a commit waits for a device (--sync, --verify,
// or a file large enough for its writeback to be under way): each DEST's
// flush waits for its own. Otherwise one after the other, in -t order:
// a small file's commit is a few calls, which goroutines only slow down.
func commitAll(live []*fileCopy, errs []error, ok []bool) {
	if o := live[0].a.opts; o.Sync == durability.SyncNone && !o.Verify && live[0].before.Size < commitAtOnceMin {
		for i, c := range live {
			ok[c.slot] = c.finish(errs[i])
		}
		return
	}
	var wg sync.WaitGroup
	for i, c := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok[c.slot] = c.finish(errs[i])
		}()
	}
	wg.Wait()
}

// commitAtOnceMin is the size from which the commits of one SOURCE's
// DESTs run at once without --sync or --verify: the writeback that the
// copy started may be what a commit waits for.
const commitAtOnceMin = 8 << 20

// hashSnapEvery is how often the hash keeps its state for --resume's
// checkpoints: where a resumed copy can go on from (0: never).
func (c *fileCopy) hashSnapEvery() int64 {
	if c.hash == nil || c.checkpoint == nil {
		return 0
	}
	return durability.ResumeAlign
}

// hashNow gives the record the hash's latest state, for a fatal signal's
// last checkpoint.
func (c *fileCopy) hashNow(latest func() copier.HashState) {
	if c.hash == nil || c.checkpoint == nil {
		return
	}
	alg := c.a.opts.Checksum.String()
	c.dest.SetHashNow(func() durability.HashState { return hashState(alg, latest()) })
}

// hashCheckpoint records a checkpoint with the hash's state (nil: no hash
// or no checkpoints).
func (c *fileCopy) hashCheckpoint() func(int64, copier.HashState) error {
	if c.hash == nil || c.checkpoint == nil {
		return nil
	}
	alg := c.a.opts.Checksum.String()
	return func(off int64, h copier.HashState) error { return c.dest.CheckpointHash(off, hashState(alg, h)) }
}

func hashState(alg string, h copier.HashState) durability.HashState {
	if h.Off < 0 {
		return durability.HashState{}
	}
	return durability.HashState{Alg: alg, Off: h.Off, State: h.State}
}

// resumeHash takes up the hash state the leftover recorded with its
// checkpoint (--checksum), so that the part done is not read again; a
// state that is missing or does not parse leaves the part done to be
// hashed again from SOURCE, and --debug says which.
func (c *fileCopy) resumeHash() {
	alg := c.a.opts.Checksum
	if alg == checksum.None || c.dest == nil || c.start == 0 {
		return
	}
	st, why := c.dest.ResumedHash()
	switch {
	case why != "":
	case st.Alg == "":
		why = output.NoHashState
	case st.Alg != alg.String():
		why = output.HashStateOf(st.Alg, alg.String())
	default:
		h, err := checksum.Resume(alg, st.State, st.Off)
		if err != nil {
			why = output.LeftoverHashState(err)
			break
		}
		c.hash, c.hashedTo = h, st.Off
		if c.a.opts.Debug {
			c.r.out(output.ChecksumResumed(alg.String(), st.Off, c.start))
		}
		return
	}
	if c.a.opts.Debug {
		c.r.out(output.ChecksumHashedAgain(why, c.start))
	}
}

// hashShort words a source that ended before the bytes the copy moved
// were read again for the hash as the change it is.
func hashShort(err error) error {
	if errors.Is(err, copier.ErrHashShort) {
		return &output.SourceChanged{What: output.EndedBeforeHashed}
	}
	return err
}

// digestOf is the hash's digest, once complete and the source checked;
// --debug says what it took.
func (c *fileCopy) digestOf(res *copier.Result) []byte {
	c.digest = c.hash.Sum(nil)
	if c.a.opts.Debug {
		c.r.out(output.ChecksumDebug(c.a.opts.Checksum.String(), c.digest, res))
	}
	return c.digest
}

// takeDigest waits for a hash the copy left catching up (HashLater), then
// checks again that the source did not change while it was read, and
// returns the digest.
func (c *fileCopy) takeDigest(res *copier.Result) ([]byte, error) {
	wait := c.hashWait
	c.hashWait = nil
	hs, err := wait(false)
	res.Hash = hs
	if err = hashShort(err); err != nil {
		return nil, err
	}
	if err := sourceChanged(c.srcF, &c.before, res.Size); err != nil {
		return nil, err
	}
	return c.digestOf(res), nil
}

// endHash gives up a hash the commit did not wait for (it failed first).
func (c *fileCopy) endHash() {
	if c.hashWait != nil {
		wait := c.hashWait
		c.hashWait = nil
		wait(true)
	}
}

// verifiable refuses, for --verify, what cannot be read again after the
// copy: a stream SOURCE, or a device or FIFO DEST written in place.
func (c *fileCopy) verifiable() bool {
	if !c.a.opts.Verify {
		return true
	}
	if msg := unverifiable(c.src, &c.e.st, "source"); msg != "" {
		c.r.fail(msg)
		return false
	}
	if c.ex.st != nil && !isRegular(c.ex.st) && c.ex.act == actInPlace {
		if msg := unverifiable(c.dst, c.ex.st, "destination"); msg != "" {
			c.r.fail(msg)
			return false
		}
	}
	return true
}

// classify says how DEST is written, from the rule's action.
func (c *fileCopy) classify() {
	ex := &c.ex
	c.inPlace = ex.act == actInPlace
	c.pseudo = ex.st != nil && isRegular(ex.st) && c.dd.Pseudo()
	c.special = c.inPlace && ex.st != nil && (!isRegular(ex.st) || c.pseudo)
	c.newFile = ex.act == actNew || ex.act == actReplaceAsNew
	c.resumable = c.a.opts.Resume && !c.inPlace && isRegular(&c.before)
}

// openDest opens DEST for writing with durability (continuing a leftover
// with --resume), failing the entry as cp words it.
func (c *fileCopy) openDest() bool {
	ex, dst := &c.ex, c.dst
	if c.dd.Err() != nil {
		c.r.fail(output.CannotCreateRegularFile(dst, c.dd.Err()))
		return false
	}
	if ex.st != nil && isRegular(ex.st) && !c.inPlace && c.a.swaps.active(ex.st) {
		// The kernel refuses to rename over a swap file in use, but only
		// after the whole copy was written; writing it in place fails at
		// once with ETXTBSY, which is what cp reports.
		c.r.fail(output.CannotCreateRegularFile(dst, unix.ETXTBSY))
		return false
	}
	dopts := c.destOptions()
	if c.resumable {
		// --resume: continue the leftover of an interrupted copy, if
		// there is one that may be, else start anew and record
		// checkpoints.
		c.reached = new(atomic.Int64)
		if !c.continueCopy(dopts) {
			return false
		}
	}
	var err error
	if c.dest == nil {
		c.dest, err = createDest(*ex, dopts)
	}
	if err != nil {
		if errors.Is(err, durability.ErrIsSource) {
			// Swapped for a link to SOURCE since the check (dest.go).
			c.r.fail(output.SameFile(c.src, dst))
			return false
		}
		if !c.inPlace && ex.st != nil && (errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)) {
			// DEST itself is writable (checked above), its directory is
			// not: cp would write in place, the contract wants a
			// temporary file there. Say why, and the way out.
			c.r.fail(output.CannotCreateTemporaryFile(ex.shownDir, dst, err))
			return false
		}
		c.r.fail(output.CannotCreateRegularFile(dst, err))
		return false
	}
	c.reportLeftovers(dst, c.dest.Leftovers())
	if c.a.opts.Sync != durability.SyncNone {
		c.dirSyncCaveat()
	}
	c.startCheckpoints()
	return true
}

// dirSyncCaveat warns, once per filesystem, that --sync cannot promise
// that the name of a copy on it is durable: its directory fsync may not
// reach the server's storage (fsdir.DirSyncUntrusted), though the file's
// own flush does.
func (c *fileCopy) dirSyncCaveat() {
	st := c.dest.Stat
	if st == nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return
	}
	a := c.a
	a.syncFSMu.Lock()
	defer a.syncFSMu.Unlock()
	if a.syncFS[st.Dev] {
		return
	}
	if a.syncFS == nil {
		a.syncFS = make(map[uint64]bool)
	}
	a.syncFS[st.Dev] = true
	var fs unix.Statfs_t
	if unix.Fstatfs(int(c.dest.File.Fd()), &fs) != nil {
		return
	}
	if kind := fsdir.DirSyncUntrusted(int64(fs.Type)); kind != "" {
		c.r.warn(output.SyncNameMayNotSurvive(c.dst, kind))
	}
}

// destOptions are durability's options for this copy.
func (c *fileCopy) destOptions() durability.Options {
	o := c.a.opts
	return durability.Options{
		InPlace:      c.inPlace,
		Truncate:     c.inPlace && !c.special,
		Perm:         os.FileMode(c.e.st.Mode & 0o777),
		UnnamedPerm:  c.unnamedPerm(),
		Sync:         o.Sync,
		NoCache:      o.NoCache,
		Verify:       o.Verify,
		VerifySource: o.VerifySource,
		Checksum:     o.Checksum,
		Source:       c.srcF,
		Session:      c.a.session,
		Named:        c.resumable, // the record needs a name
		New:          c.ex.absent,
		FreshDir:     c.p.made,
	}
}

// unnamedPerm is the mode a new DEST's unnamed temporary file is created
// with: the one cp would create DEST with, so that the kernel applies the
// umask or the directory's default ACL to it as it does for cp, and
// setAttrs has nothing left to change (it checks); 0 (0600) for a DEST
// that keeps its own mode or gets the source's with -p.
func (c *fileCopy) unnamedPerm() os.FileMode {
	switch o := c.a.opts; {
	case !c.newFile || o.Preserve.Mode:
		return 0
	case o.NoPreserveMode:
		return 0o666
	}
	return os.FileMode(c.e.st.Mode & 0o777)
}

// startCheckpoints starts --resume's record on a new temporary file, and
// takes its checkpoints when the file has one.
func (c *fileCopy) startCheckpoints() {
	if !c.resumable {
		return
	}
	if !c.dest.Resumable() {
		if err := c.dest.StartRecord(durability.IDOf(&c.before), c.reached); err != nil {
			c.noCheckpoints(err)
		}
	}
	if c.dest.Resumable() {
		c.checkpoint = c.dest.Checkpoint
		if side := c.dest.SideRecord(); side != "" {
			c.a.sideOnce.Do(func() {
				// Said now, not in the entry's ordered record: a copy
				// that is interrupted never prints that.
				c.a.out.Warnf("%s", output.ResumeRecordsBeside(c.dst, side))
			})
		}
	}
}

// destStat is DEST's stat as the copier takes it.
func (c *fileCopy) destStat() *unix.Stat_t {
	destStat := c.dest.Stat
	if c.pseudo && destStat != nil {
		// A file of /proc or /sys takes its data as a stream, in
		// write(2) calls, as cp writes it: it refuses pwrite (ESPIPE).
		st := *destStat
		st.Mode = st.Mode&^unix.S_IFMT | unix.S_IFCHR
		destStat = &st
	}
	return destStat
}

// copyOptions are the copier's options that do not depend on DEST; the
// progress bar says the copy began.
func (c *fileCopy) copyOptions() copier.Options {
	o, srcF, before := c.a.opts, c.srcF, &c.before
	var counter copier.Counter
	if c.a.progress != nil {
		counter = c.job
		c.a.progress.Doing("copying", c.dst)
	}
	copts := copier.Options{
		Progress:   counter,
		Strategy:   o.Strategy,
		Reflink:    o.Reflink,
		Sparse:     o.Sparse,
		BufferSize: c.a.bufferSize,
		Memo:       &c.a.memo,
		SourceStat: before,
		NoCache:    o.NoCache,
		Flush:      o.Sync != durability.SyncNone || o.Verify,
		SourceCached: func() (int64, error) {
			return durability.CachedBytes(srcF, before.Size)
		},
		SyncWrites: o.Sync == durability.SyncOSync || o.Sync == durability.SyncODSync,
	}
	if o.Resume {
		// Checkpoints: durability flushes each (of every DEST: it is
		// given the descriptor).
		copts.CheckpointFlush = c.dest.FlushCheckpoint
	}
	return copts
}

// transfer copies the bytes (copier), from c.start on.
func (c *fileCopy) transfer() (copier.Result, error) {
	o, dest, srcF := c.a.opts, c.dest, c.srcF
	copts := c.copyOptions()
	copyFn := copyData
	if o.AttributesOnly {
		copyFn = noData
	}
	var hashWaiting func()
	if o.Checksum != checksum.None && !o.AttributesOnly {
		if c.hash == nil {
			c.hash, c.hashedTo = o.Checksum.New(), 0
		}
		if c.hashedTo < c.start {
			// A leftover continued: the bytes it holds are SOURCE's
			// (the trust rule for leftovers), which are hashed from
			// the start, read from SOURCE.
			if err := checksum.ReadRange(c.hash, int(srcF.Fd()), c.hashedTo, c.start, nil); err != nil {
				if errors.Is(err, checksum.ErrShort) {
					err = copier.ErrHashShort
				}
				return copier.Result{}, &copier.Error{Side: copier.SideRead, Err: err}
			}
		}
		if c.a.progress != nil {
			hashWaiting = func() { c.a.progress.Doing("hashing", c.dst) }
		}
	}
	copts.DestStat = c.destStat()
	copts.Written, copts.WrittenDirect = dest.Written, dest.WrittenDirect
	copts.Start, copts.Checkpoint, copts.Reached = c.start, c.checkpoint, c.reached
	copts.Hash, copts.HashWaiting = c.hash, hashWaiting
	// --resume: the hash's state goes with each checkpoint.
	copts.HashSnapshotEvery = c.hashSnapEvery()
	if c.hash != nil && c.checkpoint != nil {
		copts.HashSnapshots = c.hashNow
	}
	copts.HashCheckpoint = c.hashCheckpoint()
	// With a flush before the commit, the hash catches up while it runs.
	copts.HashLater = !c.inPlace && (o.Sync != durability.SyncNone || o.Verify)
	return copyFn(dest.File, srcF, copts)
}

// commit puts the copy in place when the transfer succeeded (err nil):
// the attributes, DEST's backup, the rename. It reports whether DEST now
// holds the copy.
func (c *fileCopy) commit(err error) bool {
	o, dest, dst := c.a.opts, c.dest, c.dst
	if err == nil && !dest.InPlace() {
		err = c.setAttrs(dest, &c.ex, c.srcF, c.newFile)
	}
	if err == nil {
		if c.a.progress != nil && (o.Sync != durability.SyncNone || o.Verify) {
			// Honest: the bytes are copied, the flush is what takes time now.
			c.a.progress.Doing("flushing", dst)
		}
		undo, ok := c.backupStep(&c.ex)
		if !ok {
			dest.Abort()
			return false
		}
		if err = dest.Commit(c.srcF); err != nil && !durability.Committed(err) {
			undo()
		}
	} else {
		// A pipe whose reader left: the signal handler, which
		// brokenPipe waits for, still finds DEST being written and
		// names it as partial (a named FIFO).
		brokenPipe(err)
		dest.Abort()
	}
	if err != nil && becameDir(err, c.dd, c.name) {
		c.r.fail(output.CannotOverwriteDirectory(dst))
		return false
	}
	if err != nil {
		brokenPipe(err)
		c.r.fail(output.CopyError(c.src, dst, err, o.Reflink == copier.ReflinkAlways))
		if durability.Committed(err) && dest.Stat != nil {
			// In place, complete: only its directory's fsync failed.
			c.a.created.note(idOf(dest.Stat))
		}
		switch {
		case dest.InPlace() && !c.special:
			c.r.fail(output.WrittenInPlaceIncomplete(dst, true))
		case dest.InPlace() && !c.pseudo && c.copied > 0:
			// A device or FIFO DEST, written in place: what a failure
			// leaves in it is part of the copy, as after a signal.
			c.r.fail(output.WrittenInPlaceIncomplete(dst, false))
		}
		return false
	}
	if dest.Stat != nil {
		c.a.created.note(idOf(dest.Stat))
	}
	return true
}

// continueCopy finds the leftover of an interrupted copy to DEST that
// --resume may continue: c.dest stays nil when there is none (the copy
// starts anew); false when the entry failed.
func (c *fileCopy) continueCopy(dopts durability.Options) bool {
	ex, dst, before := &c.ex, c.dst, &c.before
	in, name := ex.destEntry()
	var err error
	c.dest, c.start, err = durability.Continue(in, name, durability.IDOf(before), dopts, c.reached)
	var live *durability.LiveError
	var fresh *durability.FreshStart
	switch {
	case errors.As(err, &live):
		c.r.fail(output.CannotResumeRunning(dst, live.Temp))
		return false
	case errors.As(err, &fresh):
		left, hint := "", ""
		switch {
		case fresh.Unjudged:
			left, hint = fresh.Temp, output.RemoveHint(dst, fresh.Temp, fresh.Side)
		case fresh.Kept:
			left = fresh.Temp
		}
		c.r.warn(output.CopyingFromTheStart(dst, fresh.Why, fresh.Detail, left, hint))
		c.reportLeftovers(dst, fresh.Swept)
	}
	switch {
	case c.dest != nil && c.a.opts.Debug:
		c.r.out(output.ResumeFrom(c.dest.TempPath(), c.start, before.Size))
		c.resumeHash()
	case c.dest != nil && c.a.opts.Verbose && c.start > 0:
		c.r.out(output.Resumed(dst, c.start, before.Size))
		c.resumeHash()
	case c.dest != nil:
		c.resumeHash()
	case c.dest == nil && ex.st != nil && (ex.act == actReplace || ex.act == actReplaceAsNew):
		// No leftover of fastcp's: DEST may be the partial copy of
		// another tool.
		if !c.continuePartial(dopts) {
			return false
		}
		if c.dest != nil && c.a.opts.Verbose && !c.a.opts.Debug {
			c.r.out(output.Resumed(dst, c.start, before.Size))
		}
	}
	return true
}

// createDest opens DEST (ex) for writing with durability.
func createDest(ex destInfo, o durability.Options) (*durability.Destination, error) {
	in, name := ex.destEntry()
	return durability.Create(in, name, o)
}

// destEntry is where durability writes DEST: relative to the directory the
// walk holds, or by ex.path (from the current directory) for a symbolic
// link's resolved or absolute target.
func (ex *destInfo) destEntry() (*dir, string) {
	if ex.in != nil {
		return ex.in, ex.name
	}
	return cwd, ex.path
}

// openSource opens SOURCE for reading and checks that it is the file the
// walk saw. Where the walk saw a regular file, the open does not follow a
// symbolic link it did not mean to follow (O_NOFOLLOW: ELOOP, as cp says)
// and does not wait (O_NONBLOCK, which changes nothing for a regular
// file): an entry swapped for a FIFO or a device fails, it neither hangs
// nor opens the device. A FIFO or device read as data is opened as cp
// opens it, waiting for a FIFO's writer. os.Open would register the file
// with the runtime poller (an epoll_ctl that fails for regular files and
// four fcntl calls), and os.NewFile costs a fcntl and a finalizer; the
// copier makes raw calls on the descriptor, so it is a plain openat(2)
// wrapped in a sysx.File.
func (j *job) openSource() (*sysx.File, unix.Stat_t, error) {
	d, e := j.sd, j.e
	src := d.Join(e.name)
	var st unix.Stat_t
	flags := unix.O_RDONLY | unix.O_NOCTTY
	if !follows(j.a.opts, j.top()) {
		flags |= unix.O_NOFOLLOW
	}
	if isRegular(&e.st) {
		flags |= unix.O_NONBLOCK
	}
	fd, err := openat(d.Fd(), e.name, flags, 0)
	if err != nil {
		return nil, st, errors.New(output.CannotOpenForReading(src, err))
	}
	if err := ignoringEINTR(func() error { return unix.Fstat(fd, &st) }); err != nil {
		unix.Close(fd)
		return nil, st, errors.New(output.CannotFstat(src, err))
	}
	if idOf(&st) != idOf(&e.st) {
		unix.Close(fd)
		return nil, st, errors.New(output.SkippingReplacedFile(src))
	}
	if flags&unix.O_NONBLOCK != 0 {
		// The file the walk saw: blocking again, so that no call on it
		// behaves as on a non-blocking file (splice(2) takes a source's
		// O_NONBLOCK for SPLICE_F_NONBLOCK). O_NONBLOCK is the only flag
		// F_SETFL changes that the open set, so F_SETFL 0 clears it in
		// one call.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err != nil {
			unix.Close(fd)
			return nil, st, errors.New(output.CannotOpenForReading(src, err))
		}
	}
	return sysx.NewFile(fd, src), st, nil
}

// completeCopy reports whether dst, an existing DEST, counts as a complete
// copy of the source src for -r --resume: a regular file of the source's
// size, and when timestamps are preserved (-a, -p), of its mtime to the
// nanosecond. (A DEST of that size with other bytes counts too: --resume
// trusts what an earlier run of the same copy left.)
func completeCopy(src, dst *unix.Stat_t, mtime bool) bool {
	if dst == nil || !isRegular(dst) || !isRegular(src) || dst.Size != src.Size {
		return false
	}
	return !mtime || dst.Mtim == src.Mtim
}

// noCheckpoints warns, once per run, that a copy with --resume records no
// checkpoints: an interrupted one will start over.
func (j *job) noCheckpoints(err error) {
	j.a.noCkptOnce.Do(func() {
		why := err.Error()
		if errors.Is(err, durability.ErrNoXattrs) {
			why = "its filesystem takes no user extended attributes"
		}
		j.r.warn(output.NoCheckpoints(j.dst, why))
	})
}

// sourceChanged checks that the source still is what was copied: the same
// size as the bytes read and the same modification time as before. A file
// that grew, shrank or was rewritten meanwhile would leave a mix of old and
// new data, so the copy is not put in place. Files in /proc and /sys have
// no meaningful size or time and are not checked.
func sourceChanged(f *sysx.File, before *unix.Stat_t, copied int64) error {
	if before.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	var after unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(int(f.Fd()), &after) }); err != nil {
		return nil
	}
	if after.Size == copied && before.Size == copied && after.Mtim == before.Mtim {
		return nil
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(int(f.Fd()), &fs) == nil && fsdir.PseudoFS(int64(fs.Type)) {
		return nil
	}
	switch {
	case after.Size != before.Size || copied != before.Size:
		return &output.SourceChanged{What: output.ChangedSize(before.Size, copied, after.Size)}
	default:
		return &output.SourceChanged{What: output.WasModified}
	}
}

// unverifiable explains why --verify cannot check a file of st's type, or
// returns "" when it can (regular files and block devices).
func unverifiable(name string, st *unix.Stat_t, side string) string {
	kind := ""
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFBLK:
		return ""
	case unix.S_IFIFO:
		kind = "a fifo"
	case unix.S_IFCHR:
		kind = "a character special file"
	case unix.S_IFSOCK:
		kind = "a socket"
	default:
		kind = "not a regular file"
	}
	return output.CannotVerify(name, side, kind)
}

// noData is the copy engine of --attributes-only: it copies nothing.
func noData(dst, src sysx.Descriptor, o copier.Options) (copier.Result, error) {
	return copier.Result{}, nil
}

// attributesOnly gives an existing regular DEST (at path) the attributes
// asked for and leaves its data (--attributes-only): cp opens it without
// O_TRUNC and writes nothing.
func (j *job) attributesOnly(srcF *sysx.File, path string) bool {
	// path is DEST, or the file a symlink DEST leads to, in its directory
	// (dir.at): not a link that replaced it since.
	fd, err := openat(unix.AT_FDCWD, path, unix.O_WRONLY|unix.O_NOCTTY|unix.O_NOFOLLOW, 0)
	if err != nil {
		j.r.fail(output.CannotCreateRegularFile(j.dst, err))
		return false
	}
	defer unix.Close(fd)
	if j.a.opts.Preserve.Any() {
		if err := j.a.preserve(target{fd: fd}, &j.e.st, int(srcF.Fd()), "", j.dst); err != nil {
			j.r.fail(err.Error())
			return false
		}
	}
	return true
}

// readFileRaw is os.ReadFile without the runtime poller (openNoPoller).
func readFileRaw(path string) ([]byte, error) {
	f, err := openNoPoller(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// openNoPoller opens path read-only (with flags added) without the runtime
// poller (sysx.Open): os.Open would register a directory or a /proc file
// with it, and set it up for nothing.
func openNoPoller(path string, flags int) (*os.File, error) {
	return sysx.Open(path, unix.O_RDONLY|flags, 0)
}
