package durability

// SyncDir makes the entries of directory dir durable: it opens dir
// (O_DIRECTORY) and fsyncs it, as every --sync mode does for DEST's
// directory after the rename. The recursive copy uses it for directories
// and for entries that are not regular files (links, special files).
func SyncDir(dir string) error { return syncDir(dir) }

// SyncDirFd is SyncDir for a directory the caller holds open.
func SyncDirFd(fd int) error { return ignoringEINTR(func() error { return fsync(fd) }) }
