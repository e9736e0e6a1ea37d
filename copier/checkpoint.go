// SPDX-License-Identifier: MIT

package copier

import (
	"time"

	"golang.org/x/sys/unix"
)

// Checkpoints, for --resume: the destination's data is made durable
// (Options.CheckpointFlush: durability's fdatasync) at least every
// DefaultCheckpointBytes bytes written and every
// DefaultCheckpointInterval, whichever comes first, and the offset below
// which the destination then holds the source's bytes is handed to
// Options.Checkpoint, which records it. A copy killed later (SIGKILL, a
// crash) starts again from the last recorded offset and redoes at most what
// came after it.
//
// The flush runs on a goroutine of its own while the copy goes on: the
// time a flush of a GiB takes the device would otherwise add to the copy's
// own (docs/measurements.md). Only data
// written before the call started is covered, so the offset recorded is
// the one reached when it started. At most one runs at a time: one that is
// due while the last still runs waits for it (so a checkpoint is never more
// than two intervals old). None starts once the whole source is in, and the
// copy's end waits for the last one only when the destination is flushed
// anyway (checkpointEnd).
const (
	DefaultCheckpointBytes    = 1 << 30
	DefaultCheckpointInterval = 5 * time.Second
)

// defaultCheckpointBytes is DefaultCheckpointBytes, except in a binary
// built with the fastcp_crashfs tag (checkpoint_crashfs.go) for the
// power-cut test, which needs checkpoints within a file of a few MiB.
var defaultCheckpointBytes int64 = DefaultCheckpointBytes

// checkpointer is the state of one copy's checkpoints.
type checkpointer struct {
	flush  func(fd int) error // Options.CheckpointFlush
	record func(off int64) error
	// recordHash, when set, records instead of record, with the hash's
	// state taken when the checkpoint's fdatasync began (runSnap):
	// at most the offset it covers.
	recordHash func(off int64, h HashState) error
	runSnap    HashState
	every      int64
	interval   time.Duration

	lastBytes int64     // res.Bytes when the last checkpoint started
	lastTime  time.Time // when it started (or the copy began)
	running   bool
	runOff    int64      // the offset the running fdatasync covers
	done      chan error // its result
	now       func() time.Time
}

func newCheckpointer(o Options) *checkpointer {
	if o.Checkpoint == nil && o.HashCheckpoint == nil {
		return nil
	}
	if o.CheckpointFlush == nil {
		panic("copier: checkpoints without Options.CheckpointFlush")
	}
	k := &checkpointer{flush: o.CheckpointFlush, record: o.Checkpoint, every: o.CheckpointBytes, interval: o.CheckpointInterval, done: make(chan error, 1), now: time.Now}
	if o.Hash != nil && o.HashCheckpoint != nil {
		k.recordHash = o.HashCheckpoint
	} else if k.record == nil {
		return nil
	}
	if k.every <= 0 {
		k.every = defaultCheckpointBytes
	}
	if k.interval <= 0 {
		k.interval = DefaultCheckpointInterval
	}
	if o.now != nil {
		k.now = o.now
	}
	k.lastTime = k.now()
	return k
}

// step is called after a data-moving call of strategy s left the
// destination complete below off. It records a finished checkpoint and
// starts the next one when one is due.
func (c *copier) checkpointStep(s Strategy, off int64) error {
	k := c.ckpt
	if k.running {
		select {
		case err := <-k.done:
			if err := c.checkpointDone(s, err); err != nil {
				return err
			}
		default:
		}
	}
	if c.res.Bytes-k.lastBytes < k.every && k.now().Sub(k.lastTime) < k.interval {
		return nil
	}
	if off >= c.srcSt.Size {
		// The whole source is in: a checkpoint now would only make the
		// copy's end wait for a flush that nobody asked for (--sync
		// makes its own).
		return nil
	}
	if k.running {
		// Due again before the last one finished: wait for it.
		if err := c.checkpointDone(s, <-k.done); err != nil {
			return err
		}
	}
	k.running, k.runOff = true, off
	if k.recordHash != nil {
		// The hash has not passed off (it follows the copy): its latest
		// state is at most off bytes in.
		k.runSnap = c.hash.snapshot()
	}
	k.lastBytes, k.lastTime = c.res.Bytes, k.now()
	c.res.Checkpoints++
	c.res.Stats[Auto].Calls++
	// The flush gets a descriptor of its own, so that the copy's end need
	// not wait for it (checkpointEnd) and the number is never another
	// file's meanwhile.
	fd, err := retry(c.other(), func() (int, error) { return c.sys.fcntl(c.dst, unix.F_DUPFD_CLOEXEC, 0) })
	if err != nil {
		k.running = false
		return &Error{Strategy: s, Side: SideWrite, Offset: off, Err: syscallErr("fcntl(F_DUPFD_CLOEXEC)", err), final: true}
	}
	flush, done := k.flush, k.done
	go func() {
		err := flush(fd)
		closeFd(fd)
		done <- err
	}()
	return nil
}

// checkpointDone takes the result of the running fdatasync: records its
// offset, or turns its error into the copy's (a failed fdatasync is final:
// the kernel may have dropped the pages, and no later flush would say so).
func (c *copier) checkpointDone(s Strategy, err error) error {
	k := c.ckpt
	k.running = false
	if err != nil {
		return &Error{Strategy: s, Side: SideWrite, Offset: k.runOff, Err: syscallErr("fdatasync", err), final: true}
	}
	record := k.record
	if k.recordHash != nil {
		snap := k.runSnap
		record = func(off int64) error { return k.recordHash(off, snap) }
	}
	if rerr := record(k.runOff); rerr != nil {
		return &Error{Strategy: s, Side: SideWrite, Offset: k.runOff, Err: rerr, final: true}
	}
	c.res.Checkpoint = k.runOff
	return nil
}

// checkpointEnd ends the checkpoints with the copy: the fdatasync still
// running, if any, is waited for and recorded when the destination will be
// flushed anyway (Options.Flush: --sync, --verify), whose flush must not
// find its error taken already; otherwise it is left to finish on its own
// (the copy is complete, nobody waits for the device, and a copy without
// --sync never hears of writeback errors either).
func (c *copier) checkpointEnd() error {
	if c.ckpt == nil || !c.ckpt.running {
		return nil
	}
	if !c.opts.Flush {
		select {
		case err := <-c.ckpt.done:
			return c.checkpointDone(c.res.Strategy, err)
		default:
			c.ckpt.running = false
			return nil
		}
	}
	return c.checkpointDone(c.res.Strategy, <-c.ckpt.done)
}
