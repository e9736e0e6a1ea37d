// SPDX-License-Identifier: MIT

// Command firstfile runs a copy of a tree and ends it as soon as the first
// regular file appears anywhere under DST: its run time is the time to the
// first file, which the benchmarks take as how long a copy keeps the user
// waiting for anything. It watches DST's parent, DST and every directory
// made under it with inotify(7) (and lists each new directory once
// watched, for what appeared before the watch), so it takes no CPU from the
// copy while it waits. A temporary file (.fastcp-*) is not a file of DST.
// The copy is then killed (SIGKILL) and waited for; firstfile exits 0, or
// 1 when the copy ended without making a file.
//
//	firstfile DST COMMAND [ARG]...
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: firstfile DST COMMAND [ARG]...")
		os.Exit(2)
	}
	if err := run(filepath.Clean(os.Args[1]), os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "firstfile:", err)
		os.Exit(1)
	}
}

const watchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_ONLYDIR

func run(dst string, argv []string) error {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(in)
	w := &watcher{fd: in, dirs: map[int]string{}, dst: dst}
	if err := w.watch(filepath.Dir(dst)); err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	// The copy's end closes a pipe that the event loop polls beside
	// the inotify descriptor.
	endR, endW, err := os.Pipe()
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return err
	}
	defer endR.Close()
	exited := make(chan error, 1)
	go func() {
		exited <- cmd.Wait()
		endW.Close()
	}()
	found, err := w.loop(int(endR.Fd()))
	if found || err != nil {
		cmd.Process.Kill()
		<-exited
		return err
	}
	if err := <-exited; err != nil {
		return fmt.Errorf("the copy ended without a file: %v", err)
	}
	return errors.New("the copy ended without a file")
}

type watcher struct {
	fd   int
	dirs map[int]string // watch descriptor -> directory
	dst  string
}

// watch watches dir for entries made in it.
func (w *watcher) watch(dir string) error {
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	w.dirs[wd] = dir
	return nil
}

// under reports whether p is DST or below it.
func (w *watcher) under(p string) bool {
	return p == w.dst || strings.HasPrefix(p, w.dst+"/")
}

// add looks at the new entry p: a directory under DST is watched and
// listed (its entries may predate the watch), a regular file under DST is
// the one waited for.
func (w *watcher) add(p string) (bool, error) {
	if !w.under(p) || strings.HasPrefix(filepath.Base(p), ".fastcp-") {
		return false, nil
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return false, nil // gone again
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return p != w.dst, nil
	case unix.S_IFDIR:
		if err := w.watch(p); err != nil {
			return false, err
		}
		names, err := readNames(p)
		if err != nil {
			return false, nil
		}
		for _, n := range names {
			if ok, err := w.add(filepath.Join(p, n)); ok || err != nil {
				return ok, err
			}
		}
	}
	return false, nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// loop reads events until a file appears (true), or end becomes
// readable (the copy ended).
func (w *watcher) loop(end int) (bool, error) {
	if ok, err := w.add(w.dst); ok || err != nil {
		return ok, err
	}
	buf := make([]byte, 64<<10)
	for {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(end), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return false, err
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return false, nil
		}
		n, err := unix.Read(w.fd, buf)
		if err != nil {
			return false, err
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				raw := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				name = strings.TrimRight(string(raw), "\x00")
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			dir, ok := w.dirs[int(ev.Wd)]
			if !ok || name == "" {
				continue
			}
			if found, err := w.add(filepath.Join(dir, name)); found || err != nil {
				return found, err
			}
		}
	}
}
