// SPDX-License-Identifier: MIT

package cp

// --resume continues what another tool left: a cp, dd or rsync --inplace
// interrupted on a large file leaves DEST partial, a prefix of SOURCE. A
// DEST that is a regular file shorter than SOURCE, older than this run and
// the caller's own, whose bytes equal SOURCE's from the start, is taken up
// from where they stop being equal: into the temporary file (DEST stays as
// it is until the commit), its prefix shared with DEST where the
// filesystem can (FICLONERANGE) and copied where it cannot; the rest is
// copied as usual. Nothing of DEST is trusted: the bytes in the temporary
// file are compared with SOURCE's (both read, a MiB at a time) after the
// clone, or as they are copied, so what a writer does to DEST meanwhile
// cannot get in.

import (
	"bytes"
	"fmt"
	"os"

	"fastcp/checksum"
	"fastcp/durability"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// partialChunk is the unit of the comparison, and what the prefix kept is
// a multiple of: the copy goes on from there, where every strategy can
// start (FICLONERANGE and O_DIRECT need aligned offsets).
const partialChunk = 1 << 20

// The calls, as variables so that tests can refuse them.
var (
	partialClone = unix.IoctlFileCloneRange
	partialPread = unix.Pread
)

// continuePartial looks at DEST (an existing regular file the copy would
// replace) as the partial copy of another tool: when it may be continued
// and holds a prefix of SOURCE, c.dest is a new temporary file holding
// that prefix and c.start its length. dopts are durability's options. It
// reports false when the entry failed; an unusable DEST is no failure
// (the copy starts from 0, and --debug says why).
func (c *fileCopy) continuePartial(dopts durability.Options) bool {
	ex, before := &c.ex, &c.before
	st := ex.st
	if st == nil || !isRegular(st) || !isRegular(before) || c.inPlace {
		return true
	}
	why := ""
	switch {
	case st.Size == 0:
		why = "it is empty"
	case st.Size >= before.Size:
		why = output.PartialNotShorter(st.Size, before.Size)
	case st.Uid != uint32(os.Geteuid()):
		why = output.PartialOwnedBy(st.Uid)
	case !olderThan(st, c.a.started):
		why = "it was changed after this run began"
	case st.Size < partialChunk:
		why = output.PartialTooSmall(partialChunk)
	}
	if why != "" {
		c.partialDebug(output.PartialNotContinued(why))
		return true
	}
	in, name := ex.destEntry()
	// DEST's entry, or the file a symbolic link DEST leads to (ex.path,
	// resolved): not a link that replaced it since.
	fd, err := openat(in.Fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		c.partialDebug(output.PartialNotContinued(errText(err)))
		return true
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil || idOf(&now) != idOf(st) || now.Size != st.Size || now.Mtim != st.Mtim {
		c.partialDebug(output.PartialNotContinued(output.PartialChanged))
		return true
	}
	d, err := createDest(*ex, dopts)
	if err != nil {
		// Create reports it again, as a failure of the copy.
		return true
	}
	keep, cloned, err := c.keepPrefix(d, fd, st)
	if err != nil {
		d.Abort()
		c.r.fail(output.ErrorReading(c.dst, err))
		return false
	}
	if keep == 0 {
		d.Abort()
		c.partialDebug(output.PartialNotContinued(output.PartialDiffers(partialChunk)))
		return true
	}
	c.partialDebug(output.PartialContinued(keep, st.Size, partialChunk, cloned, tempName(d)))
	c.dest, c.start = d, keep
	return true
}

// partialDebug is --debug's line about DEST as a partial copy.
func (c *fileCopy) partialDebug(what string) {
	if c.a.opts.Debug {
		c.r.out(output.PartialDest(c.dst, what))
	}
}

// tempName is the temporary file's name for messages.
func tempName(d *durability.Destination) string {
	if p := d.TempPath(); p != "" {
		return p
	}
	return "an unnamed temporary file"
}

// olderThan reports whether st was last modified and changed before t
// (ns since the epoch).
func olderThan(st *unix.Stat_t, t int64) bool {
	return st.Mtim.Nano() < t && st.Ctim.Nano() < t
}

// keepPrefix puts the longest prefix of DEST (open as fd, whose fstat was
// st) that equals SOURCE's, in whole chunks, into d's empty temporary
// file, and returns its length. Both are read and compared a chunk at a
// time; where the filesystem clones (a first chunk cloned tells), the
// prefix is cloned once known, and DEST's size, mtime and ctime must not
// have moved since it was compared (a write would move them); elsewhere
// each chunk compared is written from the very buffer compared. The
// SOURCE bytes kept are given to the hash (--checksum).
func (c *fileCopy) keepPrefix(d *durability.Destination, fd int, st *unix.Stat_t) (keep int64, cloned bool, err error) {
	tmp := int(d.File.Fd())
	src := int(c.srcF.Fd())
	limit := st.Size / partialChunk * partialChunk
	cloned = partialClone(tmp, &unix.FileCloneRange{Src_fd: int64(fd), Src_length: partialChunk}) == nil
	a, b := make([]byte, partialChunk), make([]byte, partialChunk)
	if c.hash == nil && c.a.opts.Checksum != checksum.None {
		c.hash = c.a.opts.Checksum.New()
	}
	if c.a.progress != nil {
		c.a.progress.Describe("comparing " + quote(c.dst))
	}
	unix.Fadvise(fd, 0, limit, unix.FADV_SEQUENTIAL)
	for off := int64(0); off < limit; off += partialChunk {
		if err := readChunk(fd, a, off); err != nil {
			if err == errShortChunk {
				break // DEST shrank meanwhile
			}
			return 0, cloned, err
		}
		if err := readChunk(src, b, off); err != nil {
			if err == errShortChunk {
				break // SOURCE shrank: the change check after the copy says so
			}
			return 0, cloned, err
		}
		if !bytes.Equal(a, b) {
			break
		}
		if !cloned {
			if _, err := d.File.WriteAt(a, off); err != nil {
				return 0, cloned, err
			}
		}
		if c.hash != nil {
			c.hash.Write(b)
		}
		keep = off + partialChunk
	}
	if cloned {
		if keep > 0 {
			err = partialClone(tmp, &unix.FileCloneRange{Src_fd: int64(fd), Src_length: uint64(keep)})
		}
		var now unix.Stat_t
		if err == nil {
			err = unix.Fstat(fd, &now)
		}
		if err == nil && (now.Size != st.Size || now.Mtim != st.Mtim || now.Ctim != st.Ctim) {
			keep = 0 // written meanwhile: nothing of it is kept
		}
		if err == nil {
			err = ignoringEINTR(func() error { return unix.Ftruncate(tmp, keep) })
		}
		if err != nil {
			return 0, cloned, err
		}
	}
	c.hashedTo = keep
	if keep == 0 && c.hash != nil {
		c.hash.Reset()
	}
	return keep, cloned, nil
}

// errShortChunk is a file that ended within a chunk.
var errShortChunk = fmt.Errorf("the file ended early")

// readChunk reads len(b) bytes at off of fd.
func readChunk(fd int, b []byte, off int64) error {
	for n := 0; n < len(b); {
		m, err := partialPread(fd, b[n:], off+int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if m == 0 {
			return errShortChunk
		}
		n += m
	}
	return nil
}
