// SPDX-License-Identifier: MIT

package durability

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"fastcp/internal/fsdir"

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
			d.record()
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

// Each way DirSync makes an entry records it, so that the directory is
// fsynced when it is finished; an entry not made records nothing; a nil
// DirSync makes its entry and records nothing.
func TestDirSyncRecordsTheEntriesItMakes(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	dir, err := fsdir.Open(tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Release()
	if err := os.WriteFile(filepath.Join(tmp, "taken"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	symlink := func(e Entry) error { return unix.Symlinkat("target", e.Dir, e.Name) }
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		make func(d *DirSync, n int) error // n: a name of the test's own
		want bool
	}{
		{"mkdir", func(d *DirSync, n int) error {
			made, err := d.Mkdir(dir, fmt.Sprint("dir", n))
			if !made && err == nil {
				err = errors.New("not made")
			}
			return err
		}, true},
		{"mkdir over a name taken", func(d *DirSync, _ int) error {
			if made, err := d.Mkdir(dir, "taken"); made || err != nil {
				return fmt.Errorf("made %v, %v; want false, nil", made, err)
			}
			return nil
		}, false},
		{"mkdir that fails", func(d *DirSync, _ int) error {
			if _, err := d.Mkdir(dir, "missing/dir"); err == nil {
				return errors.New("no error")
			}
			return nil
		}, false},
		{"link", func(d *DirSync, n int) error { return d.Link(dir, fmt.Sprint("link", n), symlink) }, true},
		{"link over a name taken", func(d *DirSync, _ int) error {
			if err := d.Link(dir, "taken", symlink); !errors.Is(err, unix.EEXIST) {
				return fmt.Errorf("%v, want EEXIST", err)
			}
			return nil
		}, false},
		{"replace", func(d *DirSync, n int) error {
			_, err := d.Replace(nil, dir, fmt.Sprint("replaced", n), symlink, nil)
			return err
		}, true},
		{"replace whose create fails", func(d *DirSync, _ int) error {
			if _, err := d.Replace(nil, dir, "taken", func(Entry) error { return boom }, nil); err != boom {
				return fmt.Errorf("%v, want the create's error", err)
			}
			return nil
		}, false},
		{"replace whose finish fails", func(d *DirSync, _ int) error {
			if _, err := d.Replace(nil, dir, "taken", symlink, func(Entry) error { return boom }); err != boom {
				return fmt.Errorf("%v, want the finish's error", err)
			}
			return nil
		}, false},
	} {
		for n, nilSync := range []bool{false, true} {
			synced := 0
			sys := testSys()
			sys.fsync = func(int) error { synced++; return nil }
			d := &DirSync{sys: sys}
			maker := d
			if nilSync {
				maker = nil
			}
			if err := tc.make(maker, n); err != nil {
				t.Errorf("%s (nil DirSync %v): %v", tc.name, nilSync, err)
				continue
			}
			if err := d.Finished(SyncData, 42, false); err != nil {
				t.Fatal(err)
			}
			if want := tc.want && !nilSync; (synced == 1) != want || synced > 1 {
				t.Errorf("%s (nil DirSync %v): %d fsyncs when finished, want one: %v", tc.name, nilSync, synced, want)
			}
		}
	}
	if got, _ := os.ReadDir(tmp); len(got) != 7 {
		t.Errorf("entries %v, want taken and two each of dir, link and replaced", got)
	}
	// A nil DirSync finishes a directory nothing was added to.
	var none *DirSync
	if err := none.Finished(SyncData, -1, false); err != nil {
		t.Errorf("nil DirSync, not copied: %v, want no fsync", err)
	}
	if err := none.Finished(SyncData, -1, true); !errors.Is(err, unix.EBADF) {
		t.Errorf("nil DirSync, copied: %v, want fsync's EBADF", err)
	}
}
