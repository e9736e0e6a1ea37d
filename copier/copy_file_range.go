// SPDX-License-Identifier: MIT

package copier

// copyFileRange moves up to n bytes at off inside the kernel with
// copy_file_range(2). On xfs and btrfs (and NFS 4.2) the kernel shares
// extents instead of copying; on ext4 and tmpfs it splices page by page.
func (c fastPath) copyFileRange(off, n int64) (int64, error) {
	st := &c.res.Stats[CopyFileRange]
	m, err := retry(&st.Calls, func() (int, error) {
		return c.sys.copyFileRange(c.src, c.srcOff(off), c.dst, c.dstOff(off), int(n), 0)
	})
	if err != nil {
		return 0, &Error{Strategy: CopyFileRange, Side: SideBoth, Offset: off, Err: syscallErr("copy_file_range", err)}
	}
	if m > 0 {
		c.res.Offload = DebugYes
		c.wrote(off, int64(m))
	}
	return int64(m), nil
}
