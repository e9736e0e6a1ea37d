// SPDX-License-Identifier: MIT

package cp

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// brokenPipe is called when a copy failed with EPIPE: its DEST is a pipe
// whose reader left. cp dies of the SIGPIPE the kernel sent with the
// error, without a message; fastcp's signal handler does that once the
// other copies in progress are cleaned up. The signal is raised again here
// so that the handler has it whatever the order of delivery, and the
// caller waits for the handler rather than print an error first. Without a
// handler (a test) the wait ends and the error is reported as usual.
var brokenPipe = func(err error) {
	if !errors.Is(err, unix.EPIPE) {
		return
	}
	unix.Kill(unix.Getpid(), unix.SIGPIPE)
	time.Sleep(2 * time.Second)
}
