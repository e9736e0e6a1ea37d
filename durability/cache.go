// SPDX-License-Identifier: MIT

package durability

import (
	"os"

	"fastcp/internal/sysx"
)

// Evict makes f's pages leave the page cache, so that the next read of it
// comes from the device (sysx.Evict: written back, then dropped).
func Evict(f sysx.Descriptor) error { return sysx.Evict(f) }

// EvictPath is Evict for the file at path (opened read-only: fdatasync and
// posix_fadvise need no write access).
func EvictPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return Evict(f)
}
