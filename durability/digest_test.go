// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"strings"
	"testing"

	"fastcp/checksum"
	"fastcp/internal/fsdir"

	"golang.org/x/sys/unix"
)

func digestOf(a checksum.Algorithm, b []byte) []byte {
	h := a.New()
	h.Write(b)
	return h.Sum(nil)
}

// --verify with the copy's digest: the destination read back (each way
// it can be) is hashed and compared with it; a corrupted byte is a
// mismatch naming both digests, and the old DEST stays.
func TestVerifyDigest(t *testing.T) {
	t.Parallel()
	// Two whole chunks and a short one: the read-back's two buffers are
	// each hashed and reused. The source is not read: one for all, a
	// hole of the copy's length (read, it would differ from the copy).
	data := randomData(2*verifyChunk + 4321)
	src := sourceFile(t, t.TempDir(), nil)
	if err := src.Truncate(int64(len(data))); err != nil {
		t.Fatal(err)
	}
	for _, a := range []checksum.Algorithm{checksum.SHA256, checksum.SHA512} {
		sum := digestOf(a, data) // the copy's digest, for every subtest
		for _, how := range []string{ReadEvicted, ReadDirect, ReadPageCache} {
			for _, corrupt := range []bool{false, true} {
				t.Run(a.String()+"/"+how+"/"+map[bool]string{false: "intact", true: "corrupt"}[corrupt], func(t *testing.T) {
					t.Parallel()
					dir, dest := setupDest(t)
					sys := testSys()
					if how != ReadEvicted {
						sys.resident = func(int) (int64, error) { return 4096, nil }
					}
					if how == ReadPageCache {
						real := sys.openFile
						sys.openFile = func(dirfd int, p string, flags int, mode uint32) (int, error) {
							if flags&unix.O_DIRECT != 0 {
								return -1, unix.EINVAL
							}
							return real(dirfd, p, flags, mode)
						}
					}
					if corrupt {
						corruptBeforeVerify(sys, verifyChunk+verifyChunk/4+17)
					}
					d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Checksum: a, Source: src, sys: sys})
					if err != nil {
						t.Fatal(err)
					}
					if d.srcSums != nil {
						t.Error("the source is checksummed behind the copy: the copy's digest makes that needless")
					}
					copyInto(t, d, data, 1<<20)
					d.SetDigest(sum)
					err = d.Commit(src)
					if got := d.Stats().VerifyRead; got != how && !onTmpfs(t, dir) {
						t.Errorf("read back with %q, want %q", got, how)
					}
					if !corrupt {
						if err != nil {
							t.Fatal(err)
						}
						if ok, err := holds(dest, data); !ok {
							t.Errorf("DEST does not hold the copy (%v)", err)
						}
						return
					}
					var de *Error
					if !errors.As(err, &de) || de.Op != OpVerify || !errors.Is(err, ErrMismatch) {
						t.Fatalf("Commit: %v, want a verify mismatch", err)
					}
					if !strings.Contains(err.Error(), a.String()+" of the copy read back") || !strings.Contains(err.Error(), checksum.Hex(sum)) {
						t.Errorf("the message does not name the digests: %v", err)
					}
					assertOld(t, dest)
					assertNoTemps(t, dir)
				})
			}
		}
	}
}

// The source is not read again for the comparison: a source rewritten
// after the copy (with the copy intact) passes; with VerifySource it is
// read again and the change is caught.
func TestVerifyDigestSourceReadOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	data := randomData(64<<10 + 5)
	for _, again := range []bool{false, true} {
		t.Run(map[bool]string{false: "dest", true: "source"}[again], func(t *testing.T) {
			dir, dest, src := setup(t, data)
			d, err := Create(fsdir.Cwd, dest, Options{Verify: true, VerifySource: again, Checksum: checksum.SHA256, Source: src})
			if err != nil {
				t.Fatal(err)
			}
			copyInto(t, d, data, 1<<20)
			d.SetDigest(digestOf(checksum.SHA256, data))
			if _, err := src.WriteAt([]byte("changed"), 100); err != nil {
				t.Fatal(err)
			}
			err = d.Commit(src)
			if !again {
				if err != nil {
					t.Fatalf("Commit: %v; the source was read again", err)
				}
				return
			}
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "the source changed") {
				t.Fatalf("Commit: %v, want a mismatch of the source read again", err)
			}
			assertOld(t, dest)
			assertNoTemps(t, dir)
		})
	}
}

// A sparse copy's holes are hashed as zeros on the read-back, not read.
func TestVerifyDigestSparse(t *testing.T) {
	// Not in parallel: it counts the bytes the whole process reads.
	dir, dest, src := setup(t, nil)
	// Five chunks: a hole, data, a hole, data, a hole to the end. What
	// the read-back may read: the two chunks with data, in verifyChunk
	// reads, and no more than one chunk besides; reading the holes too
	// would read all five.
	const bound = 3 * verifyChunk
	const size = 5 * verifyChunk
	spans := []int64{verifyChunk, 3 * verifyChunk}
	data := randomData(1 << 20)
	// The copy's digest, fed piece by piece: zeros up to each span, its
	// data, zeros to the end (not a buffer of the whole copy).
	h := checksum.SHA256.New()
	zeros := make([]byte, 64<<10)
	fill := func(from, to int64) {
		for ; from < to; from += int64(len(zeros)) {
			h.Write(zeros[:min(int64(len(zeros)), to-from)])
		}
	}
	at := int64(0)
	for _, off := range spans {
		fill(at, off)
		h.Write(data)
		at = off + int64(len(data))
	}
	fill(at, size)
	for _, off := range spans {
		if _, err := src.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
	}
	src.Truncate(size)
	d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Checksum: checksum.SHA256, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range spans {
		if _, err := d.File.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
		d.Written(off, int64(len(data)))
	}
	unix.Ftruncate(int(d.File.Fd()), size)
	d.SetDigest(h.Sum(nil))
	before := rchar(t)
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
	if read := rchar(t) - before; read > bound {
		t.Errorf("--verify read %d bytes of a copy holding 2 MiB of data", read)
	}
	assertNoTemps(t, dir)
}

// A digest of the wrong length, or without an algorithm, is not taken:
// --verify then compares with the source as it always did.
func TestSetDigestIgnoresAMismatchedDigest(t *testing.T) {
	t.Parallel()
	data := randomData(1 << 20)
	_, dest, src := setup(t, data)
	d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Checksum: checksum.SHA512, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	copyInto(t, d, data, 1<<20)
	d.SetDigest(digestOf(checksum.SHA256, data))
	if d.digest != nil {
		t.Fatal("a SHA-256 digest taken for SHA-512")
	}
	if err := d.Commit(src); err != nil {
		t.Fatal(err)
	}
}

// SetDigestFunc: Commit calls it once the copy is flushed, before the
// read-back; its digest is the one compared, its error fails Commit as it
// is, and the old DEST stays.
func TestSetDigestFunc(t *testing.T) {
	t.Parallel()
	data := randomData(64<<10 + 1)
	// The source is given to Commit, which does not read it with a
	// digest: one for all the cases.
	src := sourceFile(t, t.TempDir(), data)
	for _, tc := range []struct {
		name   string
		digest []byte
		err    error
	}{
		{"right", digestOf(checksum.SHA256, data), nil},
		{"wrong", digestOf(checksum.SHA256, data[1:]), nil},
		{"error", nil, errors.New("the source changed")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, dest := setupDest(t)
			c := record(t)
			d, err := Create(fsdir.Cwd, dest, Options{Verify: true, Checksum: checksum.SHA256, Source: src, sys: c.sys})
			if err != nil {
				t.Fatal(err)
			}
			copyInto(t, d, data, 1<<20)
			called := 0
			d.SetDigestFunc(func() ([]byte, error) {
				called++
				if got := c.filter("fdatasync"); len(got) == 0 {
					t.Error("called before the flush")
				}
				return tc.digest, tc.err
			})
			err = d.Commit(src)
			if called != 1 {
				t.Errorf("called %d times", called)
			}
			switch tc.name {
			case "right":
				if err != nil {
					t.Fatal(err)
				}
				return
			case "wrong":
				if !errors.Is(err, ErrMismatch) {
					t.Fatalf("Commit: %v, want a mismatch", err)
				}
			case "error":
				if err != tc.err {
					t.Fatalf("Commit: %v, want the function's error as it is", err)
				}
			}
			assertOld(t, dest)
			assertNoTemps(t, dir)
		})
	}
}
