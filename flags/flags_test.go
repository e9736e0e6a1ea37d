package flags

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"fastcp/copier"
	"fastcp/durability"
)

func parseOK(t *testing.T, args ...string) *Options {
	t.Helper()
	o, err := Parse(args)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return o
}

func TestOptions(t *testing.T) {
	all := Preserve{true, true, true, true}
	mot := Preserve{Mode: true, Ownership: true, Timestamps: true}
	tests := []struct {
		args  []string
		check func(o *Options) bool
	}{
		{[]string{"-r", "a", "b"}, func(o *Options) bool { return o.Recursive }},
		{[]string{"-R", "a", "b"}, func(o *Options) bool { return o.Recursive }},
		{[]string{"--recursive", "a", "b"}, func(o *Options) bool { return o.Recursive }},
		{[]string{"-a", "a", "b"}, func(o *Options) bool {
			return o.Recursive && o.Deref == DerefNever && o.Preserve == all && o.HardLinks && !o.XattrExplicit
		}},
		{[]string{"--archive", "a", "b"}, func(o *Options) bool { return o.Recursive && o.Preserve == all }},
		{[]string{"-p", "a", "b"}, func(o *Options) bool { return o.Preserve == mot && !o.Recursive }},
		{[]string{"--preserve", "a", "b"}, func(o *Options) bool { return o.Preserve == mot }},
		{[]string{"--preserve=mode", "a", "b"}, func(o *Options) bool { return o.Preserve == Preserve{Mode: true} }},
		{[]string{"--preserve=timestamps,xattr", "a", "b"}, func(o *Options) bool {
			return o.Preserve == Preserve{Timestamps: true, Xattr: true} && o.XattrExplicit
		}},
		{[]string{"--preserve=all", "a", "b"}, func(o *Options) bool { return o.Preserve == all && o.HardLinks }},
		{[]string{"--preserve=links", "a", "b"}, func(o *Options) bool { return o.HardLinks && !o.Preserve.Any() }},
		{[]string{"-f", "a", "b"}, func(o *Options) bool { return o.Force }},
		{[]string{"--force", "a", "b"}, func(o *Options) bool { return o.Force }},
		{[]string{"-n", "a", "b"}, func(o *Options) bool { return o.NoClobber && !o.Interactive }},
		{[]string{"-i", "a", "b"}, func(o *Options) bool { return o.Interactive && !o.NoClobber }},
		{[]string{"-i", "-n", "a", "b"}, func(o *Options) bool { return o.NoClobber && !o.Interactive }},
		{[]string{"-n", "-i", "a", "b"}, func(o *Options) bool { return o.Interactive && !o.NoClobber }},
		{[]string{"-u", "a", "b"}, func(o *Options) bool { return o.Update }},
		{[]string{"--update", "a", "b"}, func(o *Options) bool { return o.Update }},
		{[]string{"-t", "dir", "a", "b"}, func(o *Options) bool {
			return o.TargetDir == "dir" && reflect.DeepEqual(o.Operands, []string{"a", "b"})
		}},
		{[]string{"--target-directory=dir", "a"}, func(o *Options) bool { return o.TargetDir == "dir" }},
		{[]string{"-tdir", "a"}, func(o *Options) bool { return o.TargetDir == "dir" }},
		{[]string{"-T", "a", "b"}, func(o *Options) bool { return o.NoTargetDir }},
		{[]string{"-L", "a", "b"}, func(o *Options) bool { return o.Deref == DerefAlways }},
		{[]string{"-P", "a", "b"}, func(o *Options) bool { return o.Deref == DerefNever }},
		{[]string{"-H", "a", "b"}, func(o *Options) bool { return o.Deref == DerefCommandLine }},
		{[]string{"-L", "-P", "a", "b"}, func(o *Options) bool { return o.Deref == DerefNever }},
		{[]string{"-a", "-L", "a", "b"}, func(o *Options) bool { return o.Deref == DerefAlways && o.Recursive }},
		{[]string{"-L", "-a", "a", "b"}, func(o *Options) bool { return o.Deref == DerefNever }},
		{[]string{"-v", "a", "b"}, func(o *Options) bool { return o.Verbose }},
		{[]string{"--debug", "a", "b"}, func(o *Options) bool { return o.Debug }},
		{[]string{"-q", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Progress == ProgressOff }},
		{[]string{"--progress", "a", "b"}, func(o *Options) bool { return o.Progress == ProgressOn }},
		{[]string{"--no-progress", "a", "b"}, func(o *Options) bool { return o.Progress == ProgressOff }},
		{[]string{"--no-progress", "--progress", "a", "b"}, func(o *Options) bool { return o.Progress == ProgressOn }},
		{[]string{"-q", "--progress", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Progress == ProgressOn }},
		{[]string{"--strategy=splice", "a", "b"}, func(o *Options) bool { return o.Strategy == copier.Splice }},
		{[]string{"--strategy", "copy_file_range", "a", "b"}, func(o *Options) bool { return o.Strategy == copier.CopyFileRange }},
		{[]string{"--reflink", "a", "b"}, func(o *Options) bool { return o.Reflink == copier.ReflinkAlways }},
		{[]string{"--reflink=never", "a", "b"}, func(o *Options) bool { return o.Reflink == copier.ReflinkNever }},
		{[]string{"--sparse=always", "a", "b"}, func(o *Options) bool { return o.Sparse == copier.SparseAlways }},
		{[]string{"--sparse=never", "a", "b"}, func(o *Options) bool { return o.Sparse == copier.SparseNever }},
		{[]string{"--buffer-size=4K", "a", "b"}, func(o *Options) bool { return o.BufferSize == 4096 }},
		{[]string{"--buffer-size=2M", "a", "b"}, func(o *Options) bool { return o.BufferSize == 2<<20 }},
		{[]string{"--buffer-size=1000", "a", "b"}, func(o *Options) bool { return o.BufferSize == 1000 }},
		{[]string{"--sync=data", "a", "b"}, func(o *Options) bool { return o.Sync == durability.SyncData }},
		{[]string{"--sync=odsync", "a", "b"}, func(o *Options) bool { return o.Sync == durability.SyncODSync }},
		{[]string{"--inplace", "a", "b"}, func(o *Options) bool { return o.InPlace }},
		{[]string{"--nocache", "a", "b"}, func(o *Options) bool { return o.NoCache }},
		{[]string{"--verify", "a", "b"}, func(o *Options) bool { return o.Verify }},
		{[]string{"--resume", "a", "b"}, func(o *Options) bool { return o.Resume && !o.Verify }},
		{[]string{"-r", "--resume", "--sync=data", "a", "b"}, func(o *Options) bool { return o.Resume && o.Recursive && o.Sync == durability.SyncData }},
		{[]string{"-j", "4", "a", "b"}, func(o *Options) bool { return o.Jobs == 4 }},
		{[]string{"-j4", "a", "b"}, func(o *Options) bool { return o.Jobs == 4 }},
		{[]string{"--jobs=8", "a", "b"}, func(o *Options) bool { return o.Jobs == 8 }},
		{[]string{"a", "b"}, func(o *Options) bool {
			return o.Jobs == 1 && o.Strategy == copier.Auto && o.Sync == durability.SyncNone && o.Deref == DerefDefault
		}},
		{[]string{"--benchmark"}, func(o *Options) bool {
			return o.Benchmark && o.BenchSize == 256<<20 && o.BenchRuns == 3 && len(o.Operands) == 0
		}},
		{[]string{"--benchmark", "--bench-size=64M", "--bench-runs=1", "--bench-from=/src", "--json", "/mnt"}, func(o *Options) bool {
			return o.BenchSize == 64<<20 && o.BenchRuns == 1 && o.BenchFrom == "/src" && o.JSON && o.Operands[0] == "/mnt"
		}},
		{[]string{"--help"}, func(o *Options) bool { return o.Help }},
		{[]string{"-h"}, func(o *Options) bool { return o.Help }},
		{[]string{"--version"}, func(o *Options) bool { return o.Version }},
		// Bundled short options.
		{[]string{"-rvp", "a", "b"}, func(o *Options) bool { return o.Recursive && o.Verbose && o.Preserve == mot }},
		{[]string{"-avj2", "a", "b"}, func(o *Options) bool { return o.Recursive && o.Verbose && o.Jobs == 2 }},
		{[]string{"-vt", "dir", "a"}, func(o *Options) bool { return o.Verbose && o.TargetDir == "dir" }},
		// "--" ends options; a lone "-" is an operand.
		{[]string{"--", "-a", "-b"}, func(o *Options) bool {
			return !o.Recursive && reflect.DeepEqual(o.Operands, []string{"-a", "-b"})
		}},
		{[]string{"-v", "a", "--", "-x"}, func(o *Options) bool { return reflect.DeepEqual(o.Operands, []string{"a", "-x"}) }},
		// Options after operands, as GNU getopt allows.
		{[]string{"a", "b", "-v"}, func(o *Options) bool { return o.Verbose && len(o.Operands) == 2 }},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o := parseOK(t, tt.args...)
			if !tt.check(o) {
				t.Errorf("Parse(%q) = %+v", tt.args, o)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
		hint string
	}{
		{nil, "missing file operand", ""},
		{[]string{"a"}, "missing destination file operand after 'a'", ""},
		{[]string{"-T", "a", "b", "c"}, "extra operand 'c'", ""},
		{[]string{"-t", "d", "-T", "a"}, "cannot combine --target-directory (-t) and --no-target-directory (-T)", ""},
		{[]string{"--bogus", "a", "b"}, "unrecognized option '--bogus'", ""},
		{[]string{"-z", "a", "b"}, "invalid option -- 'z'", ""},
		{[]string{"-rz", "a", "b"}, "invalid option -- 'z'", ""},
		{[]string{"-t"}, "option requires an argument -- 't'", ""},
		{[]string{"a", "--target-directory"}, "option '--target-directory' requires an argument", ""},
		{[]string{"--strategy=fast", "a", "b"}, "invalid argument 'fast' for '--strategy'",
			"Valid arguments are:\n  - 'auto'\n  - 'reflink'\n  - 'copy_file_range'\n  - 'direct'\n  - 'sendfile'\n  - 'splice'\n  - 'rw'"},
		{[]string{"--reflink=sometimes", "a", "b"}, "invalid argument 'sometimes' for '--reflink'",
			"Valid arguments are:\n  - 'auto'\n  - 'always'\n  - 'never'"},
		{[]string{"--sparse=", "a", "b"}, "invalid argument '' for '--sparse'",
			"Valid arguments are:\n  - 'auto'\n  - 'always'\n  - 'never'"},
		{[]string{"--sync=yes", "a", "b"}, "invalid argument 'yes' for '--sync'",
			"Valid arguments are:\n  - 'none'\n  - 'data'\n  - 'full'\n  - 'osync'\n  - 'odsync'"},
		{[]string{"--preserve=mode,color", "a", "b"}, "invalid argument 'color' for '--preserve'", ""},
		{[]string{"--buffer-size=0", "a", "b"}, "invalid --buffer-size argument '0': out of range: 1 to 1G", ""},
		{[]string{"--buffer-size=12Q", "a", "b"}, "invalid --buffer-size argument '12Q': not a size", ""},
		{[]string{"--buffer-size=2G", "a", "b"}, "invalid --buffer-size argument '2G': out of range: 1 to 1G", ""},
		{[]string{"--buffer-size=-1", "a", "b"}, "invalid --buffer-size argument '-1': not a size", ""},
		{[]string{"-j", "0", "a", "b"}, "invalid --jobs argument '0'", "N is a whole number from 1 to 1024."},
		{[]string{"--jobs=many", "a", "b"}, "invalid --jobs argument 'many'", ""},
		{[]string{"--bench-runs=0", "--benchmark"}, "invalid --bench-runs argument '0'", ""},
		{[]string{"--bench-size=1", "--benchmark"}, "invalid --bench-size argument '1': must be at least 4K", ""},
		{[]string{"--benchmark", "a", "b"}, "extra operand 'b'", ""},
		{[]string{"--json", "a", "b"}, "--json works only with --benchmark", "Add --benchmark, or drop --json."},
		{[]string{"--reflink=always", "--strategy=rw", "a", "b"}, "--reflink=always cannot be combined with --strategy=rw", ""},
		{[]string{"--reflink=never", "--strategy=reflink", "a", "b"}, "--reflink=never cannot be combined with --strategy=reflink", ""},
		{[]string{"--reflink=always", "--sparse=never", "a", "b"}, "--reflink=always can be used only with --sparse=auto", ""},
		{[]string{"--inplace", "--verify", "a", "b"}, "--verify cannot be combined with --inplace", ""},
		{[]string{"--resume", "--inplace", "a", "b"}, "--resume cannot be combined with --inplace", ""},
		{[]string{"--verbose=maybe", "a", "b"}, "invalid argument 'maybe' for '--verbose'", ""},
		{[]string{"--R", "a", "b"}, "unrecognized option '--R'", ""},
		{[]string{"--p", "a", "b"}, "unrecognized option '--p'", ""},
		{[]string{"--H=true", "a", "b"}, "unrecognized option '--H=true'", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := Parse(tt.args)
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse(%q) = %v, want a usage error", tt.args, err)
			}
			if ue.Msg != tt.msg {
				t.Errorf("message %q, want %q", ue.Msg, tt.msg)
			}
			if tt.hint != "" && ue.Hint != tt.hint {
				t.Errorf("hint %q, want %q", ue.Hint, tt.hint)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]int64{"0": 0, "1": 1, "4096": 4096, "4K": 4096, "4k": 4096, "4KiB": 4096, "4KB": 4096,
		"1M": 1 << 20, "3m": 3 << 20, "1G": 1 << 30, "2T": 2 << 40, "256MiB": 256 << 20, "7B": 7}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "1.5M", "-1", "1X", "M1", "1 M", "99999999999999999999", "9000000T", "1iB", "1Mi"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
	for n, want := range map[int64]string{1: "1", 4096: "4K", 1 << 30: "1G", 1500: "1500", 3 << 40: "3T"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// Every option of the flag set appears in --help.
func TestHelpNamesEveryOption(t *testing.T) {
	help := Help("fastcp")
	fs := newFlagSet(&Options{})
	n := 0
	for _, name := range FlagNames(fs) {
		n++
		if !strings.Contains(help, name) {
			t.Errorf("--help does not mention %s", name)
		}
	}
	if n < 30 {
		t.Errorf("only %d flags found", n)
	}
}
