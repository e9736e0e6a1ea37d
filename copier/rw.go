// SPDX-License-Identifier: MIT

package copier

import (
	"bytes"
	"sync"
)

// rw reads up to n bytes at off into the buffer and writes them out: the
// portable last resort, and the only strategy that can see zero blocks
// (--sparse=always) and turn them into holes.
func (c fastPath) rw(off, n int64) (int64, error) {
	st := &c.res.Stats[RW]
	b := c.buffer()[:n]
	var m int
	var err error
	name := "read"
	if c.srcPos {
		name = "pread64"
		m, err = retry(&st.Calls, func() (int, error) { return c.sys.pread(c.src, b, off) })
	} else {
		m, err = retry(&st.Calls, func() (int, error) { return read(c.src, b) })
	}
	if err != nil {
		return 0, &Error{Strategy: RW, Side: SideRead, Offset: off, Err: syscallErr(name, err)}
	}
	if m == 0 {
		return 0, nil
	}
	if c.zeros {
		err = c.writeSparse(b[:m], off)
	} else {
		err = c.writeAll(st, RW, b[:m], off)
	}
	if err != nil {
		return 0, err
	}
	if c.hash != nil {
		if err := c.hash.data(off, b[:m]); err != nil {
			return 0, &Error{Strategy: RW, Side: SideRead, Offset: off, Err: err, final: true}
		}
	}
	return int64(m), nil
}

// buffer returns the rw buffer, allocated on first use. Buffers of the
// default size come from a pool, so a tree of many files does not allocate
// (and collect) a megabyte per file.
func (c fastPath) buffer() []byte {
	if c.buf == nil {
		if c.bufSize == defaultPoolSize {
			c.buf = *bufPool.Get().(*[]byte)
		} else {
			c.buf = make([]byte, c.bufSize)
		}
	}
	return c.buf
}

// releaseBuffer returns a pooled buffer when the copy is done.
func (c fastPath) releaseBuffer() {
	if len(c.buf) == defaultPoolSize {
		b := c.buf
		bufPool.Put(&b)
	}
	c.buf = nil
}

const defaultPoolSize = DefaultBufferSize

var bufPool = sync.Pool{New: func() any {
	b := make([]byte, defaultPoolSize)
	return &b
}}

// writeAll writes all of b at off, continuing after short writes.
func (c *copier) writeAll(st *Stat, s Strategy, b []byte, off int64) error {
	name := "write"
	if c.dstPos {
		name = "pwrite64"
	}
	for w := 0; w < len(b); {
		var m int
		var err error
		if c.dstPos {
			m, err = retry(&st.Calls, func() (int, error) { return c.sys.pwrite(c.dst, b[w:], off+int64(w)) })
		} else {
			m, err = retry(&st.Calls, func() (int, error) { return write(c.dst, b[w:]) })
		}
		if err == nil && m == 0 {
			err = errShortWrite
		}
		if err != nil {
			if w > 0 {
				c.wrote(off, int64(w))
			}
			return &Error{Strategy: s, Side: SideWrite, Offset: off + int64(w), Err: syscallErr(name, err)}
		}
		w += m
	}
	c.wrote(off, int64(len(b)))
	return nil
}

// writeSparse writes b at off but leaves every all-zero block (aligned to
// the destination's block size) as a hole; the final ftruncate gives the
// file its size when it ends in zeros.
func (c fastPath) writeSparse(b []byte, off int64) error {
	if c.zeroBlock == nil {
		c.zeroBlock = make([]byte, c.blockSize)
	}
	bs := int64(c.blockSize)
	runStart := -1 // start (in b) of the pending run of data blocks
	for i := 0; i < len(b); {
		// Blocks are aligned to absolute offsets, so holes line up with
		// the filesystem's blocks.
		next := min(int((off+int64(i))/bs*bs+bs-off), len(b))
		blk := b[i:next]
		if bytes.Equal(blk, c.zeroBlock[:len(blk)]) {
			if runStart >= 0 {
				if err := c.writeAll(&c.res.Stats[RW], RW, b[runStart:i], off+int64(runStart)); err != nil {
					return err
				}
				runStart = -1
			}
			c.res.Holes += int64(len(blk))
		} else if runStart < 0 {
			runStart = i
		}
		i = next
	}
	if runStart >= 0 {
		return c.writeAll(&c.res.Stats[RW], RW, b[runStart:], off+int64(runStart))
	}
	return nil
}
