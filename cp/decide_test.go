// SPDX-License-Identifier: MIT

package cp

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fastcp/durability"
	"fastcp/internal/fsdir"
)

// The rule table of cp's treatment of an existing DEST, in cp's order of
// precedence: the first row that matches a case gives its answer. A row
// names the DEST kinds it covers, the options that must be set (+x) or not
// set (-x), and the answer; -i asks first wherever DEST is not skipped or
// refused outright (ask). Options: n -n, u -u (SOURCE not newer), i -i,
// f -f, p --inplace, r --remove-destination, b -b, N --update=none-fail,
// e: the copy makes an entry (a link, a special file) instead of writing
// data.
var ruleTable = []struct {
	kinds string // space-separated: none reg unw imm dir link dev fifo pseudo
	opts  string // space-separated: +x / -x
	want  action
	ask   bool
}{
	{"none", "", actNew, false},
	{"dir", "", actFailIsDir, false},
	{"reg unw imm link dev fifo pseudo jreg jlink", "+n", actSkip, false},
	{"reg unw imm link dev fifo pseudo jreg jlink", "+u", actSkip, false},
	{"reg unw imm link dev fifo pseudo jreg jlink", "+N", actFailNoneFail, false},
	{"jreg jlink", "+e", actFailJustCreated, false},
	{"jlink", "-r -b", actFailThroughLink, false},
	{"jreg jlink", "", actFailJustCreated, false},
	{"reg unw imm link dev fifo pseudo", "+e", actReplace, true},
	{"reg unw imm link dev fifo pseudo", "+r", actReplaceAsNew, true},
	{"reg unw imm link dev fifo pseudo", "+b", actReplaceAsNew, true},
	{"dev fifo pseudo", "", actInPlace, true},
	{"link", "", actReplaceAsNew, true},
	{"reg unw imm", "+p", actInPlace, true},
	{"imm", "+f", actFailImmutable, true},
	{"unw", "+f", actReplaceAsNew, true},
	{"unw imm", "", actFailUnwritable, true},
	{"reg", "", actReplace, true},
}

var factsOf = map[string]destFacts{
	"none":   {kind: durability.KindNone},
	"reg":    {kind: durability.KindRegular},
	"unw":    {kind: durability.KindRegular, unwritable: true},
	"imm":    {kind: durability.KindRegular, unwritable: true, immutable: true},
	"dir":    {kind: durability.KindDir},
	"link":   {kind: durability.KindSymlink},
	"dev":    {kind: durability.KindDevice},
	"fifo":   {kind: durability.KindFIFO},
	"pseudo": {kind: durability.KindPseudo},
	"jreg":   {kind: durability.KindRegular, justCreated: true},
	"jlink":  {kind: durability.KindSymlink, justCreated: true, throughLink: true},
}

func TestDecideEveryCombination(t *testing.T) {
	flagNames := "nuifprbNe"
	n := 0
	for kind, facts := range factsOf {
		for mask := 0; mask < 1<<len(flagNames); mask++ {
			set := func(c byte) bool { return mask&(1<<strings.IndexByte(flagNames, c)) != 0 }
			f := facts
			f.notNewer = set('u')
			o := decideOpts{
				noClobber: set('n'), update: set('u'), interactive: set('i'), force: set('f'),
				inPlace: set('p'), removeDestination: set('r'), backup: set('b'), noneFail: set('N'), data: !set('e'),
			}
			want, ok := ruleFor(kind, set)
			if !ok {
				t.Fatalf("no rule for %s with %s", kind, flagsString(flagNames, set))
			}
			got := decide(f, o)
			wantAsk := want.ask && set('i')
			if got.act != want.act || got.ask != wantAsk {
				t.Errorf("%s with %s: got %v ask=%v, want %v ask=%v", kind, flagsString(flagNames, set), got.act, got.ask, want.act, wantAsk)
			}
			n++
		}
	}
	if n != len(factsOf)<<len(flagNames) {
		t.Errorf("%d cases", n)
	}
	// -u with a SOURCE newer than DEST decides as without -u.
	if d := decide(destFacts{kind: durability.KindRegular}, decideOpts{update: true, data: true}); d.act != actReplace {
		t.Errorf("-u, newer SOURCE: %v", d.act)
	}
}

type ruleAnswer struct {
	act action
	ask bool
}

func ruleFor(kind string, set func(byte) bool) (ruleAnswer, bool) {
rows:
	for _, r := range ruleTable {
		if !strings.Contains(" "+r.kinds+" ", " "+kind+" ") {
			continue
		}
		for _, o := range strings.Fields(r.opts) {
			if set(o[1]) != (o[0] == '+') {
				continue rows
			}
		}
		return ruleAnswer{r.want, r.ask}, true
	}
	return ruleAnswer{}, false
}

func flagsString(names string, set func(byte) bool) string {
	var b strings.Builder
	for i := range len(names) {
		if set(names[i]) {
			b.WriteByte(names[i])
		}
	}
	return fmt.Sprintf("[%s]", b.String())
}

// -r --resume skips a DEST that is a complete copy, before any question
// and whatever else would replace it; cp's just-created rules still come
// first, and a DEST that is not complete is decided as without --resume.
func TestDecideResumeComplete(t *testing.T) {
	tests := []struct {
		name string
		f    destFacts
		o    decideOpts
		want action
	}{
		{"complete", destFacts{kind: durability.KindRegular, complete: true}, decideOpts{resumeTree: true, data: true}, actSkipComplete},
		{"complete, -i", destFacts{kind: durability.KindRegular, complete: true}, decideOpts{resumeTree: true, data: true, interactive: true}, actSkipComplete},
		{"complete, unwritable", destFacts{kind: durability.KindRegular, complete: true, unwritable: true}, decideOpts{resumeTree: true, data: true}, actSkipComplete},
		{"complete, --backup", destFacts{kind: durability.KindRegular, complete: true}, decideOpts{resumeTree: true, data: true, backup: true}, actSkipComplete},
		{"complete, -n", destFacts{kind: durability.KindRegular, complete: true}, decideOpts{resumeTree: true, data: true, noClobber: true}, actSkip},
		{"complete, just created", destFacts{kind: durability.KindRegular, complete: true, justCreated: true}, decideOpts{resumeTree: true, data: true}, actFailJustCreated},
		{"not complete", destFacts{kind: durability.KindRegular}, decideOpts{resumeTree: true, data: true}, actReplace},
		{"complete, no --resume", destFacts{kind: durability.KindRegular, complete: true}, decideOpts{data: true}, actReplace},
		{"complete, a link made", destFacts{kind: durability.KindRegular, complete: true}, decideOpts{resumeTree: true}, actReplace},
		{"a directory", destFacts{kind: durability.KindDir, complete: true}, decideOpts{resumeTree: true, data: true}, actFailIsDir},
	}
	for _, tt := range tests {
		if got := decide(tt.f, tt.o); got.act != tt.want || (got.act == actSkipComplete && got.ask) {
			t.Errorf("%s: %v ask=%v, want %v", tt.name, got.act, got.ask, tt.want)
		}
	}
}

// A symbolic link DEST the copy would write through, which loops or names
// no file: -f replaces a loop and POSIXLY_CORRECT creates the file a
// dangling link names, whatever else is given (-n, -i, -u, a backup);
// otherwise the entry fails.
func TestDecideLinkNotFollowed(t *testing.T) {
	tests := []struct {
		name  string
		f     destFacts
		force bool
		posix bool
		want  action
	}{
		{"loop", destFacts{loop: true, throughLink: true}, false, false, actFailLoop},
		{"loop, POSIXLY_CORRECT", destFacts{loop: true, throughLink: true}, false, true, actFailLoop},
		{"loop, -f", destFacts{loop: true, throughLink: true}, true, false, actNew},
		{"dangling", destFacts{dangling: true, throughLink: true}, false, false, actFailDangling},
		{"dangling, -f", destFacts{dangling: true, throughLink: true}, true, false, actFailDangling},
		{"dangling, POSIXLY_CORRECT", destFacts{dangling: true, throughLink: true}, false, true, actNew},
	}
	flagNames := "nuipNe"
	for _, tt := range tests {
		for mask := 0; mask < 1<<len(flagNames); mask++ {
			set := func(c byte) bool { return mask&(1<<strings.IndexByte(flagNames, c)) != 0 }
			f := tt.f
			f.notNewer = set('u')
			o := decideOpts{
				noClobber: set('n'), update: set('u'), interactive: set('i'), inPlace: set('p'),
				noneFail: set('N'), data: !set('e'), force: tt.force, posixlyCorrect: tt.posix,
			}
			if got := decide(f, o); got.act != tt.want || got.ask {
				t.Errorf("%s with %s: %v ask=%v, want %v", tt.name, flagsString(flagNames, set), got.act, got.ask, tt.want)
			}
		}
	}
}

// cp --force --backup f f copies f to its backup name, without backups:
// only with both options, the very name, and a regular file, which is
// asked last (a stat).
func TestIntoOwnBackup(t *testing.T) {
	tests := []struct {
		force, backup, sameName, regular bool
		want, asked                      bool
	}{
		{true, true, true, true, true, true},
		{true, true, true, false, false, true},
		{false, true, true, true, false, false},
		{true, false, true, true, false, false},
		{true, true, false, true, false, false},
	}
	for _, tt := range tests {
		asked := false
		regular := func() bool { asked = true; return tt.regular }
		if got := intoOwnBackup(tt.force, tt.backup, tt.sameName, regular); got != tt.want || asked != tt.asked {
			t.Errorf("%+v: %v (regular asked: %v)", tt, got, asked)
		}
	}
}

// Copied into its own backup, DEST is replaced as without -b: no backup
// named, a symbolic link DEST written through, and the rule's answer that
// of a run without backups.
func TestOwnBackupHasNoBackups(t *testing.T) {
	dir := t.TempDir()
	makeDir(t, dir, "echo src > src; touch -d 2010-01-01 src; echo old > old; touch -d 2000-01-01 old; ln -s old link")
	d, err := fsdir.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	src, err := d.Stat("src", true)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args      string
		ownBackup bool
		dst       string
		act       action
		backup    string
		path      string
	}{
		{"--force -b", false, "old", actReplaceAsNew, "D/old~", "old"},
		{"--force -b", true, "old", actReplace, "", "old"},
		{"--force -b", false, "link", actReplaceAsNew, "D/link~", "link"},
		{"--force -b", true, "link", actReplace, "", filepath.Join(dir, "old")},
	}
	for _, tt := range tests {
		a := &app{opts: optsFor(t, tt.args), ownBackup: tt.ownBackup}
		if a.backups() == tt.ownBackup {
			t.Errorf("%s, own backup %v: backups() %v", tt.args, tt.ownBackup, a.backups())
		}
		j := &job{a: a, r: &record{}, p: &dirCopy{}, sd: d, dd: d, e: &entry{name: "src", st: src},
			name: tt.dst, src: "D/src", dst: "D/" + tt.dst}
		ex, ok := j.checkDest(true)
		path := ex.path
		if ex.in != nil {
			path = ex.name
		}
		if !ok || ex.act != tt.act || ex.backup != tt.backup || path != tt.path {
			t.Errorf("%s, own backup %v, %s: ok %v, act %v, backup %q, path %q; want %v, %q, %q",
				tt.args, tt.ownBackup, tt.dst, ok, ex.act, ex.backup, path, tt.act, tt.backup, tt.path)
		}
	}
}

// --attributes-only does not replace an existing DEST by a symbolic link,
// unless DEST is removed first or backed up; -i asks first, and the rules
// that skip or refuse DEST outright come before.
func TestDecideAttributesOnlyLink(t *testing.T) {
	link := destFacts{kind: durability.KindRegular, newLink: true}
	checkDecide(t, []decideCase{
		{"link", link, decideOpts{attributesOnly: true}, actFailLinkExists, false},
		{"link, -i", link, decideOpts{attributesOnly: true, interactive: true}, actFailLinkExists, true},
		{"link over a link", destFacts{kind: durability.KindSymlink, newLink: true}, decideOpts{attributesOnly: true}, actFailLinkExists, false},
		{"link, --remove-destination", link, decideOpts{attributesOnly: true, removeDestination: true}, actReplace, false},
		{"link, -b", link, decideOpts{attributesOnly: true, backup: true}, actReplace, false},
		{"link, -n", link, decideOpts{attributesOnly: true, noClobber: true}, actSkip, false},
		{"link, no DEST", destFacts{newLink: true}, decideOpts{attributesOnly: true}, actNew, false},
		{"link into a directory", destFacts{kind: durability.KindDir, newLink: true}, decideOpts{attributesOnly: true}, actFailIsDir, false},
		{"link, without --attributes-only", link, decideOpts{}, actReplace, false},
		{"special file", destFacts{kind: durability.KindRegular}, decideOpts{attributesOnly: true}, actReplace, false},
	})
}

// --attributes-only keeps an existing regular DEST's data (a file of a
// pseudo filesystem too) wherever the copy would otherwise write it in
// place or replace it; the rules that skip, refuse, remove or back up
// DEST come first, and any other DEST is decided as without it.
func TestDecideAttributesOnlyKeepsData(t *testing.T) {
	reg := destFacts{kind: durability.KindRegular}
	ao := decideOpts{attributesOnly: true, data: true}
	with := func(f func(*decideOpts)) decideOpts { o := ao; f(&o); return o }
	checkDecide(t, []decideCase{
		{"regular", reg, ao, actKeepData, false},
		{"regular, -i", reg, with(func(o *decideOpts) { o.interactive = true }), actKeepData, true},
		{"regular, --inplace", reg, with(func(o *decideOpts) { o.inPlace = true }), actKeepData, false},
		{"regular, -f", reg, with(func(o *decideOpts) { o.force = true }), actKeepData, false},
		{"pseudo", destFacts{kind: durability.KindPseudo}, ao, actKeepData, false},
		{"regular, --remove-destination", reg, with(func(o *decideOpts) { o.removeDestination = true }), actReplaceAsNew, false},
		{"regular, -b", reg, with(func(o *decideOpts) { o.backup = true }), actReplaceAsNew, false},
		{"regular, -n", reg, with(func(o *decideOpts) { o.noClobber = true }), actSkip, false},
		{"just created", destFacts{kind: durability.KindRegular, justCreated: true}, ao, actFailJustCreated, false},
		{"no DEST", destFacts{}, ao, actNew, false},
		{"directory", destFacts{kind: durability.KindDir}, ao, actFailIsDir, false},
		{"device", destFacts{kind: durability.KindDevice}, ao, actInPlace, false},
		{"fifo", destFacts{kind: durability.KindFIFO}, ao, actInPlace, false},
		{"symbolic link", destFacts{kind: durability.KindSymlink}, ao, actReplaceAsNew, false},
		{"regular, without --attributes-only", reg, decideOpts{data: true}, actReplace, false},
	})
}

// A directory SOURCE is merged into a directory DEST, makes one where
// there is none, and is refused over anything else, a symbolic link
// (not followed) included.
func TestDecideDir(t *testing.T) {
	want := map[durability.Kind]action{
		durability.KindNone:    actNew,
		durability.KindDir:     actMerge,
		durability.KindRegular: actFailNotDir,
		durability.KindSymlink: actFailNotDir,
		durability.KindDevice:  actFailNotDir,
		durability.KindFIFO:    actFailNotDir,
		durability.KindPseudo:  actFailNotDir,
	}
	for k, w := range want {
		if got := decideDir(destFacts{kind: k}); got != w {
			t.Errorf("kind %d: %v, want %v", k, got, w)
		}
	}
	if msg, failed := destFailure(actFailNotDir, "s", "d", nil); !failed || msg != "cannot overwrite non-directory 'd' with directory 's'" {
		t.Errorf("actFailNotDir: %q %v", msg, failed)
	}
	if _, failed := destFailure(actMerge, "s", "d", nil); failed {
		t.Error("actMerge fails the entry")
	}
}

// decideCase is one row of a table of decide's answers: the action, and
// whether -i asks first.
type decideCase struct {
	name string
	f    destFacts
	o    decideOpts
	want action
	ask  bool
}

// checkDecide fails the rows of tests that decide answers otherwise.
func checkDecide(t *testing.T, tests []decideCase) {
	t.Helper()
	for _, tt := range tests {
		if got := decide(tt.f, tt.o); got.act != tt.want || got.ask != tt.ask {
			t.Errorf("%s: %v ask=%v, want %v ask=%v", tt.name, got.act, got.ask, tt.want, tt.ask)
		}
	}
}
