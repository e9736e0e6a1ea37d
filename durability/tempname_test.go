package durability

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestTempNames(t *testing.T) {
	for _, dst := range []string{"/d/dst", "/d/" + strings.Repeat("x", 255), "rel"} {
		a, b := tempName(dst), tempName(dst)
		if a == b {
			t.Errorf("two temporary names for %s are the same: %s", dst, a)
		}
		if filepath.Dir(a) != filepath.Dir(dst) || len(filepath.Base(a)) > 255 {
			t.Errorf("temporary name %s for %s: not beside it, or longer than NAME_MAX", a, dst)
		}
		if !IsTempFor(filepath.Base(a), filepath.Base(dst)) {
			t.Errorf("IsTempFor(%s, %s) = false", filepath.Base(a), filepath.Base(dst))
		}
	}
	name := TempPrefix + "dst.0123456789ab"
	if !IsTempFor(name, "dst") || IsTempFor(name, "ds") || IsTempFor(name+"0", "dst") ||
		IsTempFor(TempPrefix+"dst.0123456789aB", "dst") || IsTempFor("dst.0123456789ab", "dst") {
		t.Error("IsTempFor matches the wrong names")
	}
}
