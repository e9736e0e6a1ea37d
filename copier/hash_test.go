// SPDX-License-Identifier: MIT

package copier

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"fastcp/checksum"

	"golang.org/x/sys/unix"
)

func sum256(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// wantDigest checks that the copy's hash is the SHA-256 of want, and
// that it was given every byte once.
func wantDigest(t *testing.T, h hash.Hash, res Result, want []byte) {
	t.Helper()
	wantSum(t, h, res, sum256(want), len(want))
}

// wantSum is wantDigest given the SHA-256 (sum) of the n bytes copied:
// for the tests that check several copies of the same bytes.
func wantSum(t *testing.T, h hash.Hash, res Result, sum []byte, n int) {
	t.Helper()
	if got := h.Sum(nil); !bytes.Equal(got, sum) {
		t.Fatalf("digest %x, want %x (sha256 of the %d bytes copied)", got, sum, n)
	}
	if !res.Hashed || res.Hash.Bytes != int64(n) {
		t.Errorf("hashed %v, %d bytes; want %d", res.Hashed, res.Hash.Bytes, n)
	}
}

// Every strategy gives the same digest, the source's, whatever the size:
// the buffers of rw, splice and direct hashed, the bytes of
// copy_file_range and sendfile read again.
func TestHashEveryStrategy(t *testing.T) {
	t.Parallel()
	// The largest is read again by the hash's goroutine
	// (hashBackgroundBytes), past direct's chunk.
	ns := []int{0, 1, 4096, 64 << 10, 64<<10 + 1, 1<<20 + 1, hashBackgroundBytes + 17}
	// Each size's source and its SHA-256, for every strategy; no case
	// changes them.
	sources, sums, paths := map[int][]byte{}, map[int][]byte{}, map[int]string{}
	for _, n := range ns {
		sources[n] = randomBytes(t, n)
		sums[n] = sum256(sources[n])
		paths[n] = srcFile(t, sources[n])
	}
	for _, s := range []Strategy{Auto, CopyFileRange, Sendfile, Splice, RW, Direct} {
		for _, n := range ns {
			data, sum, path := sources[n], sums[n], paths[n]
			t.Run(fmt.Sprintf("%s/%d", s, n), func(t *testing.T) {
				t.Parallel()
				dst, src := pairFrom(t, path)
				h := sha256.New()
				res, err := Copy(dst, src, Options{Strategy: s, BufferSize: 64 << 10, Hash: h})
				if err != nil {
					t.Fatal(err)
				}
				mustHold(t, dst, data)
				wantSum(t, h, res, sum, n)
				switch res.Strategy {
				case CopyFileRange, Sendfile:
					if res.Hash.Reread != int64(n) {
						t.Errorf("%v: %d bytes read again, want %d", res.Strategy, res.Hash.Reread, n)
					}
				case Splice:
					if res.Hash.Tee != int64(n) || res.Hash.Reread != 0 {
						t.Errorf("splice: %d bytes from tee, %d read again; want %d and 0", res.Hash.Tee, res.Hash.Reread, n)
					}
				default:
					if res.Hash.Reread != 0 {
						t.Errorf("%v read %d bytes again: its own buffers hold them", res.Strategy, res.Hash.Reread)
					}
				}
			})
		}
	}
}

// A sparse source's holes are hashed as zeros, not read, with the data
// between them, by every strategy.
func TestHashSparse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "src")
	// Three extents, and more than the 10 MiB of holes checked below.
	const size = 12 << 20
	chunks := map[int64][]byte{0: randomBytes(t, 1<<20), 5 << 20: randomBytes(t, 12345), 10 << 20: randomBytes(t, 4096)}
	makeSparse(t, path, size, chunks)
	want := sparseParts(size, chunks)
	sum := sumParts(want)
	for _, s := range []Strategy{Auto, CopyFileRange, Sendfile, Splice, RW, Direct} {
		t.Run(s.String(), func(t *testing.T) {
			src, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			dst, err := os.Create(filepath.Join(dir, "dst-"+s.String()))
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			h := sha256.New()
			res, err := Copy(dst, src, Options{Strategy: s, Hash: h})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, want...)
			wantSum(t, h, res, sum, size)
			if res.Hash.Zeros < 10<<20 || res.Hash.Zeros != res.Holes {
				t.Errorf("%d bytes hashed as zeros, %d of holes: the holes were read", res.Hash.Zeros, res.Holes)
			}
		})
	}
}

// A stream's bytes cannot be read again: splice duplicates its pipe for
// the hash (tee), rw hashes its buffer, and auto leaves sendfile out.
func TestHashStreams(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 3<<20+5)
	for _, s := range []Strategy{Auto, Splice, RW} {
		for _, short := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/short-tee=%v", s, short), func(t *testing.T) {
				if short {
					// tee duplicates only part of the pipe: the rest
					// goes through the buffer, hashed there.
					inject(t, &sys.tee, func(r, w, n, fl int) (int64, error) { return unix.Tee(r, w, min(n, 1000), fl) })
				}
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				go func() { w.Write(data); w.Close() }()
				dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
				if err != nil {
					t.Fatal(err)
				}
				defer dst.Close()
				h := sha256.New()
				res, err := Copy(dst, r, Options{sys: sys, Strategy: s, Hash: h})
				if err != nil {
					t.Fatal(err)
				}
				mustHold(t, dst, data)
				wantDigest(t, h, res, data)
				if res.Hash.Reread != 0 || res.StatOf(Sendfile).Calls != 0 {
					t.Errorf("a stream read again (%d bytes) or given to sendfile (%d calls)", res.Hash.Reread, res.StatOf(Sendfile).Calls)
				}
			})
		}
	}
}

// tee refused, or short, on a regular source: what it did not duplicate
// is read again from the source.
func TestHashSpliceTeeFails(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 3<<20+5) // both cases' source; neither changes it
	path := srcFile(t, data)
	for name, fn := range map[string]func(r, w, n, fl int) (int64, error){
		"refused": func(int, int, int, int) (int64, error) { return 0, unix.EINVAL },
		"short":   func(r, w, n, fl int) (int64, error) { return unix.Tee(r, w, min(n, 4096), fl) },
	} {
		t.Run(name, func(t *testing.T) {
			inject(t, &sys.tee, fn)
			dst, src := pairFrom(t, path)
			h := sha256.New()
			res, err := Copy(dst, src, Options{sys: sys, Strategy: Splice, Hash: h})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, data)
			wantDigest(t, h, res, data)
			if res.Hash.Reread == 0 {
				t.Error("nothing read again")
			}
		})
	}
}

// A strategy refused part-way hands over at the exact offset: the bytes
// the kernel moved before are read again, the next strategy's hashed from
// its buffer, in order.
func TestHashAcrossFallbacks(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 9<<20+3)
	dst, src := pair(t, data)
	inject(t, &sys.copyFileRange, cfrFailAfter(3<<20, 1<<20, unix.EXDEV))
	inject(t, &sys.sendfile, func(int, int, *int64, int) (int, error) { return 0, unix.EINVAL })
	h := sha256.New()
	res, err := Copy(dst, src, Options{sys: sys, Hash: h, BufferSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	wantDigest(t, h, res, data)
	if res.Hash.Reread != 3<<20 {
		t.Errorf("%d bytes read again, want the 3 MiB copy_file_range moved", res.Hash.Reread)
	}
}

// A resumed copy's hash starts from the state given: the digest is the
// whole file's.
func TestHashStartsAtStart(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 6<<20+11) // every case's source; none changes it
	path := srcFile(t, data)
	for _, s := range []Strategy{CopyFileRange, RW, Direct} {
		t.Run(s.String(), func(t *testing.T) {
			dst, src, want := prefilled(t, path, data, 2<<20)
			h := sha256.New()
			h.Write(data[:2<<20])
			res, err := Copy(dst, src, Options{Strategy: s, Start: 2 << 20, Hash: h})
			if err != nil {
				t.Fatal(err)
			}
			mustHold(t, dst, want...)
			if got := h.Sum(nil); !bytes.Equal(got, sum256(data)) {
				t.Fatalf("digest %x, want the whole file's", got)
			}
			if res.Hash.Bytes != int64(len(data)-2<<20) {
				t.Errorf("hashed %d bytes, want those after the start", res.Hash.Bytes)
			}
		})
	}
}

// A source that shrinks between the kernel's copy and the read for the
// hash fails the copy: the digest would not be of what was copied.
func TestHashSourceShrinks(t *testing.T) {
	t.Parallel()
	sys := testSys()
	data := randomBytes(t, 6<<20)
	dst, src := pair(t, data)
	var once atomic.Bool
	inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
		m, err := defaultSys.copyFileRange(rfd, roff, wfd, woff, n, flags)
		if once.CompareAndSwap(false, true) {
			unix.Ftruncate(rfd, 0) // fails: read-only descriptor
			os.Truncate(src.Name(), 1<<20)
		}
		return m, err
	})
	_, err := Copy(dst, src, Options{sys: sys, Strategy: CopyFileRange, Hash: sha256.New()})
	if !errors.Is(err, ErrHashShort) {
		t.Fatalf("error %v, want ErrHashShort", err)
	}
}

// slowHash hashes as sha256 but waits before each write: the direct
// pipeline's buffers stay with the hash a while.
type slowHash struct {
	hash.Hash
	delay time.Duration
}

func (s *slowHash) Write(b []byte) (int, error) {
	time.Sleep(s.delay)
	return s.Hash.Write(b)
}

// The direct pipeline gives the buffers of whole chunks to the hash and
// takes them back once hashed; a hash slower than the copy only slows it.
func TestHashDirectSlowHash(t *testing.T) {
	t.Parallel()
	// More than the ring holds: its buffers go round, each back from the
	// hash before it is read into again (a ninth read, of an aligned
	// block and a byte).
	data := randomBytes(t, ringBytes()+4097)
	dst, src := pair(t, data)
	h := &slowHash{Hash: sha256.New(), delay: 2 * time.Millisecond}
	res, err := Copy(dst, src, Options{Strategy: Direct, Hash: h})
	if err != nil {
		t.Fatal(err)
	}
	mustHold(t, dst, data)
	wantDigest(t, h.Hash, res, data)
}

// A copy that fails ends its hash and gives back every buffer: the
// pipeline's end does not wait forever, and a read error while the bytes
// are read again ends the copy.
func TestHashEndsWithAFailedCopy(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Both cases' source; neither changes it. Five whole chunks, the
	// fifth direct write of one (and a tail after them); the read again
	// fails half-way.
	size := 5*directBufBytes + 4097
	path := srcFile(t, randomBytes(t, size))
	t.Run("direct", func(t *testing.T) {
		dst, src := pairFrom(t, path)
		var writes atomic.Int32
		inject(t, &sys.pwrite, func(fd int, b []byte, off int64) (int, error) {
			if writes.Add(1) == 5 {
				return 0, unix.EIO
			}
			return defaultSys.pwrite(fd, b, off)
		})
		h := &slowHash{Hash: sha256.New(), delay: time.Millisecond}
		_, err := Copy(dst, src, Options{sys: sys, Strategy: Direct, Hash: h})
		if !errors.Is(err, unix.EIO) {
			t.Fatalf("error %v, want EIO", err)
		}
	})
	t.Run("read again", func(t *testing.T) {
		dst, src := pairFrom(t, path)
		inject(t, &sys.pread, func(fd int, b []byte, off int64) (int, error) {
			if off >= int64(size/2) {
				return 0, unix.EIO
			}
			return defaultSys.pread(fd, b, off)
		})
		_, err := Copy(dst, src, Options{sys: sys, Strategy: CopyFileRange, Hash: sha256.New()})
		if !errors.Is(err, unix.EIO) {
			t.Fatalf("error %v, want EIO", err)
		}
	})
}

// With snapshots, the hash keeps its state at the latest multiple passed:
// taken up again there, it ends at the whole file's digest.
func TestHashSnapshots(t *testing.T) {
	t.Parallel()
	data := randomBytes(t, 5<<20+100) // every case's source; none changes it
	path := srcFile(t, data)
	for _, s := range []Strategy{CopyFileRange, RW, Direct} {
		t.Run(s.String(), func(t *testing.T) {
			dst, src := pairFrom(t, path)
			h := sha256.New()
			var latest func() HashState
			o := Options{Strategy: s, Hash: h, HashSnapshotEvery: 1 << 20, HashSnapshots: func(f func() HashState) { latest = f }}
			if _, err := Copy(dst, src, o); err != nil {
				t.Fatal(err)
			}
			snap := latest()
			if snap.Off != 5<<20 {
				t.Fatalf("snapshot at %d, want %d", snap.Off, 5<<20)
			}
			r, err := checksum.Resume(checksum.SHA256, snap.State, snap.Off)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(r, bytes.NewReader(data[snap.Off:]))
			if !bytes.Equal(r.Sum(nil), sum256(data)) {
				t.Error("the snapshot does not lead to the file's digest")
			}
		})
	}
}

// HashLater: the copy returns while the bytes the kernel moved may still
// be read again; HashWait completes the hash (or gives it up).
func TestHashLater(t *testing.T) {
	t.Parallel()
	sys := testSys()
	// Past the size whose bytes a goroutine reads again beside the copy
	// (hashBackgroundBytes): five reads, each hashed after a wait, so that
	// the hash is as slow as it was for 20 MiB read a MiB at a time
	// (hashReadBytes) with a millisecond's wait. Every copy's source;
	// none changes it.
	data := randomBytes(t, hashBackgroundBytes+9)
	path := srcFile(t, data)
	for _, abandon := range []bool{false, true} {
		dst, src := pairFrom(t, path)
		h := &slowHash{Hash: sha256.New(), delay: 4 * time.Millisecond}
		res, err := Copy(dst, src, Options{sys: sys, Strategy: CopyFileRange, Hash: h, HashLater: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.HashWait == nil || res.Hash.Bytes != 0 {
			t.Fatalf("HashWait %v, stats %+v: want the wait left to the caller", res.HashWait != nil, res.Hash)
		}
		hs, err := res.HashWait(abandon)
		if abandon {
			if hs.Bytes >= int64(len(data)) && err == nil {
				t.Errorf("abandoned, yet all %d bytes hashed", hs.Bytes)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		res.Hash = hs
		wantDigest(t, h.Hash, res, data)
	}
	// A failed copy waits for nothing and leaves nothing to wait for.
	dst, src := pairFrom(t, path)
	inject(t, &sys.copyFileRange, cfrFailAfter(2*hashReadBytes, hashReadBytes, unix.EIO))
	res, err := Copy(dst, src, Options{sys: sys, Strategy: CopyFileRange, Hash: sha256.New(), HashLater: true})
	if err == nil || res.HashWait != nil {
		t.Fatalf("error %v, HashWait %v: want the error and no wait", err, res.HashWait != nil)
	}
}

// HashCheckpoint records each checkpoint with the hash's state when its
// fdatasync began: at a multiple of the snapshot interval, never past the
// offset recorded, and taken up there it ends at the file's digest.
func TestHashCheckpoints(t *testing.T) {
	t.Parallel()
	const every = 2 << 20 // bytes between checkpoints
	data := randomBytes(t, 6*every+3)
	sum := sum256(data)
	path := srcFile(t, data) // every case's source; none changes it
	for _, s := range []Strategy{RW, CopyFileRange, Direct} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			sys := testSys()
			dst, src := pairFrom(t, path)
			inject(t, &sys.copyFileRange, func(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
				return defaultSys.copyFileRange(rfd, roff, wfd, woff, min(n, 1<<20), flags)
			})
			type rec struct {
				off int64
				h   HashState
			}
			var recs []rec
			res, err := Copy(dst, src, Options{
				sys:      sys,
				Strategy: s, BufferSize: 256 << 10, CheckpointBytes: every, CheckpointInterval: time.Hour, Flush: true,
				Hash: sha256.New(), HashSnapshotEvery: 1 << 20,
				CheckpointFlush: testFlush, HashCheckpoint: func(off int64, h HashState) error { recs = append(recs, rec{off, h}); return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) < 3 || res.Checkpoints < len(recs) {
				t.Fatalf("%d checkpoints recorded, %d started", len(recs), res.Checkpoints)
			}
			taken := 0
			for _, r := range recs {
				if r.h.Off < 0 {
					continue // the hash had not passed a MiB yet
				}
				if r.h.Off > r.off || r.h.Off%(1<<20) != 0 {
					t.Errorf("checkpoint %d with a state at %d", r.off, r.h.Off)
					continue
				}
				h, err := checksum.Resume(checksum.SHA256, r.h.State, r.h.Off)
				if err != nil {
					t.Fatal(err)
				}
				h.Write(data[r.h.Off:])
				if !bytes.Equal(h.Sum(nil), sum) {
					t.Errorf("the state at %d does not lead to the file's digest", r.h.Off)
				}
				taken++
			}
			if taken == 0 {
				t.Error("no checkpoint carried a state")
			}
		})
	}
}
