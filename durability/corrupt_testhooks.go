// SPDX-License-Identifier: MIT

//go:build fastcp_testhooks

package durability

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CorruptEnv names the test hook of --verify, present only in binaries
// built with the build tag fastcp_testhooks (the integration tests build
// one for the tests that need it): when set to a byte offset, Commit flips
// that byte of the destination on the device (written through and
// fdatasynced) right before the read-back, so that tests can prove a
// corrupted copy is caught and the old DEST kept.
const CorruptEnv = "FASTCP_TEST_CORRUPT_BEFORE_VERIFY"

func init() {
	defaultSys.beforeVerify = func(dirfd int, name string) error {
		off := os.Getenv(CorruptEnv)
		if off == "" {
			return nil
		}
		if err := corrupt(dirfd, name, off); err != nil {
			return fmt.Errorf("%s: %w", CorruptEnv, err)
		}
		return nil
	}
}

// corrupt flips the byte at offset of name in dirfd and makes that
// durable, so a read from the device sees it.
func corrupt(dirfd int, name, offset string) error {
	off, err := strconv.ParseInt(offset, 10, 64)
	if err != nil || off < 0 {
		return fmt.Errorf("bad offset %q", offset)
	}
	fd, err := openat(dirfd, name, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return err
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b[:], off); err != nil {
		return err
	}
	return f.Sync()
}
