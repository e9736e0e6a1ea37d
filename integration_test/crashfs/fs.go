// SPDX-License-Identifier: MIT

package crashfs

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// MaxWrite is the largest FUSE write request: a write(2) of more is split
// into requests of this size, each one operation.
const MaxWrite = 128 << 10

// FS is the filesystem and its FUSE server.
type FS struct {
	fuse.RawFileSystem // ENOSYS for what is not below

	mu      sync.Mutex
	s       *state
	handles map[uint64]handle
	nextFh  uint64
	// tmpfiles are the inodes made with O_TMPFILE, named "(O_TMPFILE)"
	// while no directory holds them.
	tmpfiles map[uint64]bool
	// NoTmpfile refuses O_TMPFILE (ENOSYS, which the kernel turns into
	// EOPNOTSUPP for the mount's lifetime), as many filesystems do.
	NoTmpfile bool

	// Crash points and faults.
	ops     int      // operations so far
	trace   []string // what each one was
	crashAt int      // -1: no crash armed
	crashed bool
	faults  []*Fault
	// Fsyncs counts the fsync and fdatasync requests per file, by path
	// at the time of the call, for tests that check what was flushed.
	fsyncs []string

	dir    string
	server *fuse.Server
}

// handle is an open file: which inode, and whether its writes are
// synchronous: O_DSYNC (sync), O_SYNC (sync and full).
type handle struct {
	ino  uint64
	sync bool
	full bool
}

// Fault makes matching operations fail.
type Fault struct {
	// Op is the request: "fsync" (fsync and fdatasync of a file),
	// "write", "read", "close" (FUSE's flush, sent by every close(2)).
	Op string
	// Name, when set, limits it to files with this base name (at
	// open time for read and write, at the call for fsync).
	Name string
	// From is the file offset from which reads and writes fail.
	From int64
	// Times is how many calls fail; 0 means every one.
	Times int
	// Errno is the error returned.
	Errno syscall.Errno
	// Hits counts the calls failed so far.
	Hits int
}

// New returns a filesystem holding an empty root directory, not mounted.
func New() *FS {
	return &FS{RawFileSystem: fuse.NewDefaultRawFileSystem(), s: newState(), handles: map[uint64]handle{}, crashAt: -1}
}

// Mount serves the filesystem at dir: as root, without fusermount, with
// direct I/O on every file and no caching of entries or attributes in the
// kernel, so every read, write and lookup reaches the model.
func (fs *FS) Mount(dir string) error {
	opts := &fuse.MountOptions{
		FsName:             "crashfs",
		Name:               "crashfs",
		DirectMountStrict:  true,
		MaxWrite:           MaxWrite,
		DisableReadDirPlus: true,
		DisableXAttrs:      false,
	}
	srv, err := fuse.NewServer(fs, dir, opts)
	if err != nil {
		return err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		srv.Unmount()
		return err
	}
	fs.dir, fs.server = dir, srv
	return nil
}

// Unmount stops serving (idempotent).
func (fs *FS) Unmount() error {
	if fs.server == nil {
		return nil
	}
	err := fs.server.Unmount()
	fs.server = nil
	return err
}

// Arm makes the operation after the k-th the crash (k = 0: the first
// operation never happens); k < 0 disarms. The operation count restarts.
func (fs *FS) Arm(k int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.ops, fs.trace, fs.crashAt, fs.fsyncs = 0, nil, k, nil
}

// CrashNow cuts the power now: every later request fails with EIO.
func (fs *FS) CrashNow() {
	fs.mu.Lock()
	fs.crashed = true
	fs.mu.Unlock()
}

// Crashed reports whether the power was cut.
func (fs *FS) Crashed() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.crashed
}

// Ops returns how many operations there were since Arm, and what they were.
func (fs *FS) Ops() (int, []string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.ops, slices.Clone(fs.trace)
}

// Fsyncs returns the files fsynced or fdatasynced since Arm, one entry per
// call ("fsync NAME" or "fdatasync NAME").
func (fs *FS) Fsyncs() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.fsyncs)
}

// Inject adds a fault.
func (fs *FS) Inject(f *Fault) {
	fs.mu.Lock()
	fs.faults = append(fs.faults, f)
	fs.mu.Unlock()
}

// Snapshot captures the state now (after a crash: at the crash).
func (fs *FS) Snapshot() *Snapshot {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return &Snapshot{s: fs.s.clone()}
}

// Now is the state as it is, everything volatile included, as an image
// (what a clean unmount would leave).
func (fs *FS) Now() *Image {
	sn := fs.Snapshot()
	return sn.Image(sn.MetaOps(), DataAll)
}

// Crash is the power cut and the reboot: it cuts the power now (unless the
// armed crash point already did), unmounts, replaces the filesystem with
// the image reboot picks from the state at the cut (the volatile state
// gone) and mounts that at the same place again. It returns the state at
// the cut, from which every other image the cut may leave can be checked.
func (fs *FS) Crash(reboot func(*Snapshot) *Image) (*Snapshot, error) {
	fs.CrashNow()
	sn := fs.Snapshot()
	dir := fs.dir
	if err := fs.Unmount(); err != nil {
		return sn, err
	}
	fs.Reset(reboot(sn))
	return sn, fs.Mount(dir)
}

// Reset replaces the whole filesystem with im, fully durable: the reboot
// after a crash. It must not be mounted. im nil gives an empty filesystem.
func (fs *FS) Reset(im *Image) {
	if fs.server != nil {
		panic("crashfs: Reset while mounted")
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if im == nil {
		fs.s = newState()
	} else {
		fs.s = im.reboot()
	}
	fs.handles, fs.tmpfiles = map[uint64]handle{}, nil
	fs.ops, fs.trace, fs.crashAt, fs.crashed, fs.faults, fs.fsyncs = 0, nil, -1, false, nil, nil
}

// Setup creates path (parents as directories) with data, durably, before
// the filesystem is mounted: the state a test starts from.
func (fs *FS) Setup(path string, data []byte, mode uint32) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir := fs.s.inodes[rootIno]
	parts := strings.Split(strings.Trim(path, "/"), "/")
	now := time.Now().UnixNano()
	for _, p := range parts[:len(parts)-1] {
		ino, ok := dir.kids[p]
		if !ok {
			d := fs.s.newInode(syscall.S_IFDIR|0o755, now)
			dir.kids[p], dir.dkids[p] = d.ino, d.ino
			ino = d.ino
		}
		dir = fs.s.inodes[ino]
	}
	n := fs.s.newInode(syscall.S_IFREG|mode, now)
	n.data, n.durable = slices.Clone(data), slices.Clone(data)
	n.uid, n.gid = uint32(os.Getuid()), uint32(os.Getgid())
	name := parts[len(parts)-1]
	dir.kids[name], dir.dkids[name] = n.ino, n.ino
}

// Plant gives the regular file at path (made by Setup) the owner uid and
// the extended attributes xattrs, durable: a file another user put there.
func (fs *FS) Plant(path string, uid uint32, xattrs map[string][]byte) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dir := fs.s.inodes[rootIno]
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for _, p := range parts[:len(parts)-1] {
		dir = fs.s.inodes[dir.kids[p]]
	}
	n := fs.s.inodes[dir.kids[parts[len(parts)-1]]]
	n.uid, n.gid = uid, uid
	n.xattr, n.dxattr = maps.Clone(xattrs), maps.Clone(xattrs)
}

// String names the filesystem (fuse.RawFileSystem).
func (fs *FS) String() string { return "crashfs" }

// op is called, with mu held, by every request that changes the
// filesystem: it counts the operation, or cuts the power at the armed
// crash point (killing the caller before the request is answered, so it
// never runs on to see it fail). It reports whether the request may go on.
func (fs *FS) op(h *fuse.InHeader, what string) bool {
	if fs.crashed {
		return false
	}
	if fs.crashAt >= 0 && fs.ops == fs.crashAt {
		fs.crashed = true
		if h.Pid != 0 && tgid(int(h.Pid)) != os.Getpid() {
			// kill(2) with a thread's id signals its whole process.
			syscall.Kill(int(h.Pid), syscall.SIGKILL)
		}
		return false
	}
	fs.ops++
	fs.trace = append(fs.trace, what)
	return true
}

// fault returns the errno of a fault matching the request, or 0.
func (fs *FS) fault(op, name string, off int64) syscall.Errno {
	for _, f := range fs.faults {
		if f.Op != op || (f.Name != "" && f.Name != name) || off < f.From || (f.Times > 0 && f.Hits >= f.Times) {
			continue
		}
		f.Hits++
		return f.Errno
	}
	return 0
}

// nameOf returns a base name of ino (for faults and messages).
func (fs *FS) nameOf(ino uint64) string {
	if ino == rootIno {
		return "/"
	}
	for _, d := range fs.s.inodes {
		for name, k := range d.kids {
			if k == ino && d.isDir() {
				return name
			}
		}
	}
	if fs.tmpfiles[ino] {
		return "(O_TMPFILE)"
	}
	return fmt.Sprintf("#%d", ino)
}

// tgid returns the process a thread belongs to (0 if it is gone): the
// crash never kills the test itself.
func tgid(tid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

func now() int64 { return time.Now().UnixNano() }

func (fs *FS) attr(n *inode, a *fuse.Attr) {
	*a = fuse.Attr{Ino: n.ino, Mode: n.mode, Nlink: 1, Owner: fuse.Owner{Uid: n.uid, Gid: n.gid}, Blksize: 4096}
	switch {
	case n.isReg():
		a.Size = uint64(len(n.data))
		a.Blocks = (a.Size + 511) / 512
	case n.isDir():
		a.Nlink = 2
		a.Size = 4096
	default:
		a.Size = uint64(len(n.target))
	}
	links := 0
	for _, d := range fs.s.inodes {
		for _, k := range d.kids {
			if k == n.ino {
				links++
			}
		}
	}
	if !n.isDir() && links > 0 {
		a.Nlink = uint32(links)
	}
	a.Mtime, a.Mtimensec = uint64(n.mtime/1e9), uint32(n.mtime%1e9)
	a.Atime, a.Atimensec = uint64(n.atime/1e9), uint32(n.atime%1e9)
	a.Ctime, a.Ctimensec = uint64(n.ctime/1e9), uint32(n.ctime%1e9)
}

func (fs *FS) entry(n *inode, out *fuse.EntryOut) {
	out.NodeId = n.ino
	out.Generation = 1
	fs.attr(n, &out.Attr)
	// No caching: every lookup and stat comes here (timeouts 0).
}

// dir returns the directory inode of a request.
func (fs *FS) dirNode(ino uint64) (*inode, fuse.Status) {
	n, ok := fs.s.inodes[ino]
	if !ok {
		return nil, fuse.ENOENT
	}
	if !n.isDir() {
		return nil, fuse.ENOTDIR
	}
	return n, fuse.OK
}

// Lookup finds name in a directory.
func (fs *FS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return fuse.EIO
	}
	d, st := fs.dirNode(h.NodeId)
	if !st.Ok() {
		return st
	}
	ino, ok := d.kids[name]
	if !ok {
		return fuse.ENOENT
	}
	fs.entry(fs.s.inodes[ino], out)
	return fuse.OK
}

// GetAttr is stat.
func (fs *FS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return fuse.EIO
	}
	n, ok := fs.s.inodes[in.NodeId]
	if !ok {
		return fuse.ENOENT
	}
	fs.attr(n, &out.Attr)
	return fuse.OK
}

// SetAttr is chmod, chown, utimes and truncate.
func (fs *FS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.s.inodes[in.NodeId]
	if !ok {
		return fuse.ENOENT
	}
	if !fs.op(&in.InHeader, "setattr "+fs.nameOf(n.ino)) {
		return fuse.EIO
	}
	if m, ok := in.GetMode(); ok {
		n.mode = n.mode&syscall.S_IFMT | m
	}
	if u, ok := in.GetUID(); ok {
		n.uid = u
	}
	if g, ok := in.GetGID(); ok {
		n.gid = g
	}
	if t, ok := in.GetMTime(); ok {
		n.mtime = t.UnixNano()
	}
	if t, ok := in.GetATime(); ok {
		n.atime = t.UnixNano()
	}
	if size, ok := in.GetSize(); ok {
		if !n.isReg() {
			return fuse.EINVAL
		}
		fs.s.writeData(n, dataOp{size: int64(size)}, false)
		n.mtime = now()
	}
	n.ctime = now()
	fs.attr(n, &out.Attr)
	return fuse.OK
}

// mknode makes a new inode under name in directory h.NodeId.
func (fs *FS) mknode(h *fuse.InHeader, name string, mode uint32, what string) (*inode, fuse.Status) {
	d, st := fs.dirNode(h.NodeId)
	if !st.Ok() {
		return nil, st
	}
	if _, exists := d.kids[name]; exists {
		return nil, fuse.Status(syscall.EEXIST)
	}
	if !fs.op(h, what+" "+name) {
		return nil, fuse.EIO
	}
	n := fs.s.newInode(mode, now())
	n.uid, n.gid = h.Uid, h.Gid
	fs.s.change(what+" "+name, fs.s.setEntry(d, name, n.ino))
	d.mtime = now()
	return n, fuse.OK
}

// Mkdir makes a directory.
func (fs *FS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, st := fs.mknode(&in.InHeader, name, syscall.S_IFDIR|in.Mode&0o7777, "mkdir")
	if st.Ok() {
		fs.entry(n, out)
	}
	return st
}

// Mknod makes a FIFO or device node (no data).
func (fs *FS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, st := fs.mknode(&in.InHeader, name, in.Mode, "mknod")
	if st.Ok() {
		fs.entry(n, out)
	}
	return st
}

// Symlink makes a symbolic link.
func (fs *FS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, st := fs.mknode(h, name, syscall.S_IFLNK|0o777, "symlink")
	if st.Ok() {
		n.target = target
		fs.entry(n, out)
	}
	return st
}

// Readlink returns a link's target.
func (fs *FS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return nil, fuse.EIO
	}
	n, ok := fs.s.inodes[h.NodeId]
	if !ok || n.mode&syscall.S_IFMT != syscall.S_IFLNK {
		return nil, fuse.EINVAL
	}
	return []byte(n.target), fuse.OK
}

// Create makes and opens a regular file.
func (fs *FS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, st := fs.mknode(&in.InHeader, name, syscall.S_IFREG|in.Mode&0o7777, "create")
	if !st.Ok() {
		return st
	}
	fs.entry(n, &out.EntryOut)
	fs.openHandle(n, in.Flags, &out.OpenOut)
	return fuse.OK
}

// Tmpfile makes and opens a regular file with no name (O_TMPFILE), which
// Link can give one. Until a link of it is durable a crash loses it, as a
// journaling filesystem frees such an orphan at the next mount: a crash
// image holds only what its directories reach.
func (fs *FS) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.NoTmpfile {
		return fuse.ENOSYS
	}
	if _, st := fs.dirNode(in.NodeId); !st.Ok() {
		return st
	}
	if !fs.op(&in.InHeader, "tmpfile") {
		return fuse.EIO
	}
	n := fs.s.newInode(syscall.S_IFREG|in.Mode&0o7777, now())
	n.uid, n.gid = in.Uid, in.Gid
	if fs.tmpfiles == nil {
		fs.tmpfiles = map[uint64]bool{}
	}
	fs.tmpfiles[n.ino] = true
	fs.entry(n, &out.EntryOut)
	fs.openHandle(n, in.Flags, &out.OpenOut)
	return fuse.OK
}

func (fs *FS) openHandle(n *inode, flags uint32, out *fuse.OpenOut) {
	fs.nextFh++
	fs.handles[fs.nextFh] = handle{ino: n.ino, sync: flags&syscall.O_DSYNC != 0, full: flags&syscall.O_SYNC == syscall.O_SYNC}
	out.Fh = fs.nextFh
	out.OpenFlags = fuse.FOPEN_DIRECT_IO
}

// Open opens a file; O_TRUNC truncates it (a data change).
func (fs *FS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return fuse.EIO
	}
	n, ok := fs.s.inodes[in.NodeId]
	if !ok {
		return fuse.ENOENT
	}
	if in.Flags&syscall.O_TRUNC != 0 && n.isReg() {
		if !fs.op(&in.InHeader, "truncate "+fs.nameOf(n.ino)) {
			return fuse.EIO
		}
		fs.s.writeData(n, dataOp{size: 0}, in.Flags&syscall.O_DSYNC != 0)
		n.mtime = now()
	}
	fs.openHandle(n, in.Flags, out)
	return fuse.OK
}

// Read reads a file.
func (fs *FS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return nil, fuse.EIO
	}
	hd, ok := fs.handles[in.Fh]
	if !ok {
		return nil, fuse.EBADF
	}
	n := fs.s.inodes[hd.ino]
	if e := fs.fault("read", fs.nameOf(n.ino), int64(in.Offset)+int64(in.Size)-1); e != 0 {
		return nil, fuse.Status(e)
	}
	if in.Offset >= uint64(len(n.data)) {
		return fuse.ReadResultData(nil), fuse.OK
	}
	end := min(uint64(len(n.data)), in.Offset+uint64(in.Size))
	return fuse.ReadResultData(slices.Clone(n.data[in.Offset:end])), fuse.OK
}

// Write writes a file: volatile, unless the descriptor is O_SYNC/O_DSYNC.
func (fs *FS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	hd, ok := fs.handles[in.Fh]
	if !ok {
		return 0, fuse.EBADF
	}
	n := fs.s.inodes[hd.ino]
	name := fs.nameOf(n.ino)
	if !fs.op(&in.InHeader, fmt.Sprintf("write %s@%d+%d", name, in.Offset, len(data))) {
		return 0, fuse.EIO
	}
	if e := fs.fault("write", name, int64(in.Offset)+int64(len(data))-1); e != 0 {
		return 0, fuse.Status(e)
	}
	fs.s.writeData(n, dataOp{off: int64(in.Offset), buf: data}, hd.sync)
	if hd.full {
		fs.s.syncData(n, true)
	}
	n.mtime = now()
	return uint32(len(data)), fuse.OK
}

// Fallocate reserves space; without FALLOC_FL_KEEP_SIZE it extends the
// file with zeros (a data change).
func (fs *FS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	hd, ok := fs.handles[in.Fh]
	if !ok {
		return fuse.EBADF
	}
	n := fs.s.inodes[hd.ino]
	if in.Mode&^1 != 0 {
		return fuse.ENOTSUP
	}
	if !fs.op(&in.InHeader, "fallocate "+fs.nameOf(n.ino)) {
		return fuse.EIO
	}
	if end := int64(in.Offset + in.Length); in.Mode&1 == 0 && end > int64(len(n.data)) {
		fs.s.writeData(n, dataOp{size: end}, hd.sync)
	}
	return fuse.OK
}

// Fsync is fsync(2) (and fdatasync, FsyncFlags bit 0) of a file: its data
// and size become durable; its name does not.
func (fs *FS) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.s.inodes[in.NodeId]
	if !ok {
		return fuse.ENOENT
	}
	call := "fsync"
	if in.FsyncFlags&1 != 0 {
		call = "fdatasync"
	}
	name := fs.nameOf(n.ino)
	if !fs.op(&in.InHeader, call+" "+name) {
		return fuse.EIO
	}
	fs.fsyncs = append(fs.fsyncs, call+" "+name)
	if e := fs.fault("fsync", name, 0); e != 0 {
		// What Linux does on a failed writeback: the pages are marked
		// clean, the data is not on the disk, and the next fsync has
		// nothing to write and succeeds (the "fsyncgate" of 2018).
		n.pending = nil
		return fuse.Status(e)
	}
	fs.s.syncData(n, call == "fsync")
	return fuse.OK
}

// FsyncDir is fsync(2) of a directory: its entries become durable.
func (fs *FS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, st := fs.dirNode(in.NodeId)
	if !st.Ok() {
		return st
	}
	if !fs.op(&in.InHeader, "fsyncdir "+fs.nameOf(d.ino)) {
		return fuse.EIO
	}
	fs.s.syncDir(d)
	return fuse.OK
}

// Flush is close(2): nothing becomes durable. A fault can make it fail, as
// NFS and some FUSE filesystems report a write error only at close.
func (fs *FS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return fuse.EIO
	}
	if hd, ok := fs.handles[in.Fh]; ok {
		if e := fs.fault("close", fs.nameOf(hd.ino), 0); e != 0 {
			return fuse.Status(e)
		}
	}
	return fuse.OK
}

// Release forgets an open file.
func (fs *FS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	fs.mu.Lock()
	delete(fs.handles, in.Fh)
	fs.mu.Unlock()
}

// Unlink removes a name.
func (fs *FS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return fs.remove(h, name, false)
}

// Rmdir removes an empty directory.
func (fs *FS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return fs.remove(h, name, true)
}

func (fs *FS) remove(h *fuse.InHeader, name string, dir bool) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, st := fs.dirNode(h.NodeId)
	if !st.Ok() {
		return st
	}
	ino, ok := d.kids[name]
	if !ok {
		return fuse.ENOENT
	}
	n := fs.s.inodes[ino]
	if dir != n.isDir() {
		if dir {
			return fuse.ENOTDIR
		}
		return fuse.Status(syscall.EISDIR)
	}
	if dir && len(n.kids) > 0 {
		return fuse.Status(syscall.ENOTEMPTY)
	}
	what := "unlink " + name
	if dir {
		what = "rmdir " + name
	}
	if !fs.op(h, what) {
		return fuse.EIO
	}
	fs.s.change(what, fs.s.setEntry(d, name, 0))
	d.mtime = now()
	return fuse.OK
}

// Rename moves a name (RENAME_NOREPLACE honoured; RENAME_EXCHANGE not
// supported).
func (fs *FS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	from, st := fs.dirNode(in.NodeId)
	if !st.Ok() {
		return st
	}
	to, st := fs.dirNode(in.Newdir)
	if !st.Ok() {
		return st
	}
	ino, ok := from.kids[oldName]
	if !ok {
		return fuse.ENOENT
	}
	const renameNoreplace, renameExchange = 1, 2
	if in.Flags&renameExchange != 0 {
		return fuse.EINVAL
	}
	if old, exists := to.kids[newName]; exists {
		if in.Flags&renameNoreplace != 0 {
			return fuse.Status(syscall.EEXIST)
		}
		o := fs.s.inodes[old]
		if o.isDir() != fs.s.inodes[ino].isDir() {
			if o.isDir() {
				return fuse.Status(syscall.EISDIR)
			}
			return fuse.ENOTDIR
		}
		if o.isDir() && len(o.kids) > 0 {
			return fuse.Status(syscall.ENOTEMPTY)
		}
		if old == ino {
			return fuse.OK
		}
	}
	what := "rename " + oldName + " " + newName
	if !fs.op(&in.InHeader, what) {
		return fuse.EIO
	}
	fs.s.change(what, fs.s.setEntry(from, oldName, 0), fs.s.setEntry(to, newName, ino))
	from.mtime, to.mtime = now(), now()
	return fuse.OK
}

// Link makes a hard link.
func (fs *FS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, st := fs.dirNode(in.NodeId)
	if !st.Ok() {
		return st
	}
	n, ok := fs.s.inodes[in.Oldnodeid]
	if !ok {
		return fuse.ENOENT
	}
	if _, exists := d.kids[name]; exists {
		return fuse.Status(syscall.EEXIST)
	}
	if !fs.op(&in.InHeader, "link "+name) {
		return fuse.EIO
	}
	fs.s.change("link "+name, fs.s.setEntry(d, name, n.ino))
	fs.entry(n, out)
	return fuse.OK
}

// OpenDir opens a directory.
func (fs *FS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return fuse.EIO
	}
	_, st := fs.dirNode(in.NodeId)
	return st
}

// ReadDir lists a directory: ".", "..", then the names sorted; an entry's
// offset is its index plus one.
func (fs *FS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return fuse.EIO
	}
	d, st := fs.dirNode(in.NodeId)
	if !st.Ok() {
		return st
	}
	ents := []fuse.DirEntry{{Name: ".", Mode: syscall.S_IFDIR, Ino: d.ino}, {Name: "..", Mode: syscall.S_IFDIR, Ino: rootIno}}
	for _, name := range slices.Sorted(maps.Keys(d.kids)) {
		k := fs.s.inodes[d.kids[name]]
		ents = append(ents, fuse.DirEntry{Name: name, Mode: k.mode, Ino: k.ino})
	}
	for i := int(in.Offset); i < len(ents); i++ {
		e := ents[i]
		e.Off = uint64(i + 1)
		if !out.AddDirEntry(e) {
			break
		}
	}
	return fuse.OK
}

// ReleaseDir closes a directory.
func (fs *FS) ReleaseDir(in *fuse.ReleaseIn) {}

// Access allows everything (the caller is root).
func (fs *FS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status { return fuse.OK }

// StatFs reports a large, mostly empty filesystem.
func (fs *FS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	*out = fuse.StatfsOut{Blocks: 1 << 24, Bfree: 1 << 23, Bavail: 1 << 23, Files: 1 << 20, Ffree: 1 << 19, Bsize: 4096, NameLen: 255, Frsize: 4096}
	return fuse.OK
}

// GetXAttr reads an extended attribute.
func (fs *FS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return 0, fuse.EIO
	}
	n, ok := fs.s.inodes[h.NodeId]
	if !ok {
		return 0, fuse.ENOENT
	}
	v, ok := n.xattr[attr]
	if !ok {
		return 0, fuse.ENOATTR
	}
	if len(dest) < len(v) {
		return uint32(len(v)), fuse.ERANGE
	}
	return uint32(copy(dest, v)), fuse.OK
}

// ListXAttr lists extended attributes.
func (fs *FS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.crashed {
		return 0, fuse.EIO
	}
	n, ok := fs.s.inodes[h.NodeId]
	if !ok {
		return 0, fuse.ENOENT
	}
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(n.xattr)) {
		b = append(append(b, k...), 0)
	}
	if len(dest) < len(b) {
		return uint32(len(b)), fuse.ERANGE
	}
	return uint32(copy(dest, b)), fuse.OK
}

// SetXAttr sets an extended attribute.
func (fs *FS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.s.inodes[in.NodeId]
	if !ok {
		return fuse.ENOENT
	}
	if !fs.op(&in.InHeader, "setxattr "+attr) {
		return fuse.EIO
	}
	if n.xattr == nil {
		n.xattr = map[string][]byte{}
	}
	n.xattr[attr] = slices.Clone(data)
	return fuse.OK
}

// RemoveXAttr removes an extended attribute.
func (fs *FS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, ok := fs.s.inodes[h.NodeId]
	if !ok {
		return fuse.ENOENT
	}
	if _, ok := n.xattr[attr]; !ok {
		return fuse.ENOATTR
	}
	if !fs.op(h, "removexattr "+attr) {
		return fuse.EIO
	}
	delete(n.xattr, attr)
	return fuse.OK
}
