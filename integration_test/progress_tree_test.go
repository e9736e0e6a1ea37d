// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The bar of a tree ends at exactly its total: every regular file counts
// once, whatever becomes of it. Over an up-to-date DEST, -a -u skips every
// file, and each still counts as done; in a hard-linked tree, -a links the
// further names of an inode, and each counts too. A FIFO named after the
// tree (read as data, --copy-contents) holds the run once the tree is
// done: the bar must then say 100% and N/N files. On every redraw before,
// the totals never went back, and what is done never passed them.
func TestProgressEndsAtItsTotal(t *testing.T) {
	for _, c := range []struct {
		name   string
		linked bool     // the tree's second half is hard links of its first
		pre    bool     // DEST is a copy of the tree already
		args   []string // the run's options
	}{
		{"up-to-date DEST", false, true, []string{"-a", "-u"}},
		{"hard-linked tree", true, false, []string{"-a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := 0
			for g := 0; g < 20; g++ {
				for f := 0; f < 10; f++ {
					p := join(dir, "src", "one", fmt.Sprintf("g%02d", g), fmt.Sprintf("f%02d", f))
					mustMkdir(t, join(p, ".."))
					writeFile(t, p, randomBytes(1000+37*(g*10+f), p), 0o644)
					files++
				}
			}
			if c.linked {
				if out, err := exec.Command("cp", "-al", join(dir, "src", "one"), join(dir, "src", "two")).CombinedOutput(); err != nil {
					t.Fatalf("cp -al: %v: %s", err, out)
				}
				files *= 2
			}
			mustMkdir(t, join(dir, "dst"))
			if c.pre {
				wantSuccess(t, fastcp(t, dir, "-a", "src/.", "dst"))
			}
			gate := join(dir, "gate")
			if err := unix.Mkfifo(gate, 0o644); err != nil {
				t.Fatal(err)
			}

			master, tty := openPTY(t, 200)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			args := append(append([]string(nil), c.args...), "--copy-contents", "src/.", "gate", "dst")
			cmd := exec.CommandContext(ctx, setup.Bin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			var stdout bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, &stdout, tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			var mu sync.Mutex
			var drawn bytes.Buffer
			readDone := make(chan struct{})
			go func() {
				defer close(readDone)
				b := make([]byte, 4096)
				for {
					n, err := master.Read(b) // EIO once fastcp has closed the terminal
					mu.Lock()
					drawn.Write(b[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			snapshot := func() string {
				mu.Lock()
				defer mu.Unlock()
				return drawn.String()
			}

			// fastcp opens the gate once the tree is done.
			w, err := os.OpenFile(gate, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			end := fmt.Sprintf(" %d/%d files", files, files)
			held := ""
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				for _, l := range redraws(snapshot()) {
					if strings.Contains(l, " 100% ") && (strings.Contains(l, end+" ") || strings.HasSuffix(l, end)) {
						held = l
					}
				}
				if held != "" {
					break
				}
			}
			w.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("fastcp %s: %v, stdout %q", args, err, stdout.String())
			}
			<-readDone
			out := snapshot()
			if held == "" {
				ls := redraws(out)
				t.Fatalf("with the tree done, no redraw said 100%% and%s; the last: %q", end, ls[max(0, len(ls)-3):])
			}
			checkTotals(t, redraws(out))
			assertFileBytes(t, join(dir, "dst", "gate"), nil)
			if c.linked {
				one, two := statT(t, join(dir, "dst", "one", "g03", "f04")), statT(t, join(dir, "dst", "two", "g03", "f04"))
				if one.Ino != two.Ino {
					t.Errorf("the copy's hard links are not kept")
				}
			}
		})
	}
}

// redraws are the lines a bar drew on a terminal.
func redraws(out string) []string {
	var ls []string
	for _, seg := range strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' }) {
		if l := strings.TrimSpace(strings.ReplaceAll(seg, "\x1b[K", "")); l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

var (
	barFiles = regexp.MustCompile(` (\d+)/(\d+)\+? files`)
	barBytes = regexp.MustCompile(` ([0-9.]+) ([KMGT]?i?B)/([0-9.]+) ([KMGT]?i?B)\+? `)
)

// checkTotals checks a bar's redraws: its totals of files and bytes never
// go back, and what is done is never more than them.
func checkTotals(t *testing.T, ls []string) {
	t.Helper()
	var files, bytes float64
	for _, l := range ls {
		if m := barFiles.FindStringSubmatch(l); m != nil {
			done, _ := strconv.ParseFloat(m[1], 64)
			total, _ := strconv.ParseFloat(m[2], 64)
			if total < files || done > total {
				t.Errorf("files went from a total of %.0f to %s: %q", files, m[0], l)
			}
			files = total
		}
		if m := barBytes.FindStringSubmatch(l); m != nil {
			done, total := barSize(m[1], m[2]), barSize(m[3], m[4])
			if total < bytes || done > total {
				t.Errorf("bytes went from a total of %.0f to %s: %q", bytes, m[0], l)
			}
			bytes = total
		}
	}
}

// barSize reads a size as output.Size prints it.
func barSize(n, unit string) float64 {
	v, _ := strconv.ParseFloat(n, 64)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if u == unit {
			return v
		}
		v *= 1024
	}
	return v
}

// TestProgressJSONOfATree: --progress=json over a hard-linked tree says
// its totals are unknown (-1) while they are counted, never shows a total
// that goes back once known, and ends with every file and byte done, at
// its total.
func TestProgressJSONOfATree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files, bytes := 0, int64(0)
	for g := 0; g < 5; g++ {
		for f := 0; f < 20; f++ {
			p := join(dir, "src", "one", fmt.Sprintf("g%d", g), fmt.Sprintf("f%02d", f))
			mustMkdir(t, join(p, ".."))
			n := 500 + 11*(g*20+f)
			writeFile(t, p, randomBytes(n, p), 0o644)
			files++
			bytes += int64(n)
		}
	}
	if out, err := exec.Command("cp", "-al", join(dir, "src", "one"), join(dir, "src", "two")).CombinedOutput(); err != nil {
		t.Fatalf("cp -al: %v: %s", err, out)
	}
	files, bytes = 2*files, 2*bytes
	r := fastcp(t, dir, "--progress=json", "-a", "src", "dst")
	if r.code != 0 {
		t.Fatalf("fastcp --progress=json -a: %v", r)
	}
	objs := parseProgress(t, r.stderr)
	progressEndsAt(t, objs, int64(files), bytes, "all done")
}

// progressEndsAt checks --progress=json's objects of a whole run: the total
// of bytes never goes back and what is done never passes it, and the last
// object is the end, at files files and bytes bytes, 100%. done says what
// the end must show, for the message.
func progressEndsAt(t *testing.T, objs []progressObject, files, bytes int64, done string) {
	t.Helper()
	var total int64 = -1
	for i, o := range objs {
		if o.TotalBytes != -1 && (o.TotalBytes < total || o.Bytes > o.TotalBytes) {
			t.Errorf("object %d: total %d after %d, %d bytes done", i, o.TotalBytes, total, o.Bytes)
		}
		total = max(total, o.TotalBytes)
	}
	end := objs[len(objs)-1]
	if end.Event != "end" || end.Files != files || end.TotalFiles != files ||
		end.Bytes != bytes || end.TotalBytes != bytes || end.Percent != 100 {
		t.Errorf("end object %+v: want %d files and %d bytes, %s", end, files, bytes, done)
	}
}
