// SPDX-License-Identifier: MIT

// Command hashfloor is the benchmarks' yardstick for --checksum's own
// work: it hashes FILE N times, one pass after the other, with the SHA-256
// fastcp uses (crypto/sha256: the CPU's SHA instructions where it has
// them), reading through the page cache. Its user time is what N hashes
// of the source cost one core, whatever a copy does beside them.
//
//	hashfloor N FILE
package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	n, err := strconv.Atoi(os.Args[min(1, len(os.Args)-1)])
	if len(os.Args) != 3 || err != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "usage: hashfloor N FILE")
		os.Exit(2)
	}
	buf := make([]byte, 4<<20)
	for range n {
		if err := hash(os.Args[2], buf); err != nil {
			fmt.Fprintln(os.Stderr, "hashfloor:", err)
			os.Exit(1)
		}
	}
}

func hash(path string, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, buf); err != nil {
		return err
	}
	h.Sum(nil)
	return nil
}
