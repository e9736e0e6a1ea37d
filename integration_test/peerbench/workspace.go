// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"fastcp/integration_test/fsfixture"

	"golang.org/x/sys/unix"
)

// errSkipped marks a scenario that cannot run here (not root): reported,
// not a failure.
var errSkipped = errors.New("skipped")

// loopImageSize is the size of the xfs and btrfs images: room for a source
// and a full (non-shared) copy of it. The images are sparse.
const loopImageSize = 4 << 30

// tmpfsSize is the size of the tmpfs destination.
const tmpfsSize = 6 << 30

// A workspace is the one directory the harness writes in, the filesystems
// it mounted there, the source files it made (kept for the scenarios that
// share them) and the binaries it times.
type workspace struct {
	root         string
	fastcpOrigin string // the binary bins["{fastcp}"] is a copy of
	// restoreHuge puts the huge page pool back as it was (fio's
	// --mem=shmhuge took some); fioNote says why fio has none.
	restoreHuge func() error
	fioNote     string
	bins        map[string]string // "{fastcp}" -> path, ...
	mounts      map[string]*fsfixture.FS
	sshfs       *fsfixture.SSHFS  // the "sshfs" kind, mounted on first use
	sources     map[string]string // kind + "/" + source.name -> path
}

func newWorkspace(ctx context.Context, parent, fastcp, baseline string) (*workspace, error) {
	bins := map[string]string{"{cp}": "/usr/bin/cp", "{dd}": "/usr/bin/dd"}
	if fastcp == "" {
		root, err := repoRoot()
		if err != nil {
			return nil, err
		}
		fastcp = filepath.Join(root, "fastcp")
	}
	fastcp, err := filepath.Abs(fastcp)
	if err != nil {
		return nil, err
	}
	bins["{fastcp}"] = fastcp
	if baseline != "" {
		bins["{baseline}"] = baseline
	}
	for _, p := range bins {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%v (run `make build` for ./fastcp)", err)
		}
	}
	// fio is the device's yardstick in the cold scenarios; without it
	// its rows are left out. Its buffers are huge pages ({fiomem}), so
	// that a 4 MiB request is one request to the device.
	var restoreHuge func() error
	fioNote := ""
	if p, err := exec.LookPath("fio"); err == nil {
		bins["{fio}"] = p
		bins["{fiomem}"] = "--mem=malloc"
		if restore, err := fsfixture.ReserveHugePages(fioHugeBytes); err == nil {
			bins["{fiomem}"], restoreHuge = "--mem=shmhuge", restore
		} else {
			fioNote = fmt.Sprintf("fio without huge pages (%v): its 4 MiB requests of 4 KiB pages are split at the device's segment limit, so its limit may read low", err)
		}
	}
	// rsync is a peer on the network mount; without it its row is left
	// out.
	if p, err := exec.LookPath("rsync"); err == nil {
		bins["{rsync}"] = p
	}
	root, err := os.MkdirTemp(parent, "fastcp-bench-")
	if err != nil {
		if restoreHuge != nil {
			restoreHuge()
		}
		return nil, err
	}
	ws := &workspace{root: root, bins: bins, mounts: map[string]*fsfixture.FS{}, sources: map[string]string{},
		restoreHuge: restoreHuge, fioNote: fioNote}
	if err := os.Mkdir(filepath.Join(root, rootFS), 0o755); err != nil {
		return ws, err
	}
	// Time copies of the binaries, so that a rebuild during the run (make
	// build in another shell) cannot change what is measured halfway.
	ws.fastcpOrigin = fastcp
	for _, name := range []string{"fastcp", "baseline"} {
		key := "{" + name + "}"
		from, ok := bins[key]
		if !ok {
			continue
		}
		bins[key] = filepath.Join(root, name)
		if out, err := exec.Command("cp", from, bins[key]).CombinedOutput(); err != nil {
			return ws, fmt.Errorf("cp %s: %v: %s", from, err, out)
		}
	}
	iocopy := filepath.Join(root, "iocopy")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", iocopy, "fastcp/integration_test/iocopy")
	if out, err := cmd.CombinedOutput(); err != nil {
		return ws, fmt.Errorf("go build iocopy: %v\n%s", err, out)
	}
	bins["{iocopy}"] = iocopy
	// The maker of the trees of small files, the timer of a copy's
	// first file, the kernel's part of a loop of small copies, and the
	// hashes of --checksum alone.
	for _, helper := range []string{"mktree", "firstfile", "kernelcalls", "hashfloor"} {
		bin := filepath.Join(root, helper)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "fastcp/integration_test/"+helper)
		if out, err := cmd.CombinedOutput(); err != nil {
			return ws, fmt.Errorf("go build %s: %v\n%s", helper, err, out)
		}
		bins["{"+helper+"}"] = bin
	}
	mktreeBin = bins["{mktree}"]
	// The floors of the one-invocation-a-file loops: a Go program that
	// does nothing, built as the Makefile builds fastcp (static,
	// stripped), and the C one, true.
	goempty := filepath.Join(root, "goempty")
	cmd = exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", goempty, "fastcp/integration_test/goempty")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return ws, fmt.Errorf("go build goempty: %v\n%s", err, out)
	}
	bins["{goempty}"] = goempty
	if p, err := exec.LookPath("true"); err == nil {
		bins["{true}"] = p
	}
	return ws, nil
}

// repoRoot is the directory of the go.mod of module fastcp, at or above the
// working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module fastcp\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the fastcp repository: run from it, or give -fastcp")
		}
		dir = parent
	}
}

// close unmounts what the workspace mounted and removes all it made.
func (ws *workspace) close() {
	for _, fs := range ws.mounts {
		if err := fs.Unmount(); err != nil {
			fmt.Fprintf(os.Stderr, "peerbench: %v\n", err)
		}
	}
	if ws.sshfs != nil {
		if err := ws.sshfs.Unmount(); err != nil {
			fmt.Fprintf(os.Stderr, "peerbench: %v\n", err)
		}
	}
	if err := os.RemoveAll(ws.root); err != nil {
		fmt.Fprintf(os.Stderr, "peerbench: %v\n", err)
	}
	if ws.restoreHuge != nil {
		if err := ws.restoreHuge(); err != nil {
			fmt.Fprintf(os.Stderr, "peerbench: restoring vm.nr_hugepages: %v\n", err)
		}
		ws.restoreHuge = nil
	}
}

// fioHugeBytes is the huge page memory the fio tools take at most: two
// jobs of 8 requests of 4 MiB (fio io_uring, fio), or eight of one (fio
// psync 4+4), and room for fio's alignment.
const fioHugeBytes = 128 << 20

// dir is a directory on a filesystem of the kind: the workspace itself for
// rootFS, else a filesystem mounted on first use.
func (ws *workspace) dir(kind string) (string, error) {
	if kind == rootFS {
		return filepath.Join(ws.root, rootFS), nil
	}
	if fs := ws.mounts[kind]; fs != nil {
		return fs.Dir, nil
	}
	if !fsfixture.IsRoot() {
		return "", fmt.Errorf("%w: mounting %s needs root", errSkipped, kind)
	}
	if kind == "sshfs" {
		// A network mount: sshfs over an sshd of its own on 127.0.0.1,
		// serving a directory of the workspace (on rootFS).
		if ws.sshfs != nil {
			return ws.sshfs.Dir, nil
		}
		if why := fsfixture.SSHFSMissing(); why != "" {
			return "", fmt.Errorf("%w: %s", errSkipped, why)
		}
		m, err := fsfixture.MountSSHFS(ws.root)
		if err != nil {
			return "", err
		}
		ws.sshfs = m
		return m.Dir, nil
	}
	size := int64(loopImageSize)
	if kind == "tmpfs" {
		size = tmpfsSize
	}
	fs, err := fsfixture.Mount(ws.root, kind, size)
	if err != nil {
		return "", err
	}
	ws.mounts[kind] = fs
	return fs.Dir, nil
}

// source is the path of src made on a filesystem of the kind, made on first
// use and written back to disk so that no writeback of it runs during the
// timed copies.
func (ws *workspace) source(ctx context.Context, kind string, src source) (string, error) {
	key := kind + "/" + src.name
	if p, ok := ws.sources[key]; ok {
		return p, nil
	}
	dir, err := ws.dir(kind)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "src-"+src.name)
	if err := src.make(ctx, p); err != nil {
		os.RemoveAll(p)
		return "", fmt.Errorf("making source %s: %w", p, err)
	}
	unix.Sync()
	ws.sources[key] = p
	return p, nil
}

// expand substitutes the binaries and paths into argv.
func (ws *workspace) expand(argv []string, src, dst string, more ...string) []string {
	// {dst2}, {dst3}... first: the replacer tries its pairs in order.
	var pairs []string
	for i, d := range more {
		pairs = append(pairs, fmt.Sprintf("{dst%d}", i+2), d)
	}
	pairs = append(pairs, "{src}", src, "{dst}", dst)
	for k, v := range ws.bins {
		pairs = append(pairs, k, v)
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Replace(a)
	}
	return out
}

// printHeader says what is compared on what.
func (ws *workspace) printHeader(w io.Writer, runs int) {
	first := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			return fmt.Sprintf("%s: %v", name, err)
		}
		line, _, _ := strings.Cut(string(out), "\n")
		return line
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	fsType := "?"
	var st unix.Statfs_t
	if err := unix.Statfs(ws.root, &st); err == nil {
		fsType = fsName(st.Type)
	}
	fmt.Fprintf(w, "peerbench: %s (%s) vs %s, %s, iocopy (io.Copy, %s)\n",
		first(ws.bins["{fastcp}"], "--version"), ws.fastcpOrigin,
		first(ws.bins["{cp}"], "--version"), first(ws.bins["{dd}"], "--version"), runtime.Version())
	if b, ok := ws.bins["{baseline}"]; ok {
		fmt.Fprintf(w, "baseline: %s\n", first(b, "--version"))
	}
	fmt.Fprintf(w, "linux %s, %d CPUs; workspace %s (%s); %d timed runs per tool, taking turns; wall-clock medians\n",
		unix.ByteSliceToString(uts.Release[:]), runtime.NumCPU(), ws.root, fsType, runs)
	if fsType != rootFS {
		fmt.Fprintf(w, "note: the workspace is on %s, not %s: the %q scenarios run there\n", fsType, rootFS, rootFS)
	}
	if ws.fioNote != "" {
		fmt.Fprintf(w, "note: %s\n", ws.fioNote)
	} else if m, ok := ws.bins["{fiomem}"]; ok {
		fmt.Fprintf(w, "fio's buffers: %s (huge pages, so that a 4 MiB request is one request to the device)\n", m)
	}
}

func fsName(magic int64) string {
	switch magic {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	}
	return fmt.Sprintf("fs magic %#x", magic)
}
