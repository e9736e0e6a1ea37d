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

// What a failure to create an entry other than a regular file says it
// could not create (EntryError).
const (
	CreateSymbolicLink = "cannot create symbolic link"
	CreateHardLink     = "cannot create hard link"
	CreateFifo         = "cannot create fifo"
	CreateSpecialFile  = "cannot create special file"
)

// CannotCreateLinkTo is a failure to make dst a link (what: CreateHardLink
// or CreateSymbolicLink) to src.
func CannotCreateLinkTo(what, dst, src string, err error) string {
	return fmt.Sprintf("%s %s to %s: %s", what, Quote(dst), Quote(src), ErrText(err))
}

// RelativeSymlinkOnlyInCurrentDirectory refuses a relative symbolic link
// dst (-s) outside the current directory.
func RelativeSymlinkOnlyInCurrentDirectory(dst string) string {
	return fmt.Sprintf("%s: can make relative symbolic links only in current directory", Quotef(dst))
}

// CannotRemove is a failure to remove name.
func CannotRemove(name string, err error) string {
	return fmt.Sprintf("cannot remove %s: %s", Quote(name), ErrText(err))
}

// Refusals to copy over what DEST is.

// CannotOverwriteDirectory refuses a non-directory over the directory dst.
func CannotOverwriteDirectory(dst string) string {
	return fmt.Sprintf("cannot overwrite directory %s with non-directory", Quote(dst))
}

// CannotOverwriteNonDirectory refuses the directory src over the
// non-directory dst.
func CannotOverwriteNonDirectory(dst, src string) string {
	return fmt.Sprintf("cannot overwrite non-directory %s with directory %s", Quote(dst), Quote(src))
}

// WillNotOverwriteJustCreated refuses src over dst, which this run made.
func WillNotOverwriteJustCreated(dst, src string) string {
	return fmt.Sprintf("will not overwrite just-created %s with %s", Quote(dst), Quote(src))
}

// WillNotCopyThroughJustCreatedSymlink refuses to write src through the
// symbolic link dst, which this run made.
func WillNotCopyThroughJustCreatedSymlink(src, dst string) string {
	return fmt.Sprintf("will not copy %s through just-created symlink %s", Quote(src), Quote(dst))
}

// NotReplacing refuses to replace dst (--update=none-fail).
func NotReplacing(dst string) string { return fmt.Sprintf("not replacing %s", Quote(dst)) }

// NotWritingThroughDanglingSymlink refuses to create a file where the
// symbolic link dst points to.
func NotWritingThroughDanglingSymlink(dst string) string {
	return fmt.Sprintf("not writing through dangling symlink %s", Quote(dst))
}

// SameFile refuses to copy src onto itself.
func SameFile(src, dst string) string {
	return fmt.Sprintf("%s and %s are the same file", Quote(src), Quote(dst))
}

// CannotCopyDirectoryIntoItself refuses to copy the directory src into
// dst, inside it.
func CannotCopyDirectoryIntoItself(src, dst string) string {
	return fmt.Sprintf("cannot copy a directory, %s, into itself, %s", Quote(src), Quote(dst))
}

// BackingUpMightDestroySource refuses a backup of dst that would rename
// src away.
func BackingUpMightDestroySource(dst, src string) string {
	return fmt.Sprintf("backing up %s might destroy source;  %s not copied", Quote(dst), Quote(src))
}

// Skipped is --debug's line for a DEST left alone (-n, --update, a "no"
// to -i).
func Skipped(dst string) string { return fmt.Sprintf("skipped %s", Quote(dst)) }

// SkippedComplete is --debug's line for a DEST that --resume found
// complete.
func SkippedComplete(dst string) string {
	return fmt.Sprintf("skipped %s: already a complete copy (--resume)", Quote(dst))
}

// Overwrite is -i's question for a writable DEST.
func Overwrite(dst string) string { return fmt.Sprintf("overwrite %s? ", Quote(dst)) }

// ReplaceOverridingMode is -i's question, with -f, for a DEST of mode
// mode (perms: "r--r--r--") that the user cannot write.
func ReplaceOverridingMode(dst string, mode uint32, perms string) string {
	return fmt.Sprintf("replace %s, overriding mode %04o (%s)? ", Quote(dst), mode, perms)
}

// UnwritableTryAnyway is -i's question, without -f, for a DEST of mode
// mode that the user cannot write.
func UnwritableTryAnyway(dst string, mode uint32, perms string) string {
	return fmt.Sprintf("unwritable %s (mode %04o, %s); try anyway? ", Quote(dst), mode, perms)
}

// Sources that are not copied.

// OmittingDirectory skips the directory src without -r.
func OmittingDirectory(src string) string {
	return fmt.Sprintf("-r not specified; omitting directory %s", Quote(src))
}

// SpecifiedMoreThanOnce skips src (what: "file", "directory") given
// twice.
func SpecifiedMoreThanOnce(what, src string) string {
	return fmt.Sprintf("source %s %s specified more than once", what, Quote(src))
}

// CannotCopyCyclicSymbolicLink refuses the symbolic link src, which
// leads back to itself.
func CannotCopyCyclicSymbolicLink(src string) string {
	return fmt.Sprintf("cannot copy cyclic symbolic link %s", Quote(src))
}

// SkippingReplacedFile skips the file src, replaced during its copy.
func SkippingReplacedFile(src string) string {
	return fmt.Sprintf("skipping file %s, as it was replaced while being copied", Quote(src))
}

// SkippingReplacedDirectory skips the directory src, replaced during its
// copy.
func SkippingReplacedDirectory(src string) string {
	return fmt.Sprintf("skipping directory %s, as it was replaced while being copied", Quote(src))
}

// ExistsButNotDirectory refuses dir as a directory of --parents.
func ExistsButNotDirectory(dir string) string {
	return fmt.Sprintf("%s exists but is not a directory", Quote(dir))
}
