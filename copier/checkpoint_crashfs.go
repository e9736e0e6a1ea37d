//go:build fastcp_crashfs

package copier

// The power-cut test (integration_test/crashfs) builds its --resume binary
// with this tag: a checkpoint every 256 KiB, so that a copy of a few MiB
// has some, and a cut can fall before, during and after each.
func init() { defaultCheckpointBytes = 256 << 10 }
