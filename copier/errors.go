// SPDX-License-Identifier: MIT

package copier

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrZeroReturn stands for an offload call that returned 0 on its first call
// for a file: on some kernels copy_file_range does that for /proc files, so
// it means "cannot do this here" rather than "end of file".
var ErrZeroReturn = errors.New("returned 0 on its first call")

// ErrEarlyZero stands for an offload call that returned 0 after moving
// bytes but before the end the source had when the copy began: not
// necessarily the end of the file, so the next strategy goes on from there.
var ErrEarlyZero = errors.New("returned 0 before the end of the file")

// errBadStart is an Options.Start the files cannot take: past the end of
// the source, or on a file that is not regular.
var errBadStart = errors.New("the offset must be within a regular source and destination")

// asType finds the first error in err's tree (depth first, as errors.As
// looks) that is an E: errors.AsType of Go 1.26, for the Go 1.24 go.mod
// promises. Unlike errors.As it uses no reflection, which cost a 4 KiB
// copy's refusal checks more than the checks themselves.
func asType[E error](err error) (E, bool) {
	for err != nil {
		if e, ok := err.(E); ok {
			return e, true
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var e E
			if x.As(&e) {
				return e, true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if e, ok := asType[E](inner); ok {
					return e, true
				}
			}
			err = nil
		default:
			err = nil
		}
	}
	var zero E
	return zero, false
}

// refusal reports whether err, returned by a mechanism, means that the
// mechanism cannot do this copy here (try the next one at the same offset)
// rather than that the copy failed. It is the one place where errnos are
// classified; anything not listed is a real failure and is never hidden by a
// fallback.
func refusal(err error) bool {
	if errors.Is(err, ErrZeroReturn) || errors.Is(err, ErrEarlyZero) || errors.Is(err, ErrShortRead) {
		// copy_file_range on procfs/sysfs files before 5.3 and after
		// cross-filesystem copies were allowed; sendfile/splice on files
		// whose read side gives nothing to splice; an O_DIRECT read that
		// ended unaligned before the end of the file.
		return true
	}
	if _, ok := asType[*unavailable](err); ok {
		// Direct's setup (reopening the source, aligning the buffers)
		// cannot be done here; the descriptors are untouched.
		return true
	}
	errno, ok := asType[unix.Errno](err)
	if !ok {
		return false
	}
	switch errno {
	case unix.ENOSYS:
		// The kernel lacks the call (copy_file_range before 4.5), or a
		// seccomp profile answers ENOSYS for calls it does not know.
		return true
	case unix.EXDEV:
		// Source and destination on different filesystems: copy_file_range
		// before 5.3 and again since 5.19 unless both are of the same type
		// and the filesystem allows it; FICLONE across any two mounts.
		return true
	case unix.EINVAL:
		// The call cannot take these descriptors: copy_file_range on pipes,
		// sockets or devices, FICLONERANGE on unaligned ranges, sendfile to
		// an O_APPEND file, splice on a file whose filesystem has no
		// splice_read/splice_write.
		return true
	case unix.EOPNOTSUPP: // == ENOTSUP on Linux
		// The filesystem does not implement it: FICLONE on ext4, tmpfs or
		// vfat; copy_file_range on some FUSE, NFS and CIFS setups.
		return true
	case unix.EPERM:
		// Container seccomp filters (Docker's older default profile returned
		// EPERM for copy_file_range). An immutable or append-only file also
		// gives EPERM; the rw loop then reports it as the real error.
		return true
	case unix.EBADF:
		// copy_file_range into an O_APPEND destination, FICLONE with a
		// source not open for reading in the way the filesystem needs.
		return true
	case unix.ETXTBSY:
		// A swap file on either side: copy_file_range and FICLONE refuse,
		// write(2) reports the same errno as a real error.
		return true
	case unix.ENOTTY:
		// ioctl(FICLONE) on a file whose filesystem or driver does not know
		// the ioctl at all (procfs, character devices, some FUSE mounts).
		return true
	case unix.EIO, unix.ENOSPC, unix.EDQUOT, unix.ENOMEM, unix.EFBIG, unix.EROFS:
		// The device, the space, the quota, the memory, the file size limit
		// or a read-only mount: the copy itself failed.
		return false
	}
	return false
}

// Side says which end of a copy a failure is about, for the message.
type Side int

// Sides of a copy.
const (
	SideBoth  Side = iota // a call that reads and writes (copy_file_range, sendfile, clone)
	SideRead              // the source
	SideWrite             // the destination
)

// Error is a failed copy: which strategy, which call, at what offset, and the
// errno (Err unwraps to it, so errors.Is(err, unix.ENOSPC) works).
type Error struct {
	Strategy Strategy
	Side     Side
	Offset   int64
	Err      error // *os.SyscallError naming the call
	// Refused is true when a forced strategy (or the last one in the chain)
	// was refused by the kernel or filesystem rather than failing.
	Refused bool
	// final: never a refusal, whatever the errno (the Written hook's error).
	final bool
}

func (e *Error) Error() string {
	if e.Refused {
		return fmt.Sprintf("strategy %s refused: %s", e.Strategy, ErrnoText(e.Err))
	}
	return ErrnoText(e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrnoText renders err as "call: ENAME (Text)" when it carries an errno, the
// way --debug and refusals name it.
func ErrnoText(err error) string {
	var se *os.SyscallError
	var errno unix.Errno
	if errors.As(err, &errno) {
		name := unix.ErrnoName(errno)
		if errno == unix.EOPNOTSUPP {
			name = "EOPNOTSUPP" // == ENOTSUP; the name the kernel's documentation uses
		}
		text := Strerror(errno)
		if errors.As(err, &se) {
			return fmt.Sprintf("%s: %s (%s)", se.Syscall, name, text)
		}
		return fmt.Sprintf("%s (%s)", name, text)
	}
	return err.Error()
}

// ErrText is the C library's text for err's errno ("No such file or
// directory"), or err's own text when it carries none: what cp prints after
// a file name.
func ErrText(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return Strerror(errno)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Strerror returns the C library's text for an errno ("No such file or
// directory"): Go's table is the same text with a lower-case first letter.
func Strerror(errno unix.Errno) string {
	s := errno.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

func syscallErr(name string, err error) error {
	if err == nil {
		return nil
	}
	return os.NewSyscallError(name, err)
}
