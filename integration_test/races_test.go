// SPDX-License-Identifier: MIT

package integration_test

// Many runs on one DEST at once, as cron jobs, xargs -P, GNU parallel and
// fpsync-style workers run fastcp: parallel workers making the same
// directories (a directory another run made meanwhile is taken, a symbolic
// link or a file planted there is refused), and two --resume runs meeting
// at one leftover (a committed DEST is never cut back).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
)

// raceTree writes under root the files of a tree of 300 directories (30,
// each holding 9) and 1,500 files (5 in each directory), each file's bytes
// its own, and returns their paths relative to root, in the order find
// lists them. Only the files whose index is k modulo of are written (a
// tree of its own for each of several workers, overlapping in its
// directories); of 1 writes them all.
func raceTree(t *testing.T, root string, k, of int) []string {
	t.Helper()
	var rel []string
	i := 0
	add := func(dir string) {
		mustMkdir(t, join(root, dir))
		for f := range 5 {
			if i%of == k {
				p := fmt.Sprintf("%s/f%d", dir, f)
				writeFile(t, join(root, p), []byte(fmt.Sprintf("%s %d %s\n", p, i, strings.Repeat("x", i%97))), 0o644)
				rel = append(rel, p)
			}
			i++
		}
	}
	for a := range 30 {
		top := fmt.Sprintf("d%02d", a)
		add(top)
		for b := range 9 {
			add(fmt.Sprintf("%s/e%d", top, b))
		}
	}
	return rel
}

// uncopied fails the test unless every file of files (relative paths) is
// in dst with the bytes it has in src, and returns how many are not.
func uncopied(t *testing.T, src, dst string, files []string) (missing int) {
	t.Helper()
	for _, f := range files {
		want, err := os.ReadFile(join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(join(dst, f))
		if err != nil || !bytes.Equal(got, want) {
			missing++
			if missing <= 3 {
				t.Errorf("%s: %q, %v; want %q", f, got, err, want)
			}
		}
	}
	return missing
}

// raceRounds is how many times the parallel-worker tests run their copy.
const raceRounds = 20

// Eight workers (find | xargs -0 -P 8 -n 3 fastcp --parents -t DEST) make
// the same directories at once, 20 times over a tree of 1,500 files in 300
// directories: a directory another worker made after a run looked
// (mkdir's EEXIST) is taken as one that was there, so no file is skipped
// and every one is copied. (cp 9.1 skips 5 to 15 files a round, with
// "cannot make directory ...: File exists".)
func TestParallelParents(t *testing.T) {
	t.Parallel()
	xargs := needTool(t, "xargs")
	dir := t.TempDir()
	files := raceTree(t, join(dir, "src"), 0, 1)
	list := []byte(strings.Join(files, "\x00") + "\x00")
	for round := range raceRounds {
		dst := join(dir, fmt.Sprintf("dst%d", round))
		mustMkdir(t, dst)
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		cmd := exec.CommandContext(ctx, xargs, "-0", "-P", "8", "-n", "3", setup.Bin, "--parents", "-t", dst)
		cmd.Dir = join(dir, "src")
		cmd.Stdin = bytes.NewReader(list)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || len(out) != 0 {
			t.Fatalf("round %d: %v, output %.600q", round, err, out)
		}
		if n := uncopied(t, join(dir, "src"), dst, files); n > 0 {
			t.Fatalf("round %d: %d of %d files not copied", round, n, len(files))
		}
		os.RemoveAll(dst)
	}
}

// Eight runs of -r at once copy eight trees into one DEST, the same 300
// directories in each (each run holds a share of the 1,500 files), 20
// times: every run succeeds, whichever made a directory, and DEST holds
// every file.
func TestParallelRecursiveIntoOneDest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const workers = 8
	var all []string
	for k := range workers {
		all = append(all, raceTree(t, join(dir, fmt.Sprintf("src%d", k)), k, workers)...)
	}
	sort.Strings(all)
	for round := range raceRounds {
		dst := join(dir, fmt.Sprintf("dst%d", round))
		mustMkdir(t, dst)
		var wg sync.WaitGroup
		outs := make([][]byte, workers)
		errs := make([]error, workers)
		for k := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
				defer cancel()
				outs[k], errs[k] = fastcpCmd(ctx, dir, "-r", fmt.Sprintf("src%d/.", k), dst).CombinedOutput()
			}()
		}
		wg.Wait()
		for k := range workers {
			if errs[k] != nil || len(outs[k]) != 0 {
				t.Fatalf("round %d, run %d: %v, output %.600q", round, k, errs[k], outs[k])
			}
		}
		for k := range workers {
			// Each file is in one source tree: compare with that one.
			var mine []string
			for _, f := range all {
				if _, err := os.Lstat(join(dir, fmt.Sprintf("src%d", k), f)); err == nil {
					mine = append(mine, f)
				}
			}
			if n := uncopied(t, join(dir, fmt.Sprintf("src%d", k)), dst, mine); n > 0 {
				t.Fatalf("round %d: %d files of run %d not copied", round, n, k)
			}
		}
		os.RemoveAll(dst)
	}
}

// Another user plants something where a run is making a directory, in a
// sticky directory everyone may write to, right after the run looked and
// found nothing there (strace makes that look answer ENOENT while the
// planted entry is there: the mkdir then meets it, as it would at the end
// of a lost race). A symbolic link (to a directory of hers) or a regular
// file is refused with cp's message for a mkdir that failed, exit 1, and
// nothing is written through it or into it; a directory is taken, as one
// that was there is, with -r and with --parents.
func TestPlantedWhereADirectoryIsMade(t *testing.T) {
	t.Parallel()
	needRoot(t)
	for _, mode := range []string{"-r", "--parents"} {
		for _, plant := range []string{"symlink", "file", "directory"} {
			t.Run(mode+"/"+plant, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				if err := os.MkdirAll(join(dir, "src/a/racedir"), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, join(dir, "src/a/racedir/f"), []byte("data\n"), 0o644)
				shared := join(dir, "shared")
				mustMkdir(t, shared)
				args := []string{"-r", "src/a/racedir", "shared/"}
				in, shown := shared, "cannot create directory 'shared/racedir'"
				if mode == "--parents" {
					// Run in src: --parents makes shared/a, then
					// shared/a/racedir.
					mustMkdir(t, join(shared, "a"))
					in, shown = join(shared, "a"), "cannot make directory '../shared/a/racedir'"
					args = []string{"--parents", "a/racedir/f", "../shared"}
				}
				if err := os.Chmod(in, 0o1777); err != nil {
					t.Fatal(err)
				}
				theirs := join(dir, "theirs")
				mustMkdir(t, theirs)
				planted := join(in, "racedir")
				switch plant {
				case "symlink":
					if err := os.Symlink(theirs, planted); err != nil {
						t.Fatal(err)
					}
				case "file":
					writeFile(t, planted, []byte("hers\n"), 0o644)
				case "directory":
					mustMkdir(t, planted)
				}
				for _, p := range []string{theirs, planted} {
					if err := os.Lchown(p, ccNobody, ccNobody); err != nil {
						t.Fatal(err)
					}
				}
				run := dir
				if mode == "--parents" {
					run = join(dir, "src")
				}
				tr := faultStrace(t, run, []string{"-e", "trace=newfstatat", "-e", "inject=newfstatat:error=ENOENT:when=1", "-P", "racedir"}, args...)
				if tr.injected("ENOENT") < 0 {
					t.Fatalf("strace injected nothing:\n%s", tr.log)
				}
				if plant == "directory" {
					wantSuccess(t, tr.result)
					assertFileBytes(t, join(planted, "f"), []byte("data\n"))
					return
				}
				wantFailure(t, tr.result, 1, "fastcp: "+shown+": File exists\n")
				onlyEntries(t, theirs)
				if plant == "file" {
					assertFileBytes(t, planted, []byte("hers\n"))
				} else if target, err := os.Readlink(planted); err != nil || target != theirs {
					t.Errorf("the planted link: %q, %v", target, err)
				}
			})
		}
	}
}
