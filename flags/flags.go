// SPDX-License-Identifier: MIT

// Package flags turns fastcp's argv into Options, as the man page
// (man/fastcp.1) describes them: GNU-style options parsed with pflag,
// bundled short options, "--", and cp's rules where options interact.
// Usage errors are *UsageError (exit 1, as cp).
package flags

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"fastcp/checksum"
	"fastcp/copier"
	"fastcp/durability"
	"fastcp/output"

	"github.com/spf13/pflag"
)

// Deref says which symbolic links in SOURCE are followed (-L, -P, -H).
type Deref int

// Dereference modes.
const (
	DerefDefault     Deref = iota // -P with -r, else follow
	DerefAlways                   // -L
	DerefNever                    // -P
	DerefCommandLine              // -H: follow links named on the command line only
)

// ProgressMode says whether the progress bar is drawn.
type ProgressMode int

// Progress modes.
const (
	ProgressAuto ProgressMode = iota // when stderr is a terminal
	ProgressOn                       // --progress, --progress=bar
	ProgressOff                      // --no-progress, -q
	ProgressJSON                     // --progress=json: one JSON object a line
)

// ProgressFormats are the values --progress takes ("bar" when bare).
var ProgressFormats = []string{"bar", "json"}

// Preserve lists the attributes --preserve keeps.
type Preserve struct {
	Mode, Ownership, Timestamps, Xattr bool
}

// Any reports whether any attribute is preserved.
func (p Preserve) Any() bool { return p.Mode || p.Ownership || p.Timestamps || p.Xattr }

// BackupMode is the kind of backup made of an existing DEST (-b).
type BackupMode int

// Backup modes (cp's version control).
const (
	BackupNone     BackupMode = iota // none, off: no backups
	BackupSimple                     // simple, never: DEST~ (the suffix)
	BackupExisting                   // existing, nil: numbered if DEST has numbered backups, else simple
	BackupNumbered                   // numbered, t: DEST.~N~
)

// Options is the parsed command line.
type Options struct {
	Recursive bool
	Preserve  Preserve
	Force     bool
	// Update is which existing DESTs are replaced (--update, -u, -n).
	Update UpdateMode
	// Interactive asks before replacing a DEST (-i); never set when Update
	// is UpdateNone or UpdateNoneFail.
	Interactive bool
	// TargetDirs are the -t DIRECTORYs, in the order given: every SOURCE
	// is copied into each (read once); none without -t.
	TargetDirs  []string
	NoTargetDir bool
	Deref       Deref

	// Link makes hard links (-l) or symbolic links (-s) instead of
	// copying file data.
	Link LinkMode
	// Backup names the backup made of each existing DEST before it is
	// replaced (-b, --backup, -S), with BackupSuffix for simple backups.
	Backup       BackupMode
	BackupSuffix string
	// Parents puts each SOURCE under DIRECTORY with its full name (--parents).
	Parents bool
	// RemoveDestination removes an existing DEST instead of writing
	// through it (--remove-destination; implied by -f with -l or -s).
	RemoveDestination bool
	// AttributesOnly copies attributes, not data (--attributes-only).
	AttributesOnly bool
	// NoPreserveMode: --no-preserve=mode (or all) was given, so new files
	// get the default permissions (0666, directories 0777) minus the umask,
	// not SOURCE's.
	NoPreserveMode bool
	// PreserveContext: --preserve=context asked for SELinux contexts.
	PreserveContext bool
	// CopyContents reads special files as data under -r (--copy-contents).
	CopyContents bool
	// KeepDirSymlink follows a symlink to a directory in DEST where SOURCE
	// has a directory (--keep-directory-symlink).
	KeepDirSymlink bool
	// OneFileSystem does not descend into other file systems (-x).
	OneFileSystem bool
	// StripTrailingSlashes removes trailing slashes from each SOURCE.
	StripTrailingSlashes bool
	// SetContext is -Z or --context; ContextArg says CTX was given
	// (--context=CTX), and Context is it.
	SetContext bool
	ContextArg bool
	Context    string
	// PosixlyCorrect: POSIXLY_CORRECT is set (a dangling symlink DEST is
	// written through; options end at the first operand).
	PosixlyCorrect bool
	// XattrExplicit: --preserve named xattr itself (not via all or -a), so
	// attributes the destination cannot hold are errors.
	XattrExplicit bool
	// HardLinks keeps hard links within a recursive copy (-a, as cp's -d).
	HardLinks bool
	Verbose   bool
	Debug     bool
	Quiet     bool
	Progress  ProgressMode

	Strategy   copier.Strategy
	Reflink    copier.ReflinkMode
	Sparse     copier.SparseMode
	BufferSize int

	Sync    durability.SyncMode
	InPlace bool
	NoCache bool
	Verify  bool
	// VerifySource (--verify=source): --verify reads SOURCE again too,
	// where with --checksum it would compare with the hash made during
	// the copy alone.
	VerifySource bool
	// Checksum is --checksum's algorithm (checksum.None: none): every
	// regular file's bytes are hashed in the same pass as the copy.
	Checksum checksum.Algorithm
	// ChecksumFile is where --checksum-file writes the manifest ("-":
	// standard output; "": none). It implies --checksum.
	ChecksumFile string
	// Resume continues an interrupted copy to the same DEST from its last
	// checkpoint (and, with -r, skips files already copied completely).
	Resume bool
	// Jobs is -j: how many files are copied at once; 0 when not given,
	// and cp then chooses (cp.Jobs).
	Jobs int

	Benchmark bool
	BenchSize int64
	BenchRuns int
	BenchFrom string
	JSON      bool

	Help    bool
	Version bool

	// Operands are the non-option arguments, in order.
	Operands []string
}

// UsageError is a command line that cannot be run: exit status 1, the
// message, then a hint line naming the fix.
type UsageError struct {
	Msg  string
	Hint string // defaults to "Try 'PROG --help' for more information."
}

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) *UsageError {
	return &UsageError{Msg: fmt.Sprintf(format, a...)}
}

// Default values of options that have one.
const (
	DefaultBenchSize = 256 << 20
	DefaultBenchRuns = 3
	maxBufferSize    = 1 << 30
)

// Env looks up an environment variable, as os.LookupEnv.
type Env func(name string) (string, bool)

// Parse parses args (without the program name), with cp's environment
// variables (POSIXLY_CORRECT, VERSION_CONTROL, SIMPLE_BACKUP_SUFFIX)
// taken from the process.
func Parse(args []string) (*Options, error) { return ParseEnv(args, os.LookupEnv) }

// ParseEnv is Parse with the environment given.
func ParseEnv(args []string, env Env) (*Options, error) {
	if onlyOperands(args) {
		// The common `fastcp SRC DST`: no option to look for, so no flag
		// set to build (a noticeable part of a small copy's time,
		// docs/measurements.md).
		o := defaultOptions()
		_, o.PosixlyCorrect = env("POSIXLY_CORRECT")
		o.Operands = slices.Clone(args)
		if err := o.check(&parseState{env: env}); err != nil {
			return nil, err
		}
		return o, nil
	}
	return parseOptions(args, env)
}

// parseState is what parsing needs beyond Options: cp resolves the backup
// type and suffix once every option is read.
type parseState struct {
	env            Env
	makeBackups    bool
	hardLink       bool   // -l
	symLink        bool   // -s
	versionControl string // --backup=CONTROL's CONTROL
	suffix         *string
	// -i and -n, the last one given (cp's x.interactive), and the last
	// --update's rule (UpdateAll when none is given): settled into Options
	// at the end.
	interactive interactiveMode
	update      UpdateMode
}

type interactiveMode int

const (
	interactiveUnset interactiveMode = iota
	interactiveAsk                   // -i
	interactiveSkip                  // -n
)

// settleUpdate turns -i, -n and --update into Options as cp 9.11 does: -n
// makes the update rule "none" whatever --update said; -i asks only when
// the update rule lets a DEST be replaced (all, or older when SOURCE is
// newer): --update=none skips silently and none-fail fails, unasked.
func (st *parseState) settleUpdate(o *Options) {
	upd := st.update
	if st.interactive == interactiveSkip {
		upd = UpdateNone
	}
	o.Interactive = st.interactive == interactiveAsk && upd.Replaces()
	o.Update = upd
}

// noValue is the value pflag gives an option with an optional argument
// given without one (-b, --backup, -u, -Z): no argument can contain NUL.
const noValue = "\x00"

func defaultOptions() *Options {
	return &Options{BenchSize: DefaultBenchSize, BenchRuns: DefaultBenchRuns}
}

// onlyOperands reports whether no argument can be an option: none starts
// with '-' (a lone "-", an operand, takes the long way too).
func onlyOperands(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

// parseOptions is ParseEnv with the flag set.
func parseOptions(args []string, env Env) (*Options, error) {
	o := defaultOptions()
	_, o.PosixlyCorrect = env("POSIXLY_CORRECT")
	st := &parseState{env: env}
	fs := newFlagSet(o, st)
	fs.SetInterspersed(!o.PosixlyCorrect)
	args, err := expandArgs(fs, args, o.PosixlyCorrect)
	if err != nil {
		return nil, err
	}
	if err := rejectShortAsLong(args); err != nil {
		return nil, err
	}
	err = fs.ParseAll(args, func(f *pflag.Flag, value string) error {
		if err := fs.Set(f.Name, value); err != nil {
			return err
		}
		// Options whose last occurrence wins over another option.
		switch f.Name {
		case "interactive":
			st.interactive = interactiveAsk
		case "no-clobber":
			st.interactive = interactiveSkip
		case "d":
			o.Deref = DerefNever
			o.HardLinks = true
		case "dereference":
			o.Deref = DerefAlways
		case "no-dereference":
			o.Deref = DerefNever
		case "H":
			o.Deref = DerefCommandLine
		case "archive":
			o.Recursive, o.HardLinks = true, true
			o.Deref = DerefNever
			o.Preserve = Preserve{true, true, true, true}
			o.NoPreserveMode = false
		case "p":
			o.Preserve.Mode, o.Preserve.Ownership, o.Preserve.Timestamps = true, true, true
			o.NoPreserveMode = false
		case "no-progress", "quiet":
			// -q against --progress: the last one given decides the bar
			// (-q's silence for warnings stays).
			o.Progress = ProgressOff
		}
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	st.settleUpdate(o)
	o.Operands = fs.Args()
	if o.Help || o.Version {
		return o, nil
	}
	if err := o.check(st); err != nil {
		return nil, err
	}
	return o, nil
}

// shortOnly are the options that exist only as a letter (-R, -H, -p): pflag
// needs a long name for them, which the user must not be able to type.
var shortOnly = []string{"R", "H", "p", "d"}

func rejectShortAsLong(args []string) error {
	for _, a := range args {
		if a == "--" {
			return nil
		}
		for _, n := range shortOnly {
			if a == "--"+n || strings.HasPrefix(a, "--"+n+"=") {
				return usagef("unrecognized option '%s'", a)
			}
		}
	}
	return nil
}

func (o *Options) check(st *parseState) error {
	// --debug prints the -v lines too.
	o.Verbose = o.Verbose || o.Debug
	// cp's checks, in cp's order.
	if st.hardLink && st.symLink {
		return usagef("cannot make both hard and symbolic links")
	}
	if st.hardLink {
		o.Link = LinkHard
	} else if st.symLink {
		o.Link = LinkSymbolic
	}
	if st.makeBackups && !o.Update.Replaces() {
		return usagef("cannot combine --backup with -n/--no-clobber or --update=none-fail")
	}
	if st.makeBackups {
		b, err := backupType(st)
		if err != nil {
			return err
		}
		o.Backup = b
		if b != BackupNone {
			o.BackupSuffix = backupSuffix(st)
		}
	}
	if o.Force && o.Link != LinkNone {
		// cp: with -f, a link is made after removing DEST.
		o.RemoveDestination = true
	}
	if err := o.checkCombinations(); err != nil {
		return err
	}
	if o.ChecksumFile != "" && o.Checksum == checksum.None {
		o.Checksum = checksum.Default
	}
	if o.Benchmark {
		if len(o.Operands) > 1 {
			return usagef("extra operand %s", output.Quote(o.Operands[1]))
		}
		return nil
	}
	if o.JSON {
		return &UsageError{Msg: "--json works only with --benchmark", Hint: "Add --benchmark, or drop --json."}
	}
	if len(o.TargetDirs) > 0 && o.NoTargetDir {
		return usagef("cannot combine --target-directory (-t) and --no-target-directory (-T)")
	}
	if err := o.checkTargets(); err != nil {
		return err
	}
	n := len(o.Operands)
	switch {
	case n == 0:
		return usagef("missing file operand")
	case n == 1 && len(o.TargetDirs) == 0:
		return usagef("missing destination file operand after %s", output.Quote(o.Operands[0]))
	case n > 2 && o.NoTargetDir:
		return usagef("extra operand %s", output.Quote(o.Operands[2]))
	}
	return nil
}

// HasTargetDir reports whether -t was given (once or more).
func (o *Options) HasTargetDir() bool { return len(o.TargetDirs) > 0 }

// checkTargets refuses a -t that names a directory given before by the
// same name (trailing slashes aside). The same directory by another name,
// a symbolic link or a bind mount, is found where the file system is
// looked at (cp.CheckUsage): names alone cannot tell ("b/../a" is not "a"
// when b is a symbolic link).
func (o *Options) checkTargets() error {
	seen := make(map[string]string, len(o.TargetDirs))
	for _, d := range o.TargetDirs {
		key := strings.TrimRight(d, "/")
		if key == "" && d != "" {
			key = "/"
		}
		if prev, ok := seen[key]; ok {
			return SameTargetError(prev, d)
		}
		seen[key] = d
	}
	return nil
}

// SameTargetError is the usage error of two -t options naming one
// directory.
func SameTargetError(first, second string) *UsageError {
	what := output.Quote(first)
	if second != first {
		what += " and " + output.Quote(second)
	}
	return &UsageError{
		Msg:  fmt.Sprintf("--target-directory (-t) names the same directory twice: %s", what),
		Hint: "Each -t DIRECTORY gets a copy of every SOURCE; name each directory once.",
	}
}

// checkCombinations refuses options that cannot work together: a
// --strategy or --sparse with --reflink, --inplace with what needs a
// temporary file (a backup, --remove-destination, --verify, --resume),
// --attributes-only with what copies data.
func (o *Options) checkCombinations() error {
	if o.Reflink == copier.ReflinkAlways && o.Strategy != copier.Auto && o.Strategy != copier.Reflink {
		return &UsageError{
			Msg:  fmt.Sprintf("--reflink=always cannot be combined with --strategy=%s", o.Strategy),
			Hint: "Use --strategy=reflink, or drop one of the two options.",
		}
	}
	if o.Reflink == copier.ReflinkNever && o.Strategy == copier.Reflink {
		return &UsageError{
			Msg:  "--reflink=never cannot be combined with --strategy=reflink",
			Hint: "Use another --strategy, or drop --reflink=never.",
		}
	}
	if o.Reflink == copier.ReflinkAlways && o.Sparse != copier.SparseAuto {
		return &UsageError{
			Msg:  "--reflink=always can be used only with --sparse=auto",
			Hint: "A clone keeps the source's holes as they are; drop --sparse.",
		}
	}
	if o.InPlace && o.Backup != BackupNone {
		return &UsageError{
			Msg:  "--backup cannot be combined with --inplace",
			Hint: "The backup is the old DEST's inode, which --inplace would write into; drop one of the two.",
		}
	}
	if o.InPlace && o.RemoveDestination && o.Link == LinkNone {
		return &UsageError{
			Msg:  "--remove-destination cannot be combined with --inplace",
			Hint: "--inplace writes into the existing DEST; drop one of the two.",
		}
	}
	if o.AttributesOnly && (o.Verify || o.Resume) {
		opt := "--verify"
		if !o.Verify {
			opt = "--resume"
		}
		return &UsageError{
			Msg:  opt + " cannot be combined with --attributes-only",
			Hint: "--attributes-only copies no data; drop one of the two.",
		}
	}
	if o.InPlace && o.Verify {
		return &UsageError{
			Msg:  "--verify cannot be combined with --inplace",
			Hint: "--verify keeps the old DEST on a mismatch, which needs a temporary file; drop --inplace.",
		}
	}
	if o.Checksum != checksum.None || o.ChecksumFile != "" {
		opt := "--checksum"
		if o.Checksum == checksum.None {
			opt = "--checksum-file"
		}
		switch {
		case o.AttributesOnly:
			return &UsageError{
				Msg:  opt + " cannot be combined with --attributes-only",
				Hint: "--attributes-only copies no data to hash; drop one of the two.",
			}
		case o.Link != LinkNone:
			return &UsageError{
				Msg:  fmt.Sprintf("%s cannot be combined with %s", opt, map[LinkMode]string{LinkHard: "--link", LinkSymbolic: "--symbolic-link"}[o.Link]),
				Hint: "Links copy no data to hash; drop one of the two.",
			}
		}
	}
	if o.InPlace && o.Resume {
		return &UsageError{
			Msg:  "--resume cannot be combined with --inplace",
			Hint: "--resume continues a temporary file, and --inplace writes none; drop one of the two options.",
		}
	}
	return nil
}

// translate rewords pflag's errors the way cp words them.
func translate(err error) error {
	var ne *pflag.NotExistError
	var ve *pflag.ValueRequiredError
	var ie *pflag.InvalidValueError
	var se *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &ne):
		if s := ne.GetSpecifiedShortnames(); s != "" {
			return usagef("invalid option -- '%s'", ne.GetSpecifiedName())
		}
		return usagef("unrecognized option '--%s'", ne.GetSpecifiedName())
	case errors.As(err, &ve):
		if s := ve.GetSpecifiedShortnames(); s != "" {
			return usagef("option requires an argument -- '%s'", ve.GetSpecifiedName())
		}
		return usagef("option '--%s' requires an argument", ve.GetSpecifiedName())
	case errors.As(err, &ie):
		var ue *UsageError
		if errors.As(ie.Unwrap(), &ue) {
			return ue
		}
		return usagef("invalid argument %s for '--%s'", output.Quote(ie.GetValue()), ie.GetFlag().Name)
	case errors.As(err, &se):
		return usagef("bad option syntax %s", output.Quote(se.GetSpecifiedFlag()))
	}
	return usagef("%s", err.Error())
}
