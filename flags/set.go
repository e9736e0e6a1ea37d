// SPDX-License-Identifier: MIT

package flags

import (
	"io"
	"math"

	"fastcp/checksum"
	"fastcp/copier"
	"fastcp/durability"

	"github.com/spf13/pflag"
)

func newFlagSet(o *Options, st *parseState) *pflag.FlagSet {
	fs := pflag.NewFlagSet("fastcp", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.BoolVarP(&o.Recursive, "recursive", "r", false, "copy directories recursively")
	fs.BoolVarP(&o.Recursive, "R", "R", false, "same as -r")
	fs.BoolP("archive", "a", false, "same as -r -P --preserve=all (hard links within the tree kept)")
	fs.BoolP("p", "p", false, "same as --preserve=mode,ownership,timestamps")
	fs.BoolP("d", "d", false, "same as --no-dereference --preserve=links")
	fs.Var(&preserveValue{o: o, on: true}, "preserve", "preserve the attributes in LIST: mode,timestamps,ownership,links,context,xattr,all")
	fs.Lookup("preserve").NoOptDefVal = "mode,ownership,timestamps"
	fs.Var(&preserveValue{o: o}, "no-preserve", "do not preserve the attributes in LIST")
	fs.BoolVar(&o.AttributesOnly, "attributes-only", false, "copy attributes, not data")
	fs.BoolVarP(&st.hardLink, "link", "l", false, "make hard links instead of copying")
	fs.BoolVarP(&st.symLink, "symbolic-link", "s", false, "make symbolic links instead of copying")
	fs.BoolVar(&o.Parents, "parents", false, "use the full source file name under DIRECTORY")
	fs.BoolVar(&o.CopyContents, "copy-contents", false, "copy the contents of special files when recursive")
	fs.BoolVar(&o.KeepDirSymlink, "keep-directory-symlink", false, "follow existing symlinks to directories in DEST")
	fs.BoolVarP(&o.OneFileSystem, "one-file-system", "x", false, "stay on this file system")
	fs.BoolVar(&o.StripTrailingSlashes, "strip-trailing-slashes", false, "remove trailing slashes from each SOURCE")
	fs.VarP(&contextValue{o}, "context", "Z", "SELinux context (without SELinux: ignored, as by cp)")
	fs.Lookup("context").NoOptDefVal = noValue
	fs.VarP(&targetsValue{o}, "target-directory", "t", "copy all SOURCEs into DIRECTORY; repeated, into each DIRECTORY (SOURCE read once)")
	fs.BoolVarP(&o.NoTargetDir, "no-target-directory", "T", false, "treat DEST as a normal file")
	fs.BoolP("dereference", "L", false, "always follow symbolic links in SOURCE")
	fs.BoolP("no-dereference", "P", false, "never follow symbolic links in SOURCE")
	fs.BoolP("H", "H", false, "follow symbolic links named on the command line")
	fs.VarP(&updateValue{st}, "update", "u", "which existing DESTs are replaced: all, none, none-fail, older (-u)")
	fs.Lookup("update").NoOptDefVal = noValue
	fs.Var(newEnum(&o.Strategy, copier.StrategyNames(), "strategy"), "strategy", "copy mechanism: auto, reflink, copy_file_range, direct, sendfile, splice, rw")
	fs.Var(newEnum(&o.Reflink, copier.ReflinkNames, "reflink"), "reflink", "share extents: auto, always (bare --reflink), never")
	fs.Lookup("reflink").NoOptDefVal = "always"
	fs.Var(newEnum(&o.Sparse, copier.SparseNames, "sparse"), "sparse", "holes: auto (keep them), always (also zero blocks), never")
	fs.Var(&sizeValue[int]{p: &o.BufferSize, flag: "buffer-size", min: 1, max: maxBufferSize}, "buffer-size", "buffer of the rw loop (K, M, G, T suffixes)")
	fs.VarP(&intValue{p: &o.Jobs, flag: "jobs", min: 1, max: 1024}, "jobs", "j", "copy up to N files at once")

	fs.BoolVarP(&o.Force, "force", "f", false, "if an existing destination cannot be opened, remove it and try again")
	fs.BoolP("no-clobber", "n", false, "do not overwrite an existing file")
	fs.BoolVarP(&o.Interactive, "interactive", "i", false, "prompt before overwrite")
	fs.BoolVar(&o.RemoveDestination, "remove-destination", false, "remove each existing DEST before opening it")
	fs.VarP(&backupValue{st}, "backup", "b", "back up each existing DEST: none, off, numbered, t, existing, nil, simple, never")
	fs.Lookup("backup").NoOptDefVal = noValue
	fs.VarP(&suffixValue{st}, "suffix", "S", "backup suffix (default ~)")
	fs.BoolVar(&o.InPlace, "inplace", false, "write straight into DEST instead of a temporary file renamed over it")

	fs.Var(newEnum(&o.Sync, durability.SyncNames, "sync"), "sync", "durability: none, data, full, osync, odsync")
	fs.BoolVar(&o.NoCache, "nocache", false, "drop source and destination pages from the page cache behind the copy")
	fs.Var(&verifyValue{o}, "verify", "read DEST back past the page cache and compare checksums: dest (bare --verify), source (read SOURCE again too)")
	fs.Lookup("verify").NoOptDefVal = "dest"
	fs.Var(&checksumValue{o}, "checksum", "hash every file in the same pass as the copy: sha256 (bare --checksum), sha512")
	fs.Lookup("checksum").NoOptDefVal = checksum.Default.String()
	fs.Var(&checksumFileValue{o}, "checksum-file", "write the hashes to FILE as sha256sum writes them (-: standard output)")
	fs.BoolVar(&o.Resume, "resume", false, "continue an interrupted copy to the same DEST from its last checkpoint")

	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "print 'SRC' -> 'DST' for every file")
	fs.BoolVar(&o.Debug, "debug", false, "explain how every file is copied")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "no progress, no warnings")
	fs.Var(&progressValue{o}, "progress", "show progress even when stderr is not a terminal: bar (bare --progress), json (one JSON object a line)")
	fs.Lookup("progress").NoOptDefVal = "bar"
	fs.Bool("no-progress", false, "never draw the progress bar")
	fs.BoolVarP(&o.Help, "help", "h", false, "show this help and exit")
	fs.BoolVar(&o.Version, "version", false, "print the version and exit")

	fs.BoolVar(&o.Benchmark, "benchmark", false, "time every strategy on DIRECTORY's filesystem")
	fs.Var(&sizeValue[int64]{p: &o.BenchSize, flag: "bench-size", min: 4 << 10, max: math.MaxInt64}, "bench-size", "size of the benchmark's test file")
	fs.Var(&intValue{p: &o.BenchRuns, flag: "bench-runs", min: 1, max: 1000}, "bench-runs", "timed runs per row")
	fs.StringVar(&o.BenchFrom, "bench-from", "", "put the benchmark's source file in DIR")
	fs.BoolVar(&o.JSON, "json", false, "with --benchmark: one JSON document on stdout")

	for _, n := range shortOnly {
		fs.Lookup(n).Hidden = true
	}
	return fs
}

// FlagNames lists every option as the user types it ("--sync", "-R"),
// for the tests that check --help and the manual page name them all.
func FlagNames(fs *pflag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if len(f.Name) > 1 {
			names = append(names, "--"+f.Name)
		}
		if f.Shorthand != "" {
			names = append(names, "-"+f.Shorthand)
		}
	})
	return names
}

// AllFlagNames is FlagNames of fastcp's flag set.
func AllFlagNames() []string { return FlagNames(newFlagSet(&Options{}, &parseState{})) }
