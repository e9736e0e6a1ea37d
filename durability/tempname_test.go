// SPDX-License-Identifier: MIT

package durability

import (
	"fastcp/internal/fsdir"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTempNames(t *testing.T) {
	t.Parallel()
	for _, dst := range []string{"/d/dst", "/d/" + strings.Repeat("x", 255), "rel"} {
		a, b := tempName(dst, false), tempName(dst, false)
		if a == b {
			t.Errorf("two temporary names for %s are the same: %s", dst, a)
		}
		if f1, f2 := tempName(dst, true), FirstTemp(dst); f1 != f2 || f1 == a {
			t.Errorf("first temporary names for %s: %s and %s (a random one: %s)", dst, f1, f2, a)
		}
		for _, n := range []string{a, FirstTemp(dst)} {
			if filepath.Dir(n) != filepath.Dir(dst) || len(filepath.Base(n)) > 255 {
				t.Errorf("temporary name %s for %s: not beside it, or longer than NAME_MAX", n, dst)
			}
			if !IsTempFor(filepath.Base(n), filepath.Base(dst)) {
				t.Errorf("IsTempFor(%s, %s) = false", filepath.Base(n), filepath.Base(dst))
			}
		}
	}
	// Two long names alike in their first maxTempBase bytes: names of
	// their own, which the other's sweep does not take for its own.
	long := strings.Repeat("n", maxTempBase)
	a, b := "/d/"+long+"-a", "/d/"+long+"-b"
	if FirstTemp(a) == FirstTemp(b) || IsTempFor(filepath.Base(FirstTemp(a)), filepath.Base(b)) ||
		IsTempFor(filepath.Base(tempName(b, false)), filepath.Base(a)) {
		t.Errorf("long names share temporary names: %s, %s", FirstTemp(a), FirstTemp(b))
	}
	if IsTempFor(filepath.Base(FirstTemp(a)), tempBase(filepath.Base(a))) {
		t.Error("a short name is taken for a long one's shortened form")
	}
	for n, want := range map[uint64]string{0: "000000000000", 0xa: "00000000000a", 0x123456789abc: "123456789abc"} {
		if got := tempNameHex("/d/dst", n); got != "/d/"+TempPrefix+"dst."+want {
			t.Errorf("tempNameHex(/d/dst, %#x) = %s, want /d/%sdst.%s", n, got, TempPrefix, want)
		}
	}
	name := TempPrefix + "dst.0123456789ab"
	if !IsTempFor(name, "dst") || IsTempFor(name, "ds") || IsTempFor(name+"0", "dst") ||
		IsTempFor(TempPrefix+"dst.0123456789aB", "dst") || IsTempFor("dst.0123456789ab", "dst") {
		t.Error("IsTempFor matches the wrong names")
	}
}

// The first name is taken by a leftover: the copy goes on under a random
// name and leaves the leftover alone (the caller judges it).
func TestCreateWhenFirstTempTaken(t *testing.T) {
	t.Parallel()
	dst := filepath.Join(t.TempDir(), "dst")
	if err := os.WriteFile(FirstTemp(dst), []byte("leftover"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Create(fsdir.Cwd, dst, Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	if d.temp == FirstTemp(dst) || !IsTempFor(filepath.Base(d.temp), "dst") {
		t.Errorf("temporary file %s, want a random one beside %s", d.temp, dst)
	}
	if b, err := os.ReadFile(FirstTemp(dst)); err != nil || string(b) != "leftover" {
		t.Errorf("the leftover became %q, %v", b, err)
	}
	d2, err := Create(fsdir.Cwd, filepath.Join(filepath.Dir(dst), "other"), Options{Named: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Abort()
	if d2.temp != FirstTemp(d2.Path) {
		t.Errorf("temporary file %s, want the first name %s", d2.temp, FirstTemp(d2.Path))
	}
}
