// SPDX-License-Identifier: MIT

package copier

import "golang.org/x/sys/unix"

// reflink shares the source's extents with the destination: FICLONE for a
// whole file, FICLONERANGE for one data extent of a sparse file (so holes
// stay holes). length < 0 means "to the end of the source". It returns the
// bytes cloned and whether that reached the end of the source.
func (c fastPath) reflink(off, length int64) (int64, bool, error) {
	st := &c.res.Stats[Reflink]
	var err error
	name := "ioctl(FICLONE)"
	if off == 0 && length < 0 {
		err = retryErr(&st.Calls, func() error { return c.sys.ficlone(c.dst, c.src) })
	} else {
		name = "ioctl(FICLONERANGE)"
		arg := unix.FileCloneRange{Src_fd: int64(c.src), Src_offset: uint64(off), Dest_offset: uint64(off)}
		if length > 0 {
			arg.Src_length = uint64(length) // 0 would mean "to EOF"
		}
		err = retryErr(&st.Calls, func() error { return ficloneRange(c.dst, &arg) })
	}
	if err != nil {
		return 0, false, &Error{Strategy: Reflink, Side: SideBoth, Offset: off, Err: syscallErr(name, err)}
	}
	c.res.Reflink = DebugYes
	if length > 0 {
		c.dstEnd = max(c.dstEnd, off+length)
		return length, false, nil
	}
	// Cloned to the source's end: the destination now has its size.
	var ds unix.Stat_t
	if err := retryErr(c.other(), func() error { return fstat(c.dst, &ds) }); err != nil {
		return 0, false, &Error{Strategy: Reflink, Side: SideWrite, Offset: off, Err: syscallErr("fstat", err)}
	}
	n := max(ds.Size-off, 0)
	c.dstEnd = max(c.dstEnd, ds.Size)
	return n, true, nil
}
