// SPDX-License-Identifier: MIT

package copier

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// asErrno has an As method, as some errors do: asType honours it as
// errors.As does.
type asErrno struct{ errno unix.Errno }

func (e asErrno) Error() string { return "as " + e.errno.Error() }
func (e asErrno) As(target any) bool {
	if p, ok := target.(*unix.Errno); ok {
		*p = e.errno
		return true
	}
	return false
}

// asType finds what errors.As finds, in every shape of tree.
func TestAsTypeFindsWhatErrorsAsFinds(t *testing.T) {
	t.Parallel()
	cerr := &Error{Strategy: Splice, Side: SideWrite, Err: os.NewSyscallError("splice", unix.EXDEV)}
	for _, err := range []error{
		nil,
		unix.ENOSYS,
		errors.New("plain"),
		os.NewSyscallError("copy_file_range", unix.EOPNOTSUPP),
		fmt.Errorf("wrapped: %w", os.NewSyscallError("ioctl", unix.ENOTTY)),
		cerr,
		fmt.Errorf("twice: %w", fmt.Errorf("once: %w", cerr)),
		errors.Join(errors.New("first"), fmt.Errorf("second: %w", unix.EIO)),
		fmt.Errorf("two: %w and %w", errors.New("no errno"), unix.EINVAL),
		&unavailable{err: unix.EINVAL},
		asErrno{unix.EAGAIN},
		fmt.Errorf("wrapped: %w", asErrno{unix.EBADF}),
	} {
		var wantErrno unix.Errno
		wantOK := errors.As(err, &wantErrno)
		if got, ok := asType[unix.Errno](err); ok != wantOK || got != wantErrno {
			t.Errorf("asType[unix.Errno](%v) = %v, %v; errors.As: %v, %v", err, got, ok, wantErrno, wantOK)
		}
		var wantE *Error
		wantOK = errors.As(err, &wantE)
		if got, ok := asType[*Error](err); ok != wantOK || got != wantE {
			t.Errorf("asType[*Error](%v) = %v, %v; errors.As: %v, %v", err, got, ok, wantE, wantOK)
		}
		var wantU *unavailable
		wantOK = errors.As(err, &wantU)
		if got, ok := asType[*unavailable](err); ok != wantOK || got != wantU {
			t.Errorf("asType[*unavailable](%v) = %v, %v; errors.As: %v, %v", err, got, ok, wantU, wantOK)
		}
	}
}
