// SPDX-License-Identifier: MIT

package durability

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
)

// tempHexLen is the number of hex digits that end a temporary file's name.
const tempHexLen = 12

// tempName returns a candidate name for a temporary file beside path:
// TempPrefix, path's base name (tempBase: itself, or for a name longer
// than maxTempBase its start and a hash of the whole), a dot and 12 hex
// digits. The first name tried for a path is always the same (FirstTemp):
// a leftover of an interrupted copy then stands in the way of the next
// copy to the same DEST, which finds it without listing the directory (a
// listing of a huge directory is slow, docs/measurements.md; the create
// costs nothing more than it would anyway). The names after it are random:
// they only need to make a collision unlikely (O_EXCL makes one harmless),
// so math/rand/v2 is enough: crypto/rand's first use starts a timer and
// with it the runtime poller (epoll, an eventfd, a thread), a cost paid by
// every run.
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

func tempNameHex(path string, n uint64) string {
	dir, base := filepath.Split(path)
	// TempPrefix, the base, '.', n in tempHexLen hex digits; without fmt,
	// whose Sprintf was a visible part of a small copy's instructions
	// (docs/measurements.md).
	h := strconv.FormatUint(n, 16)
	if len(h) < tempHexLen {
		h = strings.Repeat("0", tempHexLen-len(h)) + h
	}
	return filepath.Join(dir, TempPrefix+tempBase(base)+"."+h)
}

// tempHashLen is the number of hex digits of the hash in a long name's
// tempBase.
const tempHashLen = 16

// tempBase is what of DEST's base name goes into its temporary names: the
// name itself when it has at most maxTempBase bytes, else its first bytes,
// a '~' and tempHashLen hex digits of the SHA-256 of the whole name, one
// byte longer than maxTempBase in all. Two DEST names that share their
// first maxTempBase bytes thus get temporary names of their own (and
// sweeps that tell them apart), and a short name can never be mistaken
// for a long one's (it is shorter).
func tempBase(base string) string {
	if len(base) <= maxTempBase {
		return base
	}
	sum := sha256.Sum256([]byte(base))
	h := hex.EncodeToString(sum[:tempHashLen/2])
	return base[:maxTempBase-tempHashLen] + "~" + h
}

// IsTempFor reports whether name (a base name) is one that tempName makes
// for a DEST whose base name is base.
func IsTempFor(name, base string) bool {
	rest, ok := strings.CutPrefix(name, TempPrefix+tempBase(base)+".")
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
