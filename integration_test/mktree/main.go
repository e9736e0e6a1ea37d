// SPDX-License-Identifier: MIT

// Command mktree makes the benchmarks' trees of small files: FILES files
// of 0 to 100 bytes (the same sizes and bytes on every run), 10 to a
// directory, 200 directories to a top-level one (DIR/t000/d000/f00), as a
// mail spool or a backup of small files is laid out. Every call is relative
// to an open directory, and the top-level directories are made in
// parallel, so that two million files take minutes, not the hour of a
// shell loop. It ends with syncfs(2), so that no writeback of the tree
// runs during the copies timed afterwards.
//
//	mktree FILES DIR
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

const (
	filesPerDir = 10
	dirsPerTop  = 200
	maxSize     = 100
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mktree FILES DIR")
		os.Exit(2)
	}
	files, err := strconv.Atoi(os.Args[1])
	if err != nil || files < 1 {
		fmt.Fprintln(os.Stderr, "mktree: FILES must be a positive number")
		os.Exit(2)
	}
	if err := makeTree(os.Args[2], files); err != nil {
		fmt.Fprintln(os.Stderr, "mktree:", err)
		os.Exit(1)
	}
}

func makeTree(dir string, files int) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(root)
	perTop := filesPerDir * dirsPerTop
	tops := (files + perTop - 1) / perTop
	work := make(chan int)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 2 * runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				if err := makeTop(root, t, min(perTop, files-t*perTop)); err != nil {
					select {
					case errs <- fmt.Errorf("%s/t%03d: %w", dir, t, err):
					default:
					}
				}
			}
		}()
	}
	for t := range tops {
		work <- t
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	return unix.Syncfs(root)
}

// makeTop makes the top-level directory t holding n files.
func makeTop(root, t, n int) error {
	top, err := mkdirOpen(root, fmt.Sprintf("t%03d", t))
	if err != nil {
		return err
	}
	defer unix.Close(top)
	// The sizes and bytes of a directory's files depend on its place in
	// the tree only.
	rnd := rand.New(rand.NewPCG(uint64(t), 1))
	buf := make([]byte, maxSize)
	for d := 0; d*filesPerDir < n; d++ {
		dd, err := mkdirOpen(top, fmt.Sprintf("d%03d", d))
		if err != nil {
			return err
		}
		for f := 0; f < filesPerDir && d*filesPerDir+f < n; f++ {
			b := buf[:rnd.IntN(maxSize+1)]
			for i := range b {
				b[i] = byte(rnd.Uint32())
			}
			fd, err := unix.Openat(dd, fmt.Sprintf("f%02d", f), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
			if err == nil {
				_, err = unix.Write(fd, b)
				if cerr := unix.Close(fd); err == nil {
					err = cerr
				}
			}
			if err != nil {
				unix.Close(dd)
				return err
			}
		}
		unix.Close(dd)
	}
	return nil
}

// mkdirOpen makes the directory name in dir and opens it.
func mkdirOpen(dir int, name string) (int, error) {
	if err := unix.Mkdirat(dir, name, 0o755); err != nil {
		return -1, &os.PathError{Op: "mkdir", Path: name, Err: err}
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return fd, nil
}
