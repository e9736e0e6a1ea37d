// SPDX-License-Identifier: MIT

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// A source is what a scenario copies: make creates it at path (a file, or
// a directory for tree scenarios). name identifies it, so that scenarios on
// the same filesystem share one.
type source struct {
	name string
	make func(ctx context.Context, path string) error
}

// chunkSize is the unit in which sources are written, read and compared.
const chunkSize = 1 << 20

// randomFile is size bytes of pseudo-random, incompressible data (the same
// bytes on every filesystem and every run).
func randomFile(size int64) source {
	return source{
		name: fmt.Sprintf("random-%d", size),
		make: func(ctx context.Context, path string) error {
			return writeFile(path, func(f *os.File) error {
				rnd := rand.NewChaCha8([32]byte{1})
				buf := make([]byte, chunkSize)
				for off := int64(0); off < size; off += chunkSize {
					if err := ctx.Err(); err != nil {
						return err
					}
					b := buf[:min(chunkSize, size-off)]
					rnd.Read(b)
					if _, err := f.Write(b); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// sparseFile is a size-byte file holding extents runs of extentSize random
// bytes spread evenly (the first at offset 0), holes elsewhere.
func sparseFile(size int64, extents int, extentSize int64) source {
	return source{
		name: fmt.Sprintf("sparse-%d-%dx%d", size, extents, extentSize),
		make: func(ctx context.Context, path string) error {
			return writeFile(path, func(f *os.File) error {
				if err := f.Truncate(size); err != nil {
					return err
				}
				rnd := rand.NewChaCha8([32]byte{2})
				buf := make([]byte, extentSize)
				stride := size / int64(extents)
				for i := range int64(extents) {
					if err := ctx.Err(); err != nil {
						return err
					}
					rnd.Read(buf)
					if _, err := f.WriteAt(buf, i*stride); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}

// treeFiles is a directory of files files of fileSize random bytes, perDir
// to a subdirectory (d000/f0000, ...), for the -r and -j scenarios.
func treeFiles(files int, fileSize int64, perDir int) source {
	return source{
		name: fmt.Sprintf("tree-%dx%d", files, fileSize),
		make: func(ctx context.Context, path string) error {
			rnd := rand.NewChaCha8([32]byte{3})
			buf := make([]byte, fileSize)
			for i := range files {
				if err := ctx.Err(); err != nil {
					return err
				}
				dir := filepath.Join(path, fmt.Sprintf("d%03d", i/perDir))
				if i%perDir == 0 {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						return err
					}
				}
				rnd.Read(buf)
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i%perDir)), buf, 0o644); err != nil {
					return err
				}
			}
			return syncFS(path)
		},
	}
}

// syncFS flushes the filesystem holding path (syncfs(2)).
func syncFS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// writeFile creates path, fills it with fill and makes it durable.
func writeFile(path string, fill func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// nextData is the offset of the first data at or after off in f (SEEK_DATA),
// size when only a hole follows; off itself when the filesystem cannot tell,
// so that callers read everything.
func nextData(f *os.File, off, size int64) int64 {
	d, err := f.Seek(off, unix.SEEK_DATA)
	switch {
	case errors.Is(err, syscall.ENXIO):
		return size
	case err != nil:
		return off
	}
	return d
}

// warm reads every regular file under path once, skipping holes, so that
// the timed copies find the source in the page cache.
func warm(path string) error {
	buf := make([]byte, chunkSize)
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		size := fi.Size()
		for off := nextData(f, 0, size); off < size; off = nextData(f, off, size) {
			n, err := f.ReadAt(buf, off)
			if err != nil && err != io.EOF {
				return err
			}
			off += int64(n)
			if n == 0 {
				break
			}
		}
		return nil
	})
}

// sameTree returns nil when b has the contents of a: regular files byte for
// byte (a hole reads as zeros, so a filled hole still compares equal),
// directories entry by entry, symbolic links by target.
func sameTree(a, b string) error {
	ai, err := os.Lstat(a)
	if err != nil {
		return err
	}
	bi, err := os.Lstat(b)
	if err != nil {
		return err
	}
	if ai.Mode().Type() != bi.Mode().Type() {
		return fmt.Errorf("%s is a %v, %s a %v", a, ai.Mode().Type(), b, bi.Mode().Type())
	}
	switch {
	case ai.Mode().IsRegular():
		return sameFile(a, b)
	case ai.IsDir():
		an, err := names(a)
		if err != nil {
			return err
		}
		bn, err := names(b)
		if err != nil {
			return err
		}
		if !slices.Equal(an, bn) {
			return fmt.Errorf("%s holds %q, %s holds %q", a, an, b, bn)
		}
		for _, n := range an {
			if err := sameTree(filepath.Join(a, n), filepath.Join(b, n)); err != nil {
				return err
			}
		}
	case ai.Mode().Type() == fs.ModeSymlink:
		at, err := os.Readlink(a)
		if err != nil {
			return err
		}
		bt, err := os.Readlink(b)
		if err != nil {
			return err
		}
		if at != bt {
			return fmt.Errorf("%s points to %q, %s to %q", a, at, b, bt)
		}
	}
	return nil
}

func names(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	var ns []string
	for _, e := range entries {
		ns = append(ns, e.Name())
	}
	return ns, err
}

// sameFile compares two regular files, skipping the ranges that are holes
// in both (an 8 GiB sparse file compares in well under a second).
func sameFile(a, b string) error {
	fa, err := os.Open(a)
	if err != nil {
		return err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return err
	}
	defer fb.Close()
	ai, err := fa.Stat()
	if err != nil {
		return err
	}
	bi, err := fb.Stat()
	if err != nil {
		return err
	}
	size := ai.Size()
	if bi.Size() != size {
		return fmt.Errorf("%s has %d bytes, %s has %d", a, size, b, bi.Size())
	}
	ba, bb := make([]byte, chunkSize), make([]byte, chunkSize)
	for off := int64(0); off < size; {
		off = min(nextData(fa, off, size), nextData(fb, off, size))
		if off >= size {
			break
		}
		n := min(chunkSize, size-off)
		if _, err := fa.ReadAt(ba[:n], off); err != nil {
			return err
		}
		if _, err := fb.ReadAt(bb[:n], off); err != nil {
			return err
		}
		if !bytes.Equal(ba[:n], bb[:n]) {
			return fmt.Errorf("%s differs from %s in bytes %d-%d", b, a, off, off+n-1)
		}
		off += n
	}
	return nil
}

// diskUsage is the space allocated to path and everything under it
// (st_blocks, in 512-byte units).
func diskUsage(path string) (int64, error) {
	var blocks int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		blocks += fi.Sys().(*syscall.Stat_t).Blocks
		return nil
	})
	return blocks, err
}
