// SPDX-License-Identifier: MIT

package copier

import "golang.org/x/sys/unix"

// sendfile moves up to n bytes at off with sendfile(2): the source is read
// at an explicit offset, the destination is written at its file position,
// which is moved to off first when it is elsewhere (after a hole, or when
// another strategy wrote before).
func (c fastPath) sendfile(off, n int64) (int64, error) {
	st := &c.res.Stats[Sendfile]
	if c.dstPos && c.dstFilePos != off {
		if _, err := retry(&st.Calls, func() (int64, error) { return seek(c.dst, off, unix.SEEK_SET) }); err != nil {
			return 0, &Error{Strategy: Sendfile, Side: SideWrite, Offset: off, Err: syscallErr("lseek", err)}
		}
		c.dstFilePos = off
	}
	m, err := retry(&st.Calls, func() (int, error) { return c.sys.sendfile(c.dst, c.src, c.srcOff(off), int(n)) })
	if err != nil {
		return 0, &Error{Strategy: Sendfile, Side: SideBoth, Offset: off, Err: syscallErr("sendfile", err)}
	}
	c.dstFilePos += int64(m)
	if m > 0 {
		c.wrote(off, int64(m))
	}
	return int64(m), nil
}
