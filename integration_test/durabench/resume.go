// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fastcp/checksum"
	"fastcp/durability"

	"golang.org/x/sys/unix"
)

// resumeScenario: a cold copy of resumeSize bytes, plain and with
// --resume (the checkpoints' fdatasyncs are the difference), and --resume
// continuing a leftover that holds the first 75% with its checkpoint there
// (made untimed before each run, flushed and evicted like the source).
func resumeScenario(ctx context.Context, c config) error { return resumeRuns(ctx, c, nil, false) }

// resumeSyncScenario is resumeScenario with --sync=data on every side: the
// copy that must reach stable storage anyway, where a checkpoint's
// fdatasync is the only thing --resume adds. (Against a plain copy, which
// leaves its data dirty in memory, the checkpoints also pay for writing
// the data to the device.)
func resumeSyncScenario(ctx context.Context, c config) error {
	return resumeRuns(ctx, c, nil, false, "--sync=data")
}

// resumeRuns times the three copies with extra options; check, when set,
// runs after each resumed run (untimed), DEST complete. With hashed, the
// leftover's record carries the SHA-256 state of its part, as a copy
// interrupted with --checksum leaves it.
func resumeRuns(ctx context.Context, c config, check func(dst string) error, hashed bool, extra ...string) error {
	src, dst := filepath.Join(c.ws, "src"), filepath.Join(c.ws, "dst")
	temp := filepath.Join(c.ws, durability.TempPrefix+"dst.000000000000")
	size := c.resumeSize
	if err := makeSource(src, size); err != nil {
		return err
	}
	prep := func() error {
		os.Remove(temp)
		return prepRun(src, dst, true)()
	}
	resumeAt := size / 4 * 3 &^ (1<<20 - 1)
	var h durability.HashState
	if hashed {
		var err error
		if h, err = hashStateOf(src, resumeAt); err != nil {
			return err
		}
	}
	// The leftover is written once; after each resumed run the complete
	// copy is kept aside and cut back to 75% for the next one, so that no
	// run comes right after 3 GiB of writes of its own preparation.
	kept := filepath.Join(c.ws, "resumed")
	prepLeftover := func() error {
		if err := prep(); err != nil {
			return err
		}
		if _, err := os.Stat(kept); err == nil {
			if err := os.Rename(kept, temp); err != nil {
				return err
			}
			if err := cutBack(src, temp, resumeAt, h); err != nil {
				return err
			}
		} else if err := makeLeftover(src, temp, resumeAt, h); err != nil {
			return err
		}
		if err := settle(); err != nil {
			return err
		}
		return cold(temp)
	}
	args := func(a ...string) []string { return append(append(slices.Clone(extra), a...), src, dst) }
	name := func(n string) string {
		return strings.Join(append(append([]string{"fastcp"}, shown(extra)...), n), " ")
	}
	plain, resume, from75 := strings.TrimSpace(name("")), name("--resume"), name("--resume, from 75%")
	tools := []tool{
		{name: plain, prep: prep, run: func(ctx context.Context) error { return runCmd(ctx, append([]string{c.bin}, args()...)...) }},
		{name: resume, prep: prep, run: func(ctx context.Context) error { return runCmd(ctx, append([]string{c.bin}, args("--resume")...)...) }},
		{name: from75, prep: prepLeftover, run: func(ctx context.Context) error {
			return runCmd(ctx, append([]string{c.bin}, args("--resume")...)...)
		}, after: func() error {
			// It must have resumed: the leftover became DEST.
			if _, err := os.Stat(temp); err == nil {
				return fmt.Errorf("%s is still there", temp)
			}
			if check != nil {
				if err := check(dst); err != nil {
					return err
				}
			}
			return os.Rename(dst, kept)
		}},
	}
	fmt.Printf("\n%s: %s copy, cold source (and cold leftover)\n", strings.Join(append([]string{"resume"}, shown(extra)...), " "), mib(size))
	r, err := measure(ctx, c.runs, tools)
	for _, t := range tools {
		r.row(t.name, size)
	}
	r.ratio(resume, plain, 1.03)
	r.ratio(from75, plain, 0.35)
	os.Remove(dst)
	os.Remove(temp)
	os.Remove(kept)
	return err
}

// shown is options as a tool's name shows them: a file's path left out.
func shown(opts []string) []string {
	var out []string
	for _, o := range opts {
		name, _, _ := strings.Cut(o, "=")
		if name == "--checksum-file" {
			o = name
		}
		out = append(out, o)
	}
	return out
}

// hashStateOf is the SHA-256 state after the first n bytes of src.
func hashStateOf(src string, n int64) (durability.HashState, error) {
	f, err := os.Open(src)
	if err != nil {
		return durability.HashState{}, err
	}
	defer f.Close()
	hh := checksum.SHA256.New()
	if _, err := io.CopyN(hh, f, n); err != nil {
		return durability.HashState{}, err
	}
	st, err := checksum.SaveState(hh)
	return durability.HashState{Alg: "sha256", Off: n, State: st}, err
}

// cutBack makes temp, a complete copy of src, the leftover of a copy
// interrupted at n: cut to n bytes, flushed, with its resume record (and
// hash state h, if any).
func cutBack(src, temp string, n int64, h durability.HashState) error {
	f, err := os.OpenFile(temp, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(n); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(src, &st); err != nil {
		return err
	}
	if err := durability.WriteRecordHash(int(f.Fd()), durability.IDOf(&st), n, h); err != nil {
		return err
	}
	return f.Close()
}

// makeLeftover writes the first n bytes of src to temp, mode 0600, flushed,
// with the resume record of a copy of src interrupted at n (and hash
// state h, if any).
func makeLeftover(src, temp string, n int64, h durability.HashState) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := io.CopyN(out, in, n); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(in.Fd()), &st); err != nil {
		return err
	}
	if err := durability.WriteRecordHash(int(out.Fd()), durability.IDOf(&st), n, h); err != nil {
		return err
	}
	return out.Close()
}
