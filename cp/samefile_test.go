// SPDX-License-Identifier: MIT

package cp

import (
	"fmt"
	"strings"
	"testing"

	"fastcp/flags"
	"fastcp/internal/fsdir"

	"golang.org/x/sys/unix"
)

// optsFor parses args (options only) as fastcp would for "SRC DST".
func optsFor(t *testing.T, args string) *flags.Options {
	t.Helper()
	o, err := flags.ParseEnv(append(strings.Fields(args), "SRC", "DST"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return o
}

// sameFileTable is cp's same_file_ok on one fixture: f a file, h a second
// name of it, g another file, l and m symbolic links to f, k a second name
// of the link l, n a link to g. A row copies src over dst with the options
// given; SOURCE is looked at as the walk would (followed unless the
// options say not to), DEST as checkDest does (written through when it is
// a link and the copy writes data through it). ok: the copy may go on;
// done: nothing is left to do.
var sameFileTable = []struct {
	args     string
	src, dst string
	through  bool // DEST is a link written through: dsb is its target's
	ok, done bool
}{
	{"", "f", "f", false, false, false},
	{"", "f", "h", false, false, false},
	{"", "f", "g", false, true, false},
	{"--remove-destination", "f", "h", false, true, false},
	{"--remove-destination", "f", "f", false, false, false},
	{"-l", "f", "h", false, true, true},
	{"-l", "f", "f", false, true, true},
	{"-b", "f", "h", false, true, false},
	{"-b", "f", "f", false, false, false},
	{"", "f", "l", true, false, false},
	{"--remove-destination", "f", "l", false, true, false},
	{"-P", "l", "f", false, false, false},
	{"-P", "l", "m", false, true, false},
	{"-P", "l", "k", false, true, true},
	{"-P", "l", "l", false, false, false},
	{"-P -b", "l", "k", false, true, false},
	{"-P", "l", "n", false, true, false},
	{"-P -l", "l", "f", false, true, true},
	{"-P -l", "f", "l", false, true, false},
	{"-s", "f", "l", false, true, false},
	{"-L", "l", "m", true, false, false},
	{"-L --remove-destination", "l", "m", false, true, false},
	{"-L -b", "l", "f", false, false, false},
	{"-L -b", "f", "m", true, true, false},
}

func TestSameFileOK(t *testing.T) {
	dir := t.TempDir()
	makeDir(t, dir, "echo f > f; ln f h; echo g > g; ln -s f l; ln -s f m; ln l k; ln -s g n")
	d, err := fsdir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	for _, tt := range sameFileTable {
		t.Run(fmt.Sprintf("%s %s %s", tt.args, tt.src, tt.dst), func(t *testing.T) {
			o := optsFor(t, tt.args)
			ssb, err := d.Stat(tt.src, !derefNever(o))
			if err != nil {
				t.Fatal(err)
			}
			dsb, err := d.Stat(tt.dst, tt.through)
			if err != nil {
				t.Fatal(err)
			}
			ok, done := sameFileOK(o, o.Backup != flags.BackupNone, entryAt{d, tt.src}, &ssb, entryAt{d, tt.dst}, &dsb)
			if ok != tt.ok || done != tt.done {
				t.Errorf("ok %v, done %v; want %v, %v", ok, done, tt.ok, tt.done)
			}
		})
	}
}

// unlinksFirst and sourceThroughDest, the other two rules of one file.
func TestUnlinksFirstAndSourceThroughDest(t *testing.T) {
	reg := unix.Stat_t{Mode: unix.S_IFREG, Nlink: 1}
	reg2 := unix.Stat_t{Mode: unix.S_IFREG, Nlink: 2}
	dirSt := unix.Stat_t{Mode: unix.S_IFDIR, Nlink: 2}
	fifo := unix.Stat_t{Mode: unix.S_IFIFO, Nlink: 1}
	for _, tt := range []struct {
		args     string
		src, dst *unix.Stat_t
		want     bool
	}{
		{"", &reg, &reg, false},
		{"--remove-destination", &reg, &reg, true},
		{"--remove-destination", &reg, &dirSt, true},
		{"-a", &reg, &reg2, true},
		{"-a --attributes-only", &reg, &reg2, false},
		{"", &reg, &reg2, false},
		{"-a", &reg, &dirSt, false},
		{"-r", &fifo, &reg, true},
		{"-rL", &fifo, &reg, false},
	} {
		if got := unlinksFirst(optsFor(t, tt.args), tt.src, tt.dst); got != tt.want {
			t.Errorf("unlinksFirst(%s, %o over %o) = %v, want %v", tt.args, tt.src.Mode, tt.dst.Mode, got, tt.want)
		}
	}

	dir := t.TempDir()
	makeDir(t, dir, "echo f > f; ln -s f sym; ln -s sym sym2; ln sym hl")
	t.Chdir(dir)
	for _, tt := range []struct {
		src, dst string
		removes  bool
		want     bool
	}{
		{"sym", "sym", true, true},  // cp -b sym sym
		{"sym2", "sym", true, true}, // cp --remove-destination sym2 sym
		{"sym2", "sym", false, false},
		{"hl", "sym", true, false}, // another name of the link survives
		{"f", "sym", true, false},
	} {
		sst, _ := cwd.Stat(tt.src, true)
		dst0, _ := cwd.Stat(tt.dst, false)
		got := sourceThroughDest(tt.src, entryAt{cwd, tt.src}, &sst, entryAt{cwd, tt.dst}, &dst0, tt.removes)
		if got != tt.want {
			t.Errorf("sourceThroughDest(%s, %s, removes %v) = %v, want %v", tt.src, tt.dst, tt.removes, got, tt.want)
		}
	}
}
