// SPDX-License-Identifier: MIT

// Command iocopy is the "plain Go program" peer of the benchmarks: it copies
// SRC to DST with os.Open, os.Create and io.Copy, nothing more, and exits
// non-zero on any error. A DST that is a directory gets SRC's base name in
// it, as with cp (the shell-loop scenario copies into one directory).
//
//	iocopy SRC DST
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: iocopy SRC DST")
		os.Exit(2)
	}
	if err := copyFile(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "iocopy:", err)
		os.Exit(1)
	}
}

func copyFile(src, dst string) error {
	if st, err := os.Stat(dst); err == nil && st.IsDir() {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
