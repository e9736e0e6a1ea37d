// SPDX-License-Identifier: MIT

package flags

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"fastcp/checksum"
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
		{[]string{"-n", "a", "b"}, func(o *Options) bool { return o.Update == UpdateNone && !o.Interactive }},
		{[]string{"-i", "a", "b"}, func(o *Options) bool { return o.Interactive && o.Update != UpdateNone }},
		{[]string{"-i", "-n", "a", "b"}, func(o *Options) bool { return o.Update == UpdateNone && !o.Interactive }},
		{[]string{"-n", "-i", "a", "b"}, func(o *Options) bool { return o.Interactive && o.Update != UpdateNone }},
		{[]string{"-u", "a", "b"}, func(o *Options) bool { return o.Update == UpdateOlder }},
		{[]string{"--update", "a", "b"}, func(o *Options) bool { return o.Update == UpdateOlder }},
		{[]string{"-t", "dir", "a", "b"}, func(o *Options) bool {
			return reflect.DeepEqual(o.TargetDirs, []string{"dir"}) && reflect.DeepEqual(o.Operands, []string{"a", "b"})
		}},
		{[]string{"--target-directory=dir", "a"}, func(o *Options) bool { return reflect.DeepEqual(o.TargetDirs, []string{"dir"}) }},
		{[]string{"-tdir", "a"}, func(o *Options) bool { return reflect.DeepEqual(o.TargetDirs, []string{"dir"}) }},
		{[]string{"-t", "d1", "a", "--target-directory=d2", "-td3", "b"}, func(o *Options) bool {
			return reflect.DeepEqual(o.TargetDirs, []string{"d1", "d2", "d3"}) && reflect.DeepEqual(o.Operands, []string{"a", "b"})
		}},
		{[]string{"-t", "", "a"}, func(o *Options) bool { return reflect.DeepEqual(o.TargetDirs, []string{""}) }},
		{[]string{"a", "b"}, func(o *Options) bool { return o.TargetDirs == nil && !o.HasTargetDir() }},
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
		{[]string{"--progress", "-q", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Progress == ProgressOff }},
		{[]string{"--progress", "-vq", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Verbose && o.Progress == ProgressOff }},
		{[]string{"--progress", "--quiet", "--no-progress", "--progress", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Progress == ProgressOn }},
		{[]string{"-q", "--no-progress", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Progress == ProgressOff }},
		{[]string{"--progress=json", "a", "b"}, func(o *Options) bool { return o.Progress == ProgressJSON }},
		{[]string{"--progress=j", "a", "b"}, func(o *Options) bool { return o.Progress == ProgressJSON }},
		{[]string{"--progress=bar", "a", "b"}, func(o *Options) bool { return o.Progress == ProgressOn }},
		{[]string{"--progress=json", "--progress", "a", "b"}, func(o *Options) bool { return o.Progress == ProgressOn }},
		{[]string{"--progress", "json", "b"}, func(o *Options) bool {
			return o.Progress == ProgressOn && len(o.Operands) == 2 && o.Operands[0] == "json"
		}},
		{[]string{"-q", "--progress=json", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Progress == ProgressJSON }},
		{[]string{"--progress=json", "-q", "a", "b"}, func(o *Options) bool { return o.Quiet && o.Progress == ProgressOff }},
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
		{[]string{"--verify", "a", "b"}, func(o *Options) bool { return o.Verify && !o.VerifySource }},
		{[]string{"--verify=dest", "a", "b"}, func(o *Options) bool { return o.Verify && !o.VerifySource }},
		{[]string{"--verify=source", "a", "b"}, func(o *Options) bool { return o.Verify && o.VerifySource }},
		{[]string{"--verify=s", "a", "b"}, func(o *Options) bool { return o.Verify && o.VerifySource }},
		{[]string{"--veri", "source", "b"}, func(o *Options) bool { return o.Verify && !o.VerifySource && o.Operands[0] == "source" }},
		{[]string{"a", "b"}, func(o *Options) bool { return o.Checksum == checksum.None && o.ChecksumFile == "" }},
		{[]string{"--checksum", "a", "b"}, func(o *Options) bool { return o.Checksum == checksum.SHA256 && o.ChecksumFile == "" }},
		{[]string{"--checksum=sha512", "a", "b"}, func(o *Options) bool { return o.Checksum == checksum.SHA512 }},
		{[]string{"--checksum=sha5", "a", "b"}, func(o *Options) bool { return o.Checksum == checksum.SHA512 }},
		{[]string{"--checksum-file=S", "a", "b"}, func(o *Options) bool { return o.Checksum == checksum.SHA256 && o.ChecksumFile == "S" }},
		{[]string{"--checksum-file", "-", "a", "b"}, func(o *Options) bool { return o.ChecksumFile == "-" && len(o.Operands) == 2 }},
		{[]string{"--checksum-f=S", "--checksum=sha512", "a", "b"}, func(o *Options) bool { return o.Checksum == checksum.SHA512 && o.ChecksumFile == "S" }},
		{[]string{"--checksum", "--verify=source", "a", "b"}, func(o *Options) bool { return o.Checksum == checksum.SHA256 && o.VerifySource }},
		{[]string{"--resume", "a", "b"}, func(o *Options) bool { return o.Resume && !o.Verify }},
		{[]string{"-r", "--resume", "--sync=data", "a", "b"}, func(o *Options) bool { return o.Resume && o.Recursive && o.Sync == durability.SyncData }},
		{[]string{"-j", "4", "a", "b"}, func(o *Options) bool { return o.Jobs == 4 }},
		{[]string{"-j4", "a", "b"}, func(o *Options) bool { return o.Jobs == 4 }},
		{[]string{"--jobs=8", "a", "b"}, func(o *Options) bool { return o.Jobs == 8 }},
		{[]string{"a", "b"}, func(o *Options) bool {
			return o.Jobs == 0 && o.Strategy == copier.Auto && o.Sync == durability.SyncNone && o.Deref == DerefDefault
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
		{[]string{"-vt", "dir", "a"}, func(o *Options) bool { return o.Verbose && reflect.DeepEqual(o.TargetDirs, []string{"dir"}) }},
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
		{[]string{"-t", "d", "-t", "e", "-T", "a"}, "cannot combine --target-directory (-t) and --no-target-directory (-T)", ""},
		{[]string{"-t", "d", "-t", "e", "-t", "d", "a"}, "--target-directory (-t) names the same directory twice: 'd'",
			"Each -t DIRECTORY gets a copy of every SOURCE; name each directory once."},
		{[]string{"-t", "d/", "--target-directory=d//", "a"}, "--target-directory (-t) names the same directory twice: 'd/' and 'd//'",
			"Each -t DIRECTORY gets a copy of every SOURCE; name each directory once."},
		{[]string{"--bogus", "a", "b"}, "unrecognized option '--bogus'", ""},
		{[]string{"-z", "a", "b"}, "invalid option -- 'z'", ""},
		{[]string{"-rz", "a", "b"}, "invalid option -- 'z'", ""},
		{[]string{"-t"}, "option requires an argument -- 't'", ""},
		{[]string{"a", "--target-directory"}, "option '--target-directory' requires an argument", ""},
		{[]string{"--strategy=fast", "a", "b"}, "invalid argument 'fast' for '--strategy'",
			"Valid arguments are:\n  - 'auto'\n  - 'reflink'\n  - 'copy_file_range'\n  - 'direct'\n  - 'sendfile'\n  - 'splice'\n  - 'rw'"},
		{[]string{"--reflink=sometimes", "a", "b"}, "invalid argument 'sometimes' for '--reflink'",
			"Valid arguments are:\n  - 'auto'\n  - 'always'\n  - 'never'"},
		{[]string{"--sparse=", "a", "b"}, "ambiguous argument '' for '--sparse'",
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
		{[]string{"--inplace", "--verify=source", "a", "b"}, "--verify cannot be combined with --inplace", ""},
		{[]string{"--verify=both", "a", "b"}, "invalid argument 'both' for '--verify'", "Valid arguments are:\n  - 'dest'\n  - 'source'"},
		{[]string{"--progress=xml", "a", "b"}, "invalid argument 'xml' for '--progress'", "Valid arguments are:\n  - 'bar'\n  - 'json'"},
		{[]string{"--checksum=md5", "a", "b"}, "invalid argument 'md5' for '--checksum'", "Valid arguments are:\n  - 'sha256'\n  - 'sha512'"},
		{[]string{"--checksum=sha", "a", "b"}, "ambiguous argument 'sha' for '--checksum'", ""},
		{[]string{"--checksum=", "a", "b"}, "ambiguous argument '' for '--checksum'", ""},
		{[]string{"--checksum-file=", "a", "b"}, "invalid --checksum-file argument ''", "FILE is the manifest's name, or - for standard output."},
		{[]string{"--checksum-file"}, "option '--checksum-file' requires an argument", ""},
		{[]string{"--check", "a", "b"}, "option '--check' is ambiguous; possibilities: '--checksum' '--checksum-file'", ""},
		{[]string{"--checksum", "--attributes-only", "a", "b"}, "--checksum cannot be combined with --attributes-only", ""},
		{[]string{"--checksum-file=S", "--attributes-only", "a", "b"}, "--checksum-file cannot be combined with --attributes-only", ""},
		{[]string{"--checksum", "-l", "a", "b"}, "--checksum cannot be combined with --link", ""},
		{[]string{"--checksum-file=S", "-s", "a", "b"}, "--checksum-file cannot be combined with --symbolic-link", ""},
		{[]string{"--resume", "--inplace", "a", "b"}, "--resume cannot be combined with --inplace", ""},
		{[]string{"--verbose=maybe", "a", "b"}, "option '--verbose' doesn't allow an argument", ""},
		{[]string{"--R", "a", "b"}, "unrecognized option '--R'", ""},
		{[]string{"--p", "a", "b"}, "option '--p' is ambiguous; possibilities: '--parents' '--preserve'", ""},
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
	fs := newFlagSet(&Options{}, &parseState{})
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

// noEnv is an environment without any variable.
func noEnv(string) (string, bool) { return "", false }

// The options of cp 9.11 that fastcp took as typos before.
func TestCpOptions(t *testing.T) {
	all := Preserve{true, true, true, true}
	tests := []struct {
		args  []string
		env   map[string]string
		check func(o *Options) bool
	}{
		{[]string{"-d", "a", "b"}, nil, func(o *Options) bool { return o.Deref == DerefNever && o.HardLinks && !o.Preserve.Any() }},
		{[]string{"-l", "a", "b"}, nil, func(o *Options) bool { return o.Link == LinkHard && !o.RemoveDestination }},
		{[]string{"--link", "-f", "a", "b"}, nil, func(o *Options) bool { return o.Link == LinkHard && o.RemoveDestination }},
		{[]string{"-s", "a", "b"}, nil, func(o *Options) bool { return o.Link == LinkSymbolic }},
		{[]string{"--symbolic-link", "a", "b"}, nil, func(o *Options) bool { return o.Link == LinkSymbolic }},
		{[]string{"-b", "a", "b"}, nil, func(o *Options) bool { return o.Backup == BackupExisting && o.BackupSuffix == "~" }},
		{[]string{"--backup", "a", "b"}, map[string]string{"VERSION_CONTROL": "t"}, func(o *Options) bool { return o.Backup == BackupNumbered }},
		{[]string{"-b", "a", "b"}, map[string]string{"VERSION_CONTROL": "never"}, func(o *Options) bool { return o.Backup == BackupSimple }},
		{[]string{"--backup=", "a", "b"}, map[string]string{"VERSION_CONTROL": "simple"}, func(o *Options) bool { return o.Backup == BackupSimple }},
		{[]string{"--backup=numbered", "a", "b"}, map[string]string{"VERSION_CONTROL": "simple"}, func(o *Options) bool { return o.Backup == BackupNumbered }},
		{[]string{"--backup=nu", "-b", "a", "b"}, nil, func(o *Options) bool { return o.Backup == BackupNumbered }},
		{[]string{"--backup=off", "a", "b"}, nil, func(o *Options) bool { return o.Backup == BackupNone && o.BackupSuffix == "" }},
		{[]string{"--backup=nil", "a", "b"}, nil, func(o *Options) bool { return o.Backup == BackupExisting }},
		{[]string{"-S", ".bak", "a", "b"}, nil, func(o *Options) bool { return o.Backup == BackupExisting && o.BackupSuffix == ".bak" }},
		{[]string{"-b", "a", "b"}, map[string]string{"SIMPLE_BACKUP_SUFFIX": ".old"}, func(o *Options) bool { return o.BackupSuffix == ".old" }},
		{[]string{"--suffix=.x", "a", "b"}, map[string]string{"SIMPLE_BACKUP_SUFFIX": ".old"}, func(o *Options) bool { return o.BackupSuffix == ".x" }},
		{[]string{"-S", "a/b", "a", "b"}, nil, func(o *Options) bool { return o.BackupSuffix == "~" }},
		{[]string{"-S", "", "a", "b"}, nil, func(o *Options) bool { return o.BackupSuffix == "~" }},
		{[]string{"--parents", "a", "d"}, nil, func(o *Options) bool { return o.Parents }},
		{[]string{"--path", "a", "d"}, nil, func(o *Options) bool { return o.Parents }},
		{[]string{"--remove-destination", "a", "b"}, nil, func(o *Options) bool { return o.RemoveDestination && !o.Force }},
		{[]string{"--attributes-only", "a", "b"}, nil, func(o *Options) bool { return o.AttributesOnly }},
		{[]string{"-a", "--no-preserve=mode", "a", "b"}, nil, func(o *Options) bool {
			return o.NoPreserveMode && !o.Preserve.Mode && o.Preserve.Ownership && o.HardLinks
		}},
		{[]string{"-a", "--no-preserve=all", "a", "b"}, nil, func(o *Options) bool {
			return !o.Preserve.Any() && !o.HardLinks && o.NoPreserveMode && o.Recursive
		}},
		{[]string{"--no-preserve=mode", "-a", "a", "b"}, nil, func(o *Options) bool { return o.Preserve == all && !o.NoPreserveMode }},
		{[]string{"-a", "--no-preserve=links,xattr", "a", "b"}, nil, func(o *Options) bool { return !o.HardLinks && !o.Preserve.Xattr && o.Preserve.Mode }},
		{[]string{"--preserve=context", "a", "b"}, nil, func(o *Options) bool { return o.PreserveContext && !o.Preserve.Any() }},
		{[]string{"--preserve=links", "a", "b"}, nil, func(o *Options) bool { return o.HardLinks }},
		{[]string{"--update=all", "a", "b"}, nil, func(o *Options) bool {
			return o.Update != UpdateOlder && o.Update != UpdateNone && o.Update != UpdateNoneFail
		}},
		{[]string{"--update=none", "a", "b"}, nil, func(o *Options) bool { return o.Update != UpdateOlder && o.Update == UpdateNone }},
		{[]string{"--update=none-fail", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateNoneFail && o.Update != UpdateNone }},
		{[]string{"--update=older", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateOlder }},
		{[]string{"--update", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateOlder }},
		{[]string{"-u", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateOlder }},
		// -n takes precedence over any --update.
		{[]string{"-n", "--update=all", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateNone && o.Update != UpdateOlder }},
		{[]string{"-n", "--update=none-fail", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateNone && o.Update != UpdateNoneFail }},
		{[]string{"--update=older", "-n", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateNone }},
		// --update no longer overrides -i (9.5); none and none-fail skip
		// unasked, whichever comes first (cp 9.11's copy.c checks them
		// before -i).
		{[]string{"-i", "--update=all", "a", "b"}, nil, func(o *Options) bool { return o.Interactive }},
		{[]string{"-i", "--update=older", "a", "b"}, nil, func(o *Options) bool { return o.Interactive && o.Update == UpdateOlder }},
		{[]string{"-i", "-u", "a", "b"}, nil, func(o *Options) bool { return o.Interactive && o.Update == UpdateOlder }},
		{[]string{"-i", "--update=none", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateNone && !o.Interactive }},
		{[]string{"-i", "--update=none-fail", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateNoneFail && !o.Interactive }},
		{[]string{"--update=none-fail", "-i", "a", "b"}, nil, func(o *Options) bool { return !o.Interactive && o.Update == UpdateNoneFail }},
		{[]string{"--update=none", "-i", "a", "b"}, nil, func(o *Options) bool { return !o.Interactive && o.Update == UpdateNone }},
		{[]string{"-n", "--update=none", "-i", "a", "b"}, nil, func(o *Options) bool { return !o.Interactive && o.Update == UpdateNone }},
		{[]string{"-n", "-i", "a", "b"}, nil, func(o *Options) bool { return o.Interactive && o.Update != UpdateNone }},
		{[]string{"--update=none-fail", "--update=older", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateOlder && o.Update != UpdateNoneFail }},
		// -u is --update=older, the last --update (cp 9.11's cp.c).
		{[]string{"--update=none-fail", "-u", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateOlder && o.Update != UpdateNoneFail }},
		{[]string{"--copy-contents", "-r", "a", "b"}, nil, func(o *Options) bool { return o.CopyContents }},
		{[]string{"--keep-directory-symlink", "a", "b"}, nil, func(o *Options) bool { return o.KeepDirSymlink }},
		{[]string{"-x", "a", "b"}, nil, func(o *Options) bool { return o.OneFileSystem }},
		{[]string{"--one-file-system", "a", "b"}, nil, func(o *Options) bool { return o.OneFileSystem }},
		{[]string{"--strip-trailing-slashes", "a/", "b"}, nil, func(o *Options) bool { return o.StripTrailingSlashes }},
		{[]string{"-Z", "a", "b"}, nil, func(o *Options) bool { return o.SetContext && !o.ContextArg }},
		{[]string{"--context", "a", "b"}, nil, func(o *Options) bool { return o.SetContext && !o.ContextArg && len(o.Operands) == 2 }},
		{[]string{"--context=u:r:t:s0", "a", "b"}, nil, func(o *Options) bool { return o.ContextArg && o.Context == "u:r:t:s0" }},
		{[]string{"-Zr", "a", "b"}, nil, func(o *Options) bool { return o.SetContext && o.Recursive }},
		// Abbreviations, of options and of their arguments.
		{[]string{"--verb", "--recur", "a", "b"}, nil, func(o *Options) bool { return o.Verbose && o.Recursive }},
		{[]string{"--preserve=mod,own", "a", "b"}, nil, func(o *Options) bool { return o.Preserve == Preserve{Mode: true, Ownership: true} }},
		{[]string{"--reflink=alway", "a", "b"}, nil, func(o *Options) bool { return o.Reflink == copier.ReflinkAlways }},
		{[]string{"--ref=n", "a", "b"}, nil, func(o *Options) bool { return o.Reflink == copier.ReflinkNever }},
		{[]string{"--sp", "al", "a", "b"}, nil, func(o *Options) bool { return o.Sparse == copier.SparseAlways }},
		{[]string{"--strat=copy", "a", "b"}, nil, func(o *Options) bool { return o.Strategy == copier.CopyFileRange }},
		{[]string{"--sync=o", "a", "b"}, nil, func(o *Options) bool { return false }},
		{[]string{"--targ", "d", "a"}, nil, func(o *Options) bool { return reflect.DeepEqual(o.TargetDirs, []string{"d"}) }},
		{[]string{"-t", "--verb", "a"}, nil, func(o *Options) bool { return reflect.DeepEqual(o.TargetDirs, []string{"--verb"}) && !o.Verbose }},
		{[]string{"-S", "--re", "a", "b"}, nil, func(o *Options) bool { return o.BackupSuffix == "--re" }},
		{[]string{"--up=non", "a", "b"}, nil, func(o *Options) bool { return false }},
		{[]string{"--up=none-", "a", "b"}, nil, func(o *Options) bool { return o.Update == UpdateNoneFail }},
		// A prefix of one of cp's options means it, as in cp, even where
		// fastcp's own options share it.
		{[]string{"--b=simple", "a", "b"}, nil, func(o *Options) bool { return o.Backup == BackupSimple }},
		{[]string{"--in", "a", "b"}, nil, func(o *Options) bool { return o.Interactive && !o.InPlace }},
		{[]string{"--inp", "a", "b"}, nil, func(o *Options) bool { return o.InPlace }},
		{[]string{"--str", "a", "b"}, nil, func(o *Options) bool { return o.StripTrailingSlashes }},
		{[]string{"--stra=rw", "a", "b"}, nil, func(o *Options) bool { return o.Strategy == copier.RW }},
		{[]string{"--no-pro", "a", "b"}, nil, func(o *Options) bool { return o.Progress == ProgressOff }},
		{[]string{"--jo=2", "--q", "a", "b"}, nil, func(o *Options) bool { return o.Jobs == 2 && o.Quiet }},
		{[]string{"--", "--verb", "b"}, nil, func(o *Options) bool { return !o.Verbose && o.Operands[0] == "--verb" }},
		// POSIXLY_CORRECT: options end at the first operand.
		{[]string{"a", "b", "-v"}, map[string]string{"POSIXLY_CORRECT": ""}, func(o *Options) bool {
			return o.PosixlyCorrect && !o.Verbose && reflect.DeepEqual(o.Operands, []string{"a", "b", "-v"})
		}},
		{[]string{"-v", "a", "b"}, map[string]string{"POSIXLY_CORRECT": "1"}, func(o *Options) bool { return o.PosixlyCorrect && o.Verbose }},
		{[]string{"a", "b"}, map[string]string{"POSIXLY_CORRECT": "1"}, func(o *Options) bool { return o.PosixlyCorrect }},
		{[]string{"a", "b"}, nil, func(o *Options) bool { return !o.PosixlyCorrect }},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := ParseEnv(tt.args, func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			ok := err == nil && tt.check(o)
			if strings.Join(tt.args, " ") == "--sync=o a b" || strings.Join(tt.args, " ") == "--up=non a b" {
				// Ambiguous: osync and odsync; none and none-fail.
				ok = err != nil && strings.HasPrefix(err.Error(), "ambiguous argument")
			}
			if !ok {
				t.Errorf("ParseEnv(%q, %v) = %+v, %v", tt.args, tt.env, o, err)
			}
		})
	}
}

func TestCpUsageErrors(t *testing.T) {
	tests := []struct {
		args      []string
		env       map[string]string
		msg, hint string
	}{
		{[]string{"--re", "a", "b"}, nil, "option '--re' is ambiguous; possibilities: '--recursive' '--remove-destination' '--reflink'", ""},
		{[]string{"--re=x", "a", "b"}, nil, "option '--re=x' is ambiguous; possibilities: '--recursive' '--remove-destination' '--reflink'", ""},
		{[]string{"--de", "a", "b"}, nil, "option '--de' is ambiguous; possibilities: '--debug' '--dereference'", ""},
		{[]string{"--no-", "a", "b"}, nil, "option '--no-' is ambiguous; possibilities: '--no-clobber' '--no-dereference' '--no-preserve' '--no-target-directory'", ""},
		// fastcp's own options, where no option of cp matches.
		{[]string{"--bench-", "--benchmark"}, nil, "option '--bench-' is ambiguous; possibilities: '--bench-size' '--bench-runs' '--bench-from'", ""},
		{[]string{"--no-pr"}, nil, "option '--no-preserve' requires an argument", ""},
		{[]string{"--j=2", "a", "b"}, nil, "option '--j=2' is ambiguous; possibilities: '--jobs' '--json'", ""},
		{[]string{"--verb=x", "a", "b"}, nil, "option '--verbose' doesn't allow an argument", ""},
		{[]string{"--suf"}, nil, "option '--suffix' requires an argument", ""},
		{[]string{"--bogus"}, nil, "unrecognized option '--bogus'", ""},
		{[]string{"-ls", "a", "b"}, nil, "cannot make both hard and symbolic links", ""},
		{[]string{"-b", "--inplace", "a", "b"}, nil, "--backup cannot be combined with --inplace", ""},
		{[]string{"--attributes-only", "--verify", "a", "b"}, nil, "--verify cannot be combined with --attributes-only", ""},
		{[]string{"--attributes-only", "--resume", "a", "b"}, nil, "--resume cannot be combined with --attributes-only", ""},
		{[]string{"--remove-destination", "--inplace", "a", "b"}, nil, "--remove-destination cannot be combined with --inplace", ""},
		{[]string{"-bn", "a", "b"}, nil, "cannot combine --backup with -n/--no-clobber or --update=none-fail", ""},
		{[]string{"-b", "--update=none-fail", "a", "b"}, nil, "cannot combine --backup with -n/--no-clobber or --update=none-fail", ""},
		{[]string{"-b", "--update=none", "a", "b"}, nil, "cannot combine --backup with -n/--no-clobber or --update=none-fail", ""},
		{[]string{"--backup=n", "a", "b"}, nil, "ambiguous argument 'n' for 'backup type'",
			"Valid arguments are:\n  - 'none', 'off'\n  - 'simple', 'never'\n  - 'existing', 'nil'\n  - 'numbered', 't'"},
		{[]string{"--backup=bogus", "a", "b"}, nil, "invalid argument 'bogus' for 'backup type'", ""},
		{[]string{"-b", "a", "b"}, map[string]string{"VERSION_CONTROL": "x"}, "invalid argument 'x' for '$VERSION_CONTROL'", ""},
		{[]string{"--update=sometimes", "a", "b"}, nil, "invalid argument 'sometimes' for '--update'",
			"Valid arguments are:\n  - 'all'\n  - 'none'\n  - 'none-fail'\n  - 'older'"},
		{[]string{"--preserve=", "a", "b"}, nil, "ambiguous argument '' for '--preserve'", ""},
		{[]string{"--no-preserve=color", "a", "b"}, nil, "invalid argument 'color' for '--no-preserve'", ""},
		// The value is the next argument: "a" is all.
		{[]string{"--no-preserve", "a", "b"}, nil, "missing destination file operand after 'b'", ""},
		{[]string{"--reflink=a", "a", "b"}, nil, "ambiguous argument 'a' for '--reflink'", ""},
		{[]string{"--d", "a", "b"}, nil, "option '--d' is ambiguous; possibilities: '--debug' '--dereference'", ""},
		{[]string{"--H", "a", "b"}, nil, "unrecognized option '--H'", ""},
		{[]string{"a", "b", "c", "-T"}, map[string]string{"POSIXLY_CORRECT": ""}, "", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := ParseEnv(tt.args, func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.msg == "" {
				if err != nil {
					t.Errorf("ParseEnv(%q): %v, want no error", tt.args, err)
				}
				return
			}
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("ParseEnv(%q) = %v, want a usage error", tt.args, err)
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

// The hint after a bad SIZE names every suffix ParseSize takes: each letter
// that makes "1X" a size, and the B and iB that may follow one.
func TestSizeHintNamesEverySuffix(t *testing.T) {
	_, err := Parse([]string{"--buffer-size=12Q", "a", "b"})
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Hint != SizeHint {
		t.Fatalf("--buffer-size=12Q: %v, want a usage error with SizeHint", err)
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(SizeHint, func(r rune) bool { return r == ' ' || r == ',' || r == '(' || r == ')' || r == ':' || r == '.' }) {
		words[w] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		letter := string(c)
		if _, err := ParseSize("1" + letter); err == nil && !words[letter] {
			t.Errorf("ParseSize takes 1%s, and the hint %q does not name %s", letter, SizeHint, letter)
		}
		for _, after := range []string{"B", "iB"} {
			if _, err := ParseSize("1" + letter + after); err == nil && letter != "B" && !words[after] {
				t.Errorf("ParseSize takes 1%s%s, and the hint does not name %s", letter, after, after)
			}
		}
		if _, err := ParseSize("1" + strings.ToLower(letter)); err == nil && !strings.Contains(SizeHint, "either case") {
			t.Errorf("ParseSize takes 1%s, and the hint does not say either case does", strings.ToLower(letter))
		}
	}
}
