// SPDX-License-Identifier: MIT

package cp

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"fastcp/internal/fsdir"
	"fastcp/output"
)

// destTable is checkDest on one fixture: what is found at DEST, and what
// cp's rules then say, for SOURCE src (a file, newer than old and older
// than new) copied to DEST dst with the options given. data: the copy
// writes data (else it makes an entry: a link, a special file). A row
// gives whether the copy goes on (ok), the action, whether a skipped DEST
// counts as the copy (kept), the backup's name, and the message the
// entry's record gets ("" none; "quiet" a failure without a message).
var destTable = []struct {
	args     string
	src, dst string
	data     bool
	stdin    string
	ok       bool
	act      action
	kept     bool
	backup   string
	msg      string
}{
	{"", "src", "none", true, "", true, actNew, false, "", ""},
	{"", "src", "none/", true, "", false, actNew, false, "", "cannot create regular file 'D/none/': Not a directory"},
	{"", "src", "old", true, "", true, actReplace, false, "", ""},
	{"", "src", "dir", true, "", false, actFailIsDir, false, "", "cannot overwrite directory 'D/dir' with non-directory"},
	{"-n", "src", "old", true, "", false, actSkip, false, "", ""},
	{"-u", "src", "new", true, "", false, actSkip, true, "", ""},
	{"-u", "src", "old", true, "", true, actReplace, false, "", ""},
	{"--update=none-fail", "src", "old", true, "", false, actFailNoneFail, false, "", "not replacing 'D/old'"},
	{"-i", "src", "old", true, "n\n", false, actNew, false, "", "quiet"},
	{"-i", "src", "old", true, "y\n", true, actReplace, false, "", ""},
	{"--inplace", "src", "old", true, "", true, actInPlace, false, "", ""},
	{"", "src", "fifo", true, "", true, actInPlace, false, "", ""},
	{"", "src", "fifo", false, "", true, actReplace, false, "", ""},
	{"--remove-destination", "src", "old", true, "", true, actReplaceAsNew, false, "", ""},
	{"-b", "src", "old", true, "", true, actReplaceAsNew, false, "D/old~", ""},
	{"--backup=numbered", "src", "old", true, "", true, actReplaceAsNew, false, "D/old.~1~", ""},
	{"", "src", "link", true, "", true, actReplace, false, "", ""},
	{"", "src", "dangling", true, "", false, actNew, false, "", "not writing through dangling symlink 'D/dangling'"},
	{"", "src", "loop", true, "", false, actNew, false, "", "cannot stat 'D/loop': Too many levels of symbolic links"},
	{"-f", "src", "loop", true, "", true, actNew, false, "", ""},
	{"", "src", "src", true, "", false, actNew, false, "", "'D/src' and 'D/src' are the same file"},
	{"", "src", "link2src", true, "", false, actNew, false, "", "'D/src' and 'D/link2src' are the same file"},
	{"-r --resume", "src", "copy", true, "", false, actSkipComplete, true, "", ""},
	{"-r --resume", "src", "old", true, "", false, actSkipComplete, true, "", ""}, // the same size: trusted
	{"-r --resume -p", "src", "old", true, "", true, actReplace, false, "", ""},
}

func TestCheckDest(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("/bin/sh", "-ec", `echo src > src; touch -d 2010-01-01 src
		echo old > old; touch -d 2000-01-01 old; echo new > new; touch -d 2020-01-01 new
		mkdir dir; mkfifo fifo; ln -s old link; ln -s nowhere dangling; ln -s loop loop; ln -s src link2src
		cp -p src copy`)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	d, err := fsdir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	for _, tt := range destTable {
		t.Run(fmt.Sprintf("%s %s %v", tt.args, tt.dst, tt.data), func(t *testing.T) {
			a := &app{opts: optsFor(t, tt.args), stdin: bufio.NewReader(strings.NewReader(tt.stdin))}
			src, err := d.Stat(tt.src, true)
			if err != nil {
				t.Fatal(err)
			}
			j := &job{a: a, r: &record{}, p: &dirCopy{}, sd: d, dd: d, e: &entry{name: tt.src, st: src},
				name: tt.dst, src: "D/" + tt.src, dst: "D/" + tt.dst}
			if tt.stdin != "" {
				a.out = quietOutput()
			}
			ex, ok := j.checkDest(tt.data)
			msg := ""
			for _, l := range j.r.lines {
				msg += l.text
			}
			if msg == "" && j.r.failed {
				msg = "quiet"
			}
			if ok != tt.ok || ex.act != tt.act || ex.kept != tt.kept || ex.backup != tt.backup || msg != tt.msg {
				t.Errorf("ok %v, act %d, kept %v, backup %q, msg %q; want %v, %d, %v, %q, %q",
					ok, ex.act, ex.kept, ex.backup, msg, tt.ok, tt.act, tt.kept, tt.backup, tt.msg)
			}
		})
	}
}

// quietOutput is an Output that discards everything (-i's prompts).
func quietOutput() *output.Output { return output.New("fastcp", io.Discard, io.Discard) }
