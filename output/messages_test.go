// SPDX-License-Identifier: MIT

package output

import (
	"errors"
	"syscall"
	"testing"
)

// Each kind of message reads as cp words it (or as fastcp's own wording
// has it): the name quoted as cp quotes it, the errno in the C library's
// words.
func TestMessagesWordedAsCp(t *testing.T) {
	tests := []struct{ got, want string }{
		{CannotStat("a b", syscall.ELOOP), "cannot stat 'a b': Too many levels of symbolic links"},
		{CannotCreateRegularFile("d/", syscall.ENOTDIR), "cannot create regular file 'd/': Not a directory"},
		{ErrorCopying("s", "d", syscall.EIO), "error copying 's' to 'd': Input/output error"},
		{CannotOverwriteNonDirectory("d", "s"), "cannot overwrite non-directory 'd' with directory 's'"},
		{WillNotOverwriteJustCreated("d", "s"), "will not overwrite just-created 'd' with 's'"},
		{BackingUpMightDestroySource("d", "s"), "backing up 'd' might destroy source;  's' not copied"},
		{SpecifiedMoreThanOnce("file", "f"), "source file 'f' specified more than once"},
		{RelativeSymlinkOnlyInCurrentDirectory("sub/l"), "sub/l: can make relative symbolic links only in current directory"},
		{CannotCreateLinkTo(CreateHardLink, "d", "s", syscall.EXDEV), "cannot create hard link 'd' to 's': Invalid cross-device link"},
		{ReplaceOverridingMode("d", 0o444, "r--r--r--"), "replace 'd', overriding mode 0444 (r--r--r--)? "},
		{MayBeLeftOver("t", "d", "", RemoveHint("d", "t", "")), "'t' may be left over from an interrupted copy to 'd'; if no copy to 'd' is running, remove it: rm -- 't'"},
		{MayBeLeftOver("t", "d", "why", RemoveHint("d", "t", "r")), "'t' may be left over from an interrupted copy to 'd' (why); if no copy to 'd' is running, remove them: rm -- 't' 'r'"},
		{CopyingFromTheStart("d", "w", "x", "", ""), "copying 'd' from the start: w (x)"},
		{CopyingFromTheStart("d", "w", "x", "t", ""), "copying 'd' from the start: w (x); 't' left alone"},
		{CopyingFromTheStart("d", "w", "x", "t", "h"), "copying 'd' from the start: w (x); 't' left alone; h"},
		{Resumed("d", 1<<20, 3<<20), "resumed 'd' at 1 MiB of 3 MiB"},
		{WrittenInPlaceIncomplete("d", true), "'d' was written in place (--inplace) and is now incomplete"},
		{WrittenInPlaceIncomplete("d", false), "'d' was written in place and is now incomplete"},
		{CopyingParent("a", "b/a"), "a -> b/a"},
		{Version("1.2"), "fastcp 1.2\n"},
		{WriteError(syscall.ENOSPC), "write error: No space left on device"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got  %q\nwant %q", tt.got, tt.want)
		}
	}
	// The attribute failures are errors whose text is the message; those
	// that wrap the system's error keep it for errors.Is.
	if err := PreservingTimes("d", syscall.EPERM); err.Error() != "preserving times for 'd': Operation not permitted" || !errors.Is(err, syscall.EPERM) {
		t.Errorf("PreservingTimes: %v", err)
	}
	if err := SettingPermissions("d", syscall.EPERM); err.Error() != "setting permissions for 'd': Operation not permitted" || errors.Is(err, syscall.EPERM) {
		t.Errorf("SettingPermissions: %v", err)
	}
}
