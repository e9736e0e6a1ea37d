package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"fastcp/benchmark"
	"fastcp/copier"
	"fastcp/durability"
	"fastcp/flags"

	"golang.org/x/sys/unix"
)

// app is one run of fastcp.
type app struct {
	opts   *flags.Options
	out    *output
	stdin  *bufio.Reader
	umask  uint32
	memo   copier.Memo
	failed bool
}

// run is fastcp: it returns the exit status.
func run(argv0 string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &output{prog: filepath.Base(argv0), stdout: stdout, stderr: stderr}
	opts, err := flags.Parse(args)
	if err != nil {
		var ue *flags.UsageError
		if !errors.As(err, &ue) {
			ue = &flags.UsageError{Msg: err.Error()}
		}
		out.usage(ue)
		return 2
	}
	if opts.Help {
		io.WriteString(stdout, flags.Help(out.prog))
		return 0
	}
	if opts.Version {
		fmt.Fprintf(stdout, "fastcp %s\n", versionString())
		return 0
	}
	out.quiet = opts.Quiet
	stop := handleSignals()
	defer stop()

	if opts.Benchmark {
		dir := "."
		if len(opts.Operands) > 0 {
			dir = opts.Operands[0]
		}
		return benchmark.Run(benchmark.Config{
			Dir:   dir,
			From:  opts.BenchFrom,
			Size:  opts.BenchSize,
			Runs:  opts.BenchRuns,
			JSON:  opts.JSON,
			Quiet: opts.Quiet,
		}, stdout, stderr, out.prog)
	}

	a := &app{opts: opts, out: out, stdin: bufio.NewReader(stdin)}
	a.umask = uint32(unix.Umask(0))
	unix.Umask(int(a.umask))
	a.copyAll()
	if out.outErr != nil {
		out.errorf("write error: %s", errText(out.outErr))
		return 1
	}
	if a.failed {
		return 1
	}
	return 0
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// handleSignals makes SIGINT, SIGTERM and SIGHUP remove the temporary files
// in progress before the process exits with 128+signal (130, 143, 129):
// without signal.Notify, Go would die without running any cleanup.
func handleSignals() (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// A closed stdout (-v into `head`) must be an error, not a silent death.
	signal.Ignore(syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-c:
			durability.RemoveTempsForExit()
			os.Exit(128 + int(s.(syscall.Signal)))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
	}
}

func (a *app) fail(format string, args ...any) {
	a.failed = true
	a.out.errorf(format, args...)
}

// copyAll resolves the operands into SOURCE -> DEST pairs, as cp does.
func (a *app) copyAll() {
	o := a.opts
	ops := o.Operands
	var sources []string
	var target string
	intoDir := false
	switch {
	case o.TargetDir != "":
		target, sources, intoDir = o.TargetDir, ops, true
		fi, err := os.Stat(target)
		if err == nil && !fi.IsDir() {
			err = unix.ENOTDIR
		}
		if err != nil {
			a.fail("target directory %s: %s", quote(target), errText(err))
			return
		}
	case o.NoTargetDir:
		sources, target = ops[:1], ops[1]
	default:
		sources, target = ops[:len(ops)-1], ops[len(ops)-1]
		fi, err := os.Stat(target)
		switch {
		case err == nil && fi.IsDir():
			intoDir = true
		case len(sources) > 1 && err != nil:
			a.fail("target %s: %s", quote(target), errText(err))
			return
		case len(sources) > 1:
			a.fail("target %s is not a directory", quote(target))
			return
		}
	}
	for _, src := range sources {
		dst := target
		if intoDir {
			dst = joinTarget(target, filepath.Base(src))
		}
		a.copyOne(src, dst)
	}
}

// joinTarget names SOURCE's copy inside DIR as cp prints it: "dir/name".
func joinTarget(dir, name string) string {
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// copyOne copies one command-line SOURCE to DEST.
func (a *app) copyOne(src, dst string) {
	var fi os.FileInfo
	var err error
	if a.opts.Deref == flags.DerefNever {
		fi, err = os.Lstat(src)
	} else {
		fi, err = os.Stat(src)
	}
	if err != nil {
		a.fail("cannot stat %s: %s", quote(src), errText(err))
		return
	}
	switch {
	case fi.IsDir():
		a.fail("-r not specified; omitting directory %s", quote(src))
	default:
		a.copyFile(src, fi, dst)
	}
}

func rawStat(fi os.FileInfo) *syscall.Stat_t { return fi.Sys().(*syscall.Stat_t) }

// copyFile copies the data of src (a regular file, FIFO or device read as
// data) to dst, through a temporary file renamed over dst when dst is or
// will be a regular file, in place when dst is a device or FIFO.
func (a *app) copyFile(src string, sfi os.FileInfo, dst string) {
	o := a.opts
	realDst := dst
	var dfi os.FileInfo
	lfi, err := os.Lstat(dst)
	switch {
	case err == nil && lfi.Mode()&os.ModeSymlink != 0:
		// cp writes through a symlink DEST: the file it points to is
		// replaced, the link stays.
		dfi, err = os.Stat(dst)
		if errors.Is(err, os.ErrNotExist) {
			a.fail("not writing through dangling symlink %s", quote(dst))
			return
		}
		if err == nil {
			realDst, err = filepath.EvalSymlinks(dst)
		}
		if err != nil {
			a.fail("cannot stat %s: %s", quote(dst), errText(err))
			return
		}
	case err == nil:
		dfi = lfi
	case !errors.Is(err, os.ErrNotExist):
		a.fail("cannot stat %s: %s", quote(dst), errText(err))
		return
	}

	if dfi != nil {
		if os.SameFile(sfi, dfi) {
			a.fail("%s and %s are the same file", quote(src), quote(dst))
			return
		}
		if dfi.IsDir() {
			a.fail("cannot overwrite directory %s with non-directory", quote(dst))
			return
		}
		if o.NoClobber {
			return
		}
		if o.Update && !sfi.ModTime().After(dfi.ModTime()) {
			return
		}
		if o.Interactive && !a.confirm(fmt.Sprintf("overwrite %s? ", quote(dst))) {
			return
		}
	} else if strings.HasSuffix(dst, "/") {
		a.fail("cannot create regular file %s: %s", quote(dst), errText(unix.ENOTDIR))
		return
	}

	srcF, err := os.Open(src)
	if err != nil {
		a.fail("cannot open %s for reading: %s", quote(src), errText(err))
		return
	}
	defer srcF.Close()
	if ofi, err := srcF.Stat(); err != nil || !os.SameFile(ofi, sfi) {
		a.fail("skipping file %s, as it was replaced while being copied", quote(src))
		return
	}

	// A device or FIFO DEST is written in place, and so is any DEST with
	// --inplace (keeping its inode, hard links, mode and owner); otherwise a
	// temporary file replaces DEST and takes its mode and owner.
	newFile := dfi == nil
	special := dfi != nil && dfi.Mode()&(os.ModeDevice|os.ModeCharDevice|os.ModeNamedPipe) != 0
	inPlace := special || o.InPlace
	if dfi != nil && dfi.Mode().IsRegular() && !inPlace {
		// cp opens an existing DEST for writing: without write permission
		// it fails, unless -f lets it remove DEST and start anew.
		if err := unix.Faccessat(unix.AT_FDCWD, realDst, unix.W_OK, unix.AT_EACCESS); err != nil {
			if !o.Force {
				a.fail("cannot create regular file %s: %s", quote(dst), errText(err))
				return
			}
			newFile = true
		}
	}
	dest, err := durability.Create(realDst, durability.Options{
		InPlace:  inPlace,
		Truncate: inPlace && !special,
		Perm:     os.FileMode(rawStat(sfi).Mode & 0o777),
		Sync:     o.Sync,
		NoCache:  o.NoCache,
		Verify:   o.Verify,
	})
	if err != nil {
		a.fail("cannot create regular file %s: %s", quote(dst), errText(err))
		return
	}
	if o.Verbose || o.Debug {
		a.out.println(fmt.Sprintf("%s -> %s", quote(src), quote(dst)))
	}
	res, err := copier.Copy(dest.File, srcF, copier.Options{
		Strategy:   o.Strategy,
		Reflink:    o.Reflink,
		Sparse:     o.Sparse,
		BufferSize: o.BufferSize,
		Memo:       &a.memo,
		Written:    dest.Written,
	})
	if o.Debug {
		for _, l := range debugLines(&res) {
			a.out.println(l)
		}
	}
	if err == nil && !dest.InPlace() {
		err = a.setMode(dest, sfi, dfi, newFile)
	}
	if err == nil {
		err = dest.Commit(srcF)
	} else {
		dest.Abort()
	}
	if err != nil {
		a.fail("%s", copyErrorMessage(src, dst, err, o))
		if dest.InPlace() && !special {
			a.fail("%s was written in place (--inplace) and is now incomplete", quote(dst))
		}
	}
}

// setMode gives the temporary file the mode (and, for an existing DEST, the
// owner) the result must have before it is renamed into place: a new file
// gets the source's permissions minus the umask, as with cp; an existing
// DEST keeps its own mode and owner.
func (a *app) setMode(dest *durability.Destination, sfi, dfi os.FileInfo, newFile bool) error {
	f := dest.File
	if newFile {
		mode := rawStat(sfi).Mode & 0o777 &^ a.umask
		if err := f.Chmod(os.FileMode(mode)); err != nil {
			return &attrError{fmt.Sprintf("setting permissions for %s: %s", quote(dest.Path), errText(err))}
		}
		return nil
	}
	ds := rawStat(dfi)
	if ds.Uid != uint32(os.Geteuid()) || ds.Gid != uint32(os.Getegid()) {
		// Before the chmod: chown clears set-user-ID bits.
		if err := f.Chown(int(ds.Uid), int(ds.Gid)); err != nil {
			a.out.warnf("%s now belongs to uid %d, gid %d (was %d, %d): %s; --inplace keeps the owner",
				quote(dest.Path), os.Geteuid(), os.Getegid(), ds.Uid, ds.Gid, errText(err))
		}
	}
	if err := f.Chmod(unixMode(ds.Mode)); err != nil {
		return &attrError{fmt.Sprintf("setting permissions for %s: %s", quote(dest.Path), errText(err))}
	}
	return nil
}

// attrError is a failure to give DEST its attributes, worded in full.
type attrError struct{ msg string }

func (e *attrError) Error() string { return e.msg }

// unixMode converts st_mode permission and special bits to an os.FileMode.
func unixMode(m uint32) os.FileMode {
	mode := os.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		mode |= os.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= os.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= os.ModeSticky
	}
	return mode
}

// confirm asks on stderr and reads the answer from stdin (-i).
func (a *app) confirm(question string) bool {
	a.out.mu.Lock()
	fmt.Fprintf(a.out.stderr, "%s: %s", a.out.prog, question)
	a.out.mu.Unlock()
	line, _ := a.stdin.ReadString('\n')
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "y") || strings.HasPrefix(line, "Y")
}
