// SPDX-License-Identifier: MIT

// Package fsfixture mounts throwaway filesystems for tests and benchmarks:
// loop-mounted ext4, xfs and btrfs images and tmpfs, each in its own
// directory. It needs root.
package fsfixture

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kinds are the filesystem kinds Mount knows.
var Kinds = []string{"ext4", "xfs", "btrfs", "tmpfs"}

// MinSize is the smallest image mkfs accepts for each kind (xfsprogs 6
// refuses below 300 MiB).
var MinSize = map[string]int64{"ext4": 8 << 20, "xfs": 300 << 20, "btrfs": 128 << 20, "tmpfs": 1 << 20}

// FS is a mounted filesystem.
type FS struct {
	Kind  string
	Dir   string // the mount point
	image string
}

// IsRoot reports whether the process can mount.
func IsRoot() bool { return os.Geteuid() == 0 }

// Mount makes a filesystem of kind and size bytes under parent (an image
// file for the loop kinds, sparse, so it costs only what is written) and
// mounts it at parent/kind-mnt. extra are mount options ("ro", ...).
func Mount(parent, kind string, size int64, extra ...string) (*FS, error) {
	if size < MinSize[kind] {
		size = MinSize[kind]
	}
	mnt, err := os.MkdirTemp(parent, kind+"-mnt-")
	if err != nil {
		return nil, err
	}
	fs := &FS{Kind: kind, Dir: mnt}
	opts := strings.Join(extra, ",")
	if kind == "tmpfs" {
		o := fmt.Sprintf("size=%d", size)
		if opts != "" {
			o += "," + opts
		}
		if err := run("mount", "-t", "tmpfs", "-o", o, "tmpfs", mnt); err != nil {
			os.Remove(mnt)
			return nil, err
		}
		return fs, nil
	}
	fs.image = filepath.Join(parent, filepath.Base(mnt)+".img")
	f, err := os.Create(fs.image)
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		return nil, err
	}
	var mkfs []string
	switch kind {
	case "ext4":
		mkfs = []string{"mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", fs.image}
	case "xfs":
		mkfs = []string{"mkfs.xfs", "-q", "-f", fs.image}
	case "btrfs":
		mkfs = []string{"mkfs.btrfs", "-q", "-f", fs.image}
	default:
		return nil, fmt.Errorf("unknown filesystem kind %q", kind)
	}
	if err := run(mkfs[0], mkfs[1:]...); err != nil {
		os.Remove(fs.image)
		return nil, err
	}
	o := "loop"
	if opts != "" {
		o += "," + opts
	}
	if err := run("mount", "-o", o, fs.image, mnt); err != nil {
		os.Remove(fs.image)
		return nil, err
	}
	return fs, nil
}

// Unmount unmounts the filesystem and removes its image and mount point.
func (fs *FS) Unmount() error {
	err := run("umount", fs.Dir)
	if err != nil {
		// Busy (a test's process still inside): detach lazily.
		err = run("umount", "-l", fs.Dir)
	}
	os.Remove(fs.Dir)
	if fs.image != "" {
		os.Remove(fs.image)
	}
	return err
}

// Remount changes mount options in place ("ro", "rw").
func (fs *FS) Remount(opts string) error {
	return run("mount", "-o", "remount,"+opts, fs.Dir)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
