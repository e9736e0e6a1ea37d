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

// What cannot be kept of an existing DEST written in its place.

// LostExtendedAttribute warns that name, replaced, lost its extended
// attribute attr.
func LostExtendedAttribute(name, attr string, err error) string {
	return fmt.Sprintf("%s lost its extended attribute %s: %s; --inplace keeps it", Quote(name), Quote(attr), ErrText(err))
}

// OwnerChanged warns that name, replaced, now belongs to uid and gid, not
// to its owner wasUID, wasGID.
func OwnerChanged(name string, uid, gid int, wasUID, wasGID uint32, err error) string {
	return fmt.Sprintf("%s now belongs to uid %d, gid %d (was %d, %d): %s; --inplace keeps the owner",
		Quote(name), uid, gid, wasUID, wasGID, ErrText(err))
}

// CannotPreserveLinkAttributes warns that the filesystem of the directory
// dir sets no owner or times on symbolic links.
func CannotPreserveLinkAttributes(dir, reason string) string {
	return fmt.Sprintf("cannot preserve the ownership and times of symbolic links on the filesystem of %s: %s", Quote(dir), reason)
}

// Failures to give a copy its attributes: errors whose text is the
// message (Worded).

// FailedToPreserveOwnership is a failed chown of name.
func FailedToPreserveOwnership(name string, err error) error {
	return WordedErr(err, "failed to preserve ownership for %s: %s", Quote(name), ErrText(err))
}

// PreservingPermissions is a failure to give name SOURCE's permissions.
func PreservingPermissions(name string, err error) error {
	return Wordedf("preserving permissions for %s: %s", Quote(name), ErrText(err))
}

// PreservingTimes is a failure to give name SOURCE's times.
func PreservingTimes(name string, err error) error {
	return WordedErr(err, "preserving times for %s: %s", Quote(name), ErrText(err))
}

// SettingPermissions is a failed chmod of name.
func SettingPermissions(name string, err error) error {
	return Wordedf("setting permissions for %s: %s", Quote(name), ErrText(err))
}

// ListingAttributes is a failure to list the extended attributes of name.
func ListingAttributes(name string, err error) error {
	return Wordedf("listing attributes of %s: %s", Quote(name), ErrText(err))
}

// GettingAttribute is a failure to read the extended attribute attr of name.
func GettingAttribute(attr, name string, err error) error {
	return Wordedf("getting attribute %s of %s: %s", Quote(attr), Quote(name), ErrText(err))
}

// SettingAttributes is a failure to set name's extended attributes.
func SettingAttributes(name string, err error) error {
	return Wordedf("setting attributes for %s: %s", Quote(name), ErrText(err))
}

// SettingAttribute is a failure to set the extended attribute attr of name.
func SettingAttribute(attr, name string, err error) error {
	return Wordedf("setting attribute %s for %s: %s", Quote(attr), Quote(name), ErrText(err))
}

// Leftovers of interrupted copies beside DEST.

// Removed is -v's line for a leftover removed.
func Removed(name string) string { return fmt.Sprintf("removed %s", Quote(name)) }

// LeavingAlone warns of a file with a temporary file's name, not
// removed for the reason why.
func LeavingAlone(name, why string) string {
	return fmt.Sprintf("leaving %s alone: %s", Quote(name), why)
}

// UnmarkedTemporary warns of a file named as a temporary file of fastcp
// that lacks its mark.
func UnmarkedTemporary(name string) string {
	return fmt.Sprintf("%s has the name of a temporary file of fastcp but not its mark: left alone", Quote(name))
}

// MayBeLeftOver warns of name, which may be the leftover of a copy to dst
// (why, if not "", says more); hint is RemoveHint's.
func MayBeLeftOver(name, dst, why, hint string) string {
	if why != "" {
		why = " (" + why + ")"
	}
	return fmt.Sprintf("%s may be left over from an interrupted copy to %s%s; %s", Quote(name), Quote(dst), why, hint)
}

// RemoveHint says how to remove the leftover temp (and its side record
// side, if not ""), which could not be proved dead: the command, quoted
// for a shell, and when to run it.
func RemoveHint(dst, temp, side string) string {
	files, it := Quote(temp), "it"
	if side != "" {
		files, it = files+" "+Quote(side), "them"
	}
	return fmt.Sprintf("if no copy to %s is running, remove %s: rm -- %s", Quote(dst), it, files)
}

// --resume, and a DEST continued as a partial copy.

// CannotResumeRunning refuses to resume the copy to dst, whose temporary
// file temp another copy holds.
func CannotResumeRunning(dst, temp string) string {
	return fmt.Sprintf("cannot resume the copy to %s: another copy to it is running (%s is locked)", Quote(dst), Quote(temp))
}

// CopyingFromTheStart warns that the copy to dst starts anew, for why
// (detail); left, if not "", is the leftover left alone, and hint, if not
// "", how to remove it.
func CopyingFromTheStart(dst, why, detail, left, hint string) string {
	msg := fmt.Sprintf("copying %s from the start: %s (%s)", Quote(dst), why, detail)
	switch {
	case hint != "":
		msg += fmt.Sprintf("; %s left alone; %s", Quote(left), hint)
	case left != "":
		msg += fmt.Sprintf("; %s left alone", Quote(left))
	}
	return msg
}

// ResumeFrom is --debug's line for a copy continued in temp from start.
func ResumeFrom(temp string, start, size int64) string {
	return fmt.Sprintf("resume: %s from offset %d of %d", Quote(temp), start, size)
}

// Resumed is -v's line for a copy to dst continued from start.
func Resumed(dst string, start, size int64) string {
	return fmt.Sprintf("resumed %s at %s of %s", Quote(dst), Size(start), Size(size))
}

// NoCheckpoints warns that the copy to dst records no checkpoints.
func NoCheckpoints(dst, why string) string {
	return fmt.Sprintf("--resume records no checkpoints for %s: %s; an interrupted copy will start over", Quote(dst), why)
}

// ResumeRecordsBeside warns that the resume records on the filesystem of
// dst go into side files (side is one).
func ResumeRecordsBeside(dst, side string) string {
	return fmt.Sprintf("--resume: the filesystem of %s keeps no user extended attributes; the resume records go into files beside the temporary files, as %s",
		Quote(dst), Quote(side))
}

// NoHashState and the next are why a leftover's hash state is not taken.
const NoHashState = "the leftover's record has no hash state"

// HashStateOf: the leftover's hash is the algorithm got, not want.
func HashStateOf(got, want string) string {
	return fmt.Sprintf("the leftover's hash state is %s's, not %s's", got, want)
}

// LeftoverHashState: the leftover's hash state is unusable for err.
func LeftoverHashState(err error) string { return "the leftover's " + err.Error() }

// ChecksumResumed is --debug's line for a hash taken from a leftover at
// off, read again up to start.
func ChecksumResumed(alg string, off, start int64) string {
	return fmt.Sprintf("checksum: %s state at offset %d taken from the leftover's record; %d bytes read again to %d",
		alg, off, start-off, start)
}

// ChecksumHashedAgain is --debug's line for the start bytes of a resumed
// copy hashed again, for why.
func ChecksumHashedAgain(why string, start int64) string {
	return fmt.Sprintf("checksum: %s: the %d bytes done are hashed again, read from SOURCE", why, start)
}

// PartialDest is --debug's line about dst as a partial copy.
func PartialDest(dst, what string) string { return fmt.Sprintf("partial DEST %s: ", Quote(dst)) + what }

// PartialNotContinued: DEST is not continued, for why.
func PartialNotContinued(why string) string { return "not continued: " + why }

// PartialChanged and the next are why a partial DEST is not continued.
const PartialChanged = "it changed while being looked at"

// PartialNotShorter: DEST has size bytes, SOURCE srcSize.
func PartialNotShorter(size, srcSize int64) string {
	return fmt.Sprintf("it is not shorter than SOURCE (%d of %d bytes)", size, srcSize)
}

// PartialOwnedBy: DEST belongs to uid.
func PartialOwnedBy(uid uint32) string {
	return fmt.Sprintf("it is owned by uid %d, not by this user", uid)
}

// PartialTooSmall: DEST is shorter than chunk.
func PartialTooSmall(chunk int64) string { return fmt.Sprintf("it holds less than %s", Size(chunk)) }

// PartialDiffers: DEST's first chunk is not SOURCE's.
func PartialDiffers(chunk int64) string {
	return fmt.Sprintf("its first %s differs from SOURCE's (or it was written meanwhile)", Size(chunk))
}

// PartialContinued: keep of DEST's size bytes are kept, in temp, shared
// with DEST (cloned) or copied.
func PartialContinued(keep, size, chunk int64, cloned bool, temp string) string {
	how := "copied"
	if cloned {
		how = "shared with DEST (reflink)"
	}
	return fmt.Sprintf("continued from %d: %d of its %d bytes equal SOURCE's from the start (the prefix kept is a multiple of %s), %s into %s",
		keep, keep, size, Size(chunk), how, Quote(temp))
}

// Sources that changed while they were copied (SourceChanged's What).
const (
	WasModified       = "was modified while being copied"
	EndedBeforeHashed = "changed size while being copied (it ended before the bytes copied were hashed)"
)

// ChangedSize: SOURCE had before bytes, copied were copied, it has now.
func ChangedSize(before, copied, now int64) string {
	return fmt.Sprintf("changed size while being copied (%d bytes before, %d copied, %d now)", before, copied, now)
}

// The copy's end.

// CannotCreateTemporaryFile refuses to write the writable dst in place
// when its directory dir takes no temporary file.
func CannotCreateTemporaryFile(dir, dst string, err error) string {
	return fmt.Sprintf("cannot create a temporary file in %s to replace %s: %s; --inplace writes into %s itself",
		Quote(dir), Quote(dst), ErrText(err), Quote(dst))
}

// WrittenInPlaceIncomplete says that dst, written in place (asked: by
// --inplace), holds part of the copy.
func WrittenInPlaceIncomplete(dst string, asked bool) string {
	if asked {
		return fmt.Sprintf("%s was written in place (--inplace) and is now incomplete", Quote(dst))
	}
	return fmt.Sprintf("%s was written in place and is now incomplete", Quote(dst))
}

// SyncNameMayNotSurvive warns that dst is on a filesystem (kind) whose
// directory fsync may not reach stable storage.
func SyncNameMayNotSurvive(dst, kind string) string {
	return fmt.Sprintf("--sync: %s is on a %s filesystem, whose directory fsync may not reach stable storage: the data is flushed, the name may not be",
		Quote(dst), kind)
}

// CannotVerify refuses --verify for name, the side (SOURCE, DEST) of a
// kind that cannot be read again.
func CannotVerify(name, side, kind string) string {
	return fmt.Sprintf("cannot verify %s: the %s is %s, which cannot be read again; copy it without --verify", Quote(name), side, kind)
}

// CopyingWithBackup is -v's line for a copy that made a backup.
func CopyingWithBackup(src, dst, backup string) string {
	return fmt.Sprintf("%s (backup: %s)", Copying(src, dst), Quote(backup))
}

// CopyingParent is -v's line for a directory --parents made (unquoted,
// as cp prints it).
func CopyingParent(src, dst string) string { return fmt.Sprintf("%s -> %s", src, dst) }

// The checksum file (--checksum-file).

// ChecksumFileInsideSource refuses a checksum file inside the source
// directory src.
func ChecksumFileInsideSource(file, src string) string {
	return fmt.Sprintf("will not write the checksum file %s inside the source directory %s: it would be copied with it", Quote(file), Quote(src))
}

// ChecksumFileOverSource refuses a checksum file that is the source src.
func ChecksumFileOverSource(file, src string) string {
	return fmt.Sprintf("will not write the checksum file %s over the source %s", Quote(file), Quote(src))
}

// CannotWriteChecksumFile is a failure to write the checksum file.
func CannotWriteChecksumFile(file, why string) string {
	return fmt.Sprintf("cannot write the checksum file %s: %s", Quote(file), why)
}

// StepFailed is why, for a named step (op) that failed with err.
func StepFailed(op string, err error) string { return fmt.Sprintf("%s: %s", op, ErrText(err)) }

// ChangedNotInChecksumFile: src changed (what) and was left out.
func ChangedNotInChecksumFile(src, what string) string {
	return fmt.Sprintf("%s %s; it is not in the checksum file", Quote(src), what)
}

// Options that are not taken as given.

// BufferSizeBounded warns that --buffer-size=asked for jobs copies would
// take too much memory: each gets given.
func BufferSizeBounded(asked int64, jobs int, size, given int64) string {
	return fmt.Sprintf("--buffer-size=%s with -j %d would take %s; each copy uses %s (%s in all)",
		Size(asked), jobs, Size(int64(jobs)*size), Size(given), Size(int64(jobs)*given))
}

// The SELinux context options, which fastcp does not carry out.
const (
	NoContextCopy                 = "cannot preserve security context: fastcp does not copy SELinux contexts"
	IgnoringContext               = "ignoring --context: fastcp does not set SELinux contexts"
	NoContextWithoutSELinux       = "cannot preserve security context without an SELinux-enabled kernel"
	IgnoringContextWithoutSELinux = "ignoring --context; it requires an SELinux-enabled kernel"
)

// LastOperandIsDirectory refuses, as a usage error, a directory last
// operand beside several -t, without -r; hint says the ways out.
func LastOperandIsDirectory(last string) (msg, hint string) {
	return fmt.Sprintf("with several --target-directory (-t), every operand is a SOURCE, and %s is a directory", Quote(last)),
		fmt.Sprintf("Add -t %s to copy into it too, or -r to copy it into each DIRECTORY.", Quote(last))
}
