package durability

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
)

// tempHexLen is the number of hex digits that end a temporary file's name.
const tempHexLen = 12

// tempName returns a candidate name for a temporary file beside path:
// TempPrefix, path's base name (cut to maxTempBase bytes, within NAME_MAX),
// a dot and 12 hex digits. The first name tried for a path is always the
// same (FirstTemp): a leftover of an interrupted copy then stands in the way
// of the next copy to the same DEST, which finds it without listing the
// directory (a listing of a huge directory is slow, docs/measurements.md;
// the create costs nothing more than it would anyway). The names after it are random: they
// only need to make a collision unlikely (O_EXCL makes one harmless), so
// math/rand/v2 is enough: crypto/rand's first use starts a timer and with it
// the runtime poller (epoll, an eventfd, a thread), a cost paid by every run.
func tempName(path string, first bool) string {
	if first {
		return FirstTemp(path)
	}
	return tempNameHex(path, rand.Uint64()&(1<<(4*tempHexLen)-1))
}

// FirstTemp is the first temporary name tried for path; when a copy got
// another one, the first one was taken: by a leftover, or by a copy to the
// same DEST that is still running.
func FirstTemp(path string) string { return tempNameHex(path, 0) }

func tempNameHex(path string, hex uint64) string {
	dir, base := filepath.Split(path)
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	return filepath.Join(dir, fmt.Sprintf("%s%s.%0*x", TempPrefix, base, tempHexLen, hex))
}

// IsTempFor reports whether name (a base name) is one that tempName makes
// for a DEST whose base name is base.
func IsTempFor(name, base string) bool {
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	rest, ok := strings.CutPrefix(name, TempPrefix+base+".")
	if !ok || len(rest) != tempHexLen {
		return false
	}
	for _, c := range rest {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
