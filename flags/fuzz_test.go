// SPDX-License-Identifier: MIT

package flags

import (
	"errors"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The seeds run with every go test; go test -fuzz=FuzzParse ./flags/
// explores from them.

// FuzzParse: whatever the command line, Parse neither panics nor returns
// both or neither of options and error; every error is a *UsageError with
// a message; accepted options are within their ranges and have the
// operands the synopsis needs; the arguments are not modified, and a
// second parse gives the same result. args holds the arguments separated
// by NUL bytes, which no argument can contain.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"a\x00b", "-r\x00a\x00b", "-rvj4\x00a\x00b", "-a\x00--\x00-x\x00d", "-t\x00dir\x00a", "-tdir\x00a",
		"--target-directory=dir\x00a\x00b", "-T\x00a\x00b\x00c", "-t\x00d\x00-T\x00a", "--buffer-size=1M\x00a\x00b",
		"--buffer-size=0\x00a\x00b", "--buffer-size=99999999999999999999T\x00a\x00b", "--buffer-size=2G\x00a\x00b",
		"--buffer-size\x00a\x00b", "--preserve\x00a\x00b", "--preserve=mode,xattr,links\x00a\x00b",
		"--preserve=\x00a\x00b", "--preserve=all,bogus\x00a\x00b", "--strategy=\x00a\x00b", "--strategy=rw\x00a\x00b",
		"--strategy=reflink\x00--reflink=never\x00a\x00b", "--reflink\x00a\x00b", "--reflink=always\x00--sparse=never\x00a\x00b",
		"--sync=osync\x00a\x00b", "--sync\x00a\x00b", "-j\x000\x00a\x00b", "-j\x001025\x00a\x00b", "--jobs=-1\x00a\x00b",
		"-n\x00-i\x00a\x00b", "-i\x00-n\x00a\x00b", "-L\x00-P\x00-H\x00a\x00b", "--inplace\x00--verify\x00a\x00b",
		"--benchmark", "--benchmark\x00--json\x00--bench-size=4K\x00--bench-runs=1000\x00d", "--benchmark\x00a\x00b",
		"--json\x00a\x00b", "--bench-size=1\x00--benchmark", "-h", "--help\x00--bogus", "--version", "-",
		"--", "--\x00--\x00--", "-\x00-", "", "\x00", "--R\x00a\x00b", "--p=x", "-R\x00a\x00b", "-p\x00a\x00b",
		"--progress\x00--no-progress\x00-q\x00a\x00b", "--debug\x00-v\x00a\x00b", "-x", "--x=", "-rr\x00a\x00b",
		"--no-clobber=true\x00a\x00b", "--force=false\x00a\x00b", "-t", "--sparse=always\x00a\x00b",
		"--nocache\x00--sync=full\x00a\x00b", "a\x00-r\x00b", "--update\x00--\x00-r\x00b",
		"a\x00b\x00c", "a b\x00c", "x", "a\x00", "\x00b", "=a\x00b",
		"--verb\x00a\x00b", "--re\x00a\x00b", "--re=x\x00a\x00b", "--pa\x00a\x00d", "--path\x00a\x00d",
		"--preserve=mod,t\x00a\x00b", "--reflink=alway\x00a\x00b", "--reflink=a\x00a\x00b", "--sp\x00a\x00b\x00c",
		"-b\x00a\x00b", "--backup=t\x00a\x00b", "--backup=n\x00a\x00b", "--backup=\x00-S\x00.bak\x00a\x00b",
		"-bn\x00a\x00b", "--update=none-fail\x00-b\x00a\x00b", "-ls\x00a\x00b", "-lf\x00a\x00b", "-sf\x00a\x00b",
		"--update=all\x00a\x00b", "--update=non\x00a\x00b", "-i\x00--update=none\x00a\x00b", "-n\x00--update=all\x00a\x00b",
		"-i\x00--update=older\x00a\x00b", "--update=none-fail\x00-i\x00a\x00b", "-u\x00--update\x00a\x00b",
		"--no-preserve=all\x00-a\x00a\x00b", "-a\x00--no-preserve=mode,links\x00a\x00b", "--preserve=context\x00a\x00b",
		"-dZ\x00a\x00b", "--context=x\x00a\x00b", "--con=x\x00a\x00b", "-x\x00--parents\x00a\x00d",
		"--strip\x00--remove\x00--attr\x00--copy\x00--keep\x00a\x00b", "--no-p=all\x00a\x00b", "-S\x00--verb\x00a\x00b",
		"-t\x00--verb\x00a", "--suffix\x00--re\x00a\x00b", "--d\x00a\x00b", "--de\x00a\x00b", "--in\x00a\x00b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		if joined == "" {
			args = nil
		}
		keep := append([]string(nil), args...)
		o, err := ParseEnv(args, noEnv)
		if !reflect.DeepEqual(args, keep) {
			t.Fatalf("Parse modified its arguments: %q, was %q", args, keep)
		}
		if (o == nil) == (err == nil) {
			t.Fatalf("Parse(%q) = %v, %v: want options or an error", args, o, err)
		}
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Msg == "" {
				t.Fatalf("Parse(%q): error %T %q is not a usage error with a message", args, err, err)
			}
		} else {
			checkOptions(t, args, o)
		}
		o2, err2 := ParseEnv(args, noEnv)
		if !reflect.DeepEqual(o, o2) || (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("Parse(%q) twice: %v, %v and %v, %v", args, o, err, o2, err2)
		}
		// The short way for operands alone gives what the flag set gives.
		o3, err3 := parseOptions(args, noEnv)
		if !reflect.DeepEqual(o, o3) || (err == nil) != (err3 == nil) || err != nil && err.Error() != err3.Error() {
			t.Fatalf("Parse(%q) = %+v, %v; with the flag set: %+v, %v", args, o, err, o3, err3)
		}
	})
}

// checkOptions asserts what every accepted command line must give.
func checkOptions(t *testing.T, args []string, o *Options) {
	t.Helper()
	if o.Jobs < 0 || o.Jobs > 1024 || o.BufferSize < 0 || o.BufferSize > maxBufferSize ||
		o.BenchRuns < 1 || o.BenchRuns > 1000 || o.BenchSize < 4<<10 {
		t.Fatalf("Parse(%q) accepted out-of-range values: %+v", args, o)
	}
	if o.Help || o.Version {
		return
	}
	n := len(o.Operands)
	switch {
	case o.Benchmark:
		if n > 1 {
			t.Fatalf("Parse(%q): --benchmark with %d operands", args, n)
		}
	case len(o.TargetDirs) > 0:
		if n < 1 || o.NoTargetDir {
			t.Fatalf("Parse(%q): -t with %d operands, -T %v", args, n, o.NoTargetDir)
		}
	case o.NoTargetDir:
		if n != 2 {
			t.Fatalf("Parse(%q): -T with %d operands", args, n)
		}
	default:
		if n < 2 {
			t.Fatalf("Parse(%q): %d operands", args, n)
		}
	}
	if n := btoi(o.Update == UpdateNone) + btoi(o.Interactive) + btoi(o.Update == UpdateNoneFail); n > 1 {
		t.Fatalf("Parse(%q): more than one of -n, -i, --update=none-fail: %+v", args, o)
	}
	if o.Link > LinkSymbolic {
		t.Fatalf("Parse(%q): Link %d", args, o.Link)
	}
	if o.Force && o.Link != LinkNone && !o.RemoveDestination {
		t.Fatalf("Parse(%q): -f with -l or -s must remove DEST first", args)
	}
	if o.Backup != BackupNone && (o.Update == UpdateNone || o.Update == UpdateNoneFail) {
		t.Fatalf("Parse(%q): a backup with -n or --update=none-fail", args)
	}
	if o.Backup != BackupNone && (o.BackupSuffix == "" || strings.Contains(o.BackupSuffix, "/")) {
		t.Fatalf("Parse(%q): backup suffix %q", args, o.BackupSuffix)
	}
	if o.Backup == BackupNone && o.BackupSuffix != "" {
		t.Fatalf("Parse(%q): a suffix %q without backups", args, o.BackupSuffix)
	}
	if o.InPlace && (o.Backup != BackupNone || o.RemoveDestination && o.Link == LinkNone) {
		t.Fatalf("Parse(%q): --inplace with a backup or --remove-destination", args)
	}
	if o.NoPreserveMode && o.Preserve.Mode {
		t.Fatalf("Parse(%q): mode both preserved and not", args)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FuzzAbbreviations: an abbreviated command line means what its
// expansion (every long option spelled in full) means, and expanding is
// idempotent.
func FuzzAbbreviations(f *testing.F) {
	for _, seed := range []string{
		"--verb\x00a\x00b", "--recur\x00--pres=mod\x00a\x00b", "--re\x00a\x00b", "--targ\x00d\x00a",
		"-t\x00--verb\x00a", "--suf\x00--x\x00a\x00b", "--\x00--verb\x00a", "a\x00--no-c\x00b", "--up=non\x00a\x00b",
		"--R\x00a\x00b", "--p\x00a\x00b", "--pa\x00a\x00d", "--verbose=x\x00a\x00b", "--backup=nu\x00a\x00b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		fs := newFlagSet(defaultOptions(), &parseState{env: noEnv})
		full, err := expandArgs(fs, args, false)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) || ue.Msg == "" {
				t.Fatalf("expandArgs(%q): %v is not a usage error", args, err)
			}
			return
		}
		again, err := expandArgs(fs, full, false)
		if err != nil || !reflect.DeepEqual(again, full) {
			t.Fatalf("expandArgs(%q) = %q, expanded again %q, %v", args, full, again, err)
		}
		o1, err1 := ParseEnv(args, noEnv)
		o2, err2 := ParseEnv(full, noEnv)
		if !reflect.DeepEqual(o1, o2) && !(err1 != nil && err2 != nil) {
			t.Fatalf("Parse(%q) = %+v, %v; its expansion %q: %+v, %v", args, o1, err1, full, o2, err2)
		}
	})
}

// sizeGrammar is the grammar of a SIZE written as a regular expression:
// ParseSize must accept exactly these strings (unless the value overflows).
var sizeGrammar = regexp.MustCompile(`^([0-9]+)(?:([KMGTkmgt])(?:i?B)?|B)?$`)

// FuzzParseSize: ParseSize never panics; a size it accepts is not
// negative, is the number itself when it has no suffix, and comes back the
// same through FormatSize.
func FuzzParseSize(f *testing.F) {
	for _, seed := range []string{
		"0", "1", "4096", "4K", "4k", "4KiB", "4KB", "1M", "1MiB", "2G", "3T", "3t", "512B", "1b", "",
		"K", "-1", "+1", " 1", "1 ", "1.5M", "0x10", "1e3", "9223372036854775807", "9223372036854775808",
		"8388607T", "8388608T", "18446744073709551615", "00000000000000000000001K", "1KK", "1iB", "1KiBB",
		"١", "1\x00", "1Mi", "1ki",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if m := sizeGrammar.FindStringSubmatch(s); m == nil && err == nil {
			t.Fatalf("ParseSize(%q) = %d, but it is not a size", s, n)
		} else if m != nil && err != nil && !strings.Contains(err.Error(), "too large") {
			t.Fatalf("ParseSize(%q): %v, but it is a size", s, err)
		}
		if err != nil {
			if n != 0 {
				t.Fatalf("ParseSize(%q) = %d with error %v", s, n, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d, negative", s, n)
		}
		if d, err := strconv.ParseInt(s, 10, 64); err == nil && d != n {
			t.Fatalf("ParseSize(%q) = %d, want %d", s, n, d)
		}
		back, err := ParseSize(FormatSize(n))
		if err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d)) = %d, %v (FormatSize gave %q)", n, back, err, FormatSize(n))
		}
	})
}

// FuzzFormatSize: every size FormatSize prints parses back to itself,
// with the largest suffix that keeps it exact.
func FuzzFormatSize(f *testing.F) {
	for _, seed := range []int64{0, 1, 1023, 1024, 1025, 4096, 1 << 20, 3 << 30, 5 << 40, 1<<40 + 1, math.MaxInt64, math.MaxInt64 &^ (1<<40 - 1)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		if n < 0 {
			return // sizes are never negative
		}
		s := FormatSize(n)
		back, err := ParseSize(s)
		if err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, s, back, err)
		}
		if n > 0 && n%1024 == 0 && !strings.ContainsAny(s, "KMGT") {
			t.Fatalf("FormatSize(%d) = %q: a multiple of 1024 without a suffix", n, s)
		}
	})
}
