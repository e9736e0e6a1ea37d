// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDirSyncRule checks the one rule of a tree directory's fsync: never
// with --sync=none; otherwise for a copied directory, or one that got an
// entry durability did not sync; never for an untouched DEST directory.
func TestDirSyncRule(t *testing.T) {
	t.Parallel()
	var synced []int
	sys := testSys()
	sys.fsync = func(fd int) error { synced = append(synced, fd); return nil }
	for _, tc := range []struct {
		mode          SyncMode
		copied, added bool
		want          bool
	}{
		{SyncNone, true, true, false},
		{SyncData, false, false, false},
		{SyncData, true, false, true},
		{SyncFull, false, true, true},
		{SyncOSync, true, true, true},
		{SyncODSync, false, true, true},
	} {
		synced = nil
		d := DirSync{sys: sys}
		if tc.added {
			d.Added()
		}
		if err := d.Finished(tc.mode, 42, tc.copied); err != nil {
			t.Fatal(err)
		}
		if got := len(synced) == 1 && synced[0] == 42; got != tc.want || len(synced) > 1 {
			t.Errorf("mode %v copied %v added %v: fsyncs %v, want one: %v", tc.mode, tc.copied, tc.added, synced, tc.want)
		}
	}
	// A failed fsync is returned, once.
	calls := 0
	sys.fsync = func(int) error { calls++; return unix.EIO }
	d := DirSync{sys: sys}
	if err := d.Finished(SyncData, 42, true); !errors.Is(err, unix.EIO) || calls != 1 {
		t.Errorf("failed fsync: err %v after %d calls, want EIO after 1", err, calls)
	}
}
