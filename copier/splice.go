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
	if c.srcFIFO || c.dstFIFO {
		m, err := retry(&st.Calls, func() (int64, error) {
			return splice(c.src, c.srcOff(off), c.dst, c.dstOff(off), int(n), spliceFlags)
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
		return splice(c.src, c.srcOff(off), c.pipe[1], nil, int(n), spliceFlags)
	})
	if err != nil {
		return 0, &Error{Strategy: Splice, Side: SideRead, Offset: off, Err: syscallErr("splice", err)}
	}
	var out int64
	for out < in {
		m, err := retry(&st.Calls, func() (int64, error) {
			return splice(c.pipe[0], nil, c.dst, c.dstOff(off+out), int(in-out), spliceFlags)
		})
		if err == nil && m == 0 {
			err = errShortWrite
		}
		if err != nil {
			return c.spliceOutFailed(off, out, in, syscallErr("splice", err))
		}
		out += m
	}
	c.wrote(off, in)
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
	_, _ = retry(&st.Calls, func() (int, error) { return fcntl(p[1], unix.F_SETPIPE_SZ, pipeBytes) })
	return nil
}

func (c fastPath) closePipe() {
	if !c.havePipe {
		return
	}
	closeFd(c.pipe[0])
	closeFd(c.pipe[1])
	c.res.Stats[Splice].Calls += 2
	c.havePipe = false
}
