// SPDX-License-Identifier: MIT

// Command kernelcalls is the benchmarks' yardstick for the kernel's part of
// a shell loop of small copies: in one process, with no exec and no start
// of a program a file, it makes for every regular file of SRCDIR the
// system calls that copy it into DSTDIR under the same name, as fastcp or
// as cp makes them. Beside the loops of fastcp, cp and an empty Go
// program, it tells the filesystem's cost of each way apart from the cost
// of starting programs.
//
//	kernelcalls fastcp|cp SRCDIR DSTDIR
//	kernelcalls tree SRCDIR DSTDIR...
//
// fastcp: open the source, an unnamed file in DSTDIR (O_TMPFILE),
// copy_file_range; to a new name, linkat it there; over an existing DEST,
// linkat it under a temporary name and renameat that over DEST (a new
// inode, and the old one freed). cp: open the source, open DEST with
// O_CREAT|O_TRUNC (the same inode when DEST exists), copy_file_range,
// close.
//
// tree: for a tree of directories of files (one level, as the benchmarks'
// trees of small files), the calls fastcp's protocol makes at the least
// to copy it into every DSTDIR at once: each directory made in each, and
// for each file its lstat, open and fstat once, then in each DSTDIR an
// unnamed file, sendfile, linkat and close. With one DSTDIR it is a tree
// copied into one; beside two runs of it, the floor of -t DIR1 -t DIR2
// that the filesystems set.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) >= 4 && os.Args[1] == "tree" {
		if err := tree(os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "kernelcalls:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 4 || (os.Args[1] != "fastcp" && os.Args[1] != "cp") {
		fmt.Fprintln(os.Stderr, "usage: kernelcalls fastcp|cp SRCDIR DSTDIR\n       kernelcalls tree SRCDIR DSTDIR...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "kernelcalls:", err)
		os.Exit(1)
	}
}

func run(mode, srcDir, dstDir string) error {
	names, err := regularFiles(srcDir)
	if err != nil {
		return err
	}
	sd, err := unix.Open(srcDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: srcDir, Err: err}
	}
	defer unix.Close(sd)
	dd, err := unix.Open(dstDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dstDir, Err: err}
	}
	defer unix.Close(dd)
	for _, name := range names {
		if err := copyOne(mode, sd, dd, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// regularFiles lists the regular files of dir, sorted, as the shell's
// glob orders the loop.
func regularFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func copyOne(mode string, sd, dd int, name string) error {
	src, err := unix.Openat(sd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(src)
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return err
	}
	if mode == "cp" {
		dst, err := unix.Openat(dd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, uint32(st.Mode&0o7777))
		if err != nil {
			return err
		}
		if err := copyAll(copyFileRange, "copy_file_range", src, dst, st.Size); err != nil {
			unix.Close(dst)
			return err
		}
		return unix.Close(dst)
	}
	var old unix.Stat_t
	exists := unix.Fstatat(dd, name, &old, unix.AT_SYMLINK_NOFOLLOW) == nil
	tmp, err := unix.Openat(dd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(st.Mode&0o777))
	if err != nil {
		return err
	}
	defer unix.Close(tmp)
	if err := copyAll(copyFileRange, "copy_file_range", src, tmp, st.Size); err != nil {
		return err
	}
	if !exists {
		return unix.Linkat(tmp, "", dd, name, unix.AT_EMPTY_PATH)
	}
	temp := ".fastcp-" + name + ".000000000000"
	if err := unix.Linkat(tmp, "", dd, temp, unix.AT_EMPTY_PATH); err != nil {
		return err
	}
	return unix.Renameat(dd, temp, dd, name)
}

// copyAll copies size bytes of src from its start into dst with call
// (copy_file_range or sendfile), which moves off.
func copyAll(call func(src, dst int, off *int64, n int) (int, error), name string, src, dst int, size int64) error {
	for off := int64(0); off < size; {
		n, err := call(src, dst, &off, int(size-off))
		if err == nil && n == 0 {
			err = fmt.Errorf("%s: short copy", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyFileRange(src, dst int, off *int64, n int) (int, error) {
	return unix.CopyFileRange(src, off, dst, nil, n, 0)
}

func sendfile(src, dst int, off *int64, n int) (int, error) { return unix.Sendfile(dst, src, off, n) }

// tree copies the directories of srcDir, and their regular files, into
// every directory of dstDirs (see the package comment).
func tree(srcDir string, dstDirs []string) error {
	subs, err := os.ReadDir(srcDir)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		if !sub.IsDir() {
			continue
		}
		if err := treeDir(filepath.Join(srcDir, sub.Name()), sub.Name(), dstDirs); err != nil {
			return err
		}
	}
	return nil
}

func treeDir(dir, name string, dstDirs []string) error {
	sd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(sd)
	var dds []int
	defer func() {
		for _, dd := range dds {
			unix.Close(dd)
		}
	}()
	for _, d := range dstDirs {
		p := filepath.Join(d, name)
		if err := unix.Mkdir(p, 0o755); err != nil {
			return &os.PathError{Op: "mkdir", Path: p, Err: err}
		}
		dd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return &os.PathError{Op: "open", Path: p, Err: err}
		}
		dds = append(dds, dd)
	}
	names, err := regularFiles(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := treeFile(sd, dds, n); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}

func treeFile(sd int, dds []int, name string) error {
	var lst, st unix.Stat_t
	if err := unix.Fstatat(sd, name, &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	src, err := unix.Openat(sd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(src)
	if err := unix.Fstat(src, &st); err != nil {
		return err
	}
	for _, dd := range dds {
		tmp, err := unix.Openat(dd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(st.Mode&0o777))
		if err != nil {
			return err
		}
		if err := copyAll(sendfile, "sendfile", src, tmp, st.Size); err != nil {
			unix.Close(tmp)
			return err
		}
		err = unix.Linkat(tmp, "", dd, name, unix.AT_EMPTY_PATH)
		unix.Close(tmp)
		if err != nil {
			return err
		}
	}
	return nil
}
