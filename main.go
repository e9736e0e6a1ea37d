// Command fastcp copies large files fast and safely: see ../man/fastcp.1.
package main

import "os"

// version is stamped by the Makefile (-ldflags -X main.version=...); when
// empty, the module's build information is used.
var version = ""

func main() {
	os.Exit(run(os.Args[0], os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
