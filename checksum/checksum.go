// SPDX-License-Identifier: MIT

// Package checksum is --checksum's side of a copy that the copier and
// durability do not own: the algorithms, a digest's state saved with a
// --resume checkpoint and taken up again, the lines of a manifest as
// sha256sum and sha512sum write them, and the reading of a file's range
// into a hash where no copy reads it (a resumed copy's start, a file
// skipped as complete).
//
// The algorithms are SHA-256 and SHA-512 from Go's standard library. Others
// there were no faster (docs/measurements.md): SHA-1 was as fast as SHA-256
// (both use the CPU's SHA instructions) but no longer resists collisions,
// MD5 and SHA3-256 were slower.
package checksum

import (
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"strings"

	"crypto/sha256"
	"crypto/sha512"
)

// Algorithm is a hash function --checksum can use; None is no checksum.
type Algorithm int

// The algorithms, in the order --checksum lists them.
const (
	None Algorithm = iota
	SHA256
	SHA512
)

// Default is the algorithm of a bare --checksum.
const Default = SHA256

// Names are the values --checksum takes, indexed by Algorithm ("" for
// None, which cannot be asked for).
var Names = []string{"", "sha256", "sha512"}

func (a Algorithm) String() string {
	if a <= None || int(a) >= len(Names) {
		return "none"
	}
	return Names[a]
}

// Tool is the coreutils program that writes and checks this algorithm's
// manifests: "sha256sum".
func (a Algorithm) Tool() string { return a.String() + "sum" }

// New returns a new hash of the algorithm; nil for None.
func (a Algorithm) New() hash.Hash {
	switch a {
	case SHA256:
		return sha256.New()
	case SHA512:
		return sha512.New()
	}
	return nil
}

// Size is the length of the algorithm's digest in bytes.
func (a Algorithm) Size() int {
	switch a {
	case SHA256:
		return sha256.Size
	case SHA512:
		return sha512.Size
	}
	return 0
}

// Hex is a digest as sha256sum prints it: lower-case hexadecimal.
func Hex(digest []byte) string { return hex.EncodeToString(digest) }

// ErrBadState is a saved hash state that cannot be taken up again: not
// one this package wrote for the algorithm and offset asked for.
var ErrBadState = errors.New("the saved checksum state does not parse")

// stateLen is the length of the marshalled state of Go's SHA-2 digests:
// a 4-byte magic, the chaining values, one block of buffered input, and
// the count of bytes hashed (big-endian, the last 8 bytes).
func stateLen(a Algorithm) int {
	switch a {
	case SHA256:
		return 4 + 8*4 + sha256.BlockSize + 8
	case SHA512:
		return 4 + 8*8 + sha512.BlockSize + 8
	}
	return 0
}

// SaveState returns the state of h, an algorithm's hash that has been
// given bytes [0, off) of a file, to be stored with a checkpoint: the
// count of bytes is part of it, and Resume checks it.
func SaveState(h hash.Hash) ([]byte, error) {
	m, ok := h.(encoding.BinaryMarshaler)
	if !ok {
		return nil, errors.New("this hash cannot save its state")
	}
	return m.MarshalBinary()
}

// Resume returns a hash of algorithm a in the state b, which SaveState
// returned after bytes [0, off) were hashed. A state of another
// algorithm, another length, or another count of bytes than off is
// ErrBadState: a leftover's bytes are then hashed again from the start,
// never taken on trust. (The state carries no check of its own: a state
// whose chaining values were changed gives a wrong digest, which is why
// the record that stores it carries a checksum of the whole record.)
func Resume(a Algorithm, b []byte, off int64) (hash.Hash, error) {
	h := a.New()
	u, ok := h.(encoding.BinaryUnmarshaler)
	if !ok || len(b) != stateLen(a) || off < 0 {
		return nil, ErrBadState
	}
	if n := binary.BigEndian.Uint64(b[len(b)-8:]); n != uint64(off) {
		return nil, ErrBadState
	}
	if err := u.UnmarshalBinary(b); err != nil {
		return nil, ErrBadState
	}
	return h, nil
}

// Line is one line of a manifest, as sha256sum and sha512sum write it
// and check it ("DIGEST  NAME\n"): a name with a backslash, a newline or
// a carriage return gets a backslash before the digest and has those
// escaped as \\, \n and \r (coreutils 9.1's digest.c: a name "a\nb" is
// written "\DIGEST  a\nb"). Any other byte is written as it is.
func Line(digest []byte, name string) string {
	var b strings.Builder
	escape := strings.ContainsAny(name, "\\\n\r")
	// One allocation per line (a tree of millions of files makes as
	// many): the line's length, grown for escapes only.
	b.Grow(1 + 2*len(digest) + 2 + len(name) + 1)
	if escape {
		b.WriteByte('\\')
	}
	var hexDigest [2 * 64]byte
	b.Write(hex.AppendEncode(hexDigest[:0], digest))
	b.WriteString("  ")
	if !escape {
		b.WriteString(name)
	} else {
		for i := 0; i < len(name); i++ {
			switch c := name[i]; c {
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			default:
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('\n')
	return b.String()
}
