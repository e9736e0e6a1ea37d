// Package durability decides how a destination comes into being and when it
// is safe: a temporary file beside DEST renamed over it only after the copy
// succeeded (or DEST itself for --inplace, devices and FIFOs), the --sync
// flush, the directory fsync, and the cleanup of temporary files on errors
// and fatal signals.
package durability

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temporary file fastcp creates, so a
// leftover (after SIGKILL or a power cut) can be recognised: ".fastcp-".
const TempPrefix = ".fastcp-"

// maxTempBase bounds how much of DEST's name goes into the temporary name,
// which must stay within NAME_MAX (255 bytes).
const maxTempBase = 200

// Options say how a destination is opened.
type Options struct {
	// InPlace writes into Path itself: for --inplace, devices and FIFOs.
	InPlace bool
	// Truncate, with InPlace, truncates a regular file first (O_TRUNC).
	Truncate bool
	// Flags are extra open(2) flags: O_SYNC or O_DSYNC for --sync modes
	// that need them, set in the open call (fcntl F_SETFL cannot add them).
	Flags int
	// Perm is the mode a new in-place file is created with.
	Perm os.FileMode
	// Sync is the --sync mode: how the data and the directory entry are
	// made durable before Commit returns.
	Sync SyncMode
	// NoCache drops the destination's (and, at Commit, the source's) pages
	// from the page cache behind the copy.
	NoCache bool
	// Verify makes Commit read the destination back past the page cache
	// and compare its checksum with the source's before the rename.
	Verify bool
}

// Destination is a file being written.
type Destination struct {
	Path string   // the name the data ends up under
	File *os.File // where the copy writes
	temp string   // the temporary file's path; "" when writing in place
	done bool
}

// InPlace reports whether the copy writes into Path itself.
func (d *Destination) InPlace() bool { return d.temp == "" }

// TempPath returns the temporary file's path ("" when in place).
func (d *Destination) TempPath() string { return d.temp }

// Create opens the destination for path: a new temporary file, mode 0600,
// in path's directory, or path itself when o.InPlace.
func Create(path string, o Options) (*Destination, error) {
	if o.InPlace {
		flags := os.O_WRONLY | os.O_CREATE | o.Flags
		if o.Truncate {
			flags |= os.O_TRUNC
		}
		perm := o.Perm
		if perm == 0 {
			perm = 0o666
		}
		f, err := os.OpenFile(path, flags, perm)
		if err != nil {
			return nil, err
		}
		return &Destination{Path: path, File: f}, nil
	}
	dir, base := filepath.Split(path)
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	for {
		var rnd [6]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		temp := filepath.Join(dir, TempPrefix+base+"."+hex.EncodeToString(rnd[:]))
		// Opened and registered under the registry lock, so a signal
		// cannot leave it behind between the two.
		reg.Lock()
		f, err := os.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|o.Flags, 0o600)
		if err == nil {
			if reg.temps == nil {
				reg.temps = make(map[string]struct{})
			}
			reg.temps[temp] = struct{}{}
		}
		reg.Unlock()
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Destination{Path: path, File: f, temp: temp}, nil
	}
}

// Abort gives up: closes the file and removes the temporary file. An
// in-place destination is left as it is (partial).
func (d *Destination) Abort() {
	if d.done {
		return
	}
	d.done = true
	d.File.Close()
	if d.temp != "" {
		os.Remove(d.temp)
		untrack(d.temp)
	}
}

// Written is the copier's hook (copier.Options.Written): bytes [off, off+n)
// of the destination were just written.
func (d *Destination) Written(off, n int64) {}

// Commit finishes a successful copy of src: closes the file (a close error
// is a failure: NFS and some FUSE filesystems report write errors there) and
// renames the temporary file over Path. Attributes must be set on File
// before. On error the temporary file is removed and Path is untouched.
func (d *Destination) Commit(src *os.File) error {
	if d.done {
		return errors.New("destination already finished")
	}
	if err := d.File.Close(); err != nil {
		d.done = true
		if d.temp != "" {
			os.Remove(d.temp)
			untrack(d.temp)
		}
		return &Error{Op: "close", Err: err}
	}
	d.done = true
	if d.temp == "" {
		return nil
	}
	reg.Lock()
	err := os.Rename(d.temp, d.Path)
	if err != nil {
		os.Remove(d.temp)
	}
	delete(reg.temps, d.temp)
	reg.Unlock()
	if err != nil {
		return &Error{Op: "rename", Err: err}
	}
	return nil
}

// Error is a failure of the durability steps, naming the step.
type Error struct {
	Op  string // "close", "rename", "fsync", "fdatasync", "fsync directory"
	Err error
}

func (e *Error) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// The temporary files being written, for the signal handler.
var reg struct {
	sync.Mutex
	temps  map[string]struct{}
	funcs  map[int]func()
	nextID int
}

func untrack(p string) {
	reg.Lock()
	delete(reg.temps, p)
	reg.Unlock()
}

// AtInterrupt registers fn to run when a fatal signal ends the process
// (RemoveTempsForExit), e.g. the benchmark removing its test files. The
// returned function unregisters it.
func AtInterrupt(fn func()) (unregister func()) {
	reg.Lock()
	defer reg.Unlock()
	reg.nextID++
	id := reg.nextID
	if reg.funcs == nil {
		reg.funcs = make(map[int]func())
	}
	reg.funcs[id] = fn
	return func() {
		reg.Lock()
		delete(reg.funcs, id)
		reg.Unlock()
	}
}

// RemoveTempsForExit removes every temporary file still being written, runs
// the AtInterrupt functions, and returns with the registry locked, so no
// rename can happen before the process exits. Only for a fatal signal,
// right before os.Exit.
func RemoveTempsForExit() {
	reg.Lock()
	for p := range reg.temps {
		unix.Unlink(p)
	}
	for _, fn := range reg.funcs {
		fn()
	}
}
