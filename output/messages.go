// SPDX-License-Identifier: MIT

package output

// The text of fastcp's messages, one function per kind, named as cp's
// messages are. Each returns the message without the "PROG: " prefix or
// the newline, which Errorf, Warnf and Println add.

// Version is --version's text.
func Version(v string) string { return "fastcp " + v + "\n" }

// WriteError says that writing stdout failed with err.
func WriteError(err error) string { return "write error: " + ErrText(err) }
