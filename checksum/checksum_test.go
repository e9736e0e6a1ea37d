// SPDX-License-Identifier: MIT

package checksum

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestAlgorithms(t *testing.T) {
	data := []byte("fastcp")
	want256 := sha256.Sum256(data)
	want512 := sha512.Sum512(data)
	for _, tc := range []struct {
		a    Algorithm
		name string
		want []byte
	}{{SHA256, "sha256", want256[:]}, {SHA512, "sha512", want512[:]}} {
		h := tc.a.New()
		h.Write(data)
		if got := h.Sum(nil); !bytes.Equal(got, tc.want) || tc.a.Size() != len(tc.want) {
			t.Errorf("%v: %x (size %d), want %x", tc.a, got, tc.a.Size(), tc.want)
		}
		if tc.a.String() != tc.name || tc.a.Tool() != tc.name+"sum" {
			t.Errorf("%d: String %q Tool %q", tc.a, tc.a.String(), tc.a.Tool())
		}
	}
	if None.New() != nil || None.String() != "none" || Algorithm(9).String() != "none" {
		t.Error("None is not an algorithm")
	}
}

// A state saved after some bytes, taken up again, ends at the digest of
// the whole: for both algorithms, at offsets inside and at the end of a
// block.
func TestStateRoundTrip(t *testing.T) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, a := range []Algorithm{SHA256, SHA512} {
		whole := a.New()
		whole.Write(data)
		want := whole.Sum(nil)
		for _, off := range []int{0, 1, 63, 64, 128, 999, 1000} {
			h := a.New()
			h.Write(data[:off])
			st, err := SaveState(h)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Resume(a, st, int64(off))
			if err != nil {
				t.Fatalf("%v at %d: %v", a, off, err)
			}
			r.Write(data[off:])
			if got := r.Sum(nil); !bytes.Equal(got, want) {
				t.Errorf("%v resumed at %d: %x, want %x", a, off, got, want)
			}
		}
	}
}

// A state that is not what was saved for this algorithm and offset is
// refused: truncated, lengthened, of the other algorithm, with another
// count of bytes, with a bad magic.
func TestResumeRefusesBadStates(t *testing.T) {
	h := SHA256.New()
	h.Write(make([]byte, 100))
	st, _ := SaveState(h)
	h512 := SHA512.New()
	h512.Write(make([]byte, 100))
	st512, _ := SaveState(h512)
	badMagic := bytes.Clone(st)
	badMagic[0] ^= 1
	for name, tc := range map[string]struct {
		a   Algorithm
		b   []byte
		off int64
	}{
		"truncated":       {SHA256, st[:len(st)-1], 100},
		"lengthened":      {SHA256, append(bytes.Clone(st), 0), 100},
		"empty":           {SHA256, nil, 100},
		"other algorithm": {SHA256, st512, 100},
		"sha512 as 256":   {SHA512, st, 100},
		"other offset":    {SHA256, st, 101},
		"negative offset": {SHA256, st, -1},
		"bad magic":       {SHA256, badMagic, 100},
		"no algorithm":    {None, st, 100},
	} {
		if _, err := Resume(tc.a, tc.b, tc.off); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: %v, want ErrBadState", name, err)
		}
	}
}

func TestLineEscapesAsCoreutils(t *testing.T) {
	d := []byte{0xab, 0x01}
	for name, want := range map[string]string{
		"plain":       "ab01  plain\n",
		"with space ": "ab01  with space \n",
		" lead":       "ab01   lead\n",
		"a\nb":        `\ab01  a\nb` + "\n",
		`back\slash`:  `\ab01  back\\slash` + "\n",
		"cr\rx":       `\ab01  cr\rx` + "\n",
		"tab\tq\"'*é": "ab01  tab\tq\"'*é\n",
	} {
		if got := Line(d, name); got != want {
			t.Errorf("Line(%q) = %q, want %q", name, got, want)
		}
	}
}

// sha256sum -c and sha512sum -c accept the lines, whatever the names.
func TestLinesPassCoreutilsCheck(t *testing.T) {
	dir := t.TempDir()
	names := []string{"plain", "with space", " lead", "trail ", "a\nb", `back\slash`, "cr\rx", "\\\n\r", "*star", "tab\tx"}
	for _, a := range []Algorithm{SHA256, SHA512} {
		tool, err := exec.LookPath(a.Tool())
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed", a.Tool())
			}
			t.Skipf("%s is not installed", a.Tool())
		}
		var manifest strings.Builder
		for i, n := range names {
			data := []byte(strings.Repeat(n, i+1))
			if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
				t.Fatal(err)
			}
			h := a.New()
			h.Write(data)
			manifest.WriteString(Line(h.Sum(nil), n))
		}
		sums := filepath.Join(dir, "SUMS")
		if err := os.WriteFile(sums, []byte(manifest.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool, "--strict", "-c", "SUMS")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s -c: %v\n%s", a.Tool(), err, out)
		}
		// And they are the lines the tool writes itself.
		cmd = exec.Command(tool, "--", names[4], names[5], names[6], names[1])
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		var ours strings.Builder
		for _, i := range []int{4, 5, 6, 1} {
			data, _ := os.ReadFile(filepath.Join(dir, names[i]))
			h := a.New()
			h.Write(data)
			ours.WriteString(Line(h.Sum(nil), names[i]))
		}
		if string(out) != ours.String() {
			t.Errorf("%s writes\n%q\nLine writes\n%q", a.Tool(), out, ours.String())
		}
	}
}

// ReadRange hashes a sparse file's holes as zeros and its data as read,
// any range of it; a file that ends early is ErrShort.
func TestReadRange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sparse")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 9<<20 + 123
	content := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for _, at := range []int64{1 << 20, 5<<20 + 17, 9 << 20} {
		chunk := make([]byte, 300<<10)
		for i := range chunk {
			chunk[i] = byte(r.IntN(255) + 1)
		}
		n := copy(content[at:], chunk)
		if _, err := f.WriteAt(chunk[:n], at); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	fd := int(f.Fd())
	for _, rg := range [][2]int64{{0, size}, {0, 0}, {1, size - 1}, {1<<20 + 5, 6 << 20}, {8 << 20, size}} {
		for _, buf := range [][]byte{nil, make([]byte, 4096)} {
			h := SHA256.New()
			if err := ReadRange(h, fd, rg[0], rg[1], buf); err != nil {
				t.Fatalf("%v: %v", rg, err)
			}
			want := sha256.Sum256(content[rg[0]:rg[1]])
			if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
				t.Errorf("range %v (buffer %d): %x, want %x", rg, len(buf), got, want)
			}
		}
	}
	if err := ReadRange(SHA256.New(), fd, size-10, size+10, nil); !errors.Is(err, ErrShort) {
		t.Errorf("past the end: %v, want ErrShort", err)
	}
	// Without SEEK_DATA, everything is read.
	old := seekData
	seekData = func(int, int64) (int64, error) { return 0, unix.EINVAL }
	defer func() { seekData = old }()
	h := SHA256.New()
	if err := ReadRange(h, fd, 0, size, nil); err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256(content); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Error("without SEEK_DATA: wrong digest")
	}
	// A read error is returned.
	oldRead := pread
	pread = func(int, []byte, int64) (int, error) { return 0, unix.EIO }
	defer func() { pread = oldRead }()
	if err := ReadRange(SHA256.New(), fd, 0, size, nil); err != unix.EIO {
		t.Errorf("read error: %v, want EIO", err)
	}
}

func TestZeros(t *testing.T) {
	for _, n := range []int64{0, 1, 1 << 20, 3<<20 + 5} {
		h := SHA512.New()
		Zeros(h, n)
		want := sha512.Sum512(make([]byte, n))
		if !bytes.Equal(h.Sum(nil), want[:]) {
			t.Errorf("Zeros(%d): wrong digest", n)
		}
	}
}
