// SPDX-License-Identifier: MIT

// Command goempty is the benchmarks' floor for one invocation of a Go
// program: it does nothing, so a shell loop of it times the exec and the
// Go runtime's own start and exit on this machine, beside the loops of
// fastcp and cp. Its arguments are ignored.
package main

func main() {}
