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
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// flockHeld reports whether /proc/locks lists an flock on the file st.
func flockHeld(st *syscall.Stat_t) bool {
	b, _ := os.ReadFile("/proc/locks")
	key := fmt.Sprintf(" %02x:%02x:%d ", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "FLOCK") && strings.Contains(l, key) {
			return true
		}
	}
	return false
}

// resumeRaceRounds is how many times TestTwoResumedRunsOnOneDest runs its
// two copies.
const resumeRaceRounds = 200

// resumeRound is one round of TestTwoResumedRunsOnOneDest: the delays
// strace injects, in µs, and where B is killed.
type resumeRound struct {
	n int
	// A's delay before it removes the mark of the leftover it continued,
	// the first step of its commit: A holds the lock and the mark while
	// B looks.
	delayA int
	// B's delays: at its flock, and at one more step (the record read,
	// fgetxattr, or the cut back to the checkpoint, ftruncate).
	delayFlock int
	step       string
	delayStep  int
	killAt     int // B's pwrite64 that SIGKILL comes at; 0: none
	// window: B read the leftover's record while A held it, and locked
	// it once A had committed it (B's warning says so).
	window bool
}

func (r resumeRound) String() string {
	return fmt.Sprintf("round %d (A slowed %d µs before its commit; B slowed %d µs at flock, %d µs at %s; killed at pwrite64 %d)",
		r.n, r.delayA, r.delayFlock, r.delayStep, r.step, r.killAt)
}

// Two runs of fastcp --resume meet at one leftover (its checkpoint at 2
// MiB of 4), as two cron runs of -a --resume over one tree can. Run A
// takes it, copies the rest and is slowed (strace delay_enter) right
// before its commit, holding the lock; the test waits for that (A's lock
// in /proc/locks, the leftover at SOURCE's size) and starts run B, slowed
// at the steps between its look at the leftover and its act on it: its
// flock, and its record read or its cut back to the checkpoint. So B
// reads the record while A holds the file, and often locks it only once
// A has renamed it over DEST: B must then leave it alone (it is DEST) and
// copy under a name of its own. Every other round B is killed part-way
// (SIGKILL at a pwrite64), and one round in five has no delays at all.
// Whatever the order, 200 rounds: A exits 0; B exits 0, fails because A
// is running, or dies of the kill; DEST, once it exists, is never seen
// shorter than SOURCE, and at the end it is SOURCE byte for byte. The
// rounds that met the window are counted: some must have.
func TestTwoResumedRunsOnOneDest(t *testing.T) {
	t.Parallel()
	faultReady(t)
	const size = 4 << 20
	dir := fsDir(t, "tmpfs")
	src := join(dir, "src")
	writePattern(t, src, size, t.Name())
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	record := recordFor(statT(t, src), 2<<20+12345)
	seed := time.Now().UnixNano()
	t.Logf("delays from seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	rounds := make(chan resumeRound)
	go func() {
		defer close(rounds)
		for n := range resumeRaceRounds {
			a := 50000 + rng.IntN(100000)
			r := resumeRound{n: n, delayA: a, delayFlock: rng.IntN(2 * a), step: "fgetxattr", delayStep: rng.IntN(a / 2)}
			if n%2 == 1 {
				r.step = "ftruncate"
				r.killAt = 1 + rng.IntN(12)
			}
			if n%5 == 4 {
				r.delayA, r.delayFlock, r.delayStep = 0, 0, 0
			}
			rounds <- r
		}
	}()
	var mu sync.Mutex
	failed, window := 0, 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				mu.Lock()
				stop := failed > 0
				mu.Unlock()
				if stop {
					continue
				}
				msg := resumeRace(t, dir, src, data, record, &r)
				mu.Lock()
				if r.window {
					window++
				}
				if msg != "" {
					failed++
					t.Errorf("%v: %s", r, msg)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d rounds met the window", window, resumeRaceRounds)
	if failed == 0 && window == 0 {
		t.Errorf("no round of %d had B lock the leftover after A committed it: the test proved nothing", resumeRaceRounds)
	}
}

// resumeRace runs round r of TestTwoResumedRunsOnOneDest in a directory
// of its own under dir; it returns what went wrong, or "".
func resumeRace(t *testing.T, dir, src string, data []byte, record string, r *resumeRound) string {
	sub := join(dir, fmt.Sprintf("round%d", r.n))
	if err := os.Mkdir(sub, 0o755); err != nil {
		return err.Error()
	}
	defer os.RemoveAll(sub)
	forge(t, sub, data[:3<<20], record)
	left := join(sub, resumeTemp)
	var lst syscall.Stat_t
	if err := syscall.Stat(left, &lst); err != nil {
		return err.Error()
	}
	// DEST, once it exists, is never shorter than SOURCE.
	stop := make(chan struct{})
	short := make(chan int64, 1)
	go func() {
		defer close(short)
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Microsecond):
			}
			if fi, err := os.Stat(join(sub, "dst")); err == nil && fi.Size() < int64(len(data)) {
				select {
				case short <- fi.Size():
				default:
				}
			}
		}
	}()
	aArgs := []string{"-e", "trace=fremovexattr", "-e", fmt.Sprintf("inject=fremovexattr:delay_enter=%d", r.delayA)}
	aDone := make(chan traced, 1)
	go func() { aDone <- faultStraceLog(t, sub, join(sub, "a.log"), aArgs, "--resume", src, "dst") }()
	var a traced
	gotA := false
	for !gotA && !(flockHeld(&lst) && sizeOf(left) == int64(len(data))) {
		select {
		case a = <-aDone:
			gotA = true
		case <-time.After(500 * time.Microsecond):
		}
	}
	bArgs := []string{"-e", "trace=flock,pwrite64," + r.step,
		"-e", fmt.Sprintf("inject=flock:delay_enter=%d", r.delayFlock),
		"-e", fmt.Sprintf("inject=%s:delay_enter=%d", r.step, r.delayStep)}
	args := []string{"--resume", src, "dst"}
	if r.killAt > 0 {
		bArgs = append(bArgs, "-e", fmt.Sprintf("inject=pwrite64:signal=SIGKILL:when=%d", r.killAt))
		args = append([]string{"--strategy=rw", "--buffer-size=256K"}, args...)
	}
	b := faultStraceLog(t, sub, join(sub, "b.log"), bArgs, args...)
	if !gotA {
		a = <-aDone
	}
	close(stop)
	var msgs []string
	for s := range short {
		msgs = append(msgs, fmt.Sprintf("DEST was seen %d bytes long, SOURCE is %d", s, len(data)))
	}
	if a.code != 0 || a.stderr != "" {
		msgs = append(msgs, fmt.Sprintf("run A: %v", a.result))
	}
	// What B may say: it met the window; it read the mark once A had
	// removed it (not provably fastcp's: left alone); A held the lock.
	changed := "fastcp: warning: copying 'dst' from the start: leftover changed (it was renamed or replaced while it was being locked)\n"
	unmarked := "fastcp: warning: copying 'dst' from the start: foreign leftover (it is not marked as fastcp's); '" + resumeTemp + "' left alone\n"
	live := "fastcp: cannot resume the copy to 'dst': another copy to it is running ('" + resumeTemp + "' is locked)\n"
	r.window = b.stderr == changed
	switch {
	case b.signal == syscall.SIGKILL && r.killAt > 0 && (b.stderr == "" || b.stderr == changed || b.stderr == unmarked):
	case b.code == 0 && (b.stderr == "" || b.stderr == changed || b.stderr == unmarked):
	case b.code == 1 && b.stderr == live:
	default:
		msgs = append(msgs, fmt.Sprintf("run B: %v (signal %v)", b.result, b.signal))
	}
	got, err := os.ReadFile(join(sub, "dst"))
	if err != nil || !bytes.Equal(got, data) {
		msgs = append(msgs, fmt.Sprintf("DEST is not SOURCE at the end: %d bytes, %v", len(got), err))
	}
	return strings.Join(msgs, "; ")
}
