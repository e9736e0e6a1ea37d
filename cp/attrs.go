// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"os"
	"strings"
	"unsafe"

	"fastcp/durability"
	"fastcp/flags"
	"fastcp/internal/sysx"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// Attributes kept with -p, -a and --preserve. For a regular file they are
// set on the temporary file before the rename, so DEST never appears with
// the wrong mode, owner or times; for directories after their contents are
// copied (writing entries changes a directory's mtime); for symbolic links
// and special files on the new entry before it is renamed into place.

// target is where attributes go: an open file or directory, or a path
// whose last component is not followed (a new entry under its temporary
// name, named through its directory's descriptor: dir.at).
type target struct {
	fd   int // >= 0: an open file
	path string
	link bool // a symbolic link: no chmod
	// st (if not nil) is the file's stat as it is now: a chown that
	// would change nothing is not made (on a network filesystem each
	// call is a round trip or three).
	st *unix.Stat_t
}

// preserve applies the attributes -p/--preserve ask for, from the source
// (st, and its xattrs read from srcFd, or srcPath when srcFd < 0), to t.
// name is DEST as the user wrote it, for messages.
func (a *app) preserve(t target, st *unix.Stat_t, srcFd int, srcPath, name string) error {
	return a.preserveSome(a.opts.Preserve, t, st, srcFd, srcPath, name)
}

// preserveSome is preserve for the attributes p names.
func (a *app) preserveSome(p flags.Preserve, t target, st *unix.Stat_t, srcFd int, srcPath, name string) error {
	mode := st.Mode & 0o7777
	if p.Ownership {
		err := t.chown(int(st.Uid), int(st.Gid))
		if err != nil && errors.Is(err, unix.EPERM) && os.Geteuid() != 0 {
			// As cp: an ordinary user cannot give files away; keep at
			// least the group when that is one of ours, and drop the
			// set-ID bits, which must not survive a change of owner.
			_ = t.chown(-1, int(st.Gid))
			mode &^= unix.S_ISUID | unix.S_ISGID | unix.S_ISVTX
			err = nil
		}
		if err != nil {
			return output.FailedToPreserveOwnership(name, err)
		}
		if t.st != nil && (t.st.Uid != st.Uid || t.st.Gid != st.Gid) {
			// A chown ran; it clears set-ID bits, and then the mode is
			// not known.
			if t.st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
				t.st = nil
			} else {
				after := *t.st
				after.Uid, after.Gid = st.Uid, st.Gid
				t.st = &after
			}
		}
	}
	if p.Mode && !t.link {
		if err := a.preserveMode(t, st, mode, srcFd, srcPath); err != nil {
			return output.PreservingPermissions(name, err)
		}
	}
	if p.Xattr {
		if err := a.copyXattrs(t, srcFd, srcPath, name); err != nil {
			return err
		}
	}
	if p.Timestamps {
		ts := [2]unix.Timespec{{Sec: st.Atim.Sec, Nsec: st.Atim.Nsec}, {Sec: st.Mtim.Sec, Nsec: st.Mtim.Nsec}}
		if err := t.utimes(&ts); err != nil {
			return output.PreservingTimes(name, err)
		}
	}
	return nil
}

// The POSIX ACLs, as the kernel keeps them: a file's or directory's access
// ACL (part of its mode: the permissions of named users and groups, and
// the mask) and a directory's default ACL (what its new entries inherit).
const (
	aclAccessXattr = "system.posix_acl_access"
)

// preserveMode gives t the source's mode and, as cp does, its access ACL
// (and a directory's default ACL): the mode bits alone would drop the
// named users' and groups' permissions. A source without an access ACL
// leaves t without one (one inherited from a default ACL of DEST's
// directory is removed), so t's permissions are exactly the source's.
func (a *app) preserveMode(t target, st *unix.Stat_t, mode uint32, srcFd int, srcPath string) error {
	names := []string{aclAccessXattr}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		names = append(names, aclDefaultXattr)
	}
	aclChanged := false
	for _, n := range names {
		val, err := getXattr(srcFd, srcPath, n)
		switch {
		case err == nil:
			if err := t.setXattr(n, val); err != nil {
				return err
			}
			aclChanged = true
		case errors.Is(err, unix.ENODATA) || isUnsupported(err):
			if n == aclAccessXattr {
				err := t.removeXattr(n)
				if err != nil && !errors.Is(err, unix.ENODATA) && !isUnsupported(err) {
					return err
				}
				aclChanged = aclChanged || err == nil
			}
		default:
			return err
		}
	}
	if !aclChanged && t.st != nil && t.st.Mode&0o7777 == mode {
		// Created with that mode (an unnamed file, or a mode of 0600),
		// and no ACL changed it: a chmod would change nothing.
		return nil
	}
	// After the ACL, which sets the group class from its mask: the mode
	// is the source's, set-ID bits included.
	return t.chmod(mode)
}

func (t target) setXattr(name string, val []byte) error {
	return ignoringEINTR(func() error {
		if t.fd >= 0 {
			return unix.Fsetxattr(t.fd, name, val, 0)
		}
		return unix.Lsetxattr(t.path, name, val, 0)
	})
}

func (t target) removeXattr(name string) error {
	return ignoringEINTR(func() error {
		if t.fd >= 0 {
			return unix.Fremovexattr(t.fd, name)
		}
		return unix.Lremovexattr(t.path, name)
	})
}

func (t target) chown(uid, gid int) error {
	if t.st != nil && (uid == -1 || uint32(uid) == t.st.Uid) && (gid == -1 || uint32(gid) == t.st.Gid) {
		return nil
	}
	return ignoringEINTR(func() error {
		if t.fd >= 0 {
			return unix.Fchown(t.fd, uid, gid)
		}
		return unix.Lchown(t.path, uid, gid)
	})
}

func (t target) chmod(mode uint32) error {
	if t.fd >= 0 {
		return ignoringEINTR(func() error { return unix.Fchmod(t.fd, mode) })
	}
	return chmodNoFollow(t.path, mode)
}

// chmodNoFollow changes the mode of path without following a symbolic
// link there: fchmodat2(AT_SYMLINK_NOFOLLOW) (Linux 6.6), or before it the
// file opened O_PATH|O_NOFOLLOW and changed through /proc/self/fd, as the C
// library does. A symbolic link has no mode of its own: EOPNOTSUPP.
func chmodNoFollow(path string, mode uint32) error {
	err := ignoringEINTR(func() error { return unix.Fchmodat(unix.AT_FDCWD, path, mode, unix.AT_SYMLINK_NOFOLLOW) })
	if err != unix.EOPNOTSUPP {
		return err
	}
	fd, err := openat(unix.AT_FDCWD, path, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if isSymlink(&st) {
		return unix.EOPNOTSUPP
	}
	return ignoringEINTR(func() error { return unix.Chmod(procPath(fd, ""), mode) })
}

func (t target) utimes(ts *[2]unix.Timespec) error {
	return ignoringEINTR(func() error { return t.utimesOnce(ts) })
}

func (t target) utimesOnce(ts *[2]unix.Timespec) error {
	if t.fd >= 0 {
		// futimens(fd, ts) is utimensat(fd, NULL, ts, 0); x/sys/unix has
		// no wrapper taking a NULL path.
		_, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(t.fd), 0, uintptr(unsafe.Pointer(ts)), 0, 0, 0)
		if errno != 0 {
			return errno
		}
		return nil
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, t.path, ts[:], unix.AT_SYMLINK_NOFOLLOW)
}

// copyXattrs copies every extended attribute the source has. Attributes
// the destination's filesystem cannot hold are an error only when xattrs
// were asked for by name (--preserve=xattr), not as part of -a or "all".
func (a *app) copyXattrs(t target, srcFd int, srcPath, name string) error {
	names, err := listXattrs(srcFd, srcPath)
	if err != nil {
		if isUnsupported(err) {
			return nil
		}
		return output.ListingAttributes(srcPath, err)
	}
	for _, n := range names {
		if n == durability.MarkXattr || n == unfinishedXattr {
			continue // fastcp's own marks, of a leftover or an unfinished directory copied
		}
		val, err := getXattr(srcFd, srcPath, n)
		if err != nil {
			return output.GettingAttribute(n, srcPath, err)
		}
		err = ignoringEINTR(func() error {
			if t.fd >= 0 {
				return unix.Fsetxattr(t.fd, n, val, 0)
			}
			return unix.Lsetxattr(t.path, n, val, 0)
		})
		if err != nil && (!a.opts.XattrExplicit && (isUnsupported(err) || errors.Is(err, unix.EPERM))) {
			continue
		}
		if err != nil && isUnsupported(err) {
			// A filesystem without extended attributes, as cp words it.
			return output.SettingAttributes(name, err)
		}
		if err != nil {
			return output.SettingAttribute(n, name, err)
		}
	}
	return nil
}

// keepDestXattrs gives the temporary file t the extended attributes of the
// DEST it replaces (at path, as dst found it), which cp keeps by writing
// into DEST itself: user.* attributes, security labels, trusted.*, and the
// access ACL (system.posix_acl_access) unless --preserve=mode gives the
// file the source's permissions instead, as cp does. security.capability
// is not kept: writing a file drops it (cp's overwrite loses it too).
// What the filesystem or the caller's privileges refuse is named in a
// warning: DEST loses it, and --inplace would have kept it.
func (j *job) keepDestXattrs(t target, path string, dst *unix.Stat_t) {
	name := j.dst
	names, err := listXattrs(-1, path)
	if err != nil || len(names) == 0 {
		return // none, or none readable: nothing to keep
	}
	type attr struct {
		name string
		val  []byte
	}
	var keep []attr
	for _, n := range names {
		if n == "security.capability" || n == durability.MarkXattr || n == "system.posix_acl_access" && j.a.opts.Preserve.Mode {
			continue
		}
		val, err := getXattr(-1, path, n)
		if err != nil {
			continue // removed meanwhile, or not readable by us
		}
		keep = append(keep, attr{n, val})
	}
	// Still the file that was looked at, not one put there meanwhile?
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || idOf(&st) != idOf(dst) {
		return
	}
	for _, x := range keep {
		err := ignoringEINTR(func() error { return unix.Fsetxattr(t.fd, x.name, x.val, 0) })
		if err != nil {
			j.r.warn(output.LostExtendedAttribute(name, x.name, err))
		}
	}
}

// setAttrs gives the temporary file the attributes the result must have
// before it is renamed into place: with -p/--preserve the source's; else a
// new file gets the source's permissions minus the umask (as cp), and an
// existing DEST (ex) keeps its own mode and owner. What it cannot keep of
// DEST is a warning in the entry's record.
func (j *job) setAttrs(dest *durability.Destination, ex *destInfo, srcF *sysx.File, newFile bool) error {
	a, sst, name, dst := j.a, &j.e.st, j.dst, ex.st
	t := target{fd: int(dest.File.Fd()), st: dest.Stat}
	if !a.opts.Preserve.Mode {
		if newFile {
			mode := newMode(a.opts, a.umask, sst.Mode, false, j.p.createKeeps(a, ex))
			// An unnamed temporary file was created with the mode cp
			// would create DEST with (unnamedPerm): where the kernel
			// made it the mode wanted, a chmod would change nothing.
			if st := dest.Stat; st == nil || st.Mode&0o7777 != mode {
				if err := t.chmod(mode); err != nil {
					return output.SettingPermissions(name, err)
				}
			}
		} else {
			if !a.opts.Preserve.Ownership && (dst.Uid != uint32(os.Geteuid()) || dst.Gid != uint32(os.Getegid())) {
				// Before the chmod: chown clears set-user-ID bits.
				if err := t.chown(int(dst.Uid), int(dst.Gid)); err != nil {
					j.r.warn(output.OwnerChanged(name, os.Geteuid(), os.Getegid(), dst.Uid, dst.Gid, err))
				}
				t.st = nil // its owner is no longer known
			}
			// After the chown, which would drop security.capability, and
			// before the chmod, which then adjusts an ACL's mask as it
			// would have on DEST itself.
			j.keepDestXattrs(t, ex.where(), dst)
			// The set-ID bits only where a write into DEST would keep
			// them.
			if err := t.chmod(setIDAfterWrite(dst.Mode&0o7777, dst.Gid)); err != nil {
				return output.SettingPermissions(name, err)
			}
		}
	} else if !newFile {
		j.keepDestXattrs(t, ex.where(), dst)
	}
	if a.opts.Preserve.Any() {
		return a.preserve(t, sst, int(srcF.Fd()), "", name)
	}
	return nil
}

// newMode is the permission bits of a new file (or directory) without
// --preserve=mode: SOURCE's as its creation by cp would leave them (minus
// the umask, or in a directory with a default ACL, masked by that ACL:
// keep is createKeeps' answer for the directory); with --no-preserve=mode,
// the default ones (0666, directories 0777) minus the umask, as cp sets
// them.
func newMode(o *flags.Options, umask, srcMode uint32, dir bool, keep uint32) uint32 {
	if o.NoPreserveMode {
		if dir {
			return 0o777 &^ umask
		}
		return 0o666 &^ umask
	}
	return srcMode & 0o777 & keep
}

// createKeeps returns the permission bits that creating a file in the
// directory at path (a /proc/self/fd path for an open one) keeps of the
// mode asked for: those of its default ACL where it has one (acl(5): the
// umask then does not apply), else those the umask leaves. cp gets this
// from the kernel by creating DEST with SOURCE's mode; fastcp creates its
// temporary file 0600 and sets the mode afterwards, so it works it out.
func (a *app) createKeeps(path string) uint32 {
	if perms, ok := defaultACLPerms(path); ok {
		return perms
	}
	return 0o777 &^ a.umask
}

// setIDAfterWrite returns the mode a file of mode and group gid keeps when
// this process writes into it, as the kernel decides on a write (cp
// writes into an existing DEST; fastcp replaces it, so it applies the same
// rule to the replacement): without CAP_FSETID the set-user-ID bit goes,
// and the set-group-ID bit too when the group may execute the file or the
// process is not in the file's group (setattr_should_drop_suidgid in
// fs/attr.c).
func setIDAfterWrite(mode, gid uint32) uint32 {
	if mode&(unix.S_ISUID|unix.S_ISGID) == 0 || hasCapFsetid() {
		return mode
	}
	mode &^= unix.S_ISUID
	if mode&unix.S_ISGID != 0 && (mode&unix.S_IXGRP != 0 || !inGroup(gid)) {
		mode &^= unix.S_ISGID
	}
	return mode
}

// hasCapFsetid reports whether CAP_FSETID is in this process's effective
// set (root's usually is).
func hasCapFsetid() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return os.Geteuid() == 0
	}
	return data[0].Effective&(1<<unix.CAP_FSETID) != 0
}

// inGroup reports whether gid is this process's effective or a
// supplementary group.
func inGroup(gid uint32) bool {
	if uint32(os.Getegid()) == gid {
		return true
	}
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if uint32(g) == gid {
			return true
		}
	}
	return false
}

func isUnsupported(err error) bool {
	return errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENODATA)
}

func listXattrs(fd int, path string) ([]string, error) {
	size := 1024
	for {
		buf := make([]byte, size)
		var n int
		var err error
		if fd >= 0 {
			n, err = unix.Flistxattr(fd, buf)
		} else {
			n, err = unix.Llistxattr(path, buf)
		}
		if errors.Is(err, unix.ERANGE) {
			size *= 4
			continue
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for _, s := range strings.Split(string(buf[:n]), "\x00") {
			if s != "" {
				names = append(names, s)
			}
		}
		return names, nil
	}
}

func getXattr(fd int, path, name string) ([]byte, error) {
	size := 256
	for {
		buf := make([]byte, size)
		var n int
		var err error
		if fd >= 0 {
			n, err = unix.Fgetxattr(fd, name, buf)
		} else {
			n, err = unix.Lgetxattr(path, name, buf)
		}
		if errors.Is(err, unix.ERANGE) {
			size *= 4
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}

// aclDefaultXattr holds a directory's default ACL, in the kernel's
// binary form: a 4-byte version (2), then 8-byte entries (tag and perm,
// 16 bits each, and an id of 32 bits), little-endian.
const aclDefaultXattr = "system.posix_acl_default"

// Tags of the entries of a POSIX ACL (linux/posix_acl.h).
const (
	aclUserObj  = 0x01
	aclGroupObj = 0x04
	aclMask     = 0x10
	aclOther    = 0x20
)

// defaultACLPerms returns the permission bits that a file created in the
// directory at path keeps of the mode asked for, when the directory has a
// default ACL: its owner entry's for the owner, its mask's (else its
// owning group's) for the group, its other entry's for others, as
// posix_acl_create masks the mode. ok is false without a default ACL (or
// where none can be read): the umask applies.
func defaultACLPerms(path string) (perms uint32, ok bool) {
	buf := make([]byte, 256)
	n, err := unix.Getxattr(path, aclDefaultXattr, buf)
	if err == unix.ERANGE {
		if n, err = unix.Getxattr(path, aclDefaultXattr, nil); err == nil {
			buf = make([]byte, n)
			n, err = unix.Getxattr(path, aclDefaultXattr, buf)
		}
	}
	if err != nil || n < 4 || (n-4)%8 != 0 || le16(buf) != 2 {
		return 0, false
	}
	var user, group, mask, other uint32
	hasMask := false
	for e := buf[4:n]; len(e) >= 8; e = e[8:] {
		perm := uint32(le16(e[2:])) & 7
		switch le16(e) {
		case aclUserObj:
			user = perm
		case aclGroupObj:
			group = perm
		case aclMask:
			mask, hasMask = perm, true
		case aclOther:
			other = perm
		}
	}
	if hasMask {
		group = mask
	}
	return user<<6 | group<<3 | other, true
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }
