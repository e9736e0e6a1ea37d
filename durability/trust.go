// SPDX-License-Identifier: MIT

package durability

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The trust rule for leftovers. What --resume continues and what the sweep
// removes is found beside DEST, in a directory that other users may write
// to: a shared backup directory, a sticky spool, a project directory with
// group write, a user's home that root copies into. Anyone who can create
// a name there can plant a file under DEST's temporary name, give it any
// mark or resume record (a source's identity is no secret: stat shows it),
// and hold it open, locked or leased. Trusted is only what the caller's
// own euid made: a leftover is adopted (continued, cut back, or removed)
// only when
//
//   - it is a regular file with one link (not a symlink, FIFO, device or
//     a hard link to a file elsewhere), not the root of a mount;
//   - it is owned by the caller's euid and writable by nobody else (no
//     group or other write bit): nobody else can have it open for writing;
//   - it is not the copy's own SOURCE (a user salvaging a leftover by
//     copying it);
//   - it opens with O_NOFOLLOW|O_NONBLOCK without waiting (a lease held by
//     another process answers EWOULDBLOCK: not ours), and its fstat after
//     the open is the entry judged before it, passing the same checks.
//
// Anything else is left alone, not opened for writing, not locked, not
// removed, and named once; the copy goes on under another temporary name,
// as if there were no leftover. Root copying into a user's directory thus
// never adopts the user's files, and a user copying into a group-writable
// or sticky directory never adopts a file of another member.

// Distrusted is a leftover that the trust rule refuses: left alone.
type Distrusted struct {
	Path string
	Why  string
}

func (e *Distrusted) Error() string { return e.Path + ": " + e.Why }

// judge applies the trust rule's checks of a stat to the entry st (the
// mount point is checked on the open file: mountPoint).
func judge(st *unix.Stat_t, source identity) string {
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "not a regular file"
	case source != identity{} && identityOf(st) == source:
		return "it is the source of this copy"
	case st.Uid != uint32(os.Geteuid()):
		return fmt.Sprintf("it is owned by uid %d, not by this user", st.Uid)
	case st.Nlink != 1:
		return fmt.Sprintf("not a regular file with one link (%d links)", st.Nlink)
	case st.Mode&0o022 != 0:
		return fmt.Sprintf("it is writable by group or others (mode %04o)", st.Mode&0o7777)
	}
	return ""
}

// openLeftover opens the leftover name in dirfd (shown names it) with
// flags for adoption, under the trust rule above. It returns the
// descriptor and its fstat, or unix.ENOENT (the name is gone), or a
// *Distrusted (left alone, closed). The descriptor is blocking: the
// O_NONBLOCK of the open is cleared once the file proved to be ours.
func openLeftover(dirfd int, name, shown string, flags int, source identity) (int, *unix.Stat_t, error) {
	refuse := func(why string) (int, *unix.Stat_t, error) {
		return -1, nil, &Distrusted{Path: shown, Why: why}
	}
	var dst, lst unix.Stat_t
	if err := unix.Fstat(dirfd, &dst); err != nil {
		return refuse(err.Error())
	}
	switch err := unix.Fstatat(dirfd, name, &lst, unix.AT_SYMLINK_NOFOLLOW); {
	case err == unix.ENOENT:
		return -1, nil, err
	case err != nil:
		return refuse(err.Error())
	}
	if why := judge(&lst, source); why != "" {
		return refuse(why)
	}
	fd, err := openat(dirfd, name, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch {
	case err == unix.ENOENT:
		return -1, nil, err
	case err == unix.EWOULDBLOCK:
		return refuse("another process holds a lease on it")
	case err != nil:
		return refuse(err.Error())
	}
	st := new(unix.Stat_t)
	why := ""
	if err := unix.Fstat(fd, st); err != nil {
		why = err.Error()
	} else if identityOf(st) != identityOf(&lst) {
		why = "it was replaced while being opened"
	} else if why = judge(st, source); why == "" && mountPoint(fd, st, dst.Dev) {
		why = "it is a mount point"
	}
	if why == "" {
		var fl int
		if fl, err = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
		if err != nil {
			why = err.Error()
		}
	}
	if why != "" {
		unix.Close(fd)
		return refuse(why)
	}
	return fd, st, nil
}

// mountPoint reports whether the open file fd (whose fstat is st, in a
// directory on the device dirDev) is the root of a mount: a file
// bind-mounted over the name. statx says so (Linux 5.8); where it cannot,
// a device other than the directory's does (overlayfs can give files the
// device of their layer, which statx's answer is not fooled by).
func mountPoint(fd int, st *unix.Stat_t, dirDev uint64) bool {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, 0, &stx); err == nil && stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 {
		return stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
	}
	return st.Dev != dirDev
}
