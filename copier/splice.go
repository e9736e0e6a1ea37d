// SPDX-License-Identifier: MIT

package copier

import (
	"errors"

	"golang.org/x/sys/unix"
)

const spliceFlags = unix.SPLICE_F_MOVE | unix.SPLICE_F_MORE

var errShortWrite = errors.New("short write")

// splice moves up to n bytes at off with splice(2). When one end is a pipe
// (a FIFO) it splices straight across; otherwise through a private pipe
// sized with F_SETPIPE_SZ: source -> pipe, then pipe -> destination.
func (c fastPath) splice(off, n int64) (int64, error) {
	st := &c.res.Stats[Splice]
	if (c.srcFIFO || c.dstFIFO) && c.hash == nil {
		m, err := retry(&st.Calls, func() (int64, error) {
			return c.sys.splice(c.src, c.srcOff(off), c.dst, c.dstOff(off), int(n), spliceFlags)
		})
		if err != nil {
			return 0, &Error{Strategy: Splice, Side: SideBoth, Offset: off, Err: syscallErr("splice", err)}
		}
		if m > 0 {
			c.wrote(off, m)
		}
		return m, nil
	}
	if !c.havePipe {
		if err := c.openPipe(); err != nil {
			return 0, err
		}
	}
	in, err := retry(&st.Calls, func() (int64, error) {
		return c.sys.splice(c.src, c.srcOff(off), c.pipe[1], nil, int(n), spliceFlags)
	})
	if err != nil {
		return 0, &Error{Strategy: Splice, Side: SideRead, Offset: off, Err: syscallErr("splice", err)}
	}
	teed := int64(-1) // --checksum: bytes of the pipe duplicated for the hash
	if c.hash != nil && in > 0 {
		if teed = c.tee(in); teed < in && !c.srcPos {
			// Not all of a stream's bytes could be duplicated, and
			// they cannot be read again: through the buffer.
			return c.spliceThroughBuffer(off, in, teed)
		}
	}
	var out int64
	for out < in {
		m, err := retry(&st.Calls, func() (int64, error) {
			return c.sys.splice(c.pipe[0], nil, c.dst, c.dstOff(off+out), int(in-out), spliceFlags)
		})
		if err == nil && m == 0 {
			err = errShortWrite
		}
		if err != nil {
			moved, err := c.spliceOutFailed(off, out, in, syscallErr("splice", err))
			if herr := c.hashTeed(off, moved, in, teed); herr != nil {
				return moved, herr
			}
			return moved, err
		}
		out += m
	}
	c.wrote(off, in)
	if err := c.hashTeed(off, in, in, teed); err != nil {
		return in, err
	}
	return in, nil
}

// tee duplicates the in bytes in the pipe into the hash's pipe (opened on
// first use, as large as the copy's), and returns how many it could (-1:
// none, tee failed). tee(2) shares the pipe's pages: nothing is copied
// until the hash reads them.
func (c fastPath) tee(in int64) int64 {
	st := &c.res.Stats[Splice]
	if !c.haveHashPipe {
		var p [2]int
		if err := retryErr(&st.Calls, func() error { return pipe2(p[:], unix.O_CLOEXEC) }); err != nil {
			return -1
		}
		c.hashPipe, c.haveHashPipe = p, true
		_, _ = retry(&st.Calls, func() (int, error) { return c.sys.fcntl(p[1], unix.F_SETPIPE_SZ, pipeBytes) })
	}
	t, err := retry(&st.Calls, func() (int64, error) { return c.sys.tee(c.pipe[0], c.hashPipe[1], int(in), 0) })
	if err != nil {
		return -1
	}
	return t
}

// hashTeed hashes the bytes [off, off+moved) that splice moved, of the in
// bytes that went into the pipe: the first teed of them from the hash's
// pipe (all of which is read, to empty it), the rest read again from the
// source.
func (c fastPath) hashTeed(off, moved, in, teed int64) error {
	if c.hash == nil || in <= 0 {
		return nil
	}
	teed = max(teed, 0)
	buf := c.buffer()
	for done := int64(0); done < teed; {
		k, err := retry(&c.res.Stats[Splice].Calls, func() (int, error) {
			return read(c.hashPipe[0], buf[:min(int64(len(buf)), teed-done)])
		})
		if err == nil && k == 0 {
			err = errShortWrite
		}
		if err != nil {
			return &Error{Strategy: Splice, Side: SideRead, Offset: off + done, Err: syscallErr("read", err), final: true}
		}
		if h := min(int64(k), moved-done); h > 0 {
			if err := c.hash.data(off+done, buf[:h]); err != nil {
				return &Error{Strategy: Splice, Side: SideRead, Offset: off + done, Err: err, final: true}
			}
		}
		c.hash.stats.Tee += int64(k)
		done += int64(k)
	}
	if moved > teed {
		c.hash.moved(c.copier, off+teed, moved-teed)
	}
	return nil
}

// spliceThroughBuffer writes the in bytes of a stream's that are in the
// pipe through the buffer, hashing them on the way, after a tee that
// duplicated only teed of them (those are read and dropped).
func (c fastPath) spliceThroughBuffer(off, in, teed int64) (int64, error) {
	st := &c.res.Stats[Splice]
	buf := c.buffer()
	for done := int64(0); done < max(teed, 0); {
		k, err := retry(&st.Calls, func() (int, error) { return read(c.hashPipe[0], buf[:min(int64(len(buf)), teed-done)]) })
		if err != nil || k == 0 {
			if err == nil {
				err = errShortWrite
			}
			return 0, &Error{Strategy: Splice, Side: SideRead, Offset: off, Err: syscallErr("read", err), final: true}
		}
		done += int64(k)
	}
	var out int64
	for out < in {
		k, err := retry(&st.Calls, func() (int, error) { return read(c.pipe[0], buf[:min(int64(len(buf)), in-out)]) })
		if err != nil || k == 0 {
			if err == nil {
				err = errShortWrite
			}
			return out, &Error{Strategy: Splice, Side: SideRead, Offset: off + out, Err: syscallErr("read", err), final: true}
		}
		if err := c.writeAll(st, Splice, buf[:k], off+out); err != nil {
			return out, err
		}
		if err := c.hash.data(off+out, buf[:k]); err != nil {
			return out, &Error{Strategy: Splice, Side: SideRead, Offset: off + out, Err: err, final: true}
		}
		out += int64(k)
	}
	return in, nil
}

// spliceOutFailed handles a failure to empty the pipe after in bytes of the
// source went in and out of them reached the destination. A positional
// source can simply be read again from off+out, so the pipe is discarded.
// A stream source cannot: its bytes exist only in the pipe, so they are
// written with read/write before the error (maybe a refusal that lets the
// next strategy go on) is returned.
func (c fastPath) spliceOutFailed(off, out, in int64, err error) (int64, error) {
	if out > 0 {
		c.wrote(off, out)
	}
	e := &Error{Strategy: Splice, Side: SideWrite, Offset: off + out, Err: err}
	if c.srcPos || !refusal(err) {
		c.closePipe()
		return out, e
	}
	st := &c.res.Stats[Splice]
	buf := c.buffer()
	for out < in {
		k, rerr := retry(&st.Calls, func() (int, error) { return read(c.pipe[0], buf[:min(int64(len(buf)), in-out)]) })
		if rerr != nil || k == 0 {
			if rerr == nil {
				rerr = errShortWrite
			}
			return out, &Error{Strategy: Splice, Side: SideRead, Offset: off + out, Err: syscallErr("read", rerr)}
		}
		if werr := c.writeAll(&c.res.Stats[Splice], Splice, buf[:k], off+out); werr != nil {
			return out, werr
		}
		out += int64(k)
	}
	return out, e
}

func (c fastPath) openPipe() error {
	st := &c.res.Stats[Splice]
	var p [2]int
	if err := retryErr(&st.Calls, func() error { return pipe2(p[:], unix.O_CLOEXEC) }); err != nil {
		return &Error{Strategy: Splice, Side: SideBoth, Err: syscallErr("pipe2", err)}
	}
	c.pipe, c.havePipe = p, true
	// A bigger pipe means fewer splice calls; when F_SETPIPE_SZ is refused
	// (above /proc/sys/fs/pipe-max-size without CAP_SYS_RESOURCE) the
	// default 64 KiB pipe still works.
	_, _ = retry(&st.Calls, func() (int, error) { return c.sys.fcntl(p[1], unix.F_SETPIPE_SZ, pipeBytes) })
	return nil
}

func (c fastPath) closePipe() {
	if c.haveHashPipe {
		closeFd(c.hashPipe[0])
		closeFd(c.hashPipe[1])
		c.res.Stats[Splice].Calls += 2
		c.haveHashPipe = false
	}
	if !c.havePipe {
		return
	}
	closeFd(c.pipe[0])
	closeFd(c.pipe[1])
	c.res.Stats[Splice].Calls += 2
	c.havePipe = false
}
