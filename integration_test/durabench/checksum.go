// SPDX-License-Identifier: MIT

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"fastcp/integration_test/fsfixture"
)

// resumeSumScenario is resume with --checksum-file, of a -size file (1 GiB):
// the copy resumed from 75% against the whole copy (<= 0.35), and its
// manifest's line must be sha256sum's of DEST, the part done before the
// interruption included.
func resumeSumScenario(ctx context.Context, c config) error {
	c.resumeSize = c.size
	manifest := filepath.Join(c.ws, "SHA256SUMS")
	defer os.Remove(manifest)
	check := func(dst string) error {
		got, err := os.ReadFile(manifest)
		if err != nil {
			return err
		}
		want, err := sha256Line(dst)
		if err != nil {
			return err
		}
		if string(got) != want {
			return fmt.Errorf("the manifest says %q, sha256sum %q", got, want)
		}
		return nil
	}
	return resumeRuns(ctx, c, check, true, "--checksum-file="+manifest)
}

// sha256Line is the line sha256sum writes for path, named by its base
// name (the manifest is in its directory).
func sha256Line(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)) + "  " + filepath.Base(path) + "\n", nil
}

// partialScenario: DEST left at 75% of a -size file (1 GiB) by an
// interrupted cp (the prefix, dated back), continued with --resume,
// against the whole copy: on the workspace's filesystem (ext4, where the
// prefix is copied again: <= 0.6) and on xfs and btrfs mounted from
// images beside it (the prefix shared: <= 0.35). The source is on the
// workspace's filesystem; both files are cold before every run.
func partialScenario(ctx context.Context, c config) error {
	src := filepath.Join(c.ws, "src")
	if err := makeSource(src, c.size); err != nil {
		return err
	}
	cut := c.size / 4 * 3
	for _, kind := range []string{"", "xfs", "btrfs"} {
		dir, target := c.ws, 0.6
		if kind != "" {
			fs, err := fsfixture.Mount(c.ws, kind, 3*c.size)
			if err != nil {
				fmt.Printf("\npartial on %s: not measured: %v\n", kind, err)
				continue
			}
			defer fs.Unmount()
			dir, target = fs.Dir, 0.35
		} else {
			kind = "the workspace's filesystem"
		}
		dst := filepath.Join(dir, "dst")
		full := func() error {
			if err := settle(dst); err != nil {
				return err
			}
			return cold(src)
		}
		partial := func() error {
			if err := settle(dst); err != nil {
				return err
			}
			if err := cpLeft(src, dst, cut); err != nil {
				return err
			}
			if err := settle(); err != nil {
				return err
			}
			if err := cold(src); err != nil {
				return err
			}
			return cold(dst)
		}
		complete := func() error {
			fi, err := os.Stat(dst)
			if err == nil && fi.Size() != c.size {
				err = fmt.Errorf("%s has %d bytes, want %d", dst, fi.Size(), c.size)
			}
			return err
		}
		tools := []tool{
			{name: "fastcp", prep: full, after: complete, run: func(ctx context.Context) error { return runCmd(ctx, c.bin, src, dst) }},
			{name: "fastcp --resume, cp left 75%", prep: partial, after: complete, run: func(ctx context.Context) error {
				return runCmd(ctx, c.bin, "--resume", src, dst)
			}},
		}
		fmt.Printf("\npartial: %s copy onto %s, cold source and cold DEST\n", mib(c.size), kind)
		r, err := measure(ctx, c.runs, tools)
		for _, t := range tools {
			r.row(t.name, c.size)
		}
		r.ratio("fastcp --resume, cp left 75%", "fastcp", target)
		os.Remove(dst)
		if err != nil {
			return err
		}
	}
	return nil
}

// cpLeft writes the first n bytes of src to dst, as a cp interrupted there
// leaves it, flushed, its times a minute back (a run began after it).
func cpLeft(src, dst string, n int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
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
	if err := out.Close(); err != nil {
		return err
	}
	old := time.Now().Add(-time.Minute)
	return os.Chtimes(dst, old, old)
}
