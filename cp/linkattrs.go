// SPDX-License-Identifier: MIT

package cp

// A symbolic link's own owner and times (-a, -p, --preserve) are set with
// lchown and utimensat(AT_SYMLINK_NOFOLLOW). Some filesystems cannot set
// them on a link: sshfs hands the call to its SFTP server, which follows
// the link, so the owner and times land on the file the link points to (a
// file of the copy, or one outside it), and a link that dangles fails with
// ENOENT. Such a filesystem is found by a probe, once per run, before its
// first link is made; links made there keep the owner and times they were
// made with. A link once made is never removed because its attributes
// could not be set: a refusal is a warning (cp words it as an error and
// keeps the link too).

import (
	"errors"
	"path/filepath"
	"sync"
	"time"

	"fastcp/durability"
	"fastcp/internal/fsdir"
	"fastcp/output"

	"golang.org/x/sys/unix"
)

// linkAttrs is what the probes found, per DEST filesystem (its device):
// nil where a link's own owner and times can be set, else why not.
type linkAttrs struct {
	mu      sync.Mutex
	verdict map[uint64]error
}

// errFollows is the verdict on a filesystem that sets a link's attributes
// on the file it points to.
var errFollows = errors.New("it would set them on the files the links point to")

// ownTimesOfLinks says whether the owner and times of the symbolic link
// about to be made in j's DEST directory (open as ent.Dir) can be set
// there, finding out on the directory's filesystem's first link. Local
// filesystems can; on FUSE and network ones a link pointing to itself is
// made under ent.Name (the entry's own temporary name: nothing of anyone
// else's is touched), given times with AT_SYMLINK_NOFOLLOW and removed: a
// filesystem that follows the link fails (ELOOP, or ENOENT as sshfs says).
// A "no" is said once, in a warning. err is the probe link's creation
// failing: os.ErrExist when ent.Name is taken, for Replace to try the
// next name.
func (j *job) ownTimesOfLinks(ent durability.Entry) (ok bool, err error) {
	la := &j.a.linkAttrs
	dev := j.dd.ID().Dev
	la.mu.Lock()
	defer la.mu.Unlock()
	if v, known := la.verdict[dev]; known {
		return v == nil, nil
	}
	var verdict error
	var fs unix.Statfs_t
	if err := unix.Fstatfs(ent.Dir, &fs); err == nil && fsdir.RemoteFS(int64(fs.Type)) {
		if err := unix.Symlinkat(ent.Name, ent.Dir, ent.Name); err != nil {
			return false, err
		}
		var made unix.Stat_t
		if err := unix.Fstatat(ent.Dir, ent.Name, &made, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return false, err
		}
		now := unix.NsecToTimespec(time.Now().UnixNano())
		verdict = ignoringEINTR(func() error {
			return unix.UtimesNanoAt(ent.Dir, ent.Name, []unix.Timespec{now, now}, unix.AT_SYMLINK_NOFOLLOW)
		})
		if errors.Is(verdict, unix.ENOENT) || errors.Is(verdict, unix.ELOOP) {
			verdict = errFollows
		}
		// Removed only while the name still is the probe made.
		var st unix.Stat_t
		if unix.Fstatat(ent.Dir, ent.Name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || idOf(&st) != idOf(&made) {
			return false, unix.EEXIST // the name is someone else's now: try the next one
		}
		if err := unix.Unlinkat(ent.Dir, ent.Name, 0); err != nil {
			return false, err
		}
	}
	if la.verdict == nil {
		la.verdict = make(map[uint64]error)
	}
	la.verdict[dev] = verdict
	if verdict != nil {
		reason := verdict.Error()
		if verdict != errFollows {
			reason = errText(verdict)
		}
		j.r.warn(output.CannotPreserveLinkAttributes(filepath.Dir(j.dst), reason))
	}
	return verdict == nil, nil
}

// preserveLink gives the new link ent (a copy of j's source, a link) the
// attributes asked for. Whatever fails, the link stays: an owner or times
// the filesystem refuses to set on a link are a warning, any other
// failure an error of the entry.
func (j *job) preserveLink(ent durability.Entry, srcPath string, ownTimes bool) {
	p := j.a.opts.Preserve
	if !ownTimes {
		p.Ownership, p.Timestamps = false, false
	}
	t := target{fd: -1, path: procPath(ent.Dir, ent.Name), link: true}
	err := j.a.preserveSome(p, t, &j.e.st, -1, srcPath, j.dst)
	switch {
	case err == nil:
	case refusedOnLink(err):
		j.r.warn(err.Error())
	default:
		j.r.fail(err.Error())
	}
}

// refusedOnLink reports whether err is a filesystem's refusal to set an
// owner or times on a symbolic link (or its following the link to a file
// that is not there), rather than a failure.
func refusedOnLink(err error) bool {
	for _, e := range []error{unix.ENOENT, unix.ELOOP, unix.EOPNOTSUPP, unix.ENOSYS, unix.EPERM, unix.EACCES, unix.EINVAL} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
