package durability

// SyncMode is how a copy is made durable (--sync).
type SyncMode int

// Sync modes.
const (
	SyncNone   SyncMode = iota // no flush: the page cache writes back when it likes
	SyncData                   // fdatasync the file, fsync its directory
	SyncFull                   // fsync the file and its directory
	SyncOSync                  // open with O_SYNC, fsync the directory
	SyncODSync                 // open with O_DSYNC, fsync the directory
)

// SyncNames lists the --sync values, indexed by SyncMode.
var SyncNames = []string{"none", "data", "full", "osync", "odsync"}

func (m SyncMode) String() string { return SyncNames[m] }
