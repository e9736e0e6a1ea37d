// SPDX-License-Identifier: MIT

//go:build fastcp_crashfs

package copier

// The power-cut test (integration_test/crashfs) builds its --resume binary
// with this tag: a checkpoint every 256 KiB, and direct I/O buffers of
// 256 KiB, so that a copy of a few MiB has checkpoints, with the direct
// strategy too, and a cut can fall before, during and after each.
func init() {
	defaultCheckpointBytes = 256 << 10
	directBufBytes = 256 << 10
}
