// SPDX-License-Identifier: MIT

package integration_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ccEvent is one inotify event on a watched directory.
type ccEvent struct {
	mask   uint32
	cookie uint32
	name   string
}

func (e ccEvent) String() string {
	var kinds []string
	for _, k := range []struct {
		bit  uint32
		name string
	}{
		{unix.IN_CREATE, "CREATE"}, {unix.IN_ATTRIB, "ATTRIB"}, {unix.IN_MOVED_FROM, "MOVED_FROM"},
		{unix.IN_MOVED_TO, "MOVED_TO"}, {unix.IN_DELETE, "DELETE"}, {unix.IN_CLOSE_WRITE, "CLOSE_WRITE"},
		{unix.IN_Q_OVERFLOW, "Q_OVERFLOW"},
	} {
		if e.mask&k.bit != 0 {
			kinds = append(kinds, k.name)
		}
	}
	return fmt.Sprintf("%s %q", strings.Join(kinds, "|"), e.name)
}

// ccReadEvents drains a non-blocking inotify descriptor.
func ccReadEvents(t testing.TB, fd int) []ccEvent {
	t.Helper()
	var evs []ccEvent
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return evs
		}
		if err != nil {
			t.Fatalf("reading inotify events: %v", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(raw.Len)]
			evs = append(evs, ccEvent{mask: raw.Mask, cookie: raw.Cookie, name: string(bytes.TrimRight(name, "\x00"))})
			off += unix.SizeofInotifyEvent + int(raw.Len)
		}
	}
}

// TestCpCompatAttrsBeforeRename checks that DEST appears only once, with
// its final attributes: by the rename of a .fastcp-* temporary file over an
// existing DEST, or by the link of the unnamed (O_TMPFILE) one under a new
// DEST's name. inotify on DEST's directory must show the temporary file's
// attributes changed (IN_ATTRIB) before DEST appears, and no IN_ATTRIB for
// DEST itself; and a goroutine polling DEST
// must never see it with another mode, owner, mtime or size than the
// final ones. The source is 64 MiB with mode 0751, run under umask 0.
func TestCpCompatAttrsBeforeRename(t *testing.T) {
	t.Parallel()
	root := os.Geteuid() == 0
	dir := t.TempDir()
	src := join(dir, "src")
	data := randomBytes(64<<20, "cpcompat-attrs")
	writeFile(t, src, data, 0o751)
	if root {
		if err := os.Chown(src, 1234, 5678); err != nil {
			t.Fatal(err)
		}
	}
	srcTimes := []unix.Timespec{{Sec: 1_234_567_890, Nsec: 987_654_321}, {Sec: 1_234_567_890, Nsec: 123_456_789}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, src, srcTimes, 0); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name     string
		args     []string
		owner    bool // preserves the owner
		times    bool // preserves the mtime
		existing bool // DEST exists before (mode 0644, other content)
	}{
		{"p", ccArgs("-p"), true, true, false},
		{"a", ccArgs("-a"), true, true, false},
		{"preserve-mode", ccArgs("--preserve=mode"), false, false, false},
		{"preserve-all", ccArgs("--preserve=all"), true, true, false},
		{"p-over-existing", ccArgs("-p"), true, true, true},
		{"no-preserve-new-file", nil, false, false, false}, // umask 0: 0751 too
	} {
		t.Run(c.name, func(t *testing.T) {
			out := mustMkdir(t, join(dir, "out-"+c.name))
			dst := join(out, "dst")
			var oldIno uint64
			if c.existing {
				writeFile(t, dst, []byte("old content\n"), 0o644)
				oldIno = statT(t, dst).Ino
			}
			ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(ifd)
			mask := uint32(unix.IN_CREATE | unix.IN_ATTRIB | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_CLOSE_WRITE)
			if _, err := unix.InotifyAddWatch(ifd, out, mask); err != nil {
				t.Fatal(err)
			}

			// want checks one view of DEST.
			wantOwner := uint32(os.Geteuid())
			wantGroup := uint32(os.Getegid())
			if c.owner && root {
				wantOwner, wantGroup = 1234, 5678
			}
			want := func(st *unix.Stat_t) []string {
				var bad []string
				if st.Mode&0o7777 != 0o751 {
					bad = append(bad, fmt.Sprintf("mode %#o, want 0751", st.Mode&0o7777))
				}
				if st.Uid != wantOwner || st.Gid != wantGroup {
					bad = append(bad, fmt.Sprintf("owner %d:%d, want %d:%d", st.Uid, st.Gid, wantOwner, wantGroup))
				}
				if c.times && st.Mtim != srcTimes[1] {
					bad = append(bad, fmt.Sprintf("mtime %s, want the source's %s", ccTime(st.Mtim.Nano()), ccTime(srcTimes[1].Nano())))
				}
				if st.Size != int64(len(data)) {
					bad = append(bad, fmt.Sprintf("size %d, want %d", st.Size, len(data)))
				}
				return bad
			}

			// Poll DEST until the new file shows up, and check the first
			// view. A poller starved until fastcp has exited takes one last
			// look (then the inotify order below is the proof).
			stop := make(chan struct{})
			var first *unix.Stat_t
			late := false
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					stopped := false
					select {
					case <-stop:
						stopped = true
					default:
					}
					var st unix.Stat_t
					if unix.Lstat(dst, &st) == nil && st.Ino != oldIno {
						first, late = &st, stopped
						return
					}
					if stopped {
						return
					}
				}
			}()
			r := fastcpUmask(t, dir, "0", append(c.args, "src", "out-"+c.name+"/dst")...)
			close(stop)
			wg.Wait()
			wantSuccess(t, r)

			if late {
				t.Log("the poller first saw DEST after fastcp had exited")
			}
			if first == nil {
				t.Error("the new DEST does not exist")
			} else if bad := want(first); bad != nil {
				t.Errorf("DEST first appeared with %s", strings.Join(bad, ", "))
			}
			var final unix.Stat_t
			if err := unix.Lstat(dst, &final); err != nil {
				t.Fatal(err)
			}
			if bad := want(&final); bad != nil {
				t.Errorf("DEST finally has %s", strings.Join(bad, ", "))
			}
			assertFileBytes(t, dst, data)
			assertNoTemps(t, out)

			evs := ccReadEvents(t, ifd)
			t.Logf("events: %v", evs)
			var creates, moves []ccEvent
			tmp, attribs := "", 0
			appeared := -1 // DEST's IN_MOVED_TO, or its IN_CREATE by a link
			for i, e := range evs {
				switch {
				case e.mask&unix.IN_Q_OVERFLOW != 0:
					t.Fatal("inotify queue overflow")
				case e.name == "dst" && e.mask&unix.IN_ATTRIB != 0:
					t.Errorf("event %v: DEST's attributes must be set before it appears", e)
				case e.name == "dst" && e.mask&unix.IN_CREATE != 0:
					// A new DEST: the unnamed temporary file, linked in
					// under DEST's own name.
					creates = append(creates, e)
					appeared = i
				case e.mask&unix.IN_CREATE != 0:
					creates = append(creates, e)
					tmp = e.name
				case e.mask&unix.IN_ATTRIB != 0:
					if appeared >= 0 {
						t.Errorf("event %v after DEST appeared", e)
					}
					// The temporary file, by its name or, before it
					// has one (O_TMPFILE), as "#INODE".
					if e.name == tmp || tmp == "" && strings.HasPrefix(e.name, "#") {
						attribs++
					}
				case e.mask&unix.IN_MOVED_TO != 0 && e.name == "dst":
					appeared = i
					moves = append(moves, e)
				}
			}
			if len(creates) != 1 {
				t.Fatalf("want exactly one IN_CREATE: of a .fastcp-* temporary file, or of DEST by the link of an unnamed one; got %v", creates)
			}
			if creates[0].name == "dst" {
				if len(moves) != 0 {
					t.Errorf("DEST linked in and also renamed: %v", moves)
				}
			} else {
				if !strings.HasPrefix(creates[0].name, ".fastcp-") {
					t.Fatalf("want the IN_CREATE of a .fastcp-* temporary file; got %v", creates)
				}
				if len(moves) != 1 {
					t.Fatalf("want DEST to appear by exactly one rename (IN_MOVED_TO), got %v", moves)
				}
				var from *ccEvent
				for i := range evs[:appeared] {
					if e := evs[i]; e.mask&unix.IN_MOVED_FROM != 0 && e.cookie == moves[0].cookie {
						from = &evs[i]
					}
				}
				if from == nil || from.name != tmp {
					t.Errorf("DEST was not renamed from the temporary file %q (IN_MOVED_FROM: %v)", tmp, from)
				}
			}
			// A named temporary file is created 0600, and so is an
			// unnamed one that gets SOURCE's mode with -p or keeps an
			// existing DEST's: reaching 0751 takes a chmod, and -p a
			// chown and utimens too, before the rename. A new DEST's
			// unnamed file without -p is created with the mode cp would
			// create DEST with, 0751 under umask 0: nothing to change.
			createdFinal := !c.existing && len(c.args) == 0 && creates[0].name == "dst"
			switch {
			case createdFinal && attribs != 0:
				t.Errorf("%d IN_ATTRIB before DEST appeared: the unnamed file was not created with its final mode", attribs)
			case !createdFinal && attribs == 0:
				t.Errorf("no IN_ATTRIB on %s before the rename: its attributes were not set on the temporary file", tmp)
			}
		})
	}
}
