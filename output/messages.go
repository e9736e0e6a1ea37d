// SPDX-License-Identifier: MIT

package output

import "fmt"

// The text of fastcp's messages, one function per kind, named as cp's
// messages are. Each returns the message without the "PROG: " prefix or
// the newline, which Errorf, Warnf and Println add.

// Version is --version's text.
func Version(v string) string { return "fastcp " + v + "\n" }

// WriteError says that writing stdout failed with err.
func WriteError(err error) string { return "write error: " + ErrText(err) }

// Failures on a name, with the system's error text.

// CannotCreateRegularFile is a failure to create the regular file name.
func CannotCreateRegularFile(name string, err error) string {
	return fmt.Sprintf("cannot create regular file %s: %s", Quote(name), ErrText(err))
}

// CannotStat is a failure to stat name.
func CannotStat(name string, err error) string {
	return fmt.Sprintf("cannot stat %s: %s", Quote(name), ErrText(err))
}

// CannotAccess is a failure to reach name (a directory on its path, or its listing).
func CannotAccess(name string, err error) string {
	return fmt.Sprintf("cannot access %s: %s", Quote(name), ErrText(err))
}

// ErrorReading is a failed read of name.
func ErrorReading(name string, err error) string {
	return fmt.Sprintf("error reading %s: %s", Quote(name), ErrText(err))
}

// ErrorWriting is a failed write to name.
func ErrorWriting(name string, err error) string {
	return fmt.Sprintf("error writing %s: %s", Quote(name), ErrText(err))
}

// CannotOpenDirectory is a failure to open the directory name.
func CannotOpenDirectory(name string, err error) string {
	return fmt.Sprintf("cannot open directory %s: %s", Quote(name), ErrText(err))
}

// CannotOpenForReading is a failure to open name for reading.
func CannotOpenForReading(name string, err error) string {
	return fmt.Sprintf("cannot open %s for reading: %s", Quote(name), ErrText(err))
}

// CannotMakeDirectory is a failure to make the directory name (--parents).
func CannotMakeDirectory(name string, err error) string {
	return fmt.Sprintf("cannot make directory %s: %s", Quote(name), ErrText(err))
}

// CannotCreateDirectory is a failure to create the directory name.
func CannotCreateDirectory(name string, err error) string {
	return fmt.Sprintf("cannot create directory %s: %s", Quote(name), ErrText(err))
}

// FsyncFailed is a failed fsync of name.
func FsyncFailed(name string, err error) string {
	return fmt.Sprintf("fsync failed for %s: %s", Quote(name), ErrText(err))
}

// CannotReadSymbolicLink is a failure to read the symbolic link name.
func CannotReadSymbolicLink(name string, err error) string {
	return fmt.Sprintf("cannot read symbolic link %s: %s", Quote(name), ErrText(err))
}

// CannotFstat is a failed fstat of the open file name.
func CannotFstat(name string, err error) string {
	return fmt.Sprintf("cannot fstat %s: %s", Quote(name), ErrText(err))
}

// CannotBackup is a failure to rename name to its backup.
func CannotBackup(name string, err error) string {
	return fmt.Sprintf("cannot backup %s: %s", Quote(name), ErrText(err))
}

// FailedToGetAttributes is a failure to read the attributes of the directory name (--parents).
func FailedToGetAttributes(name string, err error) string {
	return fmt.Sprintf("failed to get attributes of %s: %s", Quote(name), ErrText(err))
}

// FailedToClose is a failed close of name.
func FailedToClose(name string, err error) string {
	return fmt.Sprintf("failed to close %s: %s", Quote(name), ErrText(err))
}

// CannotReplace is a failure to rename the finished copy over name.
func CannotReplace(name string, err error) string {
	return fmt.Sprintf("cannot replace %s: %s", Quote(name), ErrText(err))
}

// Target is an unusable last operand name, as the target directory.
func Target(name string, err error) string {
	return fmt.Sprintf("target %s: %s", Quote(name), ErrText(err))
}

// TargetDirectory is an unusable --target-directory name.
func TargetDirectory(name string, err error) string {
	return fmt.Sprintf("target directory %s: %s", Quote(name), ErrText(err))
}

// ErrorCopying is a failed copy from src to dst on neither side in particular.
func ErrorCopying(src, dst string, err error) string {
	return fmt.Sprintf("error copying %s to %s: %s", Quote(src), Quote(dst), ErrText(err))
}
