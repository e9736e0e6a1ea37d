// SPDX-License-Identifier: MIT

package output

import (
	"os"
	"syscall"
	"testing"

	"fastcp/copier"
)

// A flush that fails during the copy (a --resume checkpoint) is named as
// the final flush is; a failed write stays a write.
func TestCopyErrorNamesTheCall(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&copier.Error{Side: copier.SideWrite, Err: os.NewSyscallError("fdatasync", syscall.EIO)}, "fdatasync failed for 'd': Input/output error"},
		{&copier.Error{Side: copier.SideWrite, Err: os.NewSyscallError("fsync", syscall.EIO)}, "fsync failed for 'd': Input/output error"},
		{&copier.Error{Side: copier.SideWrite, Err: os.NewSyscallError("pwrite64", syscall.ENOSPC)}, "error writing 'd': No space left on device"},
		// A call that reads and writes ran out of room: the write, as cp says.
		{&copier.Error{Side: copier.SideBoth, Err: os.NewSyscallError("copy_file_range", syscall.ENOSPC)}, "error writing 'd': No space left on device"},
		{&copier.Error{Side: copier.SideBoth, Err: os.NewSyscallError("sendfile", syscall.EDQUOT)}, "error writing 'd': Disk quota exceeded"},
		{&copier.Error{Side: copier.SideBoth, Err: os.NewSyscallError("sendfile", syscall.EIO)}, "error copying 's' to 'd': Input/output error"},
	} {
		if got := CopyError("s", "d", c.err, false); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
